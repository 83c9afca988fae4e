/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The integration tests an earlier try of the same test VM finished, kept
 * where tests/vm/run keeps state across its tries (TESTVM_STATE).
 */
#ifndef GPMM_TESTS_RESUME_H
#define GPMM_TESTS_RESUME_H

#include <stdbool.h>

/*
 * Tries a test may freeze the VM on (start, and no end) before it is
 * not run again (resume.c).
 */
#define RESUME_FREEZE_TRIES	2

enum resume_state {
	RESUME_NOT_RUN,		/* not ended in an earlier try: run it */
	RESUME_PASSED,
	RESUME_FAILED,
	RESUME_FROZE,		/* the VM froze during it RESUME_FREEZE_TRIES times */
};

/* Read what earlier tries recorded: the tests they ended, 0 outside the test VM. */
int resume_load(void);
/* How an earlier try left @suite:@test. */
enum resume_state resume_state(const char *suite, const char *test);
/* Record that @suite:@test starts, then that it ended, each before going on. */
void resume_started(const char *suite, const char *test);
void resume_record(const char *suite, const char *test, bool failed);
void resume_free(void);

#endif
