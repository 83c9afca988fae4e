// SPDX-License-Identifier: GPL-2.0
/*
 * gpmm unit tests: the mm/ suites, run with CUnit's basic interface.
 * `unit-tests` runs them all; `unit-tests SUITE...` runs the named ones.
 * Exits 1 when any assertion or test failed.
 */
#include <signal.h>
#include <stdio.h>

#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>

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
int register_compaction_suite(void);
int register_lumpy_suite(void);
int register_hostmem_suite(void);
int register_pool_service_suite(void);
int register_qemu_args_suite(void);
int register_fault_suite(void);
int register_sandbox_suite(void);
int register_boot_suite(void);
int register_virtio_suite(void);
int register_qmp_suite(void);

static int (*const suites[])(void) = {
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
	register_compaction_suite,
	register_lumpy_suite,
	register_hostmem_suite,
	register_pool_service_suite,
	register_qemu_args_suite,
	register_fault_suite,
	register_sandbox_suite,
	register_boot_suite,
	register_virtio_suite,
	register_qmp_suite,
};

/*
 * Each CU_basic_run_suite starts its counts afresh: add them up, or a
 * failure in an early suite would vanish behind a later one that passed.
 */
static unsigned int named_failures, named_tests_failed, named_tests_run;

static int run_named(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		CU_pSuite suite = CU_get_suite(argv[i]);

		if (!suite) {
			fprintf(stderr, "unit-tests: no suite named '%s'\n",
				argv[i]);
			return -1;
		}
		if (CU_basic_run_suite(suite) != CUE_SUCCESS)
			return -1;
		named_failures += CU_get_number_of_failures();
		named_tests_failed += CU_get_number_of_tests_failed();
		named_tests_run += CU_get_number_of_tests_run();
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned int failures, tests_failed, tests_run;
	int rc;

	/*
	 * A test writing to a pipe or socket whose other end (a forked client)
	 * is gone gets EPIPE and fails its assertion; the default SIGPIPE would
	 * end the whole run without a word about which test it was.
	 */
	signal(SIGPIPE, SIG_IGN);
	if (CU_initialize_registry() != CUE_SUCCESS) {
		fprintf(stderr, "unit-tests: %s\n", CU_get_error_msg());
		return 1;
	}
	for (size_t i = 0; i < sizeof(suites) / sizeof(suites[0]); i++) {
		if (suites[i]() != CUE_SUCCESS) {
			fprintf(stderr, "unit-tests: %s\n", CU_get_error_msg());
			CU_cleanup_registry();
			return 1;
		}
	}

	CU_basic_set_mode(CU_BRM_VERBOSE);
	rc = argc > 1 ? run_named(argc, argv) : (int)CU_basic_run_tests();
	failures = argc > 1 ? named_failures : CU_get_number_of_failures();
	tests_failed = argc > 1 ? named_tests_failed : CU_get_number_of_tests_failed();
	tests_run = argc > 1 ? named_tests_run : CU_get_number_of_tests_run();
	if (failures)
		CU_basic_show_failures(CU_get_failure_list());
	printf("\nunit-tests: %u tests run, %u failed, %u assertion failures\n",
	       tests_run, tests_failed, failures);
	CU_cleanup_registry();
	return rc || failures || tests_failed ? 1 : 0;
}
