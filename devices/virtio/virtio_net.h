/* SPDX-License-Identifier: GPL-2.0 */
/*
 * virtio-net's counters for the report and the tests: what each interface
 * moved between its tap and the guest, and what it refused.
 */
#ifndef GPMM_VIRTIO_NET_H
#define GPMM_VIRTIO_NET_H

#include <stdbool.h>
#include <stdint.h>

#include "devices/machine.h"

struct virtio_net_info {
	uint8_t mac[6];
	bool vnet_hdr;			/* the tap carries virtio headers */
	bool offloads;			/* ... and the driver took checksum offload */
	uint64_t rx_packets, rx_bytes;	/* tap to guest */
	uint64_t tx_packets, tx_bytes;	/* guest to tap */
	uint64_t rx_dropped;		/* no receive buffer long enough */
	uint64_t tx_dropped;		/* a chain that is no packet (too long, too short) */
	uint64_t tx_errors;		/* the tap refused the write */
	uint64_t rx_waits;		/* a packet waited: too few receive buffers posted */
};

/* Interface @i of the VM; -ENODEV when it has no such interface. */
__must_check int virtio_net_query(struct machine *m, unsigned int i,
				  struct virtio_net_info *info);

/*
 * Wait (10 s at most) until every interface's I/O thread has served each
 * notify made so far: for a caller that must see a notify's effect before
 * it goes on (the fuzz target, tests). 0, or -ETIMEDOUT.
 */
__must_check int virtio_net_settle(struct machine *m);

#endif
