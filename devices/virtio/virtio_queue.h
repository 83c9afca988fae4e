/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Split virtqueues, device side, with every value the guest supplies
 * checked before it is used: ring placement at setup, then avail index,
 * head and next indices, chain length, buffer placement and direction as
 * each chain is taken. A check that fails is a broken ring: the caller
 * (virtio_mmio.c) puts the device in DEVICE_NEEDS_RESET and processes it
 * no further. Guest memory is reached only through the machine's
 * bounds-checked accessors (devices/machine.h), never outside guest RAM.
 */
#ifndef GPMM_VIRTIO_QUEUE_H
#define GPMM_VIRTIO_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/machine.h"
#include "devices/virtio/virtio_abi.h"

struct machine;

/* Largest queue a gpmm device offers; a chain has at most this many parts. */
#define VIRTQ_MAX_SIZE		256
#define VIRTQ_WHY_LEN		128

struct virtq {
	uint32_t num;			/* as the driver wrote it; checked at ready */
	uint64_t desc, avail, used;	/* guest-physical */
	bool ready;
	uint16_t last_avail;		/* next avail entry the device takes */
	uint16_t used_idx;		/* the device's used->idx */
	/*
	 * Times the queue was taken back (device reset, QueueReady = 0): a
	 * buffer a device holds from generation g belongs to a ring that is
	 * gone once gen is not g, and is never pushed into the new one.
	 */
	uint32_t gen;
};

struct virtq_seg {
	uint64_t gpa;
	uint32_t len;
};

/*
 * One descriptor chain, taken apart: the device-readable parts first
 * (nr_read of them, read_len bytes), then the device-writable ones
 * (write_len bytes). Zero-length descriptors are dropped.
 */
struct virtq_chain {
	uint16_t head;
	unsigned int nr, nr_read;
	uint64_t read_len, write_len;
	struct virtq_seg seg[VIRTQ_MAX_SIZE];
};

/*
 * Check the rings the driver configured before they are used: size a power
 * of two up to @max, each ring aligned and wholly inside guest RAM. 0, or
 * -EINVAL with the reason in @why.
 */
__must_check int virtq_check_setup(struct machine *m, const struct virtq *q,
				   unsigned int max, char *why);
/* Back to the state of a queue never set up, in a new generation. */
void virtq_reset(struct virtq *q);

/*
 * Take the next available chain: 1 and @c filled, 0 when none is pending,
 * -EINVAL when the ring is broken (@why says how).
 */
__must_check int virtq_pop(struct machine *m, struct virtq *q, struct virtq_chain *c,
			   char *why);
/*
 * Put back the last @n chains taken and not yet returned: the next pop
 * takes them again (a device that needs more chains than the driver has
 * posted, and waits for the rest).
 */
void virtq_unpop(struct virtq *q, unsigned int n);
/*
 * Whether the driver wants an interrupt for buffers used now: not while it
 * says it polls (avail->flags NO_INTERRUPT, which Linux's virtio-net sets
 * while NAPI runs). Only a hint the spec lets a device follow: a device
 * that raises one anyway is still correct.
 */
bool virtq_wants_interrupt(struct machine *m, const struct virtq *q);
/* Return chain @head with @len bytes written; -EFAULT if the ring is gone (not ready). */
__must_check int virtq_push(struct machine *m, struct virtq *q, uint16_t head, uint32_t len);

/*
 * Walk [@off, @off + @len) of the chain's readable (@write false) or
 * writable part, calling @fn with a host pointer for each piece; stops at
 * the first non-zero return of @fn. -EFAULT if the range is not all there.
 */
typedef int (*virtq_piece_fn)(void *opaque, uint8_t *host, uint64_t len,
			      uint64_t done);
__must_check int virtq_walk(struct machine *m, const struct virtq_chain *c, bool write,
			    uint64_t off, uint64_t len, virtq_piece_fn fn, void *opaque);
__must_check int virtq_read(struct machine *m, const struct virtq_chain *c, uint64_t off,
			    void *buf, uint64_t len);
__must_check int virtq_write(struct machine *m, const struct virtq_chain *c, uint64_t off,
			     const void *buf, uint64_t len);

#endif
