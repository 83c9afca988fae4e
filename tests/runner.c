// SPDX-License-Identifier: GPL-2.0
/*
 * The CUnit runner of the test binaries that need no KVM (tests/unit/,
 * tests/devices/): CUnit's basic interface, every suite or the named ones.
 */
#include <signal.h>
#include <stdio.h>

#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>

#include "tests/runner.h"

/*
 * Each CU_basic_run_suite starts its counts afresh: add them up, or a
 * failure in an early suite would vanish behind a later one that passed.
 */
static unsigned int named_failures, named_tests_failed, named_tests_run;

static int run_named(const char *prog, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		CU_pSuite suite = CU_get_suite(argv[i]);

		if (!suite) {
			fprintf(stderr, "%s: no suite named '%s'\n",
				prog, argv[i]);
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

int run_suites(const char *prog, const suite_register_fn *suites, size_t n,
	       int argc, char **argv)
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
		fprintf(stderr, "%s: %s\n", prog, CU_get_error_msg());
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		if (suites[i]() != CUE_SUCCESS) {
			fprintf(stderr, "%s: %s\n", prog, CU_get_error_msg());
			CU_cleanup_registry();
			return 1;
		}
	}

	CU_basic_set_mode(CU_BRM_VERBOSE);
	rc = argc > 1 ? run_named(prog, argc, argv) : (int)CU_basic_run_tests();
	failures = argc > 1 ? named_failures : CU_get_number_of_failures();
	tests_failed = argc > 1 ? named_tests_failed : CU_get_number_of_tests_failed();
	tests_run = argc > 1 ? named_tests_run : CU_get_number_of_tests_run();
	if (failures)
		CU_basic_show_failures(CU_get_failure_list());
	printf("\n%s: %u tests run, %u failed, %u assertion failures\n",
	       prog, tests_run, tests_failed, failures);
	CU_cleanup_registry();
	return rc || failures || tests_failed ? 1 : 0;
}
