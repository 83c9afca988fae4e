/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One self-rewriting status line on stderr for benchmarks that run long
 * (bench migrate, hugeback, frag on a large pool): what runs, how far,
 * the figure so far. Only a person at a terminal wants it: when stderr is
 * not a TTY, or the caller asked for JSON, every call does nothing, so a
 * log or a pipe gets the results alone.
 */
#ifndef GPMM_PROGRESS_H
#define GPMM_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

struct progress {
	bool on;
	uint64_t next_ns;	/* no redraw before this */
	int shown;		/* columns on screen now, 0: no line */
	char what[96];		/* the phase: what runs now */
};

/* A NULL @p is valid everywhere below and draws nothing. */
void progress_init(struct progress *p, bool json);
/* A new phase begins: the line becomes "@what" at once. */
void progress_phase(struct progress *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "what: how far, figure so far", if the line on screen is old enough. */
void progress_tick(struct progress *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Blank the line, before printing results or ordinary output. */
void progress_clear(struct progress *p);

#endif
