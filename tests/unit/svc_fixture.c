// SPDX-License-Identifier: GPL-2.0
/*
 * The pool service's unit fixture and raw clients (svc_fixture.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "tests/unit/svc_fixture.h"

bool fixture_up(struct svc_fixture *f, unsigned int mib, unsigned int answer_ms)
{
	static unsigned int n;
	struct pool_host host = { .huge = false };
	char err[256];

	snprintf(f->path, sizeof(f->path), "/tmp/gpmm-unit-pool-%d-%u.sock", getpid(), n++);
	if (pool_open_host((uint64_t)mib << 20, true, &host, &f->pool))
		return false;
	if (pool_service_start(f->pool, f->path, answer_ms, UNIX_NO_GROUP, &f->svc, err, sizeof(err))) {
		fprintf(stderr, "pool service: %s\n", err);
		pool_close(f->pool);
		return false;
	}
	return true;
}

void fixture_down(struct svc_fixture *f)
{
	pool_service_stop(f->svc);
	pool_close(f->pool);
}

struct pool_client *connect_client(struct svc_fixture *f, const char *name,
					  uint64_t ram, struct pool_client_info *info)
{
	struct pool_client *c = NULL;
	char err[256];

	if (pool_client_connect(f->path, name, ram, POOL_CLIENT_VM, &c, info, err, sizeof(err))) {
		fprintf(stderr, "connect: %s\n", err);
		return NULL;
	}
	return c;
}

uint64_t free_pages(struct svc_fixture *f)
{
	struct mm_stats st;

	mm_drain_all(f->pool->mm);
	return mm_stats(f->pool->mm, &st) ? 0 : st.free_pages;
}

json_int_t service_counter(struct svc_fixture *f, const char *key)
{
	json_t *j = pool_service_json(f->svc);
	json_int_t v = json_integer_value(json_object_get(j, key));

	json_decref(j);
	return v;
}

bool wait_clients(struct svc_fixture *f, json_int_t n)
{
	for (int i = 0; i < 3000; i++) {
		if (service_counter(f, "clients") == n)
			return true;
		usleep(10000);
	}
	return false;
}

int raw_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * HELLO with the client's two sockets (SCM_RIGHTS); a descriptor in the
 * reply (there should be none) is counted and closed.
 */
int raw_hello_why(const char *path, uint64_t ram, struct raw_client *rc, char *why, size_t whylen)
{
	struct pool_msg *m = calloc(1, POOL_MSG_MAX);
	int fd = raw_connect(path), cbp[2] = { -1, -1 }, slow[2] = { -1, -1 }, theirs[2];
	int pool_fd[2] = { -1, -1 }, ret = -1;
	unsigned int hello_fds = 0;
	ssize_t len;

	if (fd < 0 || !m || socketpair(AF_UNIX, SOCK_SEQPACKET, 0, cbp) ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET, 0, slow))
		goto out;
	*m = (struct pool_msg){ .op = POOL_HELLO, .a = { POOL_PROTO_VERSION, ram, 1 } };
	theirs[0] = cbp[1];
	theirs[1] = slow[1];
	if (pool_wire_send(fd, m, sizeof(*m), theirs, 2))
		goto out;
	len = pool_wire_recv(fd, m, POOL_MSG_MAX, pool_fd, 2);
	for (int i = 0; i < 2; i++)
		if (pool_fd[i] >= 0) {
			close(pool_fd[i]);
			hello_fds++;
		}
	if (len >= (ssize_t)sizeof(*m) && m->ret && why)
		snprintf(why, whylen, "%.*s", (int)(len - (ssize_t)sizeof(*m)), (char *)m->data);
	if (len < (ssize_t)sizeof(*m) || m->ret)
		goto out;
	*rc = (struct raw_client){ .fd = fd, .cb = cbp[0], .slow = slow[0],
				   .owner = (uint32_t)m->a[1], .quota = m->a[3],
				   .hello_fds = hello_fds };
	fd = cbp[0] = slow[0] = -1;
	ret = 0;
out:
	for (int i = 0; i < 2; i++) {
		if (cbp[i] >= 0)
			close(cbp[i]);
		if (slow[i] >= 0)
			close(slow[i]);
	}
	if (fd >= 0)
		close(fd);
	free(m);
	return ret;
}

int raw_hello(const char *path, uint64_t ram, struct raw_client *rc)
{
	return raw_hello_why(path, ram, rc, NULL, 0);
}

void raw_close(struct raw_client *rc)
{
	close(rc->fd);
	close(rc->cb);
	close(rc->slow);
	rc->fd = rc->cb = rc->slow = -1;
}

int raw_call_fds(int fd, struct pool_msg *m, size_t len, int *fds, unsigned int nfd)
{
	for (unsigned int i = 0; i < nfd; i++)
		fds[i] = -1;
	if (pool_wire_send(fd, m, len, NULL, 0) || pool_wire_wait(fd, 10000) <= 0)
		return -EIO;
	return pool_wire_recv(fd, m, POOL_MSG_MAX, fds, nfd) < (ssize_t)sizeof(*m) ? -EIO : m->ret;
}

int raw_call(int fd, struct pool_msg *m, size_t len)
{
	return raw_call_fds(fd, m, len, NULL, 0);
}

/* Answers every move asked of it with a->answer, without moving anything. */
void *answer_with(void *arg)
{
	struct answerer *a = arg;
	struct pool_msg m;

	while (!__atomic_load_n(&a->stop, __ATOMIC_ACQUIRE)) {
		if (pool_wire_wait(a->cb, 50) <= 0)
			continue;
		if (pool_wire_recv(a->cb, &m, sizeof(m), NULL, 0) != sizeof(m))
			break;
		m.ret = a->answer;
		if (pool_wire_send(a->cb, &m, sizeof(m), NULL, 0))
			break;
		__atomic_add_fetch(&a->answered, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}
