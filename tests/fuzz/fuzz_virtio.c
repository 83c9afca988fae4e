// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: a guest driver's side of virtio. The virtio-mmio
 * transport (devices/virtio/virtio_mmio.c), the split virtqueues
 * (virtio_queue.c) and the block, balloon and net models behind them,
 * driven the way a vCPU thread drives them: MMIO accesses through the VM's
 * bus (dev_mmio). QueueNotify serves blk's and the balloon's queues there
 * and then, on the calling thread, as on a vCPU; virtio-net's go to its
 * I/O thread, and the harness waits for it to serve them
 * (virtio_net_settle) before the next op, so an input does the same each
 * time it runs (a notify it never serves fails the input). Its tap is one of this process's own,
 * made once and left down: what the guest sends is refused by the host
 * (counted), nothing arrives; the attack surface is the transmit chains.
 *
 * The machine is the VMM's own (vmm/core/vm_machine.c) over a VM without
 * KVM (tests/fuzz/fake_vm.c): 1 MiB of guest RAM at guest address 0 that
 * is real guest memory (vmm/memory/guest_mem.c: pool frames mapped page by
 * page, userfaultfd, gmem_discard), so the bounds checks, populate and
 * discard the devices reach are the ones a VM runs; all of it is given
 * back (gmem_discard) before each input. The disk is a 64 KiB memfd,
 * zeroed for each input; the other devices of the registry (serial, debug
 * port, power) are made too, as in a VM.
 *
 * Input:
 *   byte 0        bit 0: the disk is read-only; bit 1: the balloon
 *                 offers no free page reporting
 *   bytes 1-2     L (little-endian), then L bytes: guest RAM from 0
 *                 (descriptor tables, rings, buffers)
 *   then ops of 7 bytes: kind, offset (le16), value (le32)
 *     kind & 7:   0 register write, 32 bits   1 read, width w
 *                 2 write, width w            3 guest RAM store (le32)
 *                 4 balloon target (value pages)
 *                 5 balloon query (bit 3: refresh, as libvirt's polling)
 *                 6 the VM stops (value 1) or runs on (0)
 *                 7 the devices' report (virtio_mmio_list)
 *     kind bit 3: device (0 virtio-blk, slot 0; 1 balloon, slot 1);
 *                 kind bit 6 set: virtio-net (slot 2) instead
 *     kind >> 4:  width w = 1 << (kind >> 4 & 3)
 *     RAM store:  address = (kind >> 3) << 16 | offset, past RAM skipped
 *
 * Checked besides the sanitizers, after every op: the status rules the
 * transport promises (DRIVER_OK only with FEATURES_OK, FEATURES_OK only
 * for features offered, VERSION_1 among them); a register read of a
 * fixed register gives its value. After each input: guest memory's
 * bookkeeping agrees with itself (each backed page's frame points back at
 * it, the populated counts add up) whatever the balloon gave back.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "devices/device.h"
#include "devices/virtio/virtio_balloon.h"
#include "devices/virtio/virtio_mmio.h"
#include "devices/virtio/virtio_net.h"
#include "tests/fuzz/fake_vm.h"
#include "vmm/memory/guest_mem.h"

#define RAM_BYTES	(1ULL << 20)
#define DISK_BYTES	(64 << 10)
#define OP_BYTES	7

static struct vm vm;
static struct machine *const m = &vm.mach;
static char disk_path[64];
static int disk_fd = -1;

static struct machine_net net = { .fd = -1, .offload = true };

/* The net device's tap: a fresh one of this process (root and the tun module needed). */
static void make_tap(void)
{
	struct ifreq ifr = { .ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR };

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "gpmmfz%d", (int)getpid() % 100000);
	net.fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (net.fd < 0 || ioctl(net.fd, TUNSETIFF, &ifr) < 0) {
		fprintf(stderr, "fuzz_virtio: no tap for virtio-net (root and the tun module are "
			"needed)\n");
		abort();
	}
	m->cfg.net = &net;
	m->cfg.nr_net = 1;
}

static void setup_once(void)
{
	if (fake_vm_init(&vm, RAM_BYTES))
		abort();
	make_tap();
	disk_fd = memfd_create("fuzz-disk", MFD_CLOEXEC);
	if (disk_fd < 0)
		abort();
	snprintf(disk_path, sizeof(disk_path), "/proc/self/fd/%d", disk_fd);
	m->cfg.disk = disk_path;
	m->cfg.balloon = true;
}

/* Each backed guest page's frame says it backs that page; the counts add up. */
static void check_memory(void)
{
	const struct vm_region *r = &vm.regions[0];
	uint64_t backed = 0, counted = 0;

	pthread_mutex_lock(&vm.mem_lock);
	for (uint64_t idx = 0; idx < r->size >> 12; idx++) {
		uint32_t frame = r->backing[idx];

		if (frame == NIL_FRAME)
			continue;
		if (frame >= pool_frames(vm.pool) || vm.pool->gpa_of[frame] != (idx << 12) + 1)
			abort();
		backed++;
	}
	for (uint64_t range = 0; range <= (r->size >> 12) >> MM_PAGEBLOCK_ORDER; range++)
		counted += r->populated[range];
	pthread_mutex_unlock(&vm.mem_lock);
	if (backed != counted || backed != vm_populated_pages(&vm))
		abort();
}

static uint32_t le32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static struct virtio_mmio_dev *mmio_dev(unsigned int slot)
{
	for (unsigned int i = 0; i < m->bus.nr_mmio; i++)
		if (m->bus.mmio[i].base == VIRTIO_MMIO_BASE + slot * VIRTIO_MMIO_SLOT_SIZE)
			return m->bus.mmio[i].opaque;
	return NULL;
}

static void check_device(const struct virtio_mmio_dev *dev)
{
	uint32_t st = dev->status;

	if ((st & VIRTIO_STATUS_DRIVER_OK) && !(st & VIRTIO_STATUS_FEATURES_OK))
		abort();
	if ((st & VIRTIO_STATUS_FEATURES_OK) &&
	    ((dev->driver_features & ~dev->features) ||
	     !(dev->driver_features & (1ULL << VIRTIO_F_VERSION_1))))
		abort();
	for (unsigned int q = 0; q < VIRTIO_MMIO_MAX_QUEUES; q++)
		if (dev->vq[q].ready && (!dev->vq[q].num || dev->vq[q].num > dev->model->queue_max))
			abort();
}

static void mmio(unsigned int slot, uint16_t off, uint8_t *data, unsigned int len,
		 bool is_write)
{
	uint64_t addr = VIRTIO_MMIO_BASE + slot * VIRTIO_MMIO_SLOT_SIZE + (off & 0xfff);

	if (dev_mmio(m, NULL, addr, data, len, is_write))
		abort();	/* the device's window: it is always claimed */
	if (!is_write && len == 4 && (off & 0xfff) == VIRTIO_MMIO_MAGIC_VALUE &&
	    le32(data) != VIRTIO_MMIO_MAGIC)
		abort();
}

static void run_op(const uint8_t *op)
{
	unsigned int kind = op[0], width = 1U << (kind >> 4 & 3);
	unsigned int slot = kind & 0x40 ? 2 : kind >> 3 & 1;
	uint16_t off = (uint16_t)(op[1] | op[2] << 8);
	uint32_t val = le32(op + 3);
	struct virtio_balloon_info info;
	struct virtio_mmio_info list[4];
	uint8_t data[8] = { 0 };
	uint64_t gpa;

	switch (kind & 7) {
	case 0:
		memcpy(data, &val, 4);
		mmio(slot, off, data, 4, true);
		break;
	case 1:
		mmio(slot, off, data, width, false);
		break;
	case 2:
		memcpy(data, &val, 4);
		mmio(slot, off, data, width, true);
		break;
	case 3:
		gpa = (uint64_t)(kind >> 3) << 16 | off;
		if (gpa + 4 <= RAM_BYTES && machine_write_guest(m, gpa, &val, 4))
			abort();	/* inside guest RAM: backed, or the pool is too small */
		break;
	case 4:
		if (virtio_balloon_set_target(m, (uint64_t)val << 12))
			abort();
		break;
	case 5:
		if (virtio_balloon_query(m, &info, kind & 8) ||
		    info.nr_stats > BALLOON_MAX_STATS)
			abort();
		break;
	case 6:
		__atomic_store_n(&vm.stopping, val & 1, __ATOMIC_RELEASE);
		break;
	case 7:
		if (virtio_mmio_list(m, list, 4) != 3)
			abort();
		break;
	}
}

/* FUZZ_VIRTIO_SHOW=1: what an input made the devices do, on stderr. */
static void show(struct virtio_mmio_dev *blk, struct virtio_mmio_dev *balloon,
		 struct virtio_mmio_dev *nic)
{
	struct virtio_mmio_dev *devs[] = { blk, balloon, nic };
	struct virtio_balloon_info b;
	struct virtio_net_info n;

	for (unsigned int i = 0; i < 3; i++) {
		const struct virtio_mmio_dev *d = devs[i];

		fprintf(stderr, "%s: status 0x%x features 0x%llx notifies %llu bad rings %llu "
			"bad accesses %llu resets %llu;", d->model->name, d->status,
			(unsigned long long)d->driver_features, (unsigned long long)d->notifies,
			(unsigned long long)d->bad_rings, (unsigned long long)d->bad_accesses,
			(unsigned long long)d->resets);
		for (unsigned int q = 0; q < VIRTIO_MMIO_MAX_QUEUES; q++)
			if (d->vq[q].ready)
				fprintf(stderr, " q%u used %u", q, d->vq[q].used_idx);
		fputc('\n', stderr);
	}
	if (!virtio_balloon_query(m, &b, false))
		fprintf(stderr, "balloon: inflated %llu deflated %llu reported %llu bad pfns %llu "
			"stats %u; discards %llu, console %llu bytes\n",
			(unsigned long long)b.inflated_pages, (unsigned long long)b.deflated_pages,
			(unsigned long long)b.reported_bytes, (unsigned long long)b.bad_pfns,
			b.nr_stats, (unsigned long long)vm.discard.calls,
			(unsigned long long)fake_vm_log.console_bytes);
	if (!virtio_net_query(m, 0, &n))
		fprintf(stderr, "net: sent %llu, dropped %llu, refused by the tap %llu\n",
			(unsigned long long)n.tx_packets, (unsigned long long)n.tx_dropped,
			(unsigned long long)n.tx_errors);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct virtio_mmio_dev *blk, *balloon, *nic;
	size_t image, off;

	if (disk_fd < 0)
		setup_once();
	if (size < 3)
		return 0;
	m->cfg.disk_readonly = data[0] & 1;
	m->cfg.balloon_reporting = !(data[0] & 2);
	image = data[1] | data[2] << 8;
	if (image > size - 3)
		image = size - 3;
	if (image > RAM_BYTES)
		image = RAM_BYTES;
	fake_vm_reset(&vm);
	if (machine_write_guest(m, 0, data + 3, image))
		abort();
	if (ftruncate(disk_fd, 0) || ftruncate(disk_fd, DISK_BYTES))
		abort();
	if (devices_init(m)) {
		fprintf(stderr, "fuzz_virtio: devices_init: %s\n", m->why);
		abort();
	}
	blk = mmio_dev(0);
	balloon = mmio_dev(1);
	nic = mmio_dev(2);
	if (!blk || !balloon || !nic)
		abort();
	for (off = 3 + image; off + OP_BYTES <= size; off += OP_BYTES) {
		run_op(data + off);
		/* what a notify of the net device made its I/O thread do, before the next op */
		if ((data[off] & 0x40) && (data[off] & 7) <= 2 && virtio_net_settle(m))
			abort();
		check_device(blk);
		check_device(balloon);
		pthread_mutex_lock(&nic->lock);
		check_device(nic);
		pthread_mutex_unlock(&nic->lock);
	}
	if (getenv("FUZZ_VIRTIO_SHOW"))
		show(blk, balloon, nic);
	devices_exit(m);
	memset(&m->bus, 0, sizeof(m->bus));
	check_memory();
	return 0;
}
