// SPDX-License-Identifier: GPL-2.0
/*
 * The VMM's listening unix sockets (QMP, the daemon's control socket,
 * consoles, the pool service): made 0600 where nobody else can race for
 * the name, and a peer let in only by its credentials.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
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

/*
 * Whether a socket listens on @path, from the kernel's table of unix
 * sockets: the answer when connect is not ours to make (the sandbox
 * forbids it). A name is matched as it was bound, which is how gpmm binds.
 */
static bool listed_as_listening(const char *path)
{
	FILE *f = fopen("/proc/self/net/unix", "r");
	char line[512 + 108];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned int flags;
		char name[128];

		/* Num RefCount Protocol Flags Type St Inode Path */
		if (sscanf(line, "%*s %*s %*s %x %*s %*s %*s %127s", &flags, name) == 2)
			found = (flags & 0x10000) && !strcmp(name, path);	/* __SO_ACCEPTCON */
	}
	fclose(f);
	return found;
}

/* A socket nobody answers on at @path is stale and may be replaced. */
static bool in_use(int fd, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	strcpy(sa.sun_path, path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		return true;
	return (errno == EACCES || errno == EPERM) && listed_as_listening(path);
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
	if (in_use(fd, path)) {
		close(fd);
		snprintf(err, errlen, "%s is in use by a running gpmm", path);
		return -EADDRINUSE;
	}
	unlink(path);
	/* 0600 from the start: no chmod by path, which the sandbox does not allow */
	old = umask(0177);
	ret = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
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
