// SPDX-License-Identifier: MIT
#include <math.h>

#include "json.h"

/*
 * The length of the valid UTF-8 sequence at @p (a lead byte >= 0x80), or 0
 * when it is not one: a stray continuation byte, a sequence cut short, an
 * overlong form, a surrogate, or a code point past U+10FFFF.
 */
static int utf8_len(const unsigned char *p)
{
	unsigned int cp;
	int n;

	if (*p >= 0xc2 && *p <= 0xdf)
		n = 2, cp = *p & 0x1f;
	else if (*p >= 0xe0 && *p <= 0xef)
		n = 3, cp = *p & 0x0f;
	else if (*p >= 0xf0 && *p <= 0xf4)
		n = 4, cp = *p & 0x07;
	else
		return 0;
	for (int i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0; /* also the NUL that ends the string */
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

/*
 * Text from outside (a file name, a process name, a script) may hold any
 * byte; JSON must be UTF-8: a byte that starts no valid sequence is
 * written as U+FFFD, so that every line still parses.
 */
void json_fstring(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		int n;

		switch (*p) {
		case '"':  fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			if (*p < 0x20 || *p == 0x7f) {
				fprintf(f, "\\u%04x", *p);
			} else if (*p < 0x80) {
				fputc(*p, f);
			} else if ((n = utf8_len(p))) {
				fwrite(p, 1, (size_t)n, f);
				p += n - 1;
			} else {
				fputs("\xef\xbf\xbd", f); /* U+FFFD */
			}
		}
	}
	fputc('"', f);
}

void json_fnumber(FILE *f, int decimals, double v)
{
	if (isfinite(v))
		fprintf(f, "%.*f", decimals, v);
	else
		fputs("null", f);
}
