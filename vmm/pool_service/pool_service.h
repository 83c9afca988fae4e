/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The host pool as a service (vmm/pool_service/pool_proto.h): `gpmm daemon` owns the
 * pool and lends frames to VM processes, one `gpmm run --host-pool` each.
 * Grouping, compaction, lumpy reclaim and the choice of 2 MiB blocks stay
 * host-wide, in this process; what touches a VM's mappings (a page's
 * copy and remap) happens in the VM's process, on the service's request.
 *
 * A VM process that dies gives every frame it held back: the socket
 * closes with the process, and the service frees what the pool says the
 * process owned. One that does not answer a request in time is treated
 * as pinned; the block it may or may not have moved stays its own until
 * it says which it uses, or dies.
 */
#ifndef GPMM_POOL_SERVICE_H
#define GPMM_POOL_SERVICE_H

#include <jansson.h>

#include <sys/types.h>

#include "vmm/memory/pool_backend.h"
#include "vmm/sys/unix_socket.h"

#define POOL_SERVICE_MAX_CLIENTS	64
#define POOL_SERVICE_HELLO_MS		5000	/* a connection must say HELLO within */
#define POOL_SERVICE_ANSWER_MS		3000	/* default wait for a VM process's answer */
/* Frames a client may hold beyond its RAM: its cache, a 2 MiB block being
 * assembled, a fault-around block, a move left undecided. */
#define POOL_SERVICE_SLACK_FRAMES	2048
/* Whole-pool walks (POOL_WALK) a client may make a second. */
#define POOL_SERVICE_WALKS_PER_S	4
/* How old the pool's statistics a client is given may be (one read for all). */
#define POOL_SERVICE_STATS_MS		500

struct pool_service;

/*
 * Serve @pool on a socket at @path to VM processes of root, of this user
 * and, unless UNIX_NO_GROUP, of @group (libvirt's domains: their user's
 * group), for whom the socket and its directory are opened and no one else.
 */
__must_check int pool_service_start(struct pool *pool, const char *path,
				    unsigned int answer_ms, gid_t group,
				    struct pool_service **out, char *err, size_t errlen);
/* Every client is cut off and its frames freed. */
void pool_service_stop(struct pool_service *s);

/*
 * The VM processes served now, for reports: name, pid, owner, frames
 * held by the service's count and by the pool's (independent: a walk),
 * and the last report the process sent of itself.
 */
json_t *pool_service_clients_json(struct pool_service *s);
/* The service's own counters (connections, refusals, frames reclaimed...). */
json_t *pool_service_json(struct pool_service *s);
/* Owner ids and names of the clients, for the pool map; how many (<= max). */
unsigned int pool_service_owners(struct pool_service *s, uint32_t *ids,
				 char (*names)[64], unsigned int max);

#endif
