/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A gpmm process driven like a terminal user would: its console on a
 * pipe we read, its keyboard on a pipe we write. Waits are bounded by
 * wide time-outs, never by how fast the guest is.
 */
#ifndef GPMM_TESTS_CHILD_H
#define GPMM_TESTS_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct child {
	pid_t pid;
	int in_fd, out_fd;
	char *out;		/* everything it printed, NUL-terminated */
	size_t len, cap;
	size_t mark;		/* expect() searches from here */
	int status;		/* exit status once reaped, else -1 */
	bool send_timed_out;	/* it stopped reading its input */
};

#define CHILD_SEND_TIMEOUT	120	/* s a write may wait for the child to read */

/* Start argv[] (stdout and stderr both read by us). */
int child_spawn(struct child *c, char *const argv[]);
/* Wait until @needle appears after the mark; moves the mark past it. */
bool child_expect(struct child *c, const char *needle, int timeout_s);
/*
 * Wait until the line the mark is on has ended; the text from the mark
 * (valid until the next call), or NULL after @timeout_s.
 */
const char *child_rest_of_line(struct child *c, int timeout_s);
/* Type @line and a newline; false if the child stops taking input. */
bool child_send(struct child *c, const char *line);
/* Wait for the exit; its status, or -1 after @timeout_s (then it is killed). */
int child_wait(struct child *c, int timeout_s);
/* Kill if still running, reap, free. */
void child_end(struct child *c);
/* The text after the last expect(), for a failure message. */
const char *child_tail(const struct child *c, size_t max);

#endif
