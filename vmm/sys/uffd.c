// SPDX-License-Identifier: GPL-2.0
/*
 * A userfaultfd for this process, by whichever door the host opens to its
 * user. The userfaultfd system call serves root, and everyone where
 * vm.unprivileged_userfaultfd=1 (a host-wide switch no operator should
 * throw for one program). /dev/userfaultfd (Linux 6.1 and later) serves
 * whoever its permissions name: that is how libvirt's unprivileged
 * domain user gets one (docs/libvirt.md). UFFD_USER_MODE_ONLY, which the
 * system call gives everyone, is no use to gpmm: the faults on guest RAM
 * it must resolve are KVM's, taken in kernel mode.
 *
 * The device is opened once and kept: every userfaultfd after the first
 * is one USERFAULTFD_IOC_NEW on it, so none needs an open() after the
 * sandbox is installed (the host check makes the first, before it).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "vmm/sys/uffd.h"

#ifndef USERFAULTFD_IOC_NEW		/* Linux 6.1; older headers lack it */
#define USERFAULTFD_IOC_NEW	_IO(0xAA, 0x00)
#endif

static int dev_fd = -1;			/* /dev/userfaultfd, kept once opened */
static bool last_via_device;

/* The device's descriptor, opened on first use; racing openers keep one. */
static int uffd_device(void)
{
	int fd = __atomic_load_n(&dev_fd, __ATOMIC_ACQUIRE), expected = -1;

	if (fd >= 0)
		return fd;
	fd = open(UFFD_DEVICE, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (!__atomic_compare_exchange_n(&dev_fd, &expected, fd, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		close(fd);
		fd = expected;
	}
	return fd;
}

int uffd_create(int flags)
{
	int fd = (int)syscall(SYS_userfaultfd, flags), err = errno, dev;

	if (fd >= 0 || err != EPERM) {
		__atomic_store_n(&last_via_device, false, __ATOMIC_RELAXED);
		return fd >= 0 ? fd : -err;
	}
	dev = uffd_device();
	if (dev < 0)
		return -EPERM;
	fd = ioctl(dev, USERFAULTFD_IOC_NEW, flags);
	if (fd < 0)
		return -errno;
	__atomic_store_n(&last_via_device, true, __ATOMIC_RELAXED);
	return fd;
}

bool uffd_via_device(void)
{
	return __atomic_load_n(&last_via_device, __ATOMIC_RELAXED);
}

void uffd_explain(int err, char *buf, size_t len)
{
	if (err == -EPERM)
		snprintf(buf, len, "userfaultfd: %s (not root, vm.unprivileged_userfaultfd=0, and "
			 "%s, Linux 6.1+, absent or not open to this user: docs/libvirt.md)",
			 strerror(-err), UFFD_DEVICE);
	else
		snprintf(buf, len, "userfaultfd: %s", strerror(-err));
}

void uffd_read_loop(const struct uffd_reader *r)
{
	for (;;) {
		struct uffd_msg msg[16];
		uint64_t before = r->now();
		ssize_t n = read(r->pfd[0].fd, msg, sizeof(msg));

		if (n < 0 && errno == EAGAIN) {
			if (r->empty)
				r->empty(r->opaque, before);
			if (poll(r->pfd, r->nfd, -1) < 0 && errno != EINTR)
				break;
			if (r->pfd[1].revents)
				break;
			if (r->ready)
				r->ready(r->opaque, r->pfd);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (size_t i = 0; i < (size_t)n / sizeof(msg[0]); i++)
			r->msg(r->opaque, &msg[i]);
	}
}
