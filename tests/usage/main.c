// SPDX-License-Identifier: GPL-2.0
/*
 * gpmm's command line as a new user meets it: the binary run with mistakes,
 * other VMMs' habits and no VM, its messages read back. Nothing here needs
 * KVM: what is checked is what gpmm says before it asks the host for one.
 * `usage-tests [SUITE...]`; GPMM names the binary (default build/gpmm).
 */
#include "tests/runner.h"

int register_usage_suite(void);

static const suite_register_fn suites[] = {
	register_usage_suite,
};

int main(int argc, char **argv)
{
	return run_suites("usage-tests", suites, sizeof(suites) / sizeof(suites[0]), argc, argv);
}
