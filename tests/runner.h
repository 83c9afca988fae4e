/* SPDX-License-Identifier: GPL-2.0 */
/* The CUnit runner the test binaries without KVM share (unit, devices). */
#ifndef GPMM_TESTS_RUNNER_H
#define GPMM_TESTS_RUNNER_H

#include <stddef.h>

typedef int (*suite_register_fn)(void);

/*
 * Register @suites, then run them all, or the ones named on the command
 * line; print a closing count under @prog's name. Returns the exit
 * status: 1 when any assertion or test failed.
 */
int run_suites(const char *prog, const suite_register_fn *suites, size_t n,
	       int argc, char **argv);

#endif
