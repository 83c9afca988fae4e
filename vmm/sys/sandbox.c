// SPDX-License-Identifier: GPL-2.0
/*
 * The VMM's syscall allow-lists. A guest that finds a bug in a device
 * model has the vCPU thread's privileges, so that thread gets the least:
 * I/O on descriptors it already holds, memory management, futexes,
 * signals to its own threads, and ioctls of the KVM and userfaultfd kinds
 * only. The rest of the process (QMP, console sockets, creating VMs later)
 * keeps what a VMM needs and loses what only an attacker wants: execve,
 * fork, ptrace, sockets other than AF_UNIX, mounts, module and kexec
 * loading, bpf, perf, and changes of credentials.
 *
 * Both lists trap (SIGSYS) rather than kill outright, so the process can
 * say which call it was before it dies of the same signal.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "vmm/sys/sandbox.h"

#define KVMIO		0xAE	/* ioctl types: linux/kvm.h */
#define UFFDIO		0xAA	/* linux/userfaultfd.h */
#define TTYIO		0x54	/* 'T': terminals, ptys, FIONREAD */
#define BLKIO		0x12	/* block device size */

static const int vcpu_allowed[] = {
	SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(readv), SCMP_SYS(writev),
	SCMP_SYS(pread64), SCMP_SYS(pwrite64), SCMP_SYS(preadv), SCMP_SYS(pwritev),
	SCMP_SYS(preadv2), SCMP_SYS(pwritev2), SCMP_SYS(lseek), SCMP_SYS(fsync),
	SCMP_SYS(fdatasync), SCMP_SYS(fallocate), SCMP_SYS(close), SCMP_SYS(fcntl),
	SCMP_SYS(sendto), SCMP_SYS(sendmsg), SCMP_SYS(recvfrom), SCMP_SYS(recvmsg),
	SCMP_SYS(poll), SCMP_SYS(ppoll), SCMP_SYS(fstat), SCMP_SYS(newfstatat),
	SCMP_SYS(futex), SCMP_SYS(sched_yield), SCMP_SYS(nanosleep),
	SCMP_SYS(clock_nanosleep), SCMP_SYS(clock_gettime), SCMP_SYS(gettimeofday),
	SCMP_SYS(mmap), SCMP_SYS(munmap), SCMP_SYS(mprotect), SCMP_SYS(madvise),
	SCMP_SYS(mremap), SCMP_SYS(brk), SCMP_SYS(rt_sigprocmask),
	SCMP_SYS(rt_sigaction), SCMP_SYS(rt_sigreturn), SCMP_SYS(sigaltstack),
	SCMP_SYS(tgkill), SCMP_SYS(tkill), SCMP_SYS(getpid), SCMP_SYS(gettid),
	SCMP_SYS(exit), SCMP_SYS(exit_group), SCMP_SYS(restart_syscall),
	SCMP_SYS(getrandom), SCMP_SYS(madvise), SCMP_SYS(rseq),
};

static const int vmm_allowed[] = {
	SCMP_SYS(openat), SCMP_SYS(open), SCMP_SYS(close), SCMP_SYS(close_range),
	SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(readv), SCMP_SYS(writev),
	SCMP_SYS(pread64), SCMP_SYS(pwrite64), SCMP_SYS(preadv), SCMP_SYS(pwritev),
	SCMP_SYS(lseek), SCMP_SYS(fsync), SCMP_SYS(fdatasync), SCMP_SYS(fcntl),
	SCMP_SYS(flock),
	SCMP_SYS(fstat), SCMP_SYS(stat), SCMP_SYS(lstat), SCMP_SYS(newfstatat),
	SCMP_SYS(statx), SCMP_SYS(statfs), SCMP_SYS(fstatfs), SCMP_SYS(access),
	SCMP_SYS(faccessat), SCMP_SYS(faccessat2), SCMP_SYS(getdents64),
	SCMP_SYS(readlink), SCMP_SYS(readlinkat), SCMP_SYS(getcwd),
	SCMP_SYS(unlink), SCMP_SYS(unlinkat), SCMP_SYS(rename), SCMP_SYS(renameat),
	SCMP_SYS(renameat2), SCMP_SYS(mkdir), SCMP_SYS(mkdirat), SCMP_SYS(chmod),
	SCMP_SYS(fchmod), SCMP_SYS(fchmodat), SCMP_SYS(umask), SCMP_SYS(ftruncate),
	SCMP_SYS(fallocate), SCMP_SYS(memfd_create), SCMP_SYS(userfaultfd),
	SCMP_SYS(eventfd2), SCMP_SYS(pipe2), SCMP_SYS(dup), SCMP_SYS(dup2),
	SCMP_SYS(dup3), SCMP_SYS(poll), SCMP_SYS(ppoll), SCMP_SYS(select),
	SCMP_SYS(pselect6), SCMP_SYS(epoll_create1), SCMP_SYS(epoll_ctl),
	SCMP_SYS(epoll_wait), SCMP_SYS(epoll_pwait), SCMP_SYS(timerfd_create),
	SCMP_SYS(timerfd_settime), SCMP_SYS(signalfd4),
	SCMP_SYS(accept), SCMP_SYS(accept4), SCMP_SYS(bind), SCMP_SYS(listen),
	SCMP_SYS(connect), SCMP_SYS(socketpair), SCMP_SYS(shutdown),
	SCMP_SYS(sendto), SCMP_SYS(sendmsg), SCMP_SYS(recvfrom), SCMP_SYS(recvmsg),
	SCMP_SYS(getsockname), SCMP_SYS(getpeername), SCMP_SYS(setsockopt),
	SCMP_SYS(getsockopt), SCMP_SYS(mmap), SCMP_SYS(munmap), SCMP_SYS(mprotect),
	SCMP_SYS(madvise), SCMP_SYS(mremap), SCMP_SYS(brk), SCMP_SYS(mincore),
	SCMP_SYS(msync), SCMP_SYS(futex), SCMP_SYS(set_robust_list),
	SCMP_SYS(get_robust_list), SCMP_SYS(rseq), SCMP_SYS(sched_yield),
	SCMP_SYS(sched_getaffinity), SCMP_SYS(nanosleep), SCMP_SYS(clock_nanosleep),
	SCMP_SYS(clock_gettime), SCMP_SYS(clock_getres), SCMP_SYS(gettimeofday),
	SCMP_SYS(time), SCMP_SYS(times), SCMP_SYS(rt_sigprocmask),
	SCMP_SYS(rt_sigaction), SCMP_SYS(rt_sigreturn), SCMP_SYS(rt_sigtimedwait),
	SCMP_SYS(sigaltstack), SCMP_SYS(tgkill), SCMP_SYS(tkill), SCMP_SYS(getpid),
	SCMP_SYS(gettid), SCMP_SYS(getppid), SCMP_SYS(getuid), SCMP_SYS(geteuid),
	SCMP_SYS(getgid), SCMP_SYS(getegid), SCMP_SYS(getrandom), SCMP_SYS(uname),
	SCMP_SYS(sysinfo), SCMP_SYS(prlimit64), SCMP_SYS(getrlimit), SCMP_SYS(prctl),
	SCMP_SYS(exit), SCMP_SYS(exit_group), SCMP_SYS(restart_syscall),
	SCMP_SYS(sched_setscheduler), SCMP_SYS(sched_getscheduler),
	SCMP_SYS(sched_setparam), SCMP_SYS(sched_getparam), SCMP_SYS(setpriority),
	SCMP_SYS(getpriority), SCMP_SYS(wait4),
	SCMP_SYS(seccomp),	/* vCPU threads add their own filter */
};

/*
 * The sanitizers' runtimes report from inside the process: they read
 * /proc, start a symbolizer, and LeakSanitizer stops the world with
 * ptrace from a clone. A sanitizer build allows that much more, so that a
 * report arrives whole; release builds never do.
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZER_BUILD 1
static const int sanitizer_allowed[] = {
	SCMP_SYS(open), SCMP_SYS(openat), SCMP_SYS(readlink), SCMP_SYS(readlinkat),
	SCMP_SYS(getdents), SCMP_SYS(getdents64), SCMP_SYS(prctl), SCMP_SYS(sched_getaffinity),
	SCMP_SYS(ptrace), SCMP_SYS(wait4), SCMP_SYS(waitid), SCMP_SYS(clone),
	SCMP_SYS(execve), SCMP_SYS(pipe2), SCMP_SYS(dup2), SCMP_SYS(getppid),
	SCMP_SYS(kill), SCMP_SYS(mincore), SCMP_SYS(setrlimit), SCMP_SYS(prlimit64),
	SCMP_SYS(getrlimit), SCMP_SYS(sched_yield), SCMP_SYS(getuid),
};
#else
#define SANITIZER_BUILD 0
#endif

static const char *const no_name = "?";
static char *syscall_names[512];
static __thread const char *sandbox_role;

static void put_str(char *buf, size_t *len, size_t cap, const char *s)
{
	while (*s && *len < cap)
		buf[(*len)++] = *s++;
}

static void put_num(char *buf, size_t *len, size_t cap, unsigned int n)
{
	char digits[12];
	int i = 0;

	do
		digits[i++] = (char)('0' + n % 10);
	while ((n /= 10) && i < (int)sizeof(digits));
	while (i && *len < cap)
		buf[(*len)++] = digits[--i];
}

/*
 * Runs in the offending thread: only async-signal-safe work. The default
 * action is put back and the signal raised again, so the process still
 * dies "killed by SIGSYS" as a supervisor expects.
 */
static void sigsys_handler(int sig, siginfo_t *si, void *uc)
{
	unsigned int nr = (unsigned int)si->si_syscall;
	const char *name = nr < 512 && syscall_names[nr] ? syscall_names[nr] : no_name;
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	char msg[256];
	size_t len = 0;

	put_str(msg, &len, sizeof(msg), "gpmm: seccomp: the ");
	put_str(msg, &len, sizeof(msg), sandbox_role ? sandbox_role : "VMM");
	put_str(msg, &len, sizeof(msg), " made forbidden system call ");
	put_num(msg, &len, sizeof(msg), nr);
	put_str(msg, &len, sizeof(msg), " (");
	put_str(msg, &len, sizeof(msg), name);
	put_str(msg, &len, sizeof(msg), "): ending this VMM process "
		"(--no-seccomp runs without the filter)\n");
	if (write(STDERR_FILENO, msg, len) < 0)
		len = 0;
	sigaction(SIGSYS, &dfl, NULL);
	raise(SIGSYS);
}

static int install_handler(void)
{
	struct sigaction sa = { .sa_sigaction = sigsys_handler, .sa_flags = SA_SIGINFO };

	if (!syscall_names[0]) {
		for (int i = 0; i < 512; i++)
			syscall_names[i] = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, i);
	}
	sigemptyset(&sa.sa_mask);
	return sigaction(SIGSYS, &sa, NULL) ? -errno : 0;
}

static int allow_all(scmp_filter_ctx ctx, const int *nr, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr[i], 0);

		if (ret && ret != -EEXIST)
			return ret;
	}
	return 0;
}

/* ioctl by its type byte: KVM and userfaultfd always, the rest as given. */
static int allow_ioctl_types(scmp_filter_ctx ctx, const unsigned int *types, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
					   SCMP_A1(SCMP_CMP_MASKED_EQ, 0xff00, types[i] << 8));

		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Threads only: clone without CLONE_THREAD would be a fork. clone3 hides
 * its flags behind a pointer, so it answers ENOSYS and glibc falls back
 * to clone, whose flags the filter can read.
 */
static int allow_threads(scmp_filter_ctx ctx)
{
	int ret = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);

	if (ret || SANITIZER_BUILD)	/* sanitizer_allowed has every clone */
		return ret;
	return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
				SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
}

static int allow_unix_sockets(scmp_filter_ctx ctx)
{
	return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
				SCMP_A0(SCMP_CMP_EQ, AF_UNIX));
}

#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))

struct filter_spec {
	const char *role;		/* who, in the SIGSYS message */
	const int *allowed;
	size_t nr_allowed;
	const unsigned int *ioctl_types;
	size_t nr_ioctl_types;
	bool process;			/* every thread; sockets and threads too */
};

static const unsigned int vmm_ioctls[] = { KVMIO, UFFDIO, TTYIO, BLKIO };
static const unsigned int vcpu_ioctls[] = { KVMIO, UFFDIO };

static const struct filter_spec vmm_filter = {
	.role = "VMM", .allowed = vmm_allowed, .nr_allowed = ARRAY_LEN(vmm_allowed),
	.ioctl_types = vmm_ioctls, .nr_ioctl_types = ARRAY_LEN(vmm_ioctls),
	.process = true,
};

static const struct filter_spec vcpu_filter = {
	.role = "vCPU thread", .allowed = vcpu_allowed, .nr_allowed = ARRAY_LEN(vcpu_allowed),
	.ioctl_types = vcpu_ioctls, .nr_ioctl_types = ARRAY_LEN(vcpu_ioctls),
};

static int add_rules(scmp_filter_ctx ctx, const struct filter_spec *f)
{
	int ret = allow_all(ctx, f->allowed, f->nr_allowed);

	if (!ret)
		ret = allow_ioctl_types(ctx, f->ioctl_types, f->nr_ioctl_types);
	if (!ret && f->process)
		ret = allow_unix_sockets(ctx);
#if SANITIZER_BUILD
	if (!ret)
		ret = allow_all(ctx, sanitizer_allowed, ARRAY_LEN(sanitizer_allowed));
#endif
	if (!ret && f->process)
		ret = allow_threads(ctx);
	if (!ret)
		ret = install_handler();
	if (!ret && f->process)
		ret = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
	return ret;
}

static int enter(const struct filter_spec *f, char *err, size_t errlen)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_TRAP);
	int ret;

	if (!ctx) {
		snprintf(err, errlen, "seccomp: libseccomp cannot start a filter");
		return -ENOMEM;
	}
	ret = add_rules(ctx, f);
	if (!ret)
		ret = seccomp_load(ctx);
	seccomp_release(ctx);
	if (ret) {
		snprintf(err, errlen, "cannot install the %s's seccomp filter: %s", f->role,
			 strerror(-ret));
		return ret;
	}
	sandbox_role = f->role;
	return 0;
}

int sandbox_enter_vmm(char *err, size_t errlen)
{
	return enter(&vmm_filter, err, errlen);
}

int sandbox_enter_vcpu(char *err, size_t errlen)
{
	return enter(&vcpu_filter, err, errlen);
}
