// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-balloon: VERSION_1, STATS_VQ and REPORTING (free page reporting).
 *
 * Queues, in the order Linux numbers them when FREE_PAGE_HINT is not
 * offered (its virtio_mmio skips absent queues): inflate 0, deflate 1,
 * then stats and reporting if the driver accepted them.
 *
 * Inflate: every 4 KiB PFN the guest gives leaves its backing and the
 * frame returns to the pool (machine_guest_discard); the guest touching the page
 * again gets a fresh zeroed one through userfaultfd. Deflate: nothing to
 * do, for the same reason. Free page reporting: each reported range
 * (normally a 2 MiB block, which frees an assembled block whole) goes the
 * same way. Stats: the guest keeps one buffer in the stats queue; the
 * device reads it, remembers the values and holds the buffer, and gives
 * it back to ask for fresh ones (on a query).
 *
 * The guest's PFNs are data, not ring structure: one outside guest RAM is
 * skipped and counted (bad_pfns). A buffer in the wrong direction, though,
 * breaks the ring like any other rule of virtio_queue.c.
 *
 * How long a notify takes is the guest's choice: one inflate chain of 128
 * descriptors, each spanning all of guest RAM, is billions of PFNs. So the
 * PFNs and reported ranges are read and given back with the device lock
 * dropped, BALLOON_PFN_BATCH at a time; the lock is held only to take a
 * chain, to count what a batch did and to push the chain back. A host
 * request (QMP, the daemon's balloon tick, a report) thus waits for one
 * such bounded step at most, never for a chain. Between batches the device
 * checks that the VM is not stopping (`quit` ends a VM within a batch) and
 * that the ring is still the one the chain came from (a reset or a queue
 * taken back meanwhile: the chain is dropped, never pushed into the new
 * ring). One thread serves the device at a time (the scratch chain is
 * its): a notify arriving meanwhile, from another vCPU, is left for that
 * thread to serve before it returns.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/device.h"
#include "devices/virtio/virtio_balloon.h"
#include "devices/virtio/virtio_mmio.h"

#define BALLOON_QUEUE_SIZE	128	/* Linux's reporting wants 32 at least */
#define BALLOON_PFN_BATCH	256	/* PFNs read from a buffer at a time */
/*
 * A run of consecutive PFNs stays inside one aligned 2 MiB range: still
 * the whole block a discard can free at once, and no more work for one
 * give_back than 512 PFNs, however long the run the guest wrote.
 */
#define BALLOON_RUN_PFNS	512
#define BALLOON_CONFIG_LEN	16	/* num_pages, actual, two fields never offered */
#define PAGE_BYTES		(1ULL << VIRTIO_BALLOON_PFN_SHIFT)

enum balloon_queue { BQ_INFLATE, BQ_DEFLATE, BQ_STATS, BQ_REPORTING, BQ_NONE };

/* What giving back pages did, counted lock-free and added to the device's under the lock. */
struct balloon_tally {
	uint64_t inflated, reported, bad_pfns, discard_errors;
};

/* All under the device lock, but chain and pfns: the serving thread's. */
struct virtio_balloon {
	struct virtio_mmio_dev *mmio;
	uint32_t num_pages;		/* target, the host's */
	uint32_t actual;		/* the guest's */
	bool stats_held;		/* a stats buffer waits to be given back */
	uint16_t stats_head;
	unsigned int stats_q;
	uint32_t stats_gen;		/* the generation of the ring it came from */
	unsigned int nr_stats;
	struct virtio_balloon_stat stats[BALLOON_MAX_STATS];
	uint64_t stats_ns;
	uint64_t stats_updates;
	uint64_t deflated;
	struct balloon_tally done;
	bool serving;			/* a thread serves the queues (lock maybe dropped) */
	unsigned int kicks;		/* queues notified meanwhile, one bit each */
	struct virtq_chain chain;	/* scratch of the serving thread */
	uint32_t pfns[BALLOON_PFN_BATCH];
};

static const char *const stat_names[VIRTIO_BALLOON_S_NR] = {
	[VIRTIO_BALLOON_S_SWAP_IN] = "stat-swap-in",
	[VIRTIO_BALLOON_S_SWAP_OUT] = "stat-swap-out",
	[VIRTIO_BALLOON_S_MAJFLT] = "stat-major-faults",
	[VIRTIO_BALLOON_S_MINFLT] = "stat-minor-faults",
	[VIRTIO_BALLOON_S_MEMFREE] = "stat-free-memory",
	[VIRTIO_BALLOON_S_MEMTOT] = "stat-total-memory",
	[VIRTIO_BALLOON_S_AVAIL] = "stat-available-memory",
	[VIRTIO_BALLOON_S_CACHES] = "stat-disk-caches",
	[VIRTIO_BALLOON_S_HTLB_PGALLOC] = "stat-htlb-pgalloc",
	[VIRTIO_BALLOON_S_HTLB_PGFAIL] = "stat-htlb-pgfail",
};

const char *virtio_balloon_stat_name(unsigned int tag)
{
	return tag < VIRTIO_BALLOON_S_NR ? stat_names[tag] : NULL;
}

/* Queue @q's job under the features the driver accepted. */
static enum balloon_queue queue_role(struct virtio_mmio_dev *dev, unsigned int q)
{
	enum balloon_queue roles[4] = { BQ_INFLATE, BQ_DEFLATE, BQ_NONE, BQ_NONE };
	unsigned int n = 2;

	if (__virtio_mmio_has(dev, VIRTIO_BALLOON_F_STATS_VQ))
		roles[n++] = BQ_STATS;
	if (__virtio_mmio_has(dev, VIRTIO_BALLOON_F_REPORTING))
		roles[n++] = BQ_REPORTING;
	return q < n ? roles[q] : BQ_NONE;
}

static unsigned int balloon_nr_queues(struct virtio_mmio_dev *dev)
{
	return 2 + __virtio_mmio_has(dev, VIRTIO_BALLOON_F_STATS_VQ) +
	       __virtio_mmio_has(dev, VIRTIO_BALLOON_F_REPORTING);
}

static void balloon_config_read(struct virtio_mmio_dev *dev, uint32_t off, uint8_t *data,
				unsigned int len)
{
	struct virtio_balloon *b = dev->priv;
	uint8_t cfg[BALLOON_CONFIG_LEN] = { 0 };

	memcpy(cfg + VIRTIO_BALLOON_CFG_NUM_PAGES, &b->num_pages, 4);
	memcpy(cfg + VIRTIO_BALLOON_CFG_ACTUAL, &b->actual, 4);
	memcpy(data, cfg + off, len);
}

/* The driver writes `actual`, and nothing else. */
static bool balloon_config_write(struct virtio_mmio_dev *dev, uint32_t off,
				 const uint8_t *data, unsigned int len)
{
	struct virtio_balloon *b = dev->priv;
	uint8_t v[4];

	if (off < VIRTIO_BALLOON_CFG_ACTUAL || off + len > VIRTIO_BALLOON_CFG_ACTUAL + 4)
		return false;
	memcpy(v, &b->actual, 4);
	memcpy(v + (off - VIRTIO_BALLOON_CFG_ACTUAL), data, len);
	memcpy(&b->actual, v, 4);
	return true;
}

/*
 * @n PFNs from @pfn leave the guest; those outside its RAM are skipped.
 * A discard gpmm could not carry out (a pinned page) is counted here and
 * by the VM; the guest holds the page in its balloon either way.
 */
static void give_back(struct machine *m, struct balloon_tally *t, uint64_t pfn, uint64_t n)
{
	if (machine_guest_ram(m, pfn << VIRTIO_BALLOON_PFN_SHIFT, n * PAGE_BYTES)) {
		t->inflated += n;
		t->discard_errors += machine_guest_discard(m, pfn << VIRTIO_BALLOON_PFN_SHIFT,
							   n * PAGE_BYTES) != 0;
		return;
	}
	for (uint64_t i = 0; i < n; i++) {
		uint64_t gpa = (pfn + i) << VIRTIO_BALLOON_PFN_SHIFT;

		if (!machine_guest_ram(m, gpa, PAGE_BYTES)) {
			t->bad_pfns++;
			continue;
		}
		t->inflated++;
		t->discard_errors += machine_guest_discard(m, gpa, PAGE_BYTES) != 0;
	}
}

/* Consecutive PFNs, rising (dir 1) or falling (dir -1) from first. */
struct pfn_run {
	uint64_t first, n;
	int dir;
};

static void run_flush(struct machine *m, struct balloon_tally *t, struct pfn_run *r)
{
	if (r->n)
		give_back(m, t, r->dir < 0 ? r->first - (r->n - 1) : r->first, r->n);
	r->n = 0;
}

static bool run_extends(const struct pfn_run *r, uint64_t pfn)
{
	if (pfn / BALLOON_RUN_PFNS != r->first / BALLOON_RUN_PFNS)
		return false;
	if (r->n == 1)
		return pfn == r->first + 1 || pfn + 1 == r->first;
	return pfn == (r->dir > 0 ? r->first + r->n : r->first - r->n);
}

static void run_add(struct machine *m, struct balloon_tally *t, struct pfn_run *r,
		    uint64_t pfn)
{
	if (r->n && run_extends(r, pfn)) {
		if (r->n == 1)
			r->dir = pfn > r->first ? 1 : -1;
		r->n++;
		return;
	}
	run_flush(m, t, r);
	*r = (struct pfn_run){ pfn, 1, 1 };
}

/*
 * After a batch done with the lock dropped: the lock is taken again and
 * what the batch did is added to the device's counts. -ECANCELED when the
 * chain must be left as it is: the VM is stopping, or queue @q was taken
 * back meanwhile (its generation is no longer @gen), so the chain belongs
 * to no ring now.
 */
static int relock_after_batch(struct virtio_balloon *b, unsigned int q, uint32_t gen,
			      struct balloon_tally *t)
{
	struct virtio_mmio_dev *dev = b->mmio;

	pthread_mutex_lock(&dev->lock);
	b->done.inflated += t->inflated;
	b->done.reported += t->reported;
	b->done.bad_pfns += t->bad_pfns;
	b->done.discard_errors += t->discard_errors;
	*t = (struct balloon_tally){ 0 };
	if (machine_stopping(dev->m) || dev->vq[q].gen != gen || !dev->vq[q].ready)
		return -ECANCELED;
	return 0;
}

/*
 * Lock dropped: PFNs [@off, @off + @cnt) of the buffer join the run, which
 * goes back once it ends (or with the buffer's last batch, @last).
 */
static int inflate_batch(struct virtio_balloon *b, const struct virtq_chain *c, uint64_t off,
			 unsigned int cnt, bool last, struct pfn_run *run,
			 struct balloon_tally *t)
{
	struct machine *m = b->mmio->m;

	if (virtq_read(m, c, off * sizeof(uint32_t), b->pfns, cnt * sizeof(uint32_t))) {
		run_flush(m, t, run);
		return -EFAULT;
	}
	for (unsigned int i = 0; i < cnt; i++)
		run_add(m, t, run, b->pfns[i]);
	if (last)
		run_flush(m, t, run);
	return 0;
}

/*
 * An inflate buffer: an array of le32 PFNs. Linux allocates balloon pages
 * one at a time and often gets neighbours, in either order: consecutive
 * PFNs, rising or falling, are given back as one range (one remap, and a
 * whole 2 MiB backing freed as one block), across the batches they are
 * read in, up to an aligned 2 MiB range (BALLOON_RUN_PFNS). Lock held on
 * entry and return; dropped for each batch.
 */
static int inflate(struct virtio_balloon *b, unsigned int q, const struct virtq_chain *c)
{
	struct virtio_mmio_dev *dev = b->mmio;
	uint64_t n = c->read_len / sizeof(uint32_t);
	uint32_t gen = dev->vq[q].gen;
	struct balloon_tally t = { 0 };
	struct pfn_run run = { 0 };

	for (uint64_t off = 0; off < n; off += BALLOON_PFN_BATCH) {
		unsigned int cnt = n - off < BALLOON_PFN_BATCH ? (unsigned int)(n - off)
							       : BALLOON_PFN_BATCH;
		int ret;

		pthread_mutex_unlock(&dev->lock);
		ret = inflate_batch(b, c, off, cnt, off + cnt == n, &run, &t);
		if (relock_after_batch(b, q, gen, &t))
			return -ECANCELED;	/* before -EFAULT: a ring gone is not broken */
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Reported free ranges: the whole pages inside each leave the guest, a
 * range at a time with the lock dropped (as inflate's batches).
 */
static int report(struct virtio_balloon *b, unsigned int q, const struct virtq_chain *c)
{
	struct virtio_mmio_dev *dev = b->mmio;
	uint32_t gen = dev->vq[q].gen;
	struct balloon_tally t = { 0 };

	for (unsigned int i = c->nr_read; i < c->nr; i++) {
		uint64_t start = (c->seg[i].gpa + PAGE_BYTES - 1) & ~(PAGE_BYTES - 1);
		uint64_t end = (c->seg[i].gpa + c->seg[i].len) & ~(PAGE_BYTES - 1);
		int ret;

		if (end <= start)
			continue;
		pthread_mutex_unlock(&dev->lock);
		t.reported += end - start;
		t.discard_errors += machine_guest_discard(dev->m, start, end - start) != 0;
		ret = relock_after_batch(b, q, gen, &t);
		if (ret)
			return ret;
	}
	return 0;
}

/* The held stats buffer goes back, if the ring it came from is still there. */
static int __stats_give_back(struct virtio_balloon *b)
{
	struct virtio_mmio_dev *dev = b->mmio;
	struct virtq *vq = &dev->vq[b->stats_q];
	int ret;

	if (!b->stats_held)
		return 0;
	b->stats_held = false;
	if (!vq->ready || vq->gen != b->stats_gen)
		return 0;	/* the driver set the queue up again: the buffer is gone */
	ret = virtq_push(dev->m, vq, b->stats_head, 0);
	if (!ret)
		__virtio_mmio_used(dev);
	return ret;
}

/* Keep the values of a stats buffer; it is held until stats are wanted. */
static int take_stats(struct virtio_balloon *b, const struct virtq_chain *c, unsigned int q)
{
	struct virtio_mmio_dev *dev = b->mmio;
	uint64_t n = c->read_len / sizeof(struct virtio_balloon_stat);
	int ret;

	if (n > BALLOON_MAX_STATS)
		n = BALLOON_MAX_STATS;
	if (virtq_read(dev->m, c, 0, b->stats, n * sizeof(struct virtio_balloon_stat)))
		return -EFAULT;
	b->nr_stats = (unsigned int)n;
	b->stats_ns = machine_now_ns(dev->m);
	b->stats_updates++;
	/* a driver that sends a second one gets the first back */
	ret = __stats_give_back(b);
	b->stats_held = true;
	b->stats_head = c->head;
	b->stats_q = q;
	b->stats_gen = dev->vq[q].gen;
	return ret;
}

static int serve(struct virtio_balloon *b, enum balloon_queue role, unsigned int q,
		 const struct virtq_chain *c, char *why)
{
	struct virtio_mmio_dev *dev = b->mmio;
	bool want_write = role == BQ_REPORTING;
	int ret = 0;

	/* inflate, deflate and stats the device reads; reports it is given to write */
	if (want_write ? c->read_len != 0 : c->write_len != 0) {
		snprintf(why, VIRTQ_WHY_LEN, "buffer %u on queue %u is device-%s, must be "
			 "device-%s", c->head, q, want_write ? "readable" : "writable",
			 want_write ? "writable" : "readable");
		return -EINVAL;
	}
	switch (role) {
	case BQ_INFLATE:
		ret = inflate(b, q, c);
		break;
	case BQ_DEFLATE:
		b->deflated += c->read_len / sizeof(uint32_t);
		break;
	case BQ_STATS:
		return take_stats(b, c, q);
	case BQ_REPORTING:
		ret = report(b, q, c);
		break;
	case BQ_NONE:
		break;
	}
	if (!ret)
		ret = virtq_push(dev->m, &dev->vq[q], c->head, 0);
	if (!ret)
		__virtio_mmio_used(dev);
	return ret;
}

/* Queue @q's pending chains, as many as the queue holds at most. */
static int serve_queue(struct virtio_balloon *b, unsigned int q, char *why)
{
	struct virtio_mmio_dev *dev = b->mmio;
	enum balloon_queue role = queue_role(dev, q);
	int ret = 0;

	for (unsigned int n = 0; n < dev->vq[q].num && !machine_stopping(dev->m); n++) {
		ret = virtq_pop(dev->m, &dev->vq[q], &b->chain, why);
		if (ret <= 0)
			break;
		ret = serve(b, role, q, &b->chain, why);
		if (ret == -EFAULT)
			snprintf(why, VIRTQ_WHY_LEN, "buffer memory could not be backed");
		if (ret)
			break;
	}
	return ret == -ECANCELED ? 0 : ret;
}

/*
 * The thread that finds the device idle serves it, the queues notified
 * meanwhile (kicks) included; a notify while it serves is only noted.
 */
static int balloon_notify(struct virtio_mmio_dev *dev, unsigned int q, char *why)
{
	struct virtio_balloon *b = dev->priv;
	int ret;

	if (b->serving) {
		b->kicks |= 1U << q;
		return 0;
	}
	b->serving = true;
	ret = serve_queue(b, q, why);
	while (!ret && b->kicks) {
		q = (unsigned int)__builtin_ctz(b->kicks);
		b->kicks &= ~(1U << q);
		if (__virtio_mmio_can_serve(dev, q))
			ret = serve_queue(b, q, why);
	}
	b->kicks = 0;
	b->serving = false;
	return ret < 0 ? -EINVAL : 0;
}

static void balloon_reset(struct virtio_mmio_dev *dev)
{
	struct virtio_balloon *b = dev->priv;

	/* the driver's buffers and its balloon are gone; the host's target stays */
	b->stats_held = false;
	b->kicks = 0;
	b->actual = 0;
}

static const struct virtio_mmio_model balloon_model = {
	.name = "virtio-balloon",
	.device_id = VIRTIO_ID_BALLOON,
	.queue_max = BALLOON_QUEUE_SIZE,
	.config_len = BALLOON_CONFIG_LEN,
	.nr_queues = balloon_nr_queues,
	.config_read = balloon_config_read,
	.config_write = balloon_config_write,
	.notify = balloon_notify,
	.reset = balloon_reset,
};

static struct virtio_balloon *balloon_of(struct machine *m)
{
	return dev_priv(m, &virtio_balloon_device);
}

int virtio_balloon_set_target(struct machine *m, uint64_t bytes)
{
	struct virtio_balloon *b = balloon_of(m);
	uint64_t ram = m->cfg.ram_bytes;

	if (!b)
		return -ENODEV;
	pthread_mutex_lock(&b->mmio->lock);
	b->num_pages = (uint32_t)((ram - (bytes < ram ? bytes : ram)) >> VIRTIO_BALLOON_PFN_SHIFT);
	__virtio_mmio_config_changed(b->mmio);
	pthread_mutex_unlock(&b->mmio->lock);
	return 0;
}

static void request_stats(struct virtio_balloon *b)
{
	if (__virtio_mmio_live(b->mmio))
		(void)__stats_give_back(b);	/* a ring gone: the next buffer comes */
}

int virtio_balloon_query(struct machine *m, struct virtio_balloon_info *info, bool refresh)
{
	struct virtio_balloon *b = balloon_of(m);
	uint64_t ram = m->cfg.ram_bytes, held;

	if (!b)
		return -ENODEV;
	memset(info, 0, sizeof(*info));
	pthread_mutex_lock(&b->mmio->lock);
	held = (uint64_t)b->actual << VIRTIO_BALLOON_PFN_SHIFT;
	info->target_bytes = ram - ((uint64_t)b->num_pages << VIRTIO_BALLOON_PFN_SHIFT);
	info->actual_bytes = held < ram ? ram - held : 0;
	info->num_pages = b->num_pages;
	info->actual_pages = b->actual;
	info->status = b->mmio->status;
	info->inflated_pages = b->done.inflated;
	info->deflated_pages = b->deflated;
	info->reported_bytes = b->done.reported;
	info->bad_pfns = b->done.bad_pfns;
	info->discard_errors = b->done.discard_errors;
	info->stats_updates = b->stats_updates;
	info->stats_age_ns = b->stats_updates ? machine_now_ns(m) - b->stats_ns : 0;
	info->nr_stats = b->nr_stats;
	for (unsigned int i = 0; i < b->nr_stats; i++) {
		info->stat_tag[i] = b->stats[i].tag;
		info->stat_val[i] = b->stats[i].val;
	}
	if (refresh)
		request_stats(b);
	pthread_mutex_unlock(&b->mmio->lock);
	return 0;
}

static void balloon_exit(struct machine *m, void *priv)
{
	struct virtio_balloon *b = priv;

	if (!b)
		return;
	virtio_mmio_destroy(b->mmio);
	free(b);
}

static int balloon_init(struct machine *m, void **priv)
{
	/*
	 * deflate-on-OOM: a guest the pool's pressure (or an operator) asked
	 * too much of takes pages back before its OOM killer picks a victim
	 */
	uint64_t features = (1ULL << VIRTIO_BALLOON_F_STATS_VQ) |
			    (1ULL << VIRTIO_BALLOON_F_DEFLATE_ON_OOM);
	struct virtio_balloon *b;
	int ret;

	*priv = NULL;
	if (!m->cfg.balloon)
		return 0;
	if (m->cfg.balloon_reporting)
		features |= 1ULL << VIRTIO_BALLOON_F_REPORTING;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	ret = virtio_mmio_create(m, &balloon_model, features, b, &b->mmio);
	if (ret) {
		free(b);
		return ret;
	}
	*priv = b;
	return 0;
}

const struct device_ops virtio_balloon_device = {
	.name = "virtio-balloon",
	.init = balloon_init,
	.exit = balloon_exit,
};
