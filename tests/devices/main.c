// SPDX-License-Identifier: GPL-2.0
/*
 * gpmm device tests: the devices against the test double of their one
 * interface (devices/machine.h), linked with the devices library and
 * nothing of vmm/. `device-tests [SUITE...]`, as unit-tests.
 */
#include "tests/runner.h"

int register_virtio_suite(void);
int register_virtio_net_suite(void);
int register_legacy_suite(void);

static const suite_register_fn suites[] = {
	register_virtio_suite,
	register_virtio_net_suite,
	register_legacy_suite,
};

int main(int argc, char **argv)
{
	return run_suites("device-tests", suites, sizeof(suites) / sizeof(suites[0]), argc, argv);
}
