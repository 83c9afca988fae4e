/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The integration tests an earlier try of the same test VM finished, kept
 * where tests/vm/run keeps state across its tries (TESTVM_STATE).
 */
#ifndef GPMM_TESTS_RESUME_H
#define GPMM_TESTS_RESUME_H

#include <stdbool.h>

/* Read what earlier tries recorded: their count, 0 outside the test VM. */
int resume_load(void);
/* Did an earlier try finish @suite:@test? @failed says how it ended. */
bool resume_done(const char *suite, const char *test, bool *failed);
/* Record that @suite:@test ended, before the next test starts. */
void resume_record(const char *suite, const char *test, bool failed);
void resume_free(void);

#endif
