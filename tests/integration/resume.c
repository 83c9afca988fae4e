// SPDX-License-Identifier: GPL-2.0
/*
 * Resuming the integration suites after the test VM's own kernel froze.
 *
 * Under TCG the test VM's kernel sometimes stops scheduling for good while
 * a nested Linux guest boots (tests/vm/run); the runner then boots the VM
 * again and runs the same command. Run from the start, a command holding
 * every suite (make test-kernels: 20 minutes on 6.12) spends a try on
 * tests that had already passed, and two freezes late in the run end it.
 * So each test's end is written down, one line "pass|fail SUITE TEST"
 * (tab-separated) appended and synced before the next test starts, in the
 * directory tests/vm/run keeps across tries; the next try does not run
 * those again, and counts them as they ended (a failure stays one). The
 * test a freeze interrupted has no line and runs again whole. A line cut
 * short by the freeze (no newline) is not read, and cut off.
 *
 * A test's start is written down too ("start SUITE TEST"). A test that
 * started on RESUME_FREEZE_TRIES tries and never ended froze the VM each
 * time: on CI one test froze it on every try (4 of 4), and the tests
 * after it never ran. Such a test is not run again: it is reported as not
 * run, by name and why, and the tries left go to the tests after it. It
 * is not counted as passed; it is not a gpmm failure either (tests/vm/run:
 * no user-space program can stop the VM's kernel from scheduling).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "resume.h"

struct resume_entry {
	char *suite, *test;
	bool ended, failed;
	unsigned int starts;
};

static struct resume_entry *entries;
static size_t nr_entries;
static char path[4096];

static const char *resume_path(void)
{
	const char *dir = getenv("TESTVM_STATE");

	if (!dir || !*dir)
		return NULL;
	if (!path[0])
		snprintf(path, sizeof(path), "%s/integration-done", dir);
	return path;
}

static struct resume_entry *resume_find(const char *suite, const char *test)
{
	for (size_t i = 0; i < nr_entries; i++)
		if (!strcmp(entries[i].suite, suite) && !strcmp(entries[i].test, test))
			return &entries[i];
	return NULL;
}

static struct resume_entry *resume_add(const char *suite, const char *test)
{
	struct resume_entry *grown, *e;

	grown = realloc(entries, (nr_entries + 1) * sizeof(*entries));
	if (!grown)
		return NULL;
	entries = grown;
	e = &entries[nr_entries];
	*e = (struct resume_entry){ .suite = strdup(suite), .test = strdup(test) };
	if (!e->suite || !e->test) {
		free(e->suite);
		free(e->test);
		return NULL;
	}
	nr_entries++;
	return e;
}

static int resume_parse(char *line)
{
	char *kind = strtok(line, "\t"), *suite = strtok(NULL, "\t"), *test = strtok(NULL, "\n");
	struct resume_entry *e;

	if (!kind || !suite || !test)
		return 0;
	e = resume_find(suite, test);
	if (!e && !(e = resume_add(suite, test)))
		return -ENOMEM;
	if (!strcmp(kind, "start")) {
		e->starts++;
	} else {
		e->ended = true;
		e->failed = strcmp(kind, "pass") != 0;
	}
	return 0;
}

/* The tests earlier tries ended. */
static int resume_ended(void)
{
	int n = 0;

	for (size_t i = 0; i < nr_entries; i++)
		n += entries[i].ended;
	return n;
}

int resume_load(void)
{
	const char *p = resume_path();
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	FILE *f;
	int err = 0;

	off_t whole = 0;

	if (!p || !(f = fopen(p, "r")))
		return 0;
	while (!err && (len = getline(&line, &cap, f)) > 0 && line[len - 1] == '\n') {
		whole += len;
		err = resume_parse(line);
	}
	free(line);
	fclose(f);
	/* the next record must not run on from a line cut short */
	if (!err && truncate(p, whole))
		err = -errno;
	return err ? err : resume_ended();
}

enum resume_state resume_state(const char *suite, const char *test)
{
	const struct resume_entry *e = resume_find(suite, test);

	if (!e)
		return RESUME_NOT_RUN;
	if (e->ended)
		return e->failed ? RESUME_FAILED : RESUME_PASSED;
	return e->starts >= RESUME_FREEZE_TRIES ? RESUME_FROZE : RESUME_NOT_RUN;
}

static void resume_append(const char *kind, const char *suite, const char *test)
{
	const char *p = resume_path();
	char line[1024];
	int fd, n;

	if (!p)
		return;
	n = snprintf(line, sizeof(line), "%s\t%s\t%s\n", kind, suite, test);
	fd = open(p, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || n <= 0 || (size_t)n >= sizeof(line) || write(fd, line, n) != n)
		fprintf(stderr, "integration: cannot record %s:%s for a later try\n", suite, test);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

void resume_started(const char *suite, const char *test)
{
	resume_append("start", suite, test);
}

void resume_record(const char *suite, const char *test, bool failed)
{
	resume_append(failed ? "fail" : "pass", suite, test);
}

void resume_free(void)
{
	for (size_t i = 0; i < nr_entries; i++) {
		free(entries[i].suite);
		free(entries[i].test);
	}
	free(entries);
	entries = NULL;
	nr_entries = 0;
}
