// SPDX-License-Identifier: GPL-2.0
/*
 * Split virtqueues, device side.
 *
 * The guest owns the rings and may change them at any moment, from another
 * vCPU, while the device reads them. So every value is copied out of guest
 * memory once and checked on the copy: nothing is read twice and trusted
 * the second time. What the device keeps itself (ring addresses, size,
 * last_avail, used_idx) was checked when the driver set the queue ready,
 * so each later access falls inside guest RAM by construction; the
 * machine's accessors (devices/machine.h) check again anyway, and a buffer address
 * comes from the guest each time and is checked each time.
 *
 * Ordering: the driver writes descriptors and the avail entry before it
 * bumps avail->idx, so the index is read with acquire semantics before
 * anything it publishes; the device writes the used entry before the used
 * index, which is stored with release semantics.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "devices/virtio/virtio_queue.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "virtio rings are little-endian and read as host integers here");
_Static_assert(sizeof(struct virtq_desc) == 16, "virtq_desc layout");

void virtq_reset(struct virtq *q)
{
	uint32_t gen = q->gen + 1;

	memset(q, 0, sizeof(*q));
	q->gen = gen;
}

int virtq_check_setup(struct machine *m, const struct virtq *q, unsigned int max,
		      char *why)
{
	const struct {
		const char *name;
		uint64_t gpa, bytes, align;
	} ring[] = {
		{ "descriptor table", q->desc, VIRTQ_DESC_BYTES(q->num), VIRTQ_DESC_ALIGN },
		{ "available ring", q->avail, VIRTQ_AVAIL_BYTES(q->num), VIRTQ_AVAIL_ALIGN },
		{ "used ring", q->used, VIRTQ_USED_BYTES(q->num), VIRTQ_USED_ALIGN },
	};

	if (!q->num || q->num > max || (q->num & (q->num - 1))) {
		snprintf(why, VIRTQ_WHY_LEN, "queue size %u is not a power of two up to %u",
			 q->num, max);
		return -EINVAL;
	}
	for (size_t i = 0; i < sizeof(ring) / sizeof(ring[0]); i++) {
		if (ring[i].gpa % ring[i].align || !machine_guest_ram(m, ring[i].gpa, ring[i].bytes)) {
			snprintf(why, VIRTQ_WHY_LEN, "%s at 0x%llx (queue size %u) is misaligned "
				 "or not inside guest RAM", ring[i].name,
				 (unsigned long long)ring[i].gpa, q->num);
			return -EINVAL;
		}
	}
	return 0;
}

static int load_avail_idx(struct machine *m, const struct virtq *q, uint16_t *idx)
{
	uint16_t *p = machine_guest_ptr(m, q->avail + 2, sizeof(*p));

	if (!p)
		return -EFAULT;
	*idx = __atomic_load_n(p, __ATOMIC_ACQUIRE);
	return 0;
}

/* Append one checked descriptor to @c. */
static int add_seg(struct machine *m, struct virtq_chain *c, const struct virtq_desc *d,
		   char *why)
{
	if (!d->len)
		return 0;
	if (!machine_guest_ram(m, d->addr, d->len)) {
		snprintf(why, VIRTQ_WHY_LEN, "buffer 0x%llx+0x%x is not inside guest RAM",
			 (unsigned long long)d->addr, d->len);
		return -EINVAL;
	}
	c->seg[c->nr++] = (struct virtq_seg){ d->addr, d->len };
	if (d->flags & VIRTQ_DESC_F_WRITE) {
		c->write_len += d->len;
	} else {
		c->nr_read++;
		c->read_len += d->len;
	}
	return 0;
}

/*
 * Follow the chain from @head. A chain that visits more descriptors than
 * the table holds has a loop in it: the bound ends every walk.
 */
static int walk_chain(struct machine *m, const struct virtq *q, uint16_t head,
		      struct virtq_chain *c, char *why)
{
	bool writable = false;
	uint32_t i = head;

	memset(c, 0, offsetof(struct virtq_chain, seg));
	c->head = head;
	for (uint32_t n = 0;; n++) {
		struct virtq_desc d;
		int ret;

		if (n == q->num) {
			snprintf(why, VIRTQ_WHY_LEN, "descriptor chain from %u is longer than "
				 "the queue (%u): a loop", head, q->num);
			return -EINVAL;
		}
		if (machine_read_guest(m, q->desc + VIRTQ_DESC_BYTES(i), &d, sizeof(d)))
			return -EFAULT;
		if (d.flags & VIRTQ_DESC_F_INDIRECT) {
			snprintf(why, VIRTQ_WHY_LEN, "indirect descriptor %u (not offered)", i);
			return -EINVAL;
		}
		/* the device reads its input before it writes its output */
		if (d.flags & VIRTQ_DESC_F_WRITE) {
			writable = true;
		} else if (writable) {
			snprintf(why, VIRTQ_WHY_LEN, "readable descriptor %u after a writable one", i);
			return -EINVAL;
		}
		ret = add_seg(m, c, &d, why);
		if (ret)
			return ret;
		if (!(d.flags & VIRTQ_DESC_F_NEXT))
			return 0;
		if (d.next >= q->num) {
			snprintf(why, VIRTQ_WHY_LEN, "descriptor %u: next %u is past the queue (%u)",
				 i, d.next, q->num);
			return -EINVAL;
		}
		i = d.next;
	}
}

int virtq_pop(struct machine *m, struct virtq *q, struct virtq_chain *c, char *why)
{
	uint16_t idx, head, pending;
	int ret;

	if (load_avail_idx(m, q, &idx))
		goto gone;
	pending = (uint16_t)(idx - q->last_avail);
	if (!pending)
		return 0;
	if (pending > q->num) {
		snprintf(why, VIRTQ_WHY_LEN, "avail idx %u is %u entries past %u (queue size %u)",
			 idx, pending, q->last_avail, q->num);
		return -EINVAL;
	}
	if (machine_read_guest(m, q->avail + VIRTQ_AVAIL_RING(q->last_avail % q->num),
			  &head, sizeof(head)))
		goto gone;
	if (head >= q->num) {
		snprintf(why, VIRTQ_WHY_LEN, "avail entry %u names descriptor %u, past the queue (%u)",
			 q->last_avail, head, q->num);
		return -EINVAL;
	}
	ret = walk_chain(m, q, head, c, why);
	if (ret == -EFAULT)
		goto gone;
	if (ret)
		return ret;
	q->last_avail++;
	return 1;
gone:
	/* only the pool running dry can fail an access checked at setup */
	snprintf(why, VIRTQ_WHY_LEN, "ring memory could not be backed");
	return -EINVAL;
}

bool virtq_wants_interrupt(struct machine *m, const struct virtq *q)
{
	uint16_t *p = q->ready ? machine_guest_ptr(m, q->avail, sizeof(*p)) : NULL;

	return !p || !(__atomic_load_n(p, __ATOMIC_ACQUIRE) & VIRTQ_AVAIL_F_NO_INTERRUPT);
}

void virtq_unpop(struct virtq *q, unsigned int n)
{
	q->last_avail = (uint16_t)(q->last_avail - n);
}

/*
 * A device may hold a chain past the notify that brought it (the
 * balloon's stats buffer) while the driver takes the queue back
 * (QueueReady = 0 resets it to size 0): such a ring is gone too.
 */
int virtq_push(struct machine *m, struct virtq *q, uint16_t head, uint32_t len)
{
	struct virtq_used_elem e = { .id = head, .len = len };
	uint16_t *idx = q->ready ? machine_guest_ptr(m, q->used + 2, sizeof(*idx)) : NULL;

	if (!idx || machine_write_guest(m, q->used + VIRTQ_USED_RING(q->used_idx % q->num),
				   &e, sizeof(e)))
		return -EFAULT;
	q->used_idx++;
	__atomic_store_n(idx, q->used_idx, __ATOMIC_RELEASE);
	return 0;
}

int virtq_walk(struct machine *m, const struct virtq_chain *c, bool write,
	       uint64_t off, uint64_t len, virtq_piece_fn fn, void *opaque)
{
	unsigned int first = write ? c->nr_read : 0, end = write ? c->nr : c->nr_read;
	uint64_t done = 0;

	for (unsigned int i = first; i < end && done < len; i++) {
		const struct virtq_seg *s = &c->seg[i];
		uint64_t skip, n;
		uint8_t *p;
		int ret;

		if (off >= s->len) {
			off -= s->len;
			continue;
		}
		skip = off;
		off = 0;
		n = s->len - skip < len - done ? s->len - skip : len - done;
		p = machine_guest_ptr(m, s->gpa + skip, n);
		if (!p)
			return -EFAULT;
		ret = fn(opaque, p, n, done);
		if (ret)
			return ret;
		done += n;
	}
	return done == len ? 0 : -EFAULT;
}

struct copy {
	uint8_t *buf;
	bool to_guest;
};

static int copy_piece(void *opaque, uint8_t *host, uint64_t len, uint64_t done)
{
	struct copy *c = opaque;

	if (c->to_guest)
		memcpy(host, c->buf + done, len);
	else
		memcpy(c->buf + done, host, len);
	return 0;
}

int virtq_read(struct machine *m, const struct virtq_chain *c, uint64_t off,
	       void *buf, uint64_t len)
{
	struct copy cp = { buf, false };

	return virtq_walk(m, c, false, off, len, copy_piece, &cp);
}

int virtq_write(struct machine *m, const struct virtq_chain *c, uint64_t off,
		const void *buf, uint64_t len)
{
	struct copy cp = { (uint8_t *)buf, true };

	return virtq_walk(m, c, true, off, len, copy_piece, &cp);
}
