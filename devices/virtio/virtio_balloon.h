/* SPDX-License-Identifier: GPL-2.0 */
/*
 * virtio-balloon with statistics and free page reporting: what the host
 * asks of it (QMP `balloon`) and what it says (QMP `query-balloon`, the
 * fragmentation report). The memory it gets back is counted by the VM
 * (the discards it asked for, through machine_guest_discard): that is the figure the pool gained.
 */
#ifndef GPMM_VIRTIO_BALLOON_H
#define GPMM_VIRTIO_BALLOON_H

#include <stdbool.h>
#include <stdint.h>

#include "devices/machine.h"
#include "devices/virtio/virtio_abi.h"

struct machine;

#define BALLOON_MAX_STATS	16

struct virtio_balloon_info {
	uint64_t target_bytes;		/* guest RAM the host asked for */
	uint64_t actual_bytes;		/* guest RAM less what the balloon holds (QEMU's "actual") */
	uint32_t num_pages;		/* config: pages the guest is asked to hold */
	uint32_t actual_pages;		/* config: pages the guest says it holds */
	uint32_t status;		/* the transport's device status */
	uint64_t inflated_pages;	/* PFNs the guest gave (inflate queue) */
	uint64_t deflated_pages;	/* PFNs it took back (deflate queue) */
	uint64_t reported_bytes;	/* free page reporting */
	uint64_t bad_pfns;		/* PFNs outside guest RAM, ignored */
	uint64_t discard_errors;	/* ranges gpmm could not take back (pinned) */
	uint64_t stats_updates;		/* stats buffers received */
	uint64_t stats_age_ns;		/* since the last one; 0: none yet */
	unsigned int nr_stats;
	uint16_t stat_tag[BALLOON_MAX_STATS];
	uint64_t stat_val[BALLOON_MAX_STATS];
};

/*
 * Ask the guest to keep @bytes of RAM (QEMU's `balloon` value: more than
 * the RAM means all of it). -ENODEV: the VM has no balloon.
 */
__must_check int virtio_balloon_set_target(struct machine *m, uint64_t bytes);
/*
 * What the balloon knows now; with @refresh the held stats buffer goes
 * back to the guest, which answers with fresh stats (seen by a later
 * query). -ENODEV: the VM has no balloon.
 */
__must_check int virtio_balloon_query(struct machine *m, struct virtio_balloon_info *info,
				      bool refresh);
/* QEMU's name of a stats tag ("stat-free-memory"), NULL if unknown. */
const char *virtio_balloon_stat_name(unsigned int tag);

#endif
