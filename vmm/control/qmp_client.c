// SPDX-License-Identifier: GPL-2.0
/* The CLI's side of QMP (qmp_client.h): connect, negotiate, execute, read events. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "vmm/control/qmp_client.h"
#include "vmm/control/qmp_wire.h"

#define QMPC_MAX_MESSAGE	(64 << 20)	/* a report of many VMs is large */
#define SYSTEM_POOL_SOCKET	"/run/gpmm/pool.sock"

/*
 * Where QMP sockets live: $GPMM_RUN_DIR, else /run/gpmm when we may write
 * there (root), else $XDG_RUNTIME_DIR/gpmm (a user's own runtime dir),
 * else /tmp/gpmm-UID. A non-root user thus reaches the real problem (KVM
 * or userfaultfd permissions) instead of "Permission denied" on /run.
 */
const char *gpmm_run_dir(void)
{
	static char dir[256];
	const char *env = getenv("GPMM_RUN_DIR"), *xdg = getenv("XDG_RUNTIME_DIR");

	if (env && *env)
		snprintf(dir, sizeof(dir), "%s", env);
	else if ((mkdir("/run/gpmm", 0700) == 0 || errno == EEXIST) &&
		 access("/run/gpmm", W_OK | X_OK) == 0)
		snprintf(dir, sizeof(dir), "/run/gpmm");
	else if (xdg && *xdg)
		snprintf(dir, sizeof(dir), "%s/gpmm", xdg);
	else
		snprintf(dir, sizeof(dir), "/tmp/gpmm-%u", (unsigned int)getuid());
	mkdir(dir, 0700);
	return dir;
}

/*
 * The host pool service's socket by default: in $GPMM_RUN_DIR when it is
 * set; else the system daemon's, /run/gpmm/pool.sock, when it is there,
 * even to a user who may not write in /run/gpmm (a libvirt domain runs as
 * libvirt-qemu, whom --pool-group lets through the directory, 0710, and
 * gpmm_run_dir() then sends elsewhere); else in gpmm_run_dir().
 */
const char *gpmm_pool_socket(void)
{
	static char path[300];
	const char *env = getenv("GPMM_RUN_DIR");

	if (!(env && *env) && access(SYSTEM_POOL_SOCKET, F_OK) == 0)
		return SYSTEM_POOL_SOCKET;
	snprintf(path, sizeof(path), "%s/pool.sock", gpmm_run_dir());
	return path;
}

json_t *qmpc_read(struct qmp_client *q)
{
	for (;;) {
		json_t *msg = NULL;
		size_t used;
		ssize_t n;
		int got = qmp_wire_decode(&q->framer, q->buf, q->len, 0, &msg, &used);

		if (got < 0)
			return NULL;
		if (used) {
			memmove(q->buf, q->buf + used, q->len - used);
			q->len -= used;
		}
		if (got)
			return msg;
		if (qmp_wire_grow(&q->buf, &q->cap, q->len, QMPC_MAX_MESSAGE))
			return NULL;
		n = read(q->fd, q->buf + q->len, q->cap - q->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			q->timed_out = true;
		if (n <= 0)
			return NULL;
		q->len += (size_t)n;
	}
}

static int send_msg(struct qmp_client *q, json_t *msg)
{
	char *s = json_dumps(msg, JSON_COMPACT);
	size_t len, off = 0;
	int ret = 0;

	json_decref(msg);
	if (!s)
		return -ENOMEM;
	len = strlen(s);
	while (off < len && !ret) {
		ssize_t n = send(q->fd, s + off, len - off, MSG_NOSIGNAL);

		if (n <= 0)
			ret = -EPIPE;
		else
			off += (size_t)n;
	}
	if (!ret && send(q->fd, "\n", 1, MSG_NOSIGNAL) != 1)
		ret = -EPIPE;
	free(s);
	return ret;
}

json_t *qmpc_execute(struct qmp_client *q, const char *cmd, json_t *args,
		     void (*on_event)(json_t *ev, void *opaque), void *opaque,
		     char *err, size_t errlen)
{
	json_t *msg = json_pack("{s:s}", "execute", cmd);

	if (args)
		json_object_set_new(msg, "arguments", args);
	if (send_msg(q, msg)) {
		snprintf(err, errlen, "connection lost");
		return NULL;
	}
	while ((msg = qmpc_read(q))) {
		json_t *ret = json_object_get(msg, "return");
		json_t *error = json_object_get(msg, "error");

		if (ret) {
			json_incref(ret);
			json_decref(msg);
			return ret;
		}
		if (error) {
			snprintf(err, errlen, "%s",
				 json_string_value(json_object_get(error, "desc")) ?: "error");
			json_decref(msg);
			return NULL;
		}
		if (on_event && json_object_get(msg, "event"))
			on_event(msg, opaque);
		json_decref(msg);
	}
	if (q->timed_out)
		snprintf(err, errlen, "no answer within %d s", QMPC_ANSWER_TIMEOUT);
	else
		snprintf(err, errlen, "connection closed");
	return NULL;
}

static void set_read_timeout(struct qmp_client *q, int seconds)
{
	struct timeval tv = { .tv_sec = seconds };

	/* best effort: without it a read simply waits */
	(void)setsockopt(q->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

void qmpc_wait_forever(struct qmp_client *q)
{
	set_read_timeout(q, 0);
}

int qmpc_connect(struct qmp_client *q, const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	json_t *greeting, *ret;

	memset(q, 0, sizeof(*q));
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "socket path %s is too long", path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	q->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (q->fd < 0 || connect(q->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		snprintf(err, errlen, "cannot connect to %s: %s", path, strerror(e));
		qmpc_close(q);
		return -e;
	}
	set_read_timeout(q, QMPC_ANSWER_TIMEOUT);
	greeting = qmpc_read(q);
	if (!greeting || !json_object_get(greeting, "QMP")) {
		if (q->timed_out)
			snprintf(err, errlen, "%s did not greet within %d s", path,
				 QMPC_ANSWER_TIMEOUT);
		else
			snprintf(err, errlen, "%s does not speak QMP", path);
		json_decref(greeting);
		qmpc_close(q);
		return -EPROTO;
	}
	json_decref(greeting);
	ret = qmpc_execute(q, "qmp_capabilities", NULL, NULL, NULL, err, errlen);
	if (!ret) {
		qmpc_close(q);
		return -EPROTO;
	}
	json_decref(ret);
	return 0;
}

void qmpc_close(struct qmp_client *q)
{
	if (q->fd >= 0)
		close(q->fd);
	free(q->buf);
	q->fd = -1;
	q->buf = NULL;
	q->len = q->cap = 0;
}
