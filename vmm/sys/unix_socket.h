/* SPDX-License-Identifier: GPL-2.0 */
/* The VMM's listening unix sockets (unix_socket.c). */
#ifndef GPMM_UNIX_SOCKET_H
#define GPMM_UNIX_SOCKET_H

#include <stddef.h>

#include "vmm/core/compiler.h"

/*
 * A listening unix socket of @type (SOCK_STREAM, SOCK_SEQPACKET), mode
 * 0600; replaces a stale socket file.
 */
__must_check int unix_listen(const char *path, int type, char *err, size_t errlen);
/* A connection from root or this process's user (SO_PEERCRED), or -errno. */
__must_check int unix_accept(int listen_fd);

#endif
