// SPDX-License-Identifier: GPL-2.0
/*
 * The seccomp allow-lists (vmm/sys/sandbox.c), each in a child process: what
 * a list allows still works under it, and a forbidden call ends the child
 * with SIGSYS after naming the call on stderr. Needs no KVM.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "tests/suite.h"
#include "vmm/sys/sandbox.h"

enum which { VMM, VCPU };

static int thread_token;

static void *thread_fn(void *arg)
{
	return arg;
}

/* What each list must still allow; 0 when it all worked. */
static int allowed_calls(enum which w)
{
	void *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fds[2] = { -1, -1 };
	pthread_t t;
	void *r;

	if (p == MAP_FAILED || munmap(p, 1 << 20))
		return 1;
	if (write(STDOUT_FILENO, "", 0) < 0)
		return 2;
	if (w == VCPU)
		return 0;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds))
		return 3;
	close(fds[0]);
	close(fds[1]);
	if (pthread_create(&t, NULL, thread_fn, &thread_token) || pthread_join(t, &r) ||
	    r != &thread_token)
		return 4;
	return 0;
}

/* Enter @w's list in a child, run the allowed calls, then @forbidden (if any). */
static int child_run(enum which w, void (*forbidden)(void), char *msg, size_t msglen)
{
	int pipefd[2], status;
	pid_t pid;
	ssize_t n;

	if (pipe(pipefd))
		return -1;
	pid = fork();
	if (pid == 0) {
		char err[256];
		int ret;

		dup2(pipefd[1], STDERR_FILENO);
		close(pipefd[0]);
		ret = w == VMM ? sandbox_enter_vmm(err, sizeof(err)) :
				 sandbox_enter_vcpu(err, sizeof(err));
		if (ret)
			_exit(100);
		ret = allowed_calls(w);
		if (ret)
			_exit(ret);
		if (forbidden)
			forbidden();
		/*
		 * exit, not _exit: in a sanitizer build LeakSanitizer then stops
		 * the world from a ptrace-ing clone, under the filter; a call
		 * of its that the list lacks kills that clone and hangs the exit.
		 */
		exit(0);
	}
	close(pipefd[1]);
	n = read(pipefd[0], msg, msglen - 1);
	msg[n > 0 ? n : 0] = '\0';
	close(pipefd[0]);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

static void inet_socket(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd >= 0)
		close(fd);
}

static void make_memfd(void)
{
	int fd = memfd_create("x", 0);

	if (fd >= 0)
		close(fd);
}

static void test_allowed(void)
{
	char msg[512];
	int st;

	st = child_run(VMM, NULL, msg, sizeof(msg));
	CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	st = child_run(VCPU, NULL, msg, sizeof(msg));
	CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void test_vmm_forbids(void)
{
	char msg[512];
	int st = child_run(VMM, inet_socket, msg, sizeof(msg));

	CU_ASSERT(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS);
	CU_ASSERT_PTR_NOT_NULL(strstr(msg, "the VMM made forbidden system call 41 (socket)"));
}

static void test_vcpu_forbids(void)
{
	char msg[512];
	int st = child_run(VCPU, make_memfd, msg, sizeof(msg));

	CU_ASSERT(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS);
	CU_ASSERT_PTR_NOT_NULL(strstr(msg, "the vCPU thread made forbidden system call"));
	CU_ASSERT_PTR_NOT_NULL(strstr(msg, "(memfd_create)"));
}

static const struct suite_test tests[] = {
	{ "what each list needs still works", test_allowed },
	{ "the VMM's list ends the process on a forbidden call", test_vmm_forbids },
	{ "a vCPU thread's list is narrower", test_vcpu_forbids },
};

int register_sandbox_suite(void)
{
	return SUITE("sandbox", tests);
}
