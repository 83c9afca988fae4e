// SPDX-License-Identifier: GPL-2.0
/*
 * Datagrams of the pool protocol and the descriptors that ride on them
 * (SCM_RIGHTS), for both ends: pool_service.c and pool_client.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "vmm/pool_service/pool_proto.h"

/*
 * One datagram, and the descriptors sent with it: the first @nfd go to
 * @fds (each -1 until then), any more are closed at once, so a peer
 * cannot fill our descriptor table. -EMSGSIZE: longer than @cap.
 */
ssize_t pool_wire_recv(int fd, struct pool_msg *m, size_t cap, int *fds, unsigned int nfd)
{
	char cbuf[CMSG_SPACE(sizeof(int) * POOL_MSG_FDS)];
	struct iovec iov = { .iov_base = m, .iov_len = cap };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	unsigned int got = 0;
	ssize_t len;

	do {
		len = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
	} while (len < 0 && errno == EINTR);
	if (len < 0)
		return -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		int n = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		int passed[POOL_MSG_FDS];

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS || n > POOL_MSG_FDS)
			continue;
		memcpy(passed, CMSG_DATA(c), (size_t)n * sizeof(int));
		for (int i = 0; i < n; i++) {
			if (got < nfd)
				fds[got++] = passed[i];
			else
				close(passed[i]);
		}
	}
	if (mh.msg_flags & MSG_TRUNC)
		return -EMSGSIZE;
	return len;
}

int pool_wire_send(int fd, const struct pool_msg *m, size_t len, const int *fds,
		   unsigned int nfd)
{
	char cbuf[CMSG_SPACE(sizeof(int) * POOL_MSG_FDS)];
	struct iovec iov = { .iov_base = (void *)m, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (nfd > POOL_MSG_FDS)
		return -EINVAL;
	if (nfd) {
		struct cmsghdr *c;

		mh.msg_control = cbuf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfd);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfd);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfd);
	}
	do {
		n = sendmsg(fd, &mh, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == (ssize_t)len ? 0 : -EIO;
}

int pool_wire_wait(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n;

	do {
		n = poll(&p, 1, ms);
	} while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}
