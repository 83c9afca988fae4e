// SPDX-License-Identifier: GPL-2.0
/*
 * The sandbox (vmm/sys/sandbox.c, landlock.c), each case in a child
 * process: what a list allows still works under it, a forbidden call ends
 * the child with SIGSYS after naming the call on stderr, and no call on
 * another process (signals, limits, scheduling, its terminal, its files,
 * its sockets) reaches it. Needs no KVM.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
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

/*
 * Fork; the child writes its stderr into @msg's pipe and runs @body, which
 * exits. Returns the child's wait status.
 */
static int in_child(void (*body)(const void *), const void *arg, char *msg, size_t msglen)
{
	int pipefd[2], status;
	pid_t pid;
	ssize_t n;

	if (pipe(pipefd))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(pipefd[1], STDERR_FILENO);
		close(pipefd[0]);
		body(arg);
		_exit(99);
	}
	close(pipefd[1]);
	n = read(pipefd[0], msg, msglen - 1);
	msg[n > 0 ? n : 0] = '\0';
	close(pipefd[0]);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

struct child_job {
	enum which w;
	void (*forbidden)(void);
	int (*attack)(void);
};

static int enter_list(enum which w)
{
	char err[256];

	return w == VMM ? sandbox_enter_vmm(err, sizeof(err)) : sandbox_enter_vcpu(err, sizeof(err));
}

/* @w's list, the allowed calls, then the forbidden one (if any). */
static void allowed_then_forbidden(const void *arg)
{
	const struct child_job *job = arg;
	int ret;

	if (enter_list(job->w))
		_exit(100);
	ret = allowed_calls(job->w);
	if (ret)
		_exit(ret);
	if (job->forbidden)
		job->forbidden();
	/*
	 * exit, not _exit: in a sanitizer build LeakSanitizer then stops
	 * the world from a ptrace-ing clone, under the filter; a call
	 * of its that the list lacks kills that clone and hangs the exit.
	 */
	exit(0);
}

static int child_run(enum which w, void (*forbidden)(void), char *msg, size_t msglen)
{
	struct child_job job = { .w = w, .forbidden = forbidden };

	return in_child(allowed_then_forbidden, &job, msg, msglen);
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
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fprintf(stderr, "\n  VMM: status %#x: %s", st, msg);
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

/*
 * Calls on another process, under each list. The target is a sibling
 * that waits in pause(); what the sandboxed child tries on it must fail
 * (SIGSYS naming the call, or EACCES where the policy answers an error)
 * and leave it as it was. Set up before the filter, as gpmm does: a pty,
 * a socket, a listening socket file, a file the sandbox allows and one
 * it does not.
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZER_TEST	1
#else
#define SANITIZER_TEST	0
#endif

struct target {
	pid_t pid;
	int pty;		/* a pty's slave, opened before the filter */
	int sock;		/* an AF_UNIX stream socket, not connected */
	char listen_path[108];	/* a socket someone listens on */
	char allowed[64], other[64];
};

static struct target tg;

static int errno_of(long r)
{
	return r < 0 ? errno : 0;
}

static int do_tgkill(void) { return errno_of(syscall(SYS_tgkill, tg.pid, tg.pid, SIGKILL)); }
static int do_tkill(void) { return errno_of(syscall(SYS_tkill, tg.pid, SIGKILL)); }
static int do_kill(void) { return errno_of(kill(tg.pid, SIGKILL)); }

static int do_prlimit(void)
{
	struct rlimit rl = { 0, 0 };

	return errno_of(syscall(SYS_prlimit64, tg.pid, RLIMIT_NOFILE, &rl, NULL));
}

static int do_sched(void)
{
	struct sched_param sp = { 0 };

	return errno_of(syscall(SYS_sched_setscheduler, tg.pid, SCHED_IDLE, &sp));
}

static int do_setpriority(void)
{
	return errno_of(syscall(SYS_setpriority, PRIO_PROCESS, tg.pid, 19));
}

static int do_tiocsti(void)
{
	char c = 'x';

	return errno_of(ioctl(tg.pty, TIOCSTI, &c));
}

static int do_open_other(void)
{
	int fd = open(tg.other, O_RDWR | O_CLOEXEC);

	if (fd >= 0)
		close(fd);
	return fd < 0 ? errno : 0;
}

static int do_connect(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", tg.listen_path);
	return errno_of(connect(tg.sock, (struct sockaddr *)&sa, sizeof(sa)));
}

/* The same kinds of call on the process itself, as gpmm makes them: 0 if all worked. */
static int own_calls(enum which w)
{
	struct sched_param sp = { 0 };
	struct termios t;
	struct rlimit rl;
	int fd;

	if (syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), 0))
		return 10;
	if (w == VCPU)
		return 0;
	if (getrlimit(RLIMIT_NOFILE, &rl) || syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &rl) ||
	    syscall(SYS_prlimit64, getpid(), RLIMIT_NOFILE, NULL, &rl))
		return 12;
	if (sched_setscheduler(0, SCHED_OTHER, &sp) || sched_getscheduler(0) != SCHED_OTHER)
		return 13;
	errno = 0;
	if (setpriority(PRIO_PROCESS, 0, getpriority(PRIO_PROCESS, 0)) || errno)
		return 14;
	if (tcgetattr(tg.pty, &t) || tcsetattr(tg.pty, TCSANOW, &t) || !isatty(tg.pty))
		return 15;
	fd = open(tg.allowed, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 16;
	close(fd);
	return 0;
}

/*
 * In a child: the file system restriction (the VMM's own paths and
 * tg.allowed), then @w's list, the calls on itself, then @attack. Exits
 * 0 when @attack returned an error, 1 when it worked, 100+ when setup or
 * an own call failed.
 */
static void own_then_attack(const void *arg)
{
	const struct child_job *job = arg;
	char err[256];
	int ret;

	if (sandbox_fs_allow(tg.allowed, SANDBOX_FS_READ | SANDBOX_FS_WRITE, err,
			     sizeof(err)) || sandbox_fs_enter(err, sizeof(err)))
		_exit(100);
	if (enter_list(job->w))
		_exit(101);
	ret = own_calls(job->w);
	if (ret)
		_exit(100 + ret);
	ret = job->attack();
	fprintf(stderr, "call answered %s\n", strerror(ret));
	exit(ret ? 0 : 1);
}

static int attack_run(enum which w, int (*attack)(void), char *msg, size_t msglen)
{
	struct child_job job = { .w = w, .attack = attack };

	return in_child(own_then_attack, &job, msg, msglen);
}

static bool target_spawn(void)
{
	tg.pid = fork();
	if (tg.pid == 0) {
		for (;;)
			pause();
	}
	return tg.pid > 0;
}

static bool target_setup(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC), fd;
	static int listen_fd = -1;

	if (!target_spawn() || m < 0 || grantpt(m) || unlockpt(m))
		return false;
	tg.pty = open(ptsname(m), O_RDWR | O_NOCTTY | O_CLOEXEC);
	tg.sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	snprintf(tg.listen_path, sizeof(tg.listen_path), "/tmp/gpmm-sandbox-%d.sock", getpid());
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", tg.listen_path);
	unlink(tg.listen_path);
	listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (bind(listen_fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(listen_fd, 4))
		return false;
	snprintf(tg.allowed, sizeof(tg.allowed), "/tmp/gpmm-sandbox-%d.ok", getpid());
	snprintf(tg.other, sizeof(tg.other), "/tmp/gpmm-sandbox-%d.other", getpid());
	for (int i = 0; i < 2; i++) {
		fd = open(i ? tg.other : tg.allowed, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0)
			return false;
		close(fd);
	}
	return tg.pty >= 0 && tg.sock >= 0;
}

/* The target as it was: alive, its limit, scheduling class and nice value untouched. */
static bool target_untouched(void)
{
	struct rlimit rl;
	int ret;

	errno = 0;
	ret = getpriority(PRIO_PROCESS, (id_t)tg.pid);
	usleep(1000);	/* a signal sent is delivered by now; not a bound on a wait */
	return waitpid(tg.pid, NULL, WNOHANG) == 0 &&
	       prlimit(tg.pid, RLIMIT_NOFILE, NULL, &rl) == 0 && rl.rlim_cur > 0 &&
	       sched_getscheduler(tg.pid) == SCHED_OTHER && ret == 0 && errno == 0;
}

static const struct attack {
	const char *what;
	int (*call)(void);
	const char *vmm_says, *vcpu_says;	/* "(name)" of the SIGSYS, or NULL: EACCES */
} attacks[] = {
	{ "tgkill SIGKILL", do_tgkill, "(tgkill)", "(tgkill)" },
	{ "tkill SIGKILL", do_tkill, "(tkill)", "(tkill)" },
	{ "kill SIGKILL", do_kill, "(kill)", "(kill)" },
	{ "prlimit64 RLIMIT_NOFILE", do_prlimit, "(prlimit64)", "(prlimit64)" },
	{ "sched_setscheduler SCHED_IDLE", do_sched, "(sched_setscheduler)",
	  "(sched_setscheduler)" },
	{ "setpriority", do_setpriority, "(setpriority)", "(setpriority)" },
	{ "TIOCSTI", do_tiocsti, "(ioctl)", "(ioctl)" },
	{ "open outside the allowed files", do_open_other, NULL, "(openat)" },
	{ "connect to a listening socket file", do_connect, NULL, "(connect)" },
};

static void attack_all(enum which w)
{
	char msg[512];

	CU_ASSERT_FATAL(target_setup());
	for (size_t i = 0; i < sizeof(attacks) / sizeof(attacks[0]); i++) {
		const char *says = w == VMM ? attacks[i].vmm_says : attacks[i].vcpu_says;
		int st = attack_run(w, attacks[i].call, msg, sizeof(msg));
		bool eacces = WIFEXITED(st) && WEXITSTATUS(st) == 0 &&
			      strstr(msg, strerror(EACCES));
		bool ok = says ? WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS && strstr(msg, says) :
				 eacces;

		/* a sanitizer build's lists open files (sandbox.c): Landlock answers */
		if (SANITIZER_TEST && attacks[i].call == do_open_other)
			ok |= eacces;

		if (!ok || !target_untouched())
			fprintf(stderr, "\n  %s, %s: status %#x, the target %s: %s",
				w == VMM ? "VMM" : "vCPU", attacks[i].what, st,
				target_untouched() ? "untouched" : "HIT", msg);
		CU_ASSERT(ok);
		CU_ASSERT(target_untouched());
		if (!target_untouched()) {	/* a new one for the next call */
			kill(tg.pid, SIGKILL);
			waitpid(tg.pid, NULL, 0);
			CU_ASSERT_FATAL(target_spawn());
		}
	}
	kill(tg.pid, SIGKILL);
	waitpid(tg.pid, NULL, 0);
	close(tg.pty);
	close(tg.sock);
	unlink(tg.listen_path);
	unlink(tg.allowed);
	unlink(tg.other);
}

static void test_vmm_attacks(void)
{
	attack_all(VMM);
}

static void test_vcpu_attacks(void)
{
	attack_all(VCPU);
}

static const struct suite_test tests[] = {
	{ "what each list needs still works", test_allowed },
	{ "the VMM's list ends the process on a forbidden call", test_vmm_forbids },
	{ "a vCPU thread's list is narrower", test_vcpu_forbids },
	{ "under the VMM's sandbox no call reaches another process", test_vmm_attacks },
	{ "under a vCPU's sandbox no call reaches another process", test_vcpu_attacks },
};

int register_sandbox_suite(void)
{
	return SUITE("sandbox", tests);
}
