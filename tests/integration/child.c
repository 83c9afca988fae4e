// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/integration/child.h"

int child_spawn(struct child *c, char *const argv[])
{
	int in[2], out[2];

	memset(c, 0, sizeof(*c));
	c->status = -1;
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		return -errno;
	c->pid = fork();
	if (c->pid < 0)
		return -errno;
	if (c->pid == 0) {
		dup2(in[0], STDIN_FILENO);
		dup2(out[1], STDOUT_FILENO);
		dup2(out[1], STDERR_FILENO);
		execv(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->in_fd = in[1];
	c->out_fd = out[0];
	fcntl(c->out_fd, F_SETFL, O_NONBLOCK);
	fcntl(c->in_fd, F_SETFL, O_NONBLOCK);
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Read what is there, waiting at most @ms; false at EOF. */
static bool pump(struct child *c, int ms)
{
	struct pollfd p = { .fd = c->out_fd, .events = POLLIN };
	char buf[4096];
	ssize_t n;

	if (c->out_fd < 0)
		return false;
	if (poll(&p, 1, ms) <= 0)
		return true;
	n = read(c->out_fd, buf, sizeof(buf));
	if (n <= 0)
		return n < 0 && errno == EAGAIN;
	if (c->len + (size_t)n + 1 > c->cap) {
		size_t cap = (c->cap ? c->cap * 2 : 65536) + (size_t)n;
		char *p2 = realloc(c->out, cap);

		if (!p2)
			return false;
		c->out = p2;
		c->cap = cap;
	}
	memcpy(c->out + c->len, buf, (size_t)n);
	c->len += (size_t)n;
	c->out[c->len] = '\0';
	return true;
}

bool child_expect(struct child *c, const char *needle, int timeout_s)
{
	double end = now() + timeout_s;

	for (;;) {
		char *hit = c->out ? strstr(c->out + c->mark, needle) : NULL;

		if (hit) {
			c->mark = (size_t)(hit - c->out) + strlen(needle);
			return true;
		}
		if (now() > end || !pump(c, 200))
			return false;
	}
}

const char *child_rest_of_line(struct child *c, int timeout_s)
{
	size_t at = c->mark;

	return child_expect(c, "\n", timeout_s) ? c->out + at : NULL;
}

/*
 * Typing waits while the child is not reading (its console holds input
 * back until the guest takes it), and reads its output meanwhile: a child
 * blocked writing to a full pipe would otherwise never read ours.
 */
static bool send_all(struct child *c, const char *buf, size_t len, int timeout_s)
{
	double end = now() + timeout_s;

	while (len) {
		ssize_t n = write(c->in_fd, buf, len);

		if (n > 0) {
			buf += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return false;
		if (now() > end) {
			c->send_timed_out = true;
			return false;
		}
		{
			struct pollfd p[2] = {
				{ .fd = c->in_fd, .events = POLLOUT },
				{ .fd = c->out_fd, .events = POLLIN },
			};

			if (poll(p, 2, 200) > 0 && (p[1].revents & POLLIN))
				pump(c, 0);
		}
	}
	return true;
}

bool child_send(struct child *c, const char *line)
{
	return send_all(c, line, strlen(line), CHILD_SEND_TIMEOUT) &&
	       send_all(c, "\n", 1, CHILD_SEND_TIMEOUT);
}

int child_wait(struct child *c, int timeout_s)
{
	double end = now() + timeout_s;
	int st;

	while (c->status < 0) {
		pid_t r = waitpid(c->pid, &st, WNOHANG);

		if (r == c->pid) {
			c->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			break;
		}
		if (now() > end) {
			kill(c->pid, SIGKILL);
			waitpid(c->pid, &st, 0);
			c->status = 128 + SIGKILL;
			return -1;
		}
		pump(c, 100);
	}
	while (pump(c, 0) && c->out_fd >= 0) {
		struct pollfd p = { .fd = c->out_fd, .events = POLLIN };

		if (poll(&p, 1, 0) <= 0)
			break;
	}
	return c->status;
}

void child_end(struct child *c)
{
	if (c->pid > 0 && c->status < 0) {
		kill(c->pid, SIGTERM);
		if (child_wait(c, 30) < 0)
			kill(c->pid, SIGKILL);
	}
	if (c->in_fd > 0)
		close(c->in_fd);
	if (c->out_fd > 0)
		close(c->out_fd);
	free(c->out);
	memset(c, 0, sizeof(*c));
}

const char *child_tail(const struct child *c, size_t max)
{
	if (!c->out)
		return "";
	return c->len > max ? c->out + c->len - max : c->out;
}
