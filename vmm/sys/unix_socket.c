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

/* The peer is in @group: its group (SO_PEERCRED) or one of its supplementary ones. */
static bool peer_in_group(int fd, gid_t peer_gid, gid_t group)
{
	gid_t groups[64];
	socklen_t len = sizeof(groups);

	if (peer_gid == group)
		return true;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len))
		return false;
	for (size_t i = 0; i < len / sizeof(groups[0]); i++)
		if (groups[i] == group)
			return true;
	return false;
}

/*
 * The socket files are 0600 (0660 for a shared one), but a descriptor can
 * be handed on and a socket can be bound where a directory lets others
 * in: the peer's credentials at accept are what decide. Only root, the
 * user the VMM runs as and, where the socket is shared, members of its
 * @group may drive it or borrow its pool.
 */
int unix_accept(int listen_fd, gid_t group)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0 &&
	    (cr.uid == 0 || cr.uid == geteuid() ||
	     (group != UNIX_NO_GROUP && peer_in_group(fd, cr.gid, group))))
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

/*
 * The socket's directory lets @group through to it. A private directory
 * of this user's (nothing for group or others: the run directory gpmm and
 * its unit make) becomes 0710 with that group: its members may pass, not
 * list, and reach only the sockets whose own mode lets them in. Any other
 * directory is left as its owner made it, and must already let them pass.
 */
static int dir_lets_group_in(const char *path, gid_t group, char *err, size_t errlen)
{
	char dir[108];
	char *slash;
	struct stat st;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else
		slash[slash == dir] = '\0';
	if (stat(dir, &st))
		return -errno;
	if (st.st_uid == geteuid() && !(st.st_mode & 077) &&
	    (chown(dir, (uid_t)-1, group) || chmod(dir, 0710))) {
		snprintf(err, errlen, "cannot let group %u through %s: %s", (unsigned int)group, dir,
			 strerror(errno));
		return -errno;
	}
	if (stat(dir, &st))
		return -errno;
	if ((st.st_gid == group && (st.st_mode & S_IXGRP)) || (st.st_mode & S_IXOTH))
		return 0;
	snprintf(err, errlen, "%s does not let group %u through to %s (it is not a private "
		 "directory of ours to open: give it group %u and mode 0710)", dir,
		 (unsigned int)group, path, (unsigned int)group);
	return -EACCES;
}

int unix_share_with_group(const char *path, gid_t group, char *err, size_t errlen)
{
	if (chown(path, (uid_t)-1, group) || chmod(path, 0660)) {
		snprintf(err, errlen, "cannot give %s to group %u: %s", path, (unsigned int)group,
			 strerror(errno));
		return -errno;
	}
	return dir_lets_group_in(path, group, err, errlen);
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
