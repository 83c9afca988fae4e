// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-net through its MMIO window, on the machine double, over a real
 * tap of this host (root and the tun module: where either is missing the
 * tests fail and say so). A hostile driver's transmit chains (outside
 * RAM, endless, huge, longer than any packet, shorter than the header), a
 * queue set up twice, a descriptor that is no tap; and one packet the
 * host sends out of the tap landing in the guest's receive buffer.
 *
 * The device works on its own I/O thread: the test learns what it did
 * from its counters (virtio_net_query) and registers, both read under the
 * device lock, which also orders the device's writes to guest memory
 * before the test's reads. The test writes a ring only while the device
 * has nothing left to do on it.
 */
#define _GNU_SOURCE
#include <CUnit/CUnit.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <linux/if_tun.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "devices/virtio/virtio_abi.h"
#include "devices/virtio/virtio_net.h"
#include "tests/devices/bus.h"
#include "tests/suite.h"

#define RAM		(1ULL << 20)
/* with neither disk nor balloon, the interface takes the first slot */
#define NET_REG(off)	(VIRTIO_MMIO_BASE + (off))
#define QSIZE		8
#define RXQ		0
#define TXQ		1
/* per queue: descriptors, avail and used rings, one page each */
#define RING_GPA(q)	(0x10000ULL + (q) * 0x3000ULL)
#define DESC(q)		RING_GPA(q)
#define AVAIL(q)	(RING_GPA(q) + 0x1000)
#define USED(q)		(RING_GPA(q) + 0x2000)
#define BUF_GPA		0x40000ULL
#define HDR		12
#define WAIT_MS		10000	/* for the I/O thread: it answers at once */

static struct machine_double dbl;
static char tap_name[IFNAMSIZ];

static uint32_t reg_read(uint64_t off)
{
	return bus_read(&dbl, BUS_MMIO, NET_REG(off), 4);
}

static void reg_write(uint64_t off, uint32_t val)
{
	bus_write(&dbl, BUS_MMIO, NET_REG(off), val, 4);
}

static void no_ipv6(const char *ifname)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/disable_ipv6", ifname);
	f = fopen(path, "w");
	if (!f)
		return;		/* no IPv6 on this host: nothing to turn off */
	fputs("1\n", f);
	fclose(f);
}

/* A tap of our own, with virtio headers, up: -1 (and a failure said) when this host has none. */
static int tap_make(void)
{
	struct ifreq ifr = { 0 };
	int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC), s;

	snprintf(tap_name, sizeof(tap_name), "gpmmdt%d", (int)getpid() % 100000);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", tap_name);
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR;
	if (fd < 0 || ioctl(fd, TUNSETIFF, &ifr) < 0) {
		fprintf(stderr, "\n  no tap on this host (%s): the virtio-net device tests need "
			"root and the tun module\n", strerror(errno));
		if (fd >= 0)
			close(fd);
		CU_FAIL("a tap to test virtio-net on");
		return -1;
	}
	/*
	 * No IPv6 on it: once up, the host would send its own packets (router
	 * solicitations, MLD reports) out of it, and a test's receive buffer
	 * would take one of those before the frame the test sends.
	 */
	no_ipv6(tap_name);
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ifr.ifr_flags = IFF_UP;
	if (s < 0 || ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		CU_FAIL("the test's tap comes up");
	if (s >= 0)
		close(s);
	return fd;
}

/* The machine with one interface on a fresh tap; its descriptor, or -1. */
static int net_up(void)
{
	struct machine_net net = { .fd = tap_make(), .offload = true };
	struct machine_config cfg = { .net = &net, .nr_net = 1 };

	if (net.fd < 0)
		return -1;
	bus_up(&dbl, RAM, &cfg);
	return net.fd;
}

static void net_down(int tap)
{
	bus_down(&dbl);
	close(tap);
}

static void queue_setup(unsigned int q, uint64_t desc, uint64_t avail, uint64_t used)
{
	reg_write(VIRTIO_MMIO_QUEUE_SEL, q);
	reg_write(VIRTIO_MMIO_QUEUE_NUM, QSIZE);
	reg_write(VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)desc);
	reg_write(VIRTIO_MMIO_QUEUE_DESC_HIGH, (uint32_t)(desc >> 32));
	reg_write(VIRTIO_MMIO_QUEUE_AVAIL_LOW, (uint32_t)avail);
	reg_write(VIRTIO_MMIO_QUEUE_AVAIL_HIGH, (uint32_t)(avail >> 32));
	reg_write(VIRTIO_MMIO_QUEUE_USED_LOW, (uint32_t)used);
	reg_write(VIRTIO_MMIO_QUEUE_USED_HIGH, (uint32_t)(used >> 32));
	reg_write(VIRTIO_MMIO_QUEUE_READY, 1);
}

/* A driver that takes VERSION_1 and the @features (bits below 32), both queues, DRIVER_OK. */
static void driver_up_with(uint32_t features)
{
	const uint32_t s = VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER;

	reg_write(VIRTIO_MMIO_STATUS, 0);
	reg_write(VIRTIO_MMIO_STATUS, s);
	reg_write(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
	reg_write(VIRTIO_MMIO_DRIVER_FEATURES, features);
	reg_write(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
	reg_write(VIRTIO_MMIO_DRIVER_FEATURES, 1U << (VIRTIO_F_VERSION_1 - 32));
	reg_write(VIRTIO_MMIO_STATUS, s | VIRTIO_STATUS_FEATURES_OK);
	CU_ASSERT(reg_read(VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_FEATURES_OK);
	for (unsigned int q = 0; q < 2; q++)
		queue_setup(q, DESC(q), AVAIL(q), USED(q));
	reg_write(VIRTIO_MMIO_STATUS, s | VIRTIO_STATUS_FEATURES_OK | VIRTIO_STATUS_DRIVER_OK);
	/* the reset's kick served: the I/O thread is off the rings before the test writes them */
	CU_ASSERT_EQUAL(virtio_net_settle(&dbl.m), 0);
}

/* A driver that takes no offload and no mergeable buffers. */
static void driver_up(void)
{
	driver_up_with(0);
}

static void put_desc(uint64_t desc_gpa, uint16_t i, uint64_t addr, uint32_t len, uint16_t flags,
		     uint16_t next)
{
	struct virtq_desc d = { .addr = addr, .len = len, .flags = flags, .next = next };

	memcpy(dbl.ram + desc_gpa + i * sizeof(d), &d, sizeof(d));
}

/* Chain @head goes on queue @q's avail ring as entry @n (idx n + 1), notified. */
static void offer(unsigned int q, uint64_t avail_gpa, uint16_t n, uint16_t head)
{
	uint16_t idx = n + 1;

	memcpy(dbl.ram + avail_gpa + VIRTQ_AVAIL_RING(n % QSIZE), &head, 2);
	memcpy(dbl.ram + avail_gpa + 2, &idx, 2);
	reg_write(VIRTIO_MMIO_QUEUE_NOTIFY, q);
	CU_ASSERT_EQUAL(virtio_net_settle(&dbl.m), 0);
}

static struct virtio_net_info query(void)
{
	struct virtio_net_info i;

	CU_ASSERT_EQUAL_FATAL(virtio_net_query(&dbl.m, 0, &i), 0);
	return i;
}

static bool needs_reset(void)
{
	return reg_read(VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_NEEDS_RESET;
}

static uint64_t handled_want;

/* The device has handled handled_want chains in all: sent, dropped, refused or received. */
static bool handled(void)
{
	struct virtio_net_info i = query();

	return i.tx_packets + i.tx_dropped + i.tx_errors + i.rx_packets + i.rx_dropped >=
	       handled_want;
}

/* A packet has found too few receive buffers posted. */
static bool rx_waited(void)
{
	return query().rx_waits > 0;
}

/*
 * Wait, bounded by count (WAIT_MS looks 1 ms apart), until @done says so
 * (it reads under the device lock); false if it never did.
 */
static bool wait_until(bool (*done)(void))
{
	struct timespec ms = { 0, 1000000 };

	for (int t = 0; t < WAIT_MS; t++) {
		if (done())
			return true;
		nanosleep(&ms, NULL);
	}
	return false;
}

static bool wait_handled(uint64_t want)
{
	handled_want = want;
	return wait_until(handled);
}

static uint16_t used_idx(uint64_t used_gpa)
{
	uint16_t v;

	memcpy(&v, dbl.ram + used_gpa + 2, 2);
	return v;
}

/* A chain that cannot be read breaks the ring: needs reset, nothing outside RAM touched. */
static void test_net_tx_broken_chains(void)
{
	const struct {
		uint64_t addr;
		uint32_t len;
		uint16_t flags, next;
	} cases[] = {
		{ RAM - 8, 64, 0, 0 },				/* runs past the end of RAM */
		{ BUF_GPA, 0xffffffffU, 0, 0 },			/* 4 GiB */
		{ BUF_GPA, 64, VIRTQ_DESC_F_NEXT, 0 },		/* next is itself: endless */
		{ BUF_GPA, 64, VIRTQ_DESC_F_NEXT, QSIZE },	/* next past the table */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int tap = net_up();

		if (tap < 0)
			return;
		driver_up();
		put_desc(DESC(TXQ), 0, cases[i].addr, cases[i].len, cases[i].flags, cases[i].next);
		offer(TXQ, AVAIL(TXQ), 0, 0);
		CU_ASSERT(wait_until(needs_reset));
		CU_ASSERT(reg_read(VIRTIO_MMIO_INTERRUPT_STATUS) & VIRTIO_MMIO_INT_CONFIG);
		CU_ASSERT_EQUAL(used_idx(USED(TXQ)), 0);
		net_down(tap);
	}
}

/*
 * Chains that are whole but no packet, longer than any frame (three
 * 64 KiB parts) or shorter than the header, come back unused, and the
 * device goes on: a good packet after them is sent (the tap counts it).
 */
static void test_net_tx_bad_packets_dropped(void)
{
	struct virtio_net_info info;
	char path[128], buf[32] = "";
	int tap = net_up();
	FILE *f;

	if (tap < 0)
		return;
	driver_up();
	put_desc(DESC(TXQ), 0, BUF_GPA, 0x10000, VIRTQ_DESC_F_NEXT, 1);
	put_desc(DESC(TXQ), 1, BUF_GPA + 0x10000, 0x10000, VIRTQ_DESC_F_NEXT, 2);
	put_desc(DESC(TXQ), 2, BUF_GPA + 0x20000, 0x10000, 0, 0);
	put_desc(DESC(TXQ), 3, BUF_GPA, 4, 0, 0);
	/* a broadcast frame: header zeroed, 60 bytes of Ethernet */
	memset(dbl.ram + 0x80000, 0, HDR + 60);
	memset(dbl.ram + 0x80000 + HDR, 0xff, 6);
	dbl.ram[0x80000 + HDR + 12] = 0x88;
	dbl.ram[0x80000 + HDR + 13] = 0xb5;	/* local experimental ethertype */
	put_desc(DESC(TXQ), 4, 0x80000, HDR + 60, 0, 0);
	for (uint16_t n = 0; n < 3; n++) {
		offer(TXQ, AVAIL(TXQ), n, (uint16_t[]){ 0, 3, 4 }[n]);
		CU_ASSERT_FATAL(wait_handled(n + 1));
	}
	CU_ASSERT_EQUAL(used_idx(USED(TXQ)), 3);
	CU_ASSERT_FALSE(needs_reset());
	info = query();
	CU_ASSERT_EQUAL(info.tx_dropped, 2);
	CU_ASSERT_EQUAL(info.tx_packets, 1);
	CU_ASSERT_EQUAL(info.tx_bytes, 60);
	CU_ASSERT(reg_read(VIRTIO_MMIO_INTERRUPT_STATUS) & VIRTIO_MMIO_INT_VRING);
	snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/rx_packets", tap_name);
	f = fopen(path, "r");
	CU_ASSERT(f && fgets(buf, sizeof(buf), f) && atoi(buf) >= 1);
	if (f)
		fclose(f);
	net_down(tap);
}

/*
 * A transmit queue taken back and set up again elsewhere: the next
 * packet is served from the new ring, the old one is not touched again.
 */
static void test_net_queue_set_up_twice(void)
{
	const uint64_t desc2 = 0x30000, avail2 = 0x31000, used2 = 0x32000;
	int tap = net_up();

	if (tap < 0)
		return;
	driver_up();
	reg_write(VIRTIO_MMIO_QUEUE_SEL, TXQ);
	reg_write(VIRTIO_MMIO_QUEUE_READY, 0);
	queue_setup(TXQ, desc2, avail2, used2);
	CU_ASSERT_FALSE(needs_reset());
	memset(dbl.ram + BUF_GPA, 0, HDR + 60);
	memset(dbl.ram + BUF_GPA + HDR, 0xff, 6);
	put_desc(desc2, 0, BUF_GPA, HDR + 60, 0, 0);
	offer(TXQ, avail2, 0, 0);
	CU_ASSERT_FATAL(wait_handled(1));
	CU_ASSERT_EQUAL(used_idx(used2), 1);
	CU_ASSERT_EQUAL(used_idx(USED(TXQ)), 0);
	net_down(tap);
}

/* The host sends @len bytes of @frame out of the test's tap (a packet socket on it). */
static void host_send(const uint8_t *frame, size_t len)
{
	struct sockaddr_ll to = { .sll_family = AF_PACKET, .sll_halen = 6 };
	int s = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);

	CU_ASSERT_FATAL(s >= 0);
	to.sll_ifindex = (int)if_nametoindex(tap_name);
	memset(to.sll_addr, 0xff, 6);
	CU_ASSERT_EQUAL(sendto(s, frame, len, 0, (struct sockaddr *)&to, sizeof(to)), (ssize_t)len);
	close(s);
}

/*
 * A frame the host sends out of the tap (a packet socket on it) arrives
 * in the guest's receive buffer behind a 12-byte header with
 * num_buffers 1; a receive buffer too short for the next one gets it
 * dropped, and the buffer comes back with nothing written.
 */
static void test_net_rx_from_host(void)
{
	uint8_t frame[60] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1, 0x88, 0xb5 };
	struct virtq_used_elem e;
	uint16_t nbuf;
	int tap = net_up();

	if (tap < 0)
		return;
	driver_up();
	memcpy(frame + 14, "gpmm-rx-test", 12);
	put_desc(DESC(RXQ), 0, BUF_GPA, 2048, VIRTQ_DESC_F_WRITE, 0);
	offer(RXQ, AVAIL(RXQ), 0, 0);
	host_send(frame, sizeof(frame));
	CU_ASSERT_FATAL(wait_handled(1));
	CU_ASSERT_EQUAL_FATAL(used_idx(USED(RXQ)), 1);
	memcpy(&e, dbl.ram + USED(RXQ) + VIRTQ_USED_RING(0), sizeof(e));
	CU_ASSERT_EQUAL(e.len, HDR + sizeof(frame));
	memcpy(&nbuf, dbl.ram + BUF_GPA + 10, 2);
	CU_ASSERT_EQUAL(nbuf, 1);
	CU_ASSERT_EQUAL(memcmp(dbl.ram + BUF_GPA + HDR, frame, sizeof(frame)), 0);

	put_desc(DESC(RXQ), 1, BUF_GPA + 0x1000, 16, VIRTQ_DESC_F_WRITE, 0);
	memset(dbl.ram + BUF_GPA + 0x1000, 0xaa, 16);
	offer(RXQ, AVAIL(RXQ), 1, 1);
	host_send(frame, sizeof(frame));
	CU_ASSERT_FATAL(wait_handled(2));
	CU_ASSERT_EQUAL(used_idx(USED(RXQ)), 2);
	memcpy(&e, dbl.ram + USED(RXQ) + VIRTQ_USED_RING(1), sizeof(e));
	CU_ASSERT_EQUAL(e.len, 0);
	CU_ASSERT_EQUAL(dbl.ram[BUF_GPA + 0x1000], 0xaa);
	CU_ASSERT_FALSE(needs_reset());
	net_down(tap);
}

/*
 * Mergeable receive buffers: a 60-byte frame and its 12-byte header need
 * two 40-byte buffers. With one posted the packet waits and the buffer
 * stays the driver's; once the second comes, the frame fills both in
 * order (40 + 32 bytes) and the first header's num_buffers says 2.
 */
static void test_net_rx_merged(void)
{
	uint8_t frame[60] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1, 0x88, 0xb5 };
	struct virtq_used_elem e[2];
	uint16_t nbuf;
	int tap = net_up();

	if (tap < 0)
		return;
	driver_up_with(1U << VIRTIO_NET_F_MRG_RXBUF);
	for (int i = 0; i < 60; i++)
		frame[14 + i % 46] = (uint8_t)i;
	put_desc(DESC(RXQ), 0, BUF_GPA, 40, VIRTQ_DESC_F_WRITE, 0);
	put_desc(DESC(RXQ), 1, BUF_GPA + 0x1000, 40, VIRTQ_DESC_F_WRITE, 0);
	offer(RXQ, AVAIL(RXQ), 0, 0);
	host_send(frame, sizeof(frame));
	CU_ASSERT_FATAL(wait_until(rx_waited));
	CU_ASSERT_EQUAL(used_idx(USED(RXQ)), 0);
	offer(RXQ, AVAIL(RXQ), 1, 1);
	CU_ASSERT_FATAL(wait_handled(1));
	CU_ASSERT_EQUAL_FATAL(used_idx(USED(RXQ)), 2);
	memcpy(e, dbl.ram + USED(RXQ) + VIRTQ_USED_RING(0), sizeof(e));
	CU_ASSERT(e[0].id == 0 && e[0].len == 40);
	CU_ASSERT(e[1].id == 1 && e[1].len == HDR + sizeof(frame) - 40);
	memcpy(&nbuf, dbl.ram + BUF_GPA + 10, 2);
	CU_ASSERT_EQUAL(nbuf, 2);
	CU_ASSERT_EQUAL(memcmp(dbl.ram + BUF_GPA + HDR, frame, 40 - HDR), 0);
	CU_ASSERT_EQUAL(memcmp(dbl.ram + BUF_GPA + 0x1000, frame + 40 - HDR,
			       sizeof(frame) - (40 - HDR)), 0);
	CU_ASSERT_FALSE(needs_reset());
	net_down(tap);
}

/* A descriptor that is no tap (a pipe) is refused at start, with the reason. */
static void test_net_not_a_tap(void)
{
	int p[2];
	struct machine_net net = { .offload = true };
	struct machine_config cfg = { .net = &net, .nr_net = 1 };

	CU_ASSERT_EQUAL_FATAL(pipe(p), 0);
	net.fd = p[0];
	CU_ASSERT_EQUAL_FATAL(machine_double_init(&dbl, RAM, &cfg), 0);
	/* a failed devices_init has taken down what it made */
	CU_ASSERT_NOT_EQUAL(devices_init(&dbl.m), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(dbl.m.why, "not an open tap device"));
	machine_double_fini(&dbl);
	close(p[0]);
	close(p[1]);
}

static const struct suite_test tests[] = {
	{ "net: transmit chains that break the ring", test_net_tx_broken_chains },
	{ "net: no-packet chains dropped, the device goes on", test_net_tx_bad_packets_dropped },
	{ "net: a queue set up twice", test_net_queue_set_up_twice },
	{ "net: a frame from the host in the guest's buffer", test_net_rx_from_host },
	{ "net: a frame merged across two receive buffers", test_net_rx_merged },
	{ "net: a descriptor that is no tap", test_net_not_a_tap },
};

int register_virtio_net_suite(void)
{
	return SUITE("virtio-net", tests);
}
