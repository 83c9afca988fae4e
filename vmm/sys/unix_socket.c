// SPDX-License-Identifier: GPL-2.0
/*
 * The VMM's listening unix sockets (QMP, the daemon's control socket,
 * consoles, the pool service): made 0600 where nobody else can race for
 * the name, and a peer let in only by its credentials.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "vmm/sys/unix_socket.h"

/*
 * The socket files are 0600, but a descriptor can be handed on and a
 * socket can be bound where a directory lets others in: the peer's
 * credentials at accept are what decide. Only root and the user the VMM
 * runs as may drive it or borrow its pool.
 */
int unix_accept(int listen_fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0 &&
	    (cr.uid == 0 || cr.uid == geteuid()))
		return fd;
	close(fd);
	return -EACCES;
}

int unix_listen(const char *path, int type, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	mode_t old;
	int fd, ret;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "socket path %s is too long", path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* a socket nobody answers on is stale: take its place */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		close(fd);
		snprintf(err, errlen, "%s is in use by a running gpmm", path);
		return -EADDRINUSE;
	}
	unlink(path);
	old = umask(0077);
	ret = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (ret == 0)
		ret = chmod(path, 0600);
	if (ret == 0)
		ret = listen(fd, 16);
	if (ret) {
		ret = -errno;
		snprintf(err, errlen, "cannot listen on %s: %s", path, strerror(errno));
		close(fd);
		return ret;
	}
	return fd;
}
