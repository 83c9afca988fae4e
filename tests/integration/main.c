// SPDX-License-Identifier: GPL-2.0
/*
 * Integration suites: real KVM guests. Where this host has no KVM they run
 * in the nested-KVM test VM (tests/vm/run); they never skip.
 */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <string.h>

#include "vmm/core/kvm.h"

int register_vm_suite(void);
int register_cli_suite(void);
int register_migrate_suite(void);
int register_overcommit_suite(void);
int register_virtio_suite(void);
int register_linux_suite(void);
int register_hostpool_suite(void);
int register_hardening_suite(void);
int register_libvirt_suite(void);

static int (*const suites[])(void) = {
	register_vm_suite,
	register_cli_suite,
	register_migrate_suite,
	register_overcommit_suite,
	register_virtio_suite,
	register_linux_suite,
	register_hostpool_suite,
	register_hardening_suite,
	register_libvirt_suite,
};

#define NR_SUITES (sizeof(suites) / sizeof(suites[0]))

/*
 * Each suite runs on its own so that its counts can be printed on one line
 * ("suite-result: NAME run N failed N"): tests/vm/kernels builds its table
 * kernel x suite from those lines.
 */
static void tally(CU_pSuite s, unsigned int *run, unsigned int *failed,
		  unsigned int *failures)
{
	printf("suite-result: %s run %u failed %u\n", s->pName,
	       CU_get_number_of_tests_run(), CU_get_number_of_tests_failed());
	if (CU_get_number_of_failures())
		CU_basic_show_failures(CU_get_failure_list());
	*run += CU_get_number_of_tests_run();
	*failed += CU_get_number_of_tests_failed();
	*failures += CU_get_number_of_failures();
}

static void run_suite(CU_pSuite s, unsigned int *run, unsigned int *failed,
		      unsigned int *failures)
{
	CU_basic_run_suite(s);
	tally(s, run, failed, failures);
}

/*
 * "SUITE" runs a suite, "SUITE:TEST" one test of it (a developer chasing
 * one failure in the slow test VM).
 */
static int run_arg(const char *arg, unsigned int *run, unsigned int *failed,
		   unsigned int *failures)
{
	char name[256];
	const char *colon = strchr(arg, ':');
	CU_pSuite s;
	CU_pTest t;

	snprintf(name, sizeof(name), "%.*s", colon ? (int)(colon - arg) : (int)strlen(arg), arg);
	s = CU_get_suite(name);
	if (!s) {
		fprintf(stderr, "integration: no suite '%s'\n", name);
		return -1;
	}
	if (!colon) {
		run_suite(s, run, failed, failures);
		return 0;
	}
	t = CU_get_test(s, colon + 1);
	if (!t) {
		fprintf(stderr, "integration: no test '%s' in suite '%s'\n", colon + 1, name);
		return -1;
	}
	CU_basic_run_test(s, t);
	tally(s, run, failed, failures);
	return 0;
}

/*
 * Without KVM nothing here can run, and passing would say that something
 * did: fail, and say where the suites do run (the test VM).
 */
int main(int argc, char **argv)
{
	const char *why = kvm_unavailable();
	unsigned int failures = 0, failed = 0, run = 0;

	if (why) {
		printf("integration: cannot run: %s\n"
		       "integration: run the suites in the nested-KVM test VM: "
		       "tests/vm/run -- %s (make test does so by itself)\n",
		       why, argv[0]);
		return 1;
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
		for (int i = 1; i < argc; i++)
			if (run_arg(argv[i], &run, &failed, &failures))
				return 1;
	} else {
		for (CU_pSuite s = CU_get_registry()->pSuite; s; s = s->pNext)
			run_suite(s, &run, &failed, &failures);
	}
	printf("\nintegration-tests: %u tests run, %u failed, %u assertion failures\n",
	       run, failed, failures);
	printf("%u passed, %u failed\n", run - failed, failed);
	CU_cleanup_registry();
	return failures || failed ? 1 : 0;
}
