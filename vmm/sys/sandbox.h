/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The VMM's sandbox. Seccomp allow-lists (libseccomp): one for the whole
 * VMM process once it is set up, a narrower one each vCPU thread adds for
 * itself. A forbidden system call names itself on stderr and ends the
 * process with SIGSYS: the pool service, and every VM in another process,
 * carry on. Landlock: the paths the process may still open.
 */
#ifndef GPMM_SANDBOX_H
#define GPMM_SANDBOX_H

#include <stddef.h>

#include "mm/mm.h"

/*
 * Every thread of the process, present and future. 0, or -errno with a
 * sentence in @err (a kernel without seccomp filters: -ENOSYS/-EINVAL);
 * the caller decides whether to go on without.
 */
__must_check int sandbox_enter_vmm(char *err, size_t errlen);
/* The calling vCPU thread only, on top of the process's list. */
__must_check int sandbox_enter_vcpu(char *err, size_t errlen);

/* What a path stays good for once the file system is restricted. */
#define SANDBOX_FS_READ		1U	/* open to read; list a directory */
#define SANDBOX_FS_WRITE	2U	/* open to write, truncate */
#define SANDBOX_FS_CREATE	4U	/* a directory: make files and sockets, remove them */
#define SANDBOX_FS_EXEC		8U

/*
 * Landlock (vmm/sys/landlock.c). sandbox_fs_allow adds @path and what is
 * beneath it; a path that cannot be opened is left out (0).
 * sandbox_fs_enter then restricts the calling thread and every thread it
 * starts afterwards to those paths and the VMM's own (devices, /proc/self,
 * system libraries): call it before the first thread. -EOPNOTSUPP: the
 * kernel has no Landlock; other -errno: it failed; both with a sentence
 * in @err.
 */
__must_check int sandbox_fs_allow(const char *path, unsigned int how, char *err,
				  size_t errlen);
__must_check int sandbox_fs_enter(char *err, size_t errlen);
/* The kernel's Landlock ABI version, or -errno without Landlock. */
int sandbox_fs_abi(void);

#endif
