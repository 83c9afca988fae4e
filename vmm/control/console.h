/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where a VM's serial console goes and where its keys come from:
 * stdio (the terminal `gpmm run` was started from, in raw mode), pty (a
 * pseudo-terminal to attach to), socket:PATH (a Unix socket, one client
 * at a time), file:PATH (output only), fd:N (output only, to a descriptor
 * the VMM inherited: libvirt's pipe to virtlogd) or none. The daemon loop polls the
 * descriptors; nothing here blocks.
 */
#ifndef GPMM_CONSOLE_H
#define GPMM_CONSOLE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <termios.h>

#include "vmm/core/compiler.h"

#define CONSOLE_ESCAPE	0x01	/* Ctrl-A, then x: leave; Ctrl-A again: send one */

struct console {
	int out_fd;		/* -1: output goes nowhere here */
	int in_fd;		/* -1: no input */
	int listen_fd;		/* socket: waiting for a client */
	int pty_slave;		/* pty: held open so the master never hangs up */
	int log_fd;		/* a copy of the output goes here too, or -1 */
	bool owns_out;		/* close out_fd on the way out */
	bool raw;		/* stdio: the terminal's settings are saved */
	bool escape;		/* stdio: Ctrl-A seen */
	struct termios saved;
	char path[4096];	/* pty name or socket path, for the operator */
	unsigned long long dropped;	/* output nobody could take */
};

/*
 * Open @spec for a VM. @foreground: the VM belongs to this terminal
 * (`gpmm run`); a daemon's VMs have no stdio of their own.
 */
__must_check int console_open(struct console *c, const char *spec, bool foreground,
			      char *err, size_t errlen);
void console_close(struct console *c);
/* Copy the output to @fd too (an inherited log descriptor, now ours). */
__must_check int console_set_log(struct console *c, int fd, char *err, size_t errlen);
void console_out(struct console *c, const char *buf, size_t len);
/* A client knocks on the socket: it replaces the one before. */
void console_accept(struct console *c);
/*
 * Read what was typed into @buf; returns its length, 0 when nothing,
 * -EPIPE when the input ended, -ECANCELED when the operator asked to leave.
 */
ssize_t console_read(struct console *c, char *buf, size_t len);

#endif
