// SPDX-License-Identifier: GPL-2.0
/*
 * Console back ends. Output never blocks the daemon loop: descriptors
 * are non-blocking and what a slow reader cannot take is counted as
 * dropped. Input is whatever the back end delivers; the escape sequence
 * exists only on stdio, where raw mode passes Ctrl-C to the guest and
 * the operator needs another way out.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "vmm/control/console.h"
#include "vmm/sys/unix_socket.h"

static void set_raw(struct console *c)
{
	struct termios t;

	if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &c->saved))
		return;
	t = c->saved;
	cfmakeraw(&t);
	t.c_oflag |= OPOST | ONLCR;	/* our own messages still start at column 0 */
	if (!tcsetattr(STDIN_FILENO, TCSANOW, &t))
		c->raw = true;
}

static int open_stdio(struct console *c)
{
	c->out_fd = STDOUT_FILENO;
	c->in_fd = STDIN_FILENO;
	set_raw(c);
	return 0;
}

static int open_pty(struct console *c, char *err, size_t errlen)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	struct termios t;
	const char *name;

	if (m < 0 || grantpt(m) || unlockpt(m) || !(name = ptsname(m))) {
		snprintf(err, errlen, "cannot make a pseudo-terminal: %s", strerror(errno));
		if (m >= 0)
			close(m);
		return -errno;
	}
	snprintf(c->path, sizeof(c->path), "%s", name);
	c->pty_slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (c->pty_slave >= 0 && !tcgetattr(c->pty_slave, &t)) {
		cfmakeraw(&t);
		tcsetattr(c->pty_slave, TCSANOW, &t);
	}
	c->out_fd = c->in_fd = m;
	c->owns_out = true;
	return 0;
}

static int open_socket(struct console *c, const char *path, char *err, size_t errlen)
{
	int fd = unix_listen(path, SOCK_STREAM, err, errlen);

	if (fd < 0)
		return fd;
	fcntl(fd, F_SETFL, O_NONBLOCK);
	c->listen_fd = fd;
	snprintf(c->path, sizeof(c->path), "%s", path);
	return 0;
}

/* The descriptor must be open; it is ours from now on. */
static int adopt_fd(int fd, const char *what, char *err, size_t errlen)
{
	if (fd < 0 || fcntl(fd, F_GETFD) < 0) {
		snprintf(err, errlen, "%s: descriptor %d is not open", what, fd);
		return -EBADF;
	}
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	return 0;
}

/* fd:N, a descriptor the VMM was started with (libvirt's pipe to virtlogd) */
static int open_fd(struct console *c, const char *num, char *err, size_t errlen)
{
	char *end;
	long fd = strtol(num, &end, 10);
	int ret;

	if (*end || end == num || fd < 3 || fd > INT_MAX) {
		snprintf(err, errlen, "console fd:%s: not a descriptor number above 2", num);
		return -EINVAL;
	}
	ret = adopt_fd((int)fd, "console", err, errlen);
	if (ret)
		return ret;
	c->out_fd = (int)fd;
	c->owns_out = true;
	snprintf(c->path, sizeof(c->path), "fd:%ld", fd);
	return 0;
}

static int open_file(struct console *c, const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK, 0600);

	if (fd < 0) {
		snprintf(err, errlen, "cannot open console file %s: %s", path, strerror(errno));
		return -errno;
	}
	c->out_fd = fd;
	c->owns_out = true;
	snprintf(c->path, sizeof(c->path), "%s", path);
	return 0;
}

int console_open(struct console *c, const char *spec, bool foreground, char *err,
		 size_t errlen)
{
	memset(c, 0, sizeof(*c));
	c->out_fd = c->in_fd = c->listen_fd = c->pty_slave = c->log_fd = -1;
	if (!strcmp(spec, "stdio") || !spec[0])
		return foreground ? open_stdio(c) : 0;
	if (!strcmp(spec, "pty"))
		return open_pty(c, err, errlen);
	if (!strncmp(spec, "socket:", 7))
		return open_socket(c, spec + 7, err, errlen);
	if (!strncmp(spec, "file:", 5))
		return open_file(c, spec + 5, err, errlen);
	if (!strncmp(spec, "fd:", 3))
		return open_fd(c, spec + 3, err, errlen);
	if (!strcmp(spec, "none"))
		return 0;
	snprintf(err, errlen, "unknown console '%s'", spec);
	return -EINVAL;
}

static void drop_client(struct console *c)
{
	if (c->listen_fd < 0 || c->in_fd < 0)
		return;
	close(c->in_fd);
	c->in_fd = c->out_fd = -1;
}

void console_close(struct console *c)
{
	if (c->raw)
		tcsetattr(STDIN_FILENO, TCSANOW, &c->saved);
	c->raw = false;
	drop_client(c);
	if (c->owns_out && c->out_fd >= 0)
		close(c->out_fd);
	if (c->listen_fd >= 0) {
		close(c->listen_fd);
		unlink(c->path);
	}
	if (c->pty_slave >= 0)
		close(c->pty_slave);
	if (c->log_fd >= 0)
		close(c->log_fd);
	c->out_fd = c->in_fd = c->listen_fd = c->pty_slave = c->log_fd = -1;
}

static void write_out(int fd, const char *buf, size_t len, unsigned long long *dropped)
{
	while (len && fd >= 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			*dropped += len;
			return;
		}
		buf += n;
		len -= (size_t)n;
	}
}

void console_out(struct console *c, const char *buf, size_t len)
{
	write_out(c->out_fd, buf, len, &c->dropped);
	write_out(c->log_fd, buf, len, &c->dropped);
}

int console_set_log(struct console *c, int fd, char *err, size_t errlen)
{
	int ret = adopt_fd(fd, "console log", err, errlen);

	if (!ret)
		c->log_fd = fd;
	return ret;
}

void console_accept(struct console *c)
{
	int fd = accept4(c->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd < 0)
		return;
	drop_client(c);
	c->in_fd = c->out_fd = fd;
}

/* Ctrl-A x leaves, Ctrl-A Ctrl-A is one Ctrl-A; the rest passes. */
static ssize_t unescape(struct console *c, char *buf, size_t n)
{
	size_t out = 0;

	for (size_t i = 0; i < n; i++) {
		char ch = buf[i];

		if (c->escape) {
			c->escape = false;
			if (ch == 'x' || ch == 'X')
				return -ECANCELED;
			if (ch != CONSOLE_ESCAPE)
				continue;
		} else if (ch == CONSOLE_ESCAPE) {
			c->escape = true;
			continue;
		}
		buf[out++] = ch;
	}
	return (ssize_t)out;
}

ssize_t console_read(struct console *c, char *buf, size_t len)
{
	ssize_t n;

	if (c->in_fd < 0)
		return -EPIPE;
	n = read(c->in_fd, buf, len);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR || errno == EIO ? 0 : -EPIPE;
	if (n == 0) {
		/* a socket client left: wait for the next; stdin ended: stop reading it */
		if (c->listen_fd >= 0) {
			drop_client(c);
			return 0;
		}
		c->in_fd = -1;
		return -EPIPE;
	}
	return c->raw ? unescape(c, buf, (size_t)n) : n;
}
