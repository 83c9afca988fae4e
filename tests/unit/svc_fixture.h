/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the pool service's unit suites share: a service on a pool of this
 * process (the fixture), clients through pool_client.c, and raw clients
 * that speak the wire protocol by hand, the way a hostile VM process
 * would.
 */
#ifndef GPMM_TESTS_SVC_FIXTURE_H
#define GPMM_TESTS_SVC_FIXTURE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "vmm/memory/pool_backend.h"
#include "vmm/pool_service/pool_client.h"
#include "vmm/pool_service/pool_proto.h"
#include "vmm/pool_service/pool_service.h"

struct svc_fixture {
	struct pool *pool;
	struct pool_service *svc;
	char path[108];
};

/* A service on a pool of @mib MiB (no host huge pages); answer_ms 0: default. */
bool fixture_up(struct svc_fixture *f, unsigned int mib, unsigned int answer_ms);
void fixture_down(struct svc_fixture *f);
struct pool_client *connect_client(struct svc_fixture *f, const char *name, uint64_t ram,
				   struct pool_client_info *info);
/* Free pages of the pool after draining every per-thread list. */
uint64_t free_pages(struct svc_fixture *f);
json_int_t service_counter(struct svc_fixture *f, const char *key);
/* Wait (bounded by count, not speed) until the service serves @n clients. */
bool wait_clients(struct svc_fixture *f, json_int_t n);

/*
 * A client by hand: its request socket, the callback socket it answers
 * moves on, the slow channel's end (closing it ends the client), and what
 * HELLO's reply said.
 */
struct raw_client {
	int fd, cb, slow;
	uint32_t owner;
	uint64_t quota;
	unsigned int hello_fds;		/* descriptors HELLO's reply carried (closed) */
};

int raw_connect(const char *path);
/* 0, or -1 (the service refused: its reason, if any, is in @why). */
int raw_hello_why(const char *path, uint64_t ram, struct raw_client *rc, char *why, size_t len);
int raw_hello(const char *path, uint64_t ram, struct raw_client *rc);
void raw_close(struct raw_client *rc);
/* Send @m of @len and read the reply into @m: its ret, or -EIO. */
int raw_call(int fd, struct pool_msg *m, size_t len);
/* The same, keeping up to @nfd descriptors of the reply in @fds (-1: none). */
int raw_call_fds(int fd, struct pool_msg *m, size_t len, int *fds, unsigned int nfd);

/* A thread answering every move asked on @cb with @answer, moving nothing. */
struct answerer {
	int cb;
	int answer;
	bool stop;
	unsigned int answered;	/* atomic */
	pthread_t t;
};

void *answer_with(void *arg);

#endif
