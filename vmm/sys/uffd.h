/* SPDX-License-Identifier: GPL-2.0 */
/* A userfaultfd for this process, by the door the host opens (uffd.c). */
#ifndef GPMM_UFFD_H
#define GPMM_UFFD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

struct pollfd;
struct uffd_msg;

/*
 * A thread that reads a userfaultfd (O_NONBLOCK) until told to stop:
 * pfd[0] is the userfaultfd, pfd[1] the stop eventfd, any more are the
 * caller's. Each message goes to @msg; when a read finds the queue empty
 * (it began at @now()), @empty is told so, then all of pfd is polled and
 * @ready sees which of the caller's were ready. @empty, @ready may be NULL.
 */
struct uffd_reader {
	struct pollfd *pfd;
	unsigned int nfd;
	void (*msg)(void *opaque, const struct uffd_msg *m);
	void (*empty)(void *opaque, uint64_t began_ns);
	void (*ready)(void *opaque, const struct pollfd *pfd);
	uint64_t (*now)(void);
	void *opaque;
};

void uffd_read_loop(const struct uffd_reader *r);

#endif
