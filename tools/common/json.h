/* SPDX-License-Identifier: MIT */
/*
 * The tools' one JSON writer (accelctl, accelctl top, accel-run,
 * accel-bench): strings escaped per RFC 8259 (quotes, backslashes and
 * every control character; valid UTF-8 as it is, and any byte that starts
 * no valid UTF-8 sequence as U+FFFD, since JSON text is UTF-8),
 * and numbers that are always valid JSON (NaN and infinities, which JSON
 * cannot carry, become null).
 */
#ifndef ACCEL_TOOLS_JSON_H
#define ACCEL_TOOLS_JSON_H

#include <stdio.h>

/* @s as a JSON string, quotes included; NULL prints null. */
/*
 * The length of the UTF-8 character that starts at @s (1 for ASCII), or 0
 * when none does: a stray continuation byte, a sequence cut short, an
 * overlong form, a surrogate, or a code point past U+10FFFF.
 */
size_t text_utf8_len(const unsigned char *s);

void json_fstring(FILE *f, const char *s);

/* @v with @decimals digits after the point, or null where not finite. */
void json_fnumber(FILE *f, int decimals, double v);

#endif /* ACCEL_TOOLS_JSON_H */
