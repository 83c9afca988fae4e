// SPDX-License-Identifier: GPL-2.0
/*
 * Integration suites: real KVM guests. Where KVM is missing they are
 * skipped with the reason, and the run counts as passed.
 */
#include <CUnit/Basic.h>
#include <stdio.h>

#include "vmm/kvm.h"

int register_vm_suite(void);
int register_cli_suite(void);
int register_migrate_suite(void);

static int (*const suites[])(void) = {
	register_vm_suite,
	register_cli_suite,
	register_migrate_suite,
};

#define NR_SUITES (sizeof(suites) / sizeof(suites[0]))

int main(int argc, char **argv)
{
	const char *why = kvm_unavailable();
	unsigned int failures = 0, failed = 0, run = 0;

	if (why) {
		printf("integration: SKIPPED all %zu suites: %s\n", NR_SUITES, why);
		return 0;
	}
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	for (size_t i = 0; i < NR_SUITES; i++)
		if (suites[i]() != CUE_SUCCESS) {
			fprintf(stderr, "integration: %s\n", CU_get_error_msg());
			return 1;
		}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	if (argc > 1) {
		for (int i = 1; i < argc; i++) {
			CU_pSuite s = CU_get_suite(argv[i]);

			if (!s) {
				fprintf(stderr, "integration: no suite '%s'\n", argv[i]);
				return 1;
			}
			CU_basic_run_suite(s);
			/* each suite run starts the counts afresh: add them up */
			failures += CU_get_number_of_failures();
			failed += CU_get_number_of_tests_failed();
			run += CU_get_number_of_tests_run();
		}
	} else {
		CU_basic_run_tests();
		failures = CU_get_number_of_failures();
		failed = CU_get_number_of_tests_failed();
		run = CU_get_number_of_tests_run();
		if (failures)
			CU_basic_show_failures(CU_get_failure_list());
	}
	printf("\nintegration-tests: %u tests run, %u failed, %u assertion failures\n",
	       run, failed, failures);
	CU_cleanup_registry();
	return failures || failed ? 1 : 0;
}
