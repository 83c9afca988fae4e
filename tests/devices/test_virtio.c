// SPDX-License-Identifier: GPL-2.0
/*
 * virtio devices through their MMIO window, on the machine double: the
 * config space and register rules, a driver that sets up a queue, a
 * driver whose ring lies outside guest RAM, a guest's long inflate chain
 * against host requests and a stop, and a stats queue set up again.
 */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "devices/virtio/virtio_abi.h"
#include "devices/virtio/virtio_balloon.h"
#include "tests/devices/bus.h"
#include "tests/suite.h"

#define RAM		(1ULL << 20)
/* with no disk the balloon takes the first slot */
#define BALLOON_REG(off)	(VIRTIO_MMIO_BASE + (off))
#define BALLOON_CFG		BALLOON_REG(VIRTIO_MMIO_CONFIG)
#define BALLOON_GSI		VIRTIO_MMIO_GSI_BASE

/* Where the test driver keeps its inflate queue (queue 0) and PFN array. */
#define QSIZE		8
#define DESC_GPA	0x10000ULL
#define AVAIL_GPA	0x11000ULL
#define USED_GPA	0x12000ULL
#define PFNS_GPA	0x13000ULL

static struct machine_double dbl;

/* A machine whose registry made a balloon and no disk. */
static void balloon_up(bool reporting)
{
	struct machine_config cfg = { .balloon = true, .balloon_reporting = reporting };

	bus_up(&dbl, RAM, &cfg);
	CU_ASSERT_PTR_NOT_NULL_FATAL(dev_priv(&dbl.m, &virtio_balloon_device));
	CU_ASSERT_PTR_NULL(dev_priv(&dbl.m, &virtio_blk_device));
}

static uint32_t reg_read(uint64_t addr, unsigned int len)
{
	return bus_read(&dbl, BUS_MMIO, addr, len);
}

static void reg_write(uint64_t addr, uint32_t val, unsigned int len)
{
	bus_write(&dbl, BUS_MMIO, addr, val, len);
}

/*
 * The driver may write `actual` a byte or a half at a time. A write at
 * offset 5 put its pointer past the 4-byte staging copy before taking
 * the offset of `actual` off again: undefined behaviour that UBSan
 * reported (found by the virtio fuzz target; SANITIZE=1 runs this test
 * under UBSan).
 */
static void test_balloon_actual_bytes(void)
{
	const uint64_t actual = BALLOON_CFG + VIRTIO_BALLOON_CFG_ACTUAL;

	balloon_up(true);
	for (uint32_t i = 0; i < 4; i++)
		reg_write(actual + i, 0x11 * (i + 1), 1);
	CU_ASSERT_EQUAL(reg_read(actual, 4), 0x44332211);
	reg_write(actual + 2, 0xbeef, 2);
	CU_ASSERT_EQUAL(reg_read(actual, 4), 0xbeef2211);
	/* num_pages is the host's: a write reaching into it changes nothing */
	reg_write(actual - 1, 0xffff, 2);
	CU_ASSERT_EQUAL(reg_read(actual, 4), 0xbeef2211);
	bus_down(&dbl);
}

/* A driver's bring-up as Linux's virtio_mmio does it, VERSION_1 only. */
static void driver_up(uint64_t desc, uint64_t avail, uint64_t used)
{
	reg_write(BALLOON_REG(VIRTIO_MMIO_STATUS), 0, 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_STATUS), VIRTIO_STATUS_ACKNOWLEDGE, 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_STATUS),
		  VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER, 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_DRIVER_FEATURES_SEL), 1, 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_DRIVER_FEATURES), 1U << (VIRTIO_F_VERSION_1 - 32), 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_STATUS), VIRTIO_STATUS_ACKNOWLEDGE |
		  VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK, 4);
	CU_ASSERT(reg_read(BALLOON_REG(VIRTIO_MMIO_STATUS), 4) & VIRTIO_STATUS_FEATURES_OK);
	reg_write(BALLOON_REG(VIRTIO_MMIO_QUEUE_SEL), 0, 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_QUEUE_NUM), QSIZE, 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_QUEUE_DESC_LOW), (uint32_t)desc, 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_QUEUE_DESC_HIGH), (uint32_t)(desc >> 32), 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_QUEUE_AVAIL_LOW), (uint32_t)avail, 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_QUEUE_AVAIL_HIGH), (uint32_t)(avail >> 32), 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_QUEUE_USED_LOW), (uint32_t)used, 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_QUEUE_USED_HIGH), (uint32_t)(used >> 32), 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_QUEUE_READY), 1, 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_STATUS), VIRTIO_STATUS_ACKNOWLEDGE |
		  VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK | VIRTIO_STATUS_DRIVER_OK, 4);
}

/* Put one device-readable buffer of @len bytes at @gpa on queue 0, notify. */
static void offer_buffer(uint64_t gpa, uint32_t len)
{
	struct virtq_desc d = { .addr = gpa, .len = len };
	uint16_t head = 0, idx = 1;

	memcpy(dbl.ram + DESC_GPA, &d, sizeof(d));
	memcpy(dbl.ram + AVAIL_GPA + VIRTQ_AVAIL_RING(0), &head, 2);
	memcpy(dbl.ram + AVAIL_GPA + 2, &idx, 2);
	reg_write(BALLOON_REG(VIRTIO_MMIO_QUEUE_NOTIFY), 0, 4);
}

/*
 * Inflate: each PFN the guest gives goes back through the machine's
 * discard, the page reads zero, the buffer comes back used and the
 * device's interrupt line goes up. A PFN outside guest RAM is counted and
 * never reaches the machine.
 */
static void test_balloon_inflate_discards(void)
{
	uint32_t pfns[] = { 0x40, 0x41, (uint32_t)(RAM >> 12) + 5 };
	struct virtio_balloon_info info;
	uint16_t used_idx = 0;

	balloon_up(true);
	driver_up(DESC_GPA, AVAIL_GPA, USED_GPA);
	CU_ASSERT_FALSE(reg_read(BALLOON_REG(VIRTIO_MMIO_STATUS), 4) & VIRTIO_STATUS_NEEDS_RESET);
	memset(dbl.ram + 0x40000, 0xaa, 2 * 4096);
	memcpy(dbl.ram + PFNS_GPA, pfns, sizeof(pfns));
	offer_buffer(PFNS_GPA, sizeof(pfns));

	CU_ASSERT_EQUAL(dbl.log.discarded_bytes, 2 * 4096);
	CU_ASSERT_EQUAL(dbl.ram[0x40000], 0);
	CU_ASSERT_EQUAL(dbl.ram[0x41fff], 0);
	memcpy(&used_idx, dbl.ram + USED_GPA + 2, 2);
	CU_ASSERT_EQUAL(used_idx, 1);
	CU_ASSERT_EQUAL(dbl.log.irq_level[BALLOON_GSI], 1);
	CU_ASSERT_EQUAL_FATAL(virtio_balloon_query(&dbl.m, &info, false), 0);
	CU_ASSERT_EQUAL(info.inflated_pages, 2);
	CU_ASSERT_EQUAL(info.bad_pfns, 1);
	/* the driver acknowledges: the line goes down */
	reg_write(BALLOON_REG(VIRTIO_MMIO_INTERRUPT_ACK),
		  reg_read(BALLOON_REG(VIRTIO_MMIO_INTERRUPT_STATUS), 4), 4);
	CU_ASSERT_EQUAL(dbl.log.irq_level[BALLOON_GSI], 0);
	bus_down(&dbl);
}

/*
 * A ring the driver places past the end of guest RAM is refused when the
 * queue is made ready: the device wants a reset, nothing is read or
 * written outside RAM (the double's guard pages would fault), nothing is
 * discarded.
 */
static void test_ring_outside_ram(void)
{
	balloon_up(false);
	driver_up(RAM - 16, AVAIL_GPA, USED_GPA);
	CU_ASSERT(reg_read(BALLOON_REG(VIRTIO_MMIO_STATUS), 4) & VIRTIO_STATUS_NEEDS_RESET);
	reg_write(BALLOON_REG(VIRTIO_MMIO_QUEUE_NOTIFY), 0, 4);
	CU_ASSERT_EQUAL(dbl.log.discards, 0);
	bus_down(&dbl);
}

/* A stop requested mid-chain ends the device's work early. */
static void test_stop_ends_chain_walk(void)
{
	uint32_t pfns[] = { 0x40, 0x41 };

	balloon_up(true);
	driver_up(DESC_GPA, AVAIL_GPA, USED_GPA);
	memcpy(dbl.ram + PFNS_GPA, pfns, sizeof(pfns));
	dbl.stopping = true;
	offer_buffer(PFNS_GPA, sizeof(pfns));
	CU_ASSERT_EQUAL(dbl.log.discards, 0);
	bus_down(&dbl);
}

/*
 * A long inflate chain, as a guest may write one: LONG_PFNS PFNs that
 * never make a run (0x40, 0x42, 0x40, ...), so one discard each.
 * BALLOON_PFN_BATCH in virtio_balloon.c is 256: the most a chain does
 * between two looks at the VM's state.
 */
#define LONG_PFNS	4096
#define PFN_BATCH	256
#define WAIT_S		10	/* for a thread that should answer at once */

static void offer_long_chain(void)
{
	uint32_t *pfns = (uint32_t *)(dbl.ram + PFNS_GPA);

	for (unsigned int i = 0; i < LONG_PFNS; i++)
		pfns[i] = i & 1 ? 0x42 : 0x40;
	offer_buffer(PFNS_GPA, LONG_PFNS * sizeof(uint32_t));
}

static uint16_t used_idx_at(uint64_t used_gpa)
{
	uint16_t idx;

	memcpy(&idx, dbl.ram + used_gpa + 2, 2);
	return idx;
}

/* Another thread's call, waited for a while at most: did it return? */
struct side_call {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;
	void (*fn)(struct side_call *sc);
	struct virtio_balloon_info info;
	int ret;
};

static struct side_call side;

static void *side_thread(void *arg)
{
	struct side_call *sc = arg;

	sc->fn(sc);
	pthread_mutex_lock(&sc->lock);
	sc->done = true;
	pthread_cond_signal(&sc->cond);
	pthread_mutex_unlock(&sc->lock);
	return NULL;
}

/* Run @fn on another thread; true if it returned within WAIT_S. Joined either way by side_join. */
static bool side_run(pthread_t *t, void (*fn)(struct side_call *sc))
{
	struct timespec until;
	bool done;

	side.fn = fn;
	side.done = false;
	if (pthread_create(t, NULL, side_thread, &side))
		return false;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += WAIT_S;
	pthread_mutex_lock(&side.lock);
	while (!side.done)
		if (pthread_cond_timedwait(&side.cond, &side.lock, &until) == ETIMEDOUT)
			break;
	done = side.done;
	pthread_mutex_unlock(&side.lock);
	return done;
}

static void side_query(struct side_call *sc)
{
	sc->ret = virtio_balloon_query(&dbl.m, &sc->info, true);
}

/* What the first discard saw of the host request it started. */
static pthread_t side_tid;
static bool side_started, side_answered;

static void query_on_first_discard(struct machine_double *d)
{
	if (side_started)
		return;
	side_started = true;
	side_answered = side_run(&side_tid, side_query);
}

/*
 * A guest's long inflate chain, with @on_discard starting a side call
 * (another thread's request) at its first discard: the side call must
 * have started and been answered by the time the chain is done.
 */
static void long_chain_with_a_side_call(void (*on_discard)(struct machine_double *))
{
	balloon_up(false);
	driver_up(DESC_GPA, AVAIL_GPA, USED_GPA);
	pthread_mutex_init(&side.lock, NULL);
	pthread_cond_init(&side.cond, NULL);
	side_started = side_answered = false;
	dbl.on_discard = on_discard;
	offer_long_chain();
	CU_ASSERT_TRUE(side_started);
	if (side_started)
		pthread_join(side_tid, NULL);
	CU_ASSERT_TRUE(side_answered);
}

/*
 * The daemon's balloon tick, QMP and the report take the balloon's lock.
 * A guest's inflate chain of any length must not keep them waiting: a
 * query started while the chain's first PFN is given back is answered
 * before the second is (the discards happen with the lock dropped). It
 * waited for the whole chain when the chain ran under the lock (seen
 * with the fix stashed: the query was not answered within WAIT_S).
 */
static void test_balloon_query_during_long_chain(void)
{
	long_chain_with_a_side_call(query_on_first_discard);
	CU_ASSERT_EQUAL(side.ret, 0);
	CU_ASSERT(side.info.inflated_pages <= PFN_BATCH);
	/* the chain went on to its end and came back */
	CU_ASSERT_EQUAL(dbl.log.discards, LONG_PFNS);
	CU_ASSERT_EQUAL(used_idx_at(USED_GPA), 1);
	pthread_cond_destroy(&side.cond);
	pthread_mutex_destroy(&side.lock);
	bus_down(&dbl);
}

static void stop_on_tenth_discard(struct machine_double *d)
{
	if (d->log.discards == 10)
		d->stopping = true;
}

/*
 * `quit` in the middle of a chain: the VM stops within one batch of PFNs,
 * and the chain is not pushed back (the VM is going away). The whole
 * chain ran before (LONG_PFNS discards, seen with the fix stashed).
 */
static void test_balloon_stop_mid_chain(void)
{
	balloon_up(false);
	driver_up(DESC_GPA, AVAIL_GPA, USED_GPA);
	dbl.on_discard = stop_on_tenth_discard;
	offer_long_chain();
	CU_ASSERT(dbl.log.discards >= 10);
	CU_ASSERT(dbl.log.discards <= PFN_BATCH);
	CU_ASSERT(dbl.log.discards < LONG_PFNS);
	CU_ASSERT_EQUAL(used_idx_at(USED_GPA), 0);
	bus_down(&dbl);
}

/* A second vCPU offers a one-PFN chain and notifies while the first chain runs. */
static void side_notify(struct side_call *sc)
{
	struct virtq_desc d = { .addr = PFNS_GPA + LONG_PFNS * 4, .len = 4 };
	uint32_t pfn = 0x50;
	uint16_t head = 1, idx = 2;

	memcpy(dbl.ram + PFNS_GPA + LONG_PFNS * 4, &pfn, 4);
	memcpy(dbl.ram + DESC_GPA + sizeof(d), &d, sizeof(d));
	memcpy(dbl.ram + AVAIL_GPA + VIRTQ_AVAIL_RING(1), &head, 2);
	memcpy(dbl.ram + AVAIL_GPA + 2, &idx, 2);
	reg_write(BALLOON_REG(VIRTIO_MMIO_QUEUE_NOTIFY), 0, 4);
}

static void notify_on_first_discard(struct machine_double *d)
{
	if (side_started)
		return;
	side_started = true;
	side_answered = side_run(&side_tid, side_notify);
}

/*
 * A notify while the device serves another: the second vCPU is not held
 * for the first one's chain, and its chain is served before the first
 * notify returns.
 */
static void test_balloon_notify_during_long_chain(void)
{
	long_chain_with_a_side_call(notify_on_first_discard);
	CU_ASSERT_EQUAL(dbl.log.discards, LONG_PFNS + 1);
	CU_ASSERT_EQUAL(used_idx_at(USED_GPA), 2);
	pthread_cond_destroy(&side.cond);
	pthread_mutex_destroy(&side.lock);
	bus_down(&dbl);
}

/* Where the test driver keeps its stats queue (queue 2) and buffer. */
#define STATS_DESC	0x20000ULL
#define STATS_AVAIL	0x21000ULL
#define STATS_USED	0x22000ULL
#define STATS_BUF	0x23000ULL

static void stats_queue_up(void)
{
	memset(dbl.ram + STATS_DESC, 0, 3 * 4096);
	reg_write(BALLOON_REG(VIRTIO_MMIO_QUEUE_SEL), 2, 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_QUEUE_NUM), QSIZE, 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_QUEUE_DESC_LOW), (uint32_t)STATS_DESC, 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_QUEUE_AVAIL_LOW), (uint32_t)STATS_AVAIL, 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_QUEUE_USED_LOW), (uint32_t)STATS_USED, 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_QUEUE_READY), 1, 4);
	CU_ASSERT_EQUAL(reg_read(BALLOON_REG(VIRTIO_MMIO_QUEUE_READY), 4), 1);
}

/* The @n-th stats buffer of the ring (head 0 each time), one stat. */
static void offer_stats(uint16_t n)
{
	struct virtq_desc d = { .addr = STATS_BUF, .len = 10 };
	uint8_t stat[10] = { VIRTIO_BALLOON_S_MEMFREE, 0, 0x34, 0x12 };
	uint16_t head = 0;

	memcpy(dbl.ram + STATS_BUF, stat, sizeof(stat));
	memcpy(dbl.ram + STATS_DESC, &d, sizeof(d));
	memcpy(dbl.ram + STATS_AVAIL + VIRTQ_AVAIL_RING(n - 1), &head, 2);
	memcpy(dbl.ram + STATS_AVAIL + 2, &n, 2);
	reg_write(BALLOON_REG(VIRTIO_MMIO_QUEUE_NOTIFY), 2, 4);
}

/*
 * The device holds the driver's stats buffer until stats are wanted. A
 * driver that takes its stats queue back (QueueReady = 0) and sets it up
 * again has a new ring in which that buffer never was: pushing it there
 * would hand the driver a used entry for a buffer it did not give (Linux
 * takes it for its new one). It went into the new ring before (seen with
 * the fix stashed: used idx 1 after the refresh).
 */
static void test_balloon_stats_queue_set_up_again(void)
{
	struct virtio_balloon_info info;

	balloon_up(false);
	reg_write(BALLOON_REG(VIRTIO_MMIO_STATUS), 0, 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_STATUS), VIRTIO_STATUS_ACKNOWLEDGE |
		  VIRTIO_STATUS_DRIVER, 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_DRIVER_FEATURES_SEL), 0, 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_DRIVER_FEATURES), 1U << VIRTIO_BALLOON_F_STATS_VQ, 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_DRIVER_FEATURES_SEL), 1, 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_DRIVER_FEATURES), 1U << (VIRTIO_F_VERSION_1 - 32), 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_STATUS), VIRTIO_STATUS_ACKNOWLEDGE |
		  VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK, 4);
	stats_queue_up();
	reg_write(BALLOON_REG(VIRTIO_MMIO_STATUS), VIRTIO_STATUS_ACKNOWLEDGE |
		  VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK | VIRTIO_STATUS_DRIVER_OK, 4);
	offer_stats(1);
	CU_ASSERT_EQUAL_FATAL(virtio_balloon_query(&dbl.m, &info, false), 0);
	CU_ASSERT_EQUAL(info.stats_updates, 1);
	CU_ASSERT_EQUAL(used_idx_at(STATS_USED), 0);

	/* the driver takes the queue back and sets it up again, rings zeroed */
	reg_write(BALLOON_REG(VIRTIO_MMIO_QUEUE_SEL), 2, 4);
	reg_write(BALLOON_REG(VIRTIO_MMIO_QUEUE_READY), 0, 4);
	stats_queue_up();
	CU_ASSERT_EQUAL_FATAL(virtio_balloon_query(&dbl.m, &info, true), 0);
	CU_ASSERT_EQUAL(used_idx_at(STATS_USED), 0);
	CU_ASSERT_FALSE(reg_read(BALLOON_REG(VIRTIO_MMIO_STATUS), 4) & VIRTIO_STATUS_NEEDS_RESET);

	/* the new ring's first buffer is held, and given back when stats are wanted */
	offer_stats(1);
	CU_ASSERT_EQUAL(used_idx_at(STATS_USED), 0);
	CU_ASSERT_EQUAL_FATAL(virtio_balloon_query(&dbl.m, &info, true), 0);
	CU_ASSERT_EQUAL(info.stats_updates, 2);
	CU_ASSERT_EQUAL(used_idx_at(STATS_USED), 1);
	bus_down(&dbl);
}

static const struct suite_test tests[] = {
	{ "balloon: actual written a byte at a time", test_balloon_actual_bytes },
	{ "balloon: inflate discards through the machine", test_balloon_inflate_discards },
	{ "a ring outside guest RAM: needs reset", test_ring_outside_ram },
	{ "a stopping machine: no chain served", test_stop_ends_chain_walk },
	{ "balloon: a query answered during a long inflate chain",
	  test_balloon_query_during_long_chain },
	{ "balloon: a stop ends a long inflate chain within a batch", test_balloon_stop_mid_chain },
	{ "balloon: a notify during a long chain is served, not waited on",
	  test_balloon_notify_during_long_chain },
	{ "balloon: a stats queue set up again gets no stale buffer",
	  test_balloon_stats_queue_set_up_again },
};

int register_virtio_suite(void)
{
	return SUITE("virtio", tests);
}
