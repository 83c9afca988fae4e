/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Seccomp allow-lists (libseccomp): one for the whole VMM process once it
 * is set up, a narrower one each vCPU thread adds for itself. A forbidden
 * system call names itself on stderr and ends the process with SIGSYS:
 * the pool service, and every VM in another process, carry on.
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

#endif
