/* SPDX-License-Identifier: MIT */
/*
 * accel-insn.h: the markers that open and close an instruction-count
 * window for the accel-insn QEMU plugin (accel-insn.c).
 *
 * A marker is `nopl disp32(%rax)`, seven bytes that do nothing on any
 * x86-64 CPU, its displacement the magic and the window id. Outside the
 * plugin a program that marks windows runs as it would without them.
 */
#ifndef ACCEL_INSN_H
#define ACCEL_INSN_H

#define ACCEL_INSN_MAGIC_MASK 0xffffff00u
#define ACCEL_INSN_START 0xacc51500u
#define ACCEL_INSN_STOP 0xacc51600u
#define ACCEL_INSN_ID_MASK 0xffu
#define ACCEL_INSN_MAX_WINDOWS 256
/* profile=on profiles the windows with ids below this. */
#define ACCEL_INSN_PROFILE_IDS 16

#if defined(__x86_64__)
/* @id: a constant below ACCEL_INSN_MAX_WINDOWS. */
#define ACCEL_INSN_MARK(what, id)                                          \
	__asm__ volatile(".byte 0x0f, 0x1f, 0x80\n\t.long %c0"             \
			 : : "i"((what) | ((id) & ACCEL_INSN_ID_MASK)) : "memory")
#else
#define ACCEL_INSN_MARK(what, id) ((void)(id))
#endif

#define ACCEL_INSN_BEGIN(id) ACCEL_INSN_MARK(ACCEL_INSN_START, id)
#define ACCEL_INSN_END(id) ACCEL_INSN_MARK(ACCEL_INSN_STOP, id)

#endif
