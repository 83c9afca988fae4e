// SPDX-License-Identifier: GPL-2.0
/*
 * The VMM's syscall allow-lists. A guest that finds a bug in a device
 * model has the vCPU thread's privileges, so that thread gets the least:
 * I/O on descriptors it already holds, memory management, futexes,
 * signals to its own process, and the KVM and userfaultfd requests a
 * running VM makes. The rest of the process (QMP, console sockets,
 * creating VMs later) keeps what a VMM needs and loses what only an
 * attacker wants: execve, fork, ptrace, sockets other than AF_UNIX
 * streams, connect, mounts, module and kexec loading, bpf, perf, and
 * changes of credentials.
 *
 * Nothing a list allows reaches another process: a call that names a
 * process (signals, scheduling, resource limits) is allowed only on this
 * one, its pid known when the filter is built; ioctls are allowed by exact
 * request number, so no terminal request that injects input (TIOCSTI)
 * passes; sockets cannot be connected (connect answers EACCES, which
 * unix_listen's probe understands) and are streams, so no datagram
 * reaches a socket by its name. What the process may open by path is
 * Landlock's part (vmm/sys/landlock.c).
 *
 * A forbidden call traps (SIGSYS) rather than killing outright, so the
 * process can say which call it was before it dies of the same signal.
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
#include <sys/ioctl.h>
#include <linux/if_tun.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/fs.h>
#include <linux/kvm.h>
#include <linux/userfaultfd.h>

#include "vmm/sys/sandbox.h"


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
	SCMP_SYS(mremap), SCMP_SYS(brk), SCMP_SYS(mincore), SCMP_SYS(rt_sigprocmask),
	SCMP_SYS(rt_sigaction), SCMP_SYS(rt_sigreturn), SCMP_SYS(sigaltstack),
	SCMP_SYS(getpid), SCMP_SYS(gettid), SCMP_SYS(exit), SCMP_SYS(exit_group), SCMP_SYS(restart_syscall),
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
	SCMP_SYS(renameat2), SCMP_SYS(mkdir), SCMP_SYS(mkdirat),
	SCMP_SYS(fchmod), SCMP_SYS(umask), SCMP_SYS(ftruncate),
	SCMP_SYS(fallocate), SCMP_SYS(memfd_create), SCMP_SYS(userfaultfd),
	SCMP_SYS(eventfd2), SCMP_SYS(pipe2), SCMP_SYS(dup), SCMP_SYS(dup2),
	SCMP_SYS(dup3), SCMP_SYS(poll), SCMP_SYS(ppoll), SCMP_SYS(select),
	SCMP_SYS(pselect6), SCMP_SYS(epoll_create1), SCMP_SYS(epoll_ctl),
	SCMP_SYS(epoll_wait), SCMP_SYS(epoll_pwait), SCMP_SYS(timerfd_create),
	SCMP_SYS(timerfd_settime), SCMP_SYS(signalfd4),
	SCMP_SYS(accept), SCMP_SYS(accept4), SCMP_SYS(bind), SCMP_SYS(listen),
	SCMP_SYS(shutdown),
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
	SCMP_SYS(sigaltstack), SCMP_SYS(getpid),
	SCMP_SYS(gettid), SCMP_SYS(getppid), SCMP_SYS(getuid), SCMP_SYS(geteuid),
	SCMP_SYS(getgid), SCMP_SYS(getegid), SCMP_SYS(getrandom), SCMP_SYS(uname),
	SCMP_SYS(sysinfo), SCMP_SYS(getrlimit), SCMP_SYS(prctl),
	SCMP_SYS(exit), SCMP_SYS(exit_group), SCMP_SYS(restart_syscall),
	SCMP_SYS(wait4),
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
	SCMP_SYS(getdents), SCMP_SYS(getdents64), SCMP_SYS(prctl),
	SCMP_SYS(ptrace), SCMP_SYS(wait4), SCMP_SYS(waitid), SCMP_SYS(clone),
	SCMP_SYS(execve), SCMP_SYS(pipe2), SCMP_SYS(dup2), SCMP_SYS(getppid),
	SCMP_SYS(mincore), SCMP_SYS(setrlimit), SCMP_SYS(getrlimit), SCMP_SYS(sched_yield),
	SCMP_SYS(getuid),
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

/*
 * The ioctl requests gpmm makes, by number: a request is 32 bits, so the
 * comparison ignores what a caller leaves in the upper half. The vCPU
 * thread gets what a running VM needs (run, interrupts, registers for a
 * reset or a dump, memory slots and userfaultfd for the balloon); the VMM
 * also what creates a VM (a userfaultfd from /dev/userfaultfd too), the
 * console's terminal requests (isatty, raw mode, a pty's number and lock)
 * a block device's size and a tap's settings (not TUNSETIFF: a tap is
 * attached before the filters, never after). No
 * terminal request that writes into another's input (TIOCSTI), sets a
 * controlling terminal or reaches the console driver passes.
 */
#ifndef USERFAULTFD_IOC_NEW
#define USERFAULTFD_IOC_NEW	_IO(0xAA, 0x00)	/* /dev/userfaultfd, Linux 6.1 */
#endif

static const unsigned long vcpu_ioctls[] = {
	KVM_RUN, KVM_IRQ_LINE, KVM_GET_REGS, KVM_SET_REGS, KVM_GET_SREGS, KVM_SET_SREGS,
	KVM_SET_MP_STATE, KVM_SET_USER_MEMORY_REGION,
	UFFDIO_REGISTER, UFFDIO_UNREGISTER, UFFDIO_WAKE, UFFDIO_ZEROPAGE, UFFDIO_COPY,
	UFFDIO_WRITEPROTECT,
};

static const unsigned long vmm_ioctls[] = {
	KVM_GET_API_VERSION, KVM_CHECK_EXTENSION, KVM_GET_VCPU_MMAP_SIZE,
	KVM_GET_SUPPORTED_CPUID, KVM_CREATE_VM, KVM_SET_TSS_ADDR, KVM_SET_IDENTITY_MAP_ADDR,
	KVM_CREATE_IRQCHIP, KVM_CREATE_PIT2, KVM_CREATE_VCPU, KVM_SET_CPUID2, UFFDIO_API,
	USERFAULTFD_IOC_NEW,
	TCGETS, TCSETS, TCSETSW, TCSETSF, TIOCGPTN, TIOCSPTLCK, TIOCGWINSZ, FIONREAD,
	BLKGETSIZE64,
	/* a tap the VMM holds: its flags, its virtio header, the offloads the driver takes */
	TUNGETIFF, TUNSETVNETHDRSZ, TUNSETOFFLOAD,
};

static int allow_ioctls(scmp_filter_ctx ctx, const unsigned long *req, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
					   SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL, req[i]));

		if (ret && ret != -EEXIST)
			return ret;
	}
	return 0;
}

/* @nr when its argument @arg is @val. */
static int allow_if(scmp_filter_ctx ctx, int nr, unsigned int arg, scmp_datum_t val)
{
	return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
				SCMP_CMP(arg, SCMP_CMP_EQ, val));
}

/*
 * Signals only to this process: tgkill names the thread group, which the
 * filter compares with ours (pthread_kill and raise use it). tkill names
 * a bare thread id the filter cannot tell from another process's, and
 * kill and the queued signals are not needed: none is allowed. The pid is
 * the one the filter is built in: the VMM never forks under it.
 */
static int allow_own_signals(scmp_filter_ctx ctx, pid_t self)
{
	return allow_if(ctx, SCMP_SYS(tgkill), 0, (scmp_datum_t)self);
}

/*
 * Scheduling and limits of this process only. 0 is the calling thread
 * (sched_*, setpriority) or process (prlimit64), which is how gpmm raises a
 * migration window's thread (page_move.c) and how glibc reads its limits;
 * our own pid names the main thread. Another thread of ours by its tid is
 * not allowed: the filter cannot tell it from another process.
 * setpriority and getpriority: PRIO_PROCESS only, never a group or a user.
 * sched_getaffinity reads any thread's CPU mask, nothing more: glibc's
 * pthread_getattr_np asks it by thread id (the sanitizers' runtimes do).
 */
static const int own_pid_calls[] = {
	SCMP_SYS(sched_setscheduler), SCMP_SYS(sched_getscheduler), SCMP_SYS(sched_setparam),
	SCMP_SYS(sched_getparam), SCMP_SYS(sched_setaffinity), SCMP_SYS(prlimit64),
};

static int allow_own_scheduling(scmp_filter_ctx ctx, pid_t self)
{
	static const int prio[] = { SCMP_SYS(setpriority), SCMP_SYS(getpriority) };
	int ret = 0;

	for (size_t i = 0; !ret && i < sizeof(own_pid_calls) / sizeof(own_pid_calls[0]); i++) {
		ret = allow_if(ctx, own_pid_calls[i], 0, 0);
		if (!ret)
			ret = allow_if(ctx, own_pid_calls[i], 0, (scmp_datum_t)self);
	}
	for (size_t i = 0; !ret && i < 2; i++) {
		ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, prio[i], 2,
				       SCMP_A0(SCMP_CMP_EQ, PRIO_PROCESS), SCMP_A1(SCMP_CMP_EQ, 0));
		if (!ret)
			ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, prio[i], 2,
					       SCMP_A0(SCMP_CMP_EQ, PRIO_PROCESS),
					       SCMP_A1(SCMP_CMP_EQ, (scmp_datum_t)self));
	}
	return ret;
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

/*
 * AF_UNIX streams and packet sockets: a datagram socket could send to any
 * socket file by its name. connect answers EACCES: every socket the VMM
 * talks on is connected before the filter (the pool service) or accepted
 * from its own listening sockets, so a connect can only be an attempt on
 * another process's socket (a daemon's, D-Bus) or unix_listen asking
 * whether a socket file is still in use, which copes.
 */
static int allow_unix_sockets(scmp_filter_ctx ctx)
{
	static const int types[] = { SOCK_STREAM, SOCK_SEQPACKET };
	int ret = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(connect), 0);

	for (size_t i = 0; !ret && i < 2; i++) {
		ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 2,
				       SCMP_A0(SCMP_CMP_EQ, AF_UNIX),
				       SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, types[i]));
		if (!ret)
			ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socketpair), 2,
					       SCMP_A0(SCMP_CMP_EQ, AF_UNIX),
					       SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, types[i]));
	}
	return ret;
}

#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))

struct filter_spec {
	const char *role;		/* who, in the SIGSYS message */
	const int *allowed;
	size_t nr_allowed;
	bool process;			/* every thread; sockets, threads, creation */
};

static const struct filter_spec vmm_filter = {
	.role = "VMM", .allowed = vmm_allowed, .nr_allowed = ARRAY_LEN(vmm_allowed),
	.process = true,
};

static const struct filter_spec vcpu_filter = {
	.role = "vCPU thread", .allowed = vcpu_allowed, .nr_allowed = ARRAY_LEN(vcpu_allowed),
};

static int add_rules(scmp_filter_ctx ctx, const struct filter_spec *f)
{
	pid_t self = getpid();
	int ret = allow_all(ctx, f->allowed, f->nr_allowed);

	if (!ret)
		ret = allow_ioctls(ctx, vcpu_ioctls, ARRAY_LEN(vcpu_ioctls));
	if (!ret && f->process)
		ret = allow_ioctls(ctx, vmm_ioctls, ARRAY_LEN(vmm_ioctls));
	if (!ret)
		ret = allow_own_signals(ctx, self);
	if (!ret && f->process)
		ret = allow_own_scheduling(ctx, self);
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
