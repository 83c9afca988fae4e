// SPDX-License-Identifier: GPL-2.0
/*
 * The VMM's file system restriction (Landlock). Seccomp cannot read a
 * path, so once the process is set up the files it may still open, create
 * or remove by name are these: the devices a VM needs, its own /proc
 * entry, the system libraries glibc may still load (libgcc_s for
 * pthread_cancel), and what the caller adds for its VMs (kernels, disks,
 * console files, the directories its sockets live in). Everything else,
 * another process's /proc/PID/mem, a user's dotfiles, other sockets'
 * directories, answers EACCES.
 *
 * Landlock restricts the calling thread and the threads it starts later,
 * never a thread already running: the caller enters before its first
 * thread. On kernels with Landlock ABI 6 (Linux 6.12) the domain is also
 * scoped: no signal and no abstract unix socket reaches a process outside
 * it. The raw system calls, as glibc has no wrappers; the structure is
 * ours because the build's <linux/landlock.h> may predate the fields.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/landlock.h>

#include "mm/mm.h"
#include "vmm/sys/sandbox.h"

#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER	(1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE	(1ULL << 14)
#endif
#define LL_NET_BIND_TCP			(1ULL << 0)
#define LL_NET_CONNECT_TCP		(1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX		(1ULL << 0)
#define LL_SCOPE_SIGNAL			(1ULL << 1)

/* struct landlock_ruleset_attr as of ABI 6; the kernel is told its size for the ABI */
struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;	/* ABI 4 */
	uint64_t scoped;		/* ABI 6 */
};

#define LL_FS_ABI1	((1ULL << 13) - 1)	/* EXECUTE .. MAKE_SYM */
#define LL_FILE_RIGHTS	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
			 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE)

static int ruleset_fd = -1;
static int abi;			/* 0: not asked yet; < 0: -errno, no Landlock */
static uint64_t handled;	/* the file system rights this ABI restricts */

/*
 * What every VMM opens after it is set up: KVM and userfaultfd devices,
 * ptys for a pty console, its own /proc entry (the report's maps, smaps,
 * the unix socket table), the host's THP and map limits, and what
 * glibc's dlopen reads.
 */
static const struct { const char *path; unsigned int how; } vmm_paths[] = {
	{ "/dev/kvm", SANDBOX_FS_READ | SANDBOX_FS_WRITE },
	{ "/dev/userfaultfd", SANDBOX_FS_READ | SANDBOX_FS_WRITE },
	{ "/dev/ptmx", SANDBOX_FS_READ | SANDBOX_FS_WRITE },
	{ "/dev/pts", SANDBOX_FS_READ | SANDBOX_FS_WRITE },
	{ "/dev/null", SANDBOX_FS_READ | SANDBOX_FS_WRITE },
	{ "/proc/self", SANDBOX_FS_READ },	/* /proc/PID of this process */
	{ "/proc/sys/vm/max_map_count", SANDBOX_FS_READ },
	{ "/sys/kernel/mm/transparent_hugepage", SANDBOX_FS_READ },
	{ "/usr/lib", SANDBOX_FS_READ },
	{ "/lib", SANDBOX_FS_READ },
	{ "/lib64", SANDBOX_FS_READ },
	{ "/etc/ld.so.cache", SANDBOX_FS_READ },
	{ "/etc/localtime", SANDBOX_FS_READ },
};

static long ll_create(const struct ll_ruleset_attr *attr, size_t size, uint32_t flags)
{
	return syscall(SYS_landlock_create_ruleset, attr, size, flags);
}

/* The kernel's ABI and the rights it restricts; -errno without Landlock. */
static int ll_probe(void)
{
	long v;

	if (abi)
		return abi;
	/* a kernel built without Landlock answers ENOSYS */
	v = mm_fault_hit(MM_FAULT_LANDLOCK) ? (errno = ENOSYS, -1) :
		ll_create(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	abi = v > 0 ? (int)v : -errno;
	handled = LL_FS_ABI1;
	if (abi >= 2)
		handled |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		handled |= LANDLOCK_ACCESS_FS_TRUNCATE;
	return abi;
}

static int ll_open_ruleset(char *err, size_t errlen)
{
	struct ll_ruleset_attr attr = { .handled_access_fs = handled };
	size_t size = sizeof(attr.handled_access_fs);

	if (abi >= 4) {
		attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
		size += sizeof(attr.handled_access_net);
	}
	if (abi >= 6) {
		attr.scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL;
		size += sizeof(attr.scoped);
	}
	ruleset_fd = (int)ll_create(&attr, size, 0);
	if (ruleset_fd < 0) {
		snprintf(err, errlen, "landlock: cannot create a ruleset (ABI %d): %s", abi,
			 strerror(errno));
		return -errno;
	}
	return 0;
}

static uint64_t ll_rights(unsigned int how, bool dir)
{
	uint64_t r = 0;

	if (how & SANDBOX_FS_READ)
		r |= LANDLOCK_ACCESS_FS_READ_FILE | (dir ? LANDLOCK_ACCESS_FS_READ_DIR : 0);
	if (how & SANDBOX_FS_WRITE)
		r |= LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE;
	if (how & SANDBOX_FS_EXEC)
		r |= LANDLOCK_ACCESS_FS_EXECUTE;
	if ((how & SANDBOX_FS_CREATE) && dir)
		r |= LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |
		     LANDLOCK_ACCESS_FS_REMOVE_FILE;
	if (!dir)
		r &= LL_FILE_RIGHTS;
	return r & handled;
}

int sandbox_fs_allow(const char *path, unsigned int how, char *err, size_t errlen)
{
	struct landlock_path_beneath_attr pb = { 0 };
	struct stat st;
	int ret = 0;

	if (ll_probe() < 0)
		return 0;	/* sandbox_fs_enter says it */
	if (ruleset_fd < 0 && (ret = ll_open_ruleset(err, errlen)))
		return ret;
	pb.parent_fd = open(path, O_PATH | O_CLOEXEC);
	if (pb.parent_fd < 0)
		return 0;	/* nothing there to allow: a later open says why */
	if (fstat(pb.parent_fd, &st) == 0)
		pb.allowed_access = ll_rights(how, S_ISDIR(st.st_mode));
	if (pb.allowed_access &&
	    syscall(SYS_landlock_add_rule, ruleset_fd, LANDLOCK_RULE_PATH_BENEATH, &pb, 0)) {
		ret = -errno;
		snprintf(err, errlen, "landlock: cannot allow %s: %s", path, strerror(errno));
	}
	close(pb.parent_fd);
	return ret;
}

/*
 * A sanitizer build's runtime reads the binary and its libraries and
 * starts a symbolizer when it reports; release builds never do.
 */
static int allow_sanitizer(char *err, size_t errlen)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	return sandbox_fs_allow("/", SANDBOX_FS_READ | SANDBOX_FS_EXEC, err, errlen);
#else
	(void)err;
	(void)errlen;
	return 0;
#endif
}

static int allow_vmm_paths(char *err, size_t errlen)
{
	int ret = allow_sanitizer(err, errlen);

	for (size_t i = 0; !ret && i < sizeof(vmm_paths) / sizeof(vmm_paths[0]); i++)
		ret = sandbox_fs_allow(vmm_paths[i].path, vmm_paths[i].how, err, errlen);
	return ret;
}

int sandbox_fs_enter(char *err, size_t errlen)
{
	int ret;

	if (ll_probe() < 0) {
		snprintf(err, errlen, "this kernel has no Landlock (%s)", strerror(-abi));
		return -EOPNOTSUPP;
	}
	ret = allow_vmm_paths(err, errlen);
	if (ret)
		return ret;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(SYS_landlock_restrict_self, ruleset_fd, 0)) {
		ret = -errno;
		snprintf(err, errlen, "landlock: cannot restrict the file system: %s",
			 strerror(errno));
	}
	close(ruleset_fd);
	ruleset_fd = -1;
	return ret;
}

int sandbox_fs_abi(void)
{
	return ll_probe();
}
