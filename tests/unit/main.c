// SPDX-License-Identifier: GPL-2.0
/*
 * gpmm unit tests: mm/ and the parts of vmm/ that need no KVM, run by
 * tests/runner.c.
 * `unit-tests` runs them all; `unit-tests SUITE...` runs the named ones.
 * Exits 1 when any assertion or test failed.
 */
#include "tests/runner.h"

int register_buddy_suite(void);
int register_fallback_suite(void);
int register_pageblock_suite(void);
int register_pcp_suite(void);
int register_stats_suite(void);
int register_badinput_suite(void);
int register_stress_suite(void);
int register_trace_suite(void);
int register_config_suite(void);
int register_owner_suite(void);
int register_owned_suite(void);
int register_pbfile_suite(void);
int register_compaction_suite(void);
int register_lumpy_suite(void);
int register_hostmem_suite(void);
int register_pool_service_suite(void);
int register_pool_hostile_suite(void);
int register_qemu_args_suite(void);
int register_fault_suite(void);
int register_sandbox_suite(void);
int register_boot_suite(void);
int register_qmp_suite(void);
int register_report_suite(void);

static const suite_register_fn suites[] = {
	register_buddy_suite,
	register_fallback_suite,
	register_pageblock_suite,
	register_pcp_suite,
	register_stats_suite,
	register_badinput_suite,
	register_stress_suite,
	register_trace_suite,
	register_config_suite,
	register_owner_suite,
	register_owned_suite,
	register_pbfile_suite,
	register_compaction_suite,
	register_lumpy_suite,
	register_hostmem_suite,
	register_pool_service_suite,
	register_pool_hostile_suite,
	register_qemu_args_suite,
	register_fault_suite,
	register_sandbox_suite,
	register_boot_suite,
	register_qmp_suite,
	register_report_suite,
};

int main(int argc, char **argv)
{
	return run_suites("unit-tests", suites, sizeof(suites) / sizeof(suites[0]), argc, argv);
}
