/* SPDX-License-Identifier: GPL-2.0 */
/* The VMM's listening unix sockets (unix_socket.c). */
#ifndef GPMM_UNIX_SOCKET_H
#define GPMM_UNIX_SOCKET_H

#include <stddef.h>
#include <sys/types.h>

#include "vmm/core/compiler.h"

/*
 * A listening unix socket of @type (SOCK_STREAM, SOCK_SEQPACKET), mode
 * 0600; replaces a stale socket file.
 */
__must_check int unix_listen(const char *path, int type, char *err, size_t errlen);
#define UNIX_NO_GROUP	((gid_t)-1)

/*
 * A connection from root, this process's user or (unless UNIX_NO_GROUP) a
 * member of @group (SO_PEERCRED, SO_PEERGROUPS), or -errno.
 */
__must_check int unix_accept(int listen_fd, gid_t group);
/*
 * The socket at @path made reachable by @group and no one else: the file
 * 0660 with that group, its directory passable by the group (0710 with
 * that group when it is a private one of ours). Peers are still checked
 * at accept.
 */
__must_check int unix_share_with_group(const char *path, gid_t group, char *err, size_t errlen);

#endif
