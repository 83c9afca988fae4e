// SPDX-License-Identifier: GPL-2.0
/*
 * Integration suites: real KVM guests. Where this host has no KVM they run
 * in the nested-KVM test VM (tests/vm/run); they never skip.
 */
#include <CUnit/Basic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "vmm/core/kvm.h"
#include "resume.h"

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
 * CUnit's basic interface sets its own message handlers on every run, and
 * a test's end is what resume.c must hear of: these print what basic's
 * verbose mode prints (tests/summary and tests/vm/kernels read it) and
 * record each test's end.
 */
static void on_suite_start(const CU_pSuite s)
{
	printf("\nSuite: %s", s->pName);
}

static void on_test_start(const CU_pTest t, const CU_pSuite s)
{
	printf("\n  Test: %s ...", t->pName);
	fflush(stdout);
	resume_started(s->pName, t->pName);
}

static void on_test_complete(const CU_pTest t, const CU_pSuite s, const CU_pFailureRecord first)
{
	unsigned int i = 0;

	printf(first ? "FAILED" : "passed");
	for (CU_pFailureRecord f = first; f; f = f->pNext)
		printf("\n    %u. %s:%u  - %s", ++i, f->strFileName ? f->strFileName : "",
		       f->uiLineNumber, f->strCondition ? f->strCondition : "");
	fflush(stdout);
	resume_record(s->pName, t->pName, first != NULL);
}

static void on_suite_init_failure(const CU_pSuite s)
{
	printf("\nWARNING - Suite initialization failed for '%s'.", s->pName);
}

static void on_suite_cleanup_failure(const CU_pSuite s)
{
	printf("\nWARNING - Suite cleanup failed for '%s'.", s->pName);
}

static void set_handlers(void)
{
	CU_set_suite_start_handler(on_suite_start);
	CU_set_test_start_handler(on_test_start);
	CU_set_test_complete_handler(on_test_complete);
	CU_set_suite_init_failure_handler(on_suite_init_failure);
	CU_set_suite_cleanup_failure_handler(on_suite_cleanup_failure);
	/* a test an earlier try finished is made inactive: not a failure */
	CU_set_fail_on_inactive(CU_FALSE);
}

struct counts {
	unsigned int run, failed, failures, froze;
};

/*
 * Each suite runs on its own so that its counts can be printed on one line
 * ("suite-result: NAME run N failed N", then "not-run N" when the test VM
 * froze during some on every try they had): tests/vm/kernels builds its table
 * kernel x suite from those lines. @carried: the suite's tests an earlier
 * try finished, counted as they ended; @ran: whether CUnit ran any now
 * (else its counts are the previous suite's).
 */
static void tally(CU_pSuite s, const struct counts *carried, bool ran, struct counts *all)
{
	struct counts now = *carried;

	if (ran) {
		now.run += CU_get_number_of_tests_run();
		now.failed += CU_get_number_of_tests_failed();
		now.failures += CU_get_number_of_failures();
	}
	printf("\nsuite-result: %s run %u failed %u", s->pName, now.run, now.failed);
	printf(now.froze ? " not-run %u\n" : "\n", now.froze);
	if (ran && CU_get_number_of_failures())
		CU_basic_show_failures(CU_get_failure_list());
	all->run += now.run;
	all->failed += now.failed;
	all->failures += now.failures;
	all->froze += now.froze;
}

/*
 * Leave out (inactive) @t if an earlier try finished it, and count it; or
 * if the VM froze during it on each of RESUME_FREEZE_TRIES tries.
 */
static bool carry(CU_pSuite s, CU_pTest t, struct counts *carried)
{
	switch (resume_state(s->pName, t->pName)) {
	case RESUME_NOT_RUN:
		return false;
	case RESUME_FROZE:
		carried->froze++;
		break;
	case RESUME_FAILED:
		carried->failed++;
		/* fall through */
	case RESUME_PASSED:
		carried->run++;
		break;
	}
	CU_set_test_active(t, CU_FALSE);
	return true;
}

static void say_carried(CU_pSuite s)
{
	for (CU_pTest t = s->pTest; t; t = t->pNext) {
		enum resume_state state = t->fActive ? RESUME_NOT_RUN :
					  resume_state(s->pName, t->pName);

		if (state == RESUME_FROZE)
			printf("\n  Test: %s ...NOT RUN: the test VM's kernel froze during it on %d "
			       "tries (QEMU's TCG, not gpmm: docs/hosts.md)", t->pName,
			       RESUME_FREEZE_TRIES);
		else if (state != RESUME_NOT_RUN)
			printf("\n  Test: %s ...%s in an earlier try of this test VM (its log above)",
			       t->pName, state == RESUME_FAILED ? "FAILED" : "passed");
	}
}

/* The tests of @s (@only: that one alone) an earlier try has not finished. */
static void run_tests(CU_pSuite s, CU_pTest only, struct counts *all)
{
	struct counts carried = { 0 };
	unsigned int left = 0;
	bool ran = false;

	for (CU_pTest t = only ? only : s->pTest; t; t = only ? NULL : t->pNext)
		left += !carry(s, t, &carried);
	if (left)
		ran = (only ? CU_run_test(s, only) : CU_run_suite(s)) == CUE_SUCCESS;
	else
		on_suite_start(s);
	say_carried(s);
	tally(s, &carried, ran, all);
	for (CU_pTest t = s->pTest; t; t = t->pNext)
		CU_set_test_active(t, CU_TRUE);
}

/*
 * "SUITE" runs a suite, "SUITE:TEST" one test of it (a developer chasing
 * one failure in the slow test VM).
 */
static int run_arg(const char *arg, struct counts *all)
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
		run_tests(s, NULL, all);
		return 0;
	}
	t = CU_get_test(s, colon + 1);
	if (!t) {
		fprintf(stderr, "integration: no test '%s' in suite '%s'\n", colon + 1, name);
		return -1;
	}
	run_tests(s, t, all);
	return 0;
}

/*
 * Without KVM nothing here can run, and passing would say that something
 * did: fail, and say where the suites do run (the test VM).
 */
int main(int argc, char **argv)
{
	const char *why = kvm_unavailable();
	struct counts all = { 0 };
	int resumed;

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
	set_handlers();
	resumed = resume_load();
	if (resumed < 0) {
		fprintf(stderr, "integration: reading an earlier try's progress: %s\n",
			strerror(-resumed));
		return 1;
	}
	if (resumed)
		printf("integration: %d tests ended in an earlier try of this test VM "
		       "(its kernel froze); not run again\n", resumed);
	if (argc > 1) {
		for (int i = 1; i < argc; i++)
			if (run_arg(argv[i], &all))
				return 1;
	} else {
		for (CU_pSuite s = CU_get_registry()->pSuite; s; s = s->pNext)
			run_tests(s, NULL, &all);
	}
	printf("\nintegration-tests: %u tests run, %u failed, %u assertion failures\n",
	       all.run, all.failed, all.failures);
	printf("%u passed, %u failed\n", all.run - all.failed, all.failed);
	if (all.froze)
		printf("integration: NOT RUN: %u tests, the test VM's kernel froze during each on "
		       "%d tries (listed above as NOT RUN)\n", all.froze, RESUME_FREEZE_TRIES);
	CU_cleanup_registry();
	resume_free();
	return all.failures || all.failed ? 1 : 0;
}
