// SPDX-License-Identifier: GPL-2.0
/*
 * QMP on a connection, through qmp_input as the daemon loop calls it, over
 * a socketpair: no VM needs to run for what is tested here.
 */
#define _GNU_SOURCE
#include <CUnit/CUnit.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "vmm/control/daemon.h"
#include "tests/suite.h"

/*
 * A VM that ended in this round of the daemon loop: finish_vm dropped its
 * vm and marked its socket's connections dead, but the dvm is listed until
 * reap() and a command already on the wire is still handled. Every command
 * about the VM must answer an error then, not follow the NULL vm (found by
 * the qmp fuzz target: query-memory-size-summary did).
 */
static void test_ended_vm(void)
{
	static const char *const cmds[] = {
		"query-status", "stop", "cont", "query-memory-size-summary", "query-name",
		"query-balloon", "query-gpmm-balloon", "query-fragmentation",
		"query-cpus-fast", "query-stats", "quit", "system_powerdown",
	};
	struct daemon d = { 0 };
	struct dvm v = { .d = &d, .vm = NULL, .ended = true, .qmp_fd = -1 };
	/* finish_vm marked it dead, but then qmp_send would keep the replies from us */
	struct conn c = { .d = &d, .vm = &v, .negotiated = true };
	char buf[8192];
	int sv[2];

	CU_ASSERT_FATAL(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	d.vms = &v;
	d.conns = &c;
	c.fd = sv[0];
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		ssize_t n;

		n = snprintf(buf, sizeof(buf), "{\"execute\":\"%s\",\"arguments\":"
			     "{\"target\":\"vm\"}}", cmds[i]);
		CU_ASSERT_FATAL(write(sv[1], buf, (size_t)n) == n);
		CU_ASSERT_EQUAL(qmp_input(&c), 0);
		n = recv(sv[1], buf, sizeof(buf) - 1, MSG_DONTWAIT);
		CU_ASSERT(n > 0);
		buf[n > 0 ? n : 0] = '\0';
		if (strncmp(cmds[i], "quit", 4) && strncmp(cmds[i], "system_", 7) &&
		    !strstr(buf, "\"error\"")) {
			fprintf(stderr, "\n  %s answered: %s", cmds[i], buf);
			CU_FAIL("a command about an ended VM is refused");
		}
	}
	close(sv[0]);
	close(sv[1]);
	free(c.buf);
	free(c.out);
}

static const struct suite_test tests[] = {
	{ "commands about a VM that has just ended", test_ended_vm },
};

int register_qmp_suite(void)
{
	return SUITE("qmp", tests);
}
