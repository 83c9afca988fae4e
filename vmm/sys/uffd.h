/* SPDX-License-Identifier: GPL-2.0 */
/* A userfaultfd for this process, by the door the host opens (uffd.c). */
#ifndef GPMM_UFFD_H
#define GPMM_UFFD_H

#include <stdbool.h>
#include <stddef.h>

#include "vmm/core/compiler.h"

#define UFFD_DEVICE	"/dev/userfaultfd"

/*
 * A new userfaultfd of this process (@flags: O_CLOEXEC, O_NONBLOCK), not
 * yet through UFFDIO_API: the userfaultfd system call, or, where that is
 * refused, /dev/userfaultfd. -errno of the system call when neither works.
 */
__must_check int uffd_create(int flags);
/* The last uffd_create() that worked went through /dev/userfaultfd. */
bool uffd_via_device(void);
/* Why uffd_create() failed with @err, as a sentence for the operator. */
void uffd_explain(int err, char *buf, size_t len);

#endif
