/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the virtio 1.x specification fixes and both sides must spell the
 * same way: the MMIO transport's registers (version 2), status and feature
 * bits, split virtqueue layout, and the block and balloon devices' request
 * formats. Macros and plain structs only, no code: the devices in devices/
 * and the freestanding driver payloads in guests/ both include this file,
 * so a constant has one name and one value in the tree.
 *
 * Everything on the wire is little-endian; gpmm runs on x86-64 only.
 */
#ifndef GPMM_VIRTIO_ABI_H
#define GPMM_VIRTIO_ABI_H

#include <stdint.h>

/* Where gpmm puts its virtio-mmio devices: one 4 KiB window per slot. */
#define VIRTIO_MMIO_BASE		0xd0000000ULL	/* in the PCI hole */
#define VIRTIO_MMIO_SLOT_SIZE		0x1000ULL
#define VIRTIO_MMIO_SLOTS		8
#define VIRTIO_MMIO_GSI_BASE		16		/* slot i: IOAPIC pin 16 + i */
#define VIRTIO_MMIO_ACPI_HID		"LNRO0005"

/* Registers; all 32 bits wide and 32-bit aligned, config space excepted. */
#define VIRTIO_MMIO_MAGIC_VALUE		0x000	/* "virt" */
#define VIRTIO_MMIO_VERSION		0x004
#define VIRTIO_MMIO_DEVICE_ID		0x008
#define VIRTIO_MMIO_VENDOR_ID		0x00c
#define VIRTIO_MMIO_DEVICE_FEATURES	0x010
#define VIRTIO_MMIO_DEVICE_FEATURES_SEL	0x014
#define VIRTIO_MMIO_DRIVER_FEATURES	0x020
#define VIRTIO_MMIO_DRIVER_FEATURES_SEL	0x024
#define VIRTIO_MMIO_QUEUE_SEL		0x030
#define VIRTIO_MMIO_QUEUE_NUM_MAX	0x034
#define VIRTIO_MMIO_QUEUE_NUM		0x038
#define VIRTIO_MMIO_QUEUE_READY		0x044
#define VIRTIO_MMIO_QUEUE_NOTIFY	0x050
#define VIRTIO_MMIO_INTERRUPT_STATUS	0x060
#define VIRTIO_MMIO_INTERRUPT_ACK	0x064
#define VIRTIO_MMIO_STATUS		0x070
#define VIRTIO_MMIO_QUEUE_DESC_LOW	0x080
#define VIRTIO_MMIO_QUEUE_DESC_HIGH	0x084
#define VIRTIO_MMIO_QUEUE_AVAIL_LOW	0x090
#define VIRTIO_MMIO_QUEUE_AVAIL_HIGH	0x094
#define VIRTIO_MMIO_QUEUE_USED_LOW	0x0a0
#define VIRTIO_MMIO_QUEUE_USED_HIGH	0x0a4
#define VIRTIO_MMIO_SHM_SEL		0x0ac
#define VIRTIO_MMIO_SHM_LEN_LOW		0x0b0
#define VIRTIO_MMIO_SHM_LEN_HIGH	0x0b4
#define VIRTIO_MMIO_SHM_BASE_LOW	0x0b8
#define VIRTIO_MMIO_SHM_BASE_HIGH	0x0bc
#define VIRTIO_MMIO_CONFIG_GENERATION	0x0fc
#define VIRTIO_MMIO_CONFIG		0x100

#define VIRTIO_MMIO_MAGIC		0x74726976U	/* "virt", little-endian */
#define VIRTIO_MMIO_VERSION_MODERN	2
#define VIRTIO_VENDOR_GPMM		0x4d4d5047U	/* "GPMM" */

/* InterruptStatus bits */
#define VIRTIO_MMIO_INT_VRING		0x1	/* a used buffer */
#define VIRTIO_MMIO_INT_CONFIG		0x2	/* config changed, or needs reset */

/* Device status bits */
#define VIRTIO_STATUS_ACKNOWLEDGE	0x01
#define VIRTIO_STATUS_DRIVER		0x02
#define VIRTIO_STATUS_DRIVER_OK		0x04
#define VIRTIO_STATUS_FEATURES_OK	0x08
#define VIRTIO_STATUS_NEEDS_RESET	0x40
#define VIRTIO_STATUS_FAILED		0x80

/* Transport feature bits */
#define VIRTIO_RING_F_INDIRECT_DESC	28	/* never offered by gpmm */
#define VIRTIO_RING_F_EVENT_IDX		29	/* never offered by gpmm */
#define VIRTIO_F_VERSION_1		32

#define VIRTIO_ID_NET			1
#define VIRTIO_ID_BLOCK			2
#define VIRTIO_ID_BALLOON		5

/* Split virtqueue */
#define VIRTQ_DESC_F_NEXT		0x1
#define VIRTQ_DESC_F_WRITE		0x2	/* device writes (else reads) */
#define VIRTQ_DESC_F_INDIRECT		0x4
#define VIRTQ_AVAIL_F_NO_INTERRUPT	0x1	/* avail->flags: the driver polls */
#define VIRTQ_DESC_ALIGN		16
#define VIRTQ_AVAIL_ALIGN		2
#define VIRTQ_USED_ALIGN		4

struct virtq_desc {
	uint64_t addr;
	uint32_t len;
	uint16_t flags;
	uint16_t next;
};

struct virtq_used_elem {
	uint32_t id;
	uint32_t len;
};

/* Ring sizes for @n entries, without the event index words (not offered). */
#define VIRTQ_DESC_BYTES(n)		(16ULL * (n))
#define VIRTQ_AVAIL_BYTES(n)		(4ULL + 2ULL * (n))
#define VIRTQ_USED_BYTES(n)		(4ULL + 8ULL * (n))
#define VIRTQ_AVAIL_RING(n)		(4ULL + 2ULL * (n))	/* offset of ring[n] */
#define VIRTQ_USED_RING(n)		(4ULL + 8ULL * (n))

/* virtio-blk */
#define VIRTIO_BLK_F_SIZE_MAX		1
#define VIRTIO_BLK_F_SEG_MAX		2
#define VIRTIO_BLK_F_RO			5
#define VIRTIO_BLK_F_BLK_SIZE		6
#define VIRTIO_BLK_F_FLUSH		9

#define VIRTIO_BLK_T_IN			0
#define VIRTIO_BLK_T_OUT		1
#define VIRTIO_BLK_T_FLUSH		4
#define VIRTIO_BLK_T_GET_ID		8
#define VIRTIO_BLK_T_DISCARD		11

#define VIRTIO_BLK_S_OK			0
#define VIRTIO_BLK_S_IOERR		1
#define VIRTIO_BLK_S_UNSUPP		2

#define VIRTIO_BLK_SECTOR_SIZE		512
#define VIRTIO_BLK_ID_BYTES		20

struct virtio_blk_req_hdr {
	uint32_t type;
	uint32_t ioprio;
	uint64_t sector;
};

/* Config space offsets */
#define VIRTIO_BLK_CFG_CAPACITY		0x00	/* le64, in 512-byte sectors */
#define VIRTIO_BLK_CFG_SIZE_MAX		0x08	/* le32 */
#define VIRTIO_BLK_CFG_SEG_MAX		0x0c	/* le32 */
#define VIRTIO_BLK_CFG_BLK_SIZE		0x14	/* le32 */

/* virtio-net: queue 0 receives, queue 1 transmits (one pair, no control queue) */
#define VIRTIO_NET_F_CSUM		0	/* the guest sends partial checksums */
#define VIRTIO_NET_F_GUEST_CSUM		1	/* ... and takes them */
#define VIRTIO_NET_F_MTU		3
#define VIRTIO_NET_F_MAC		5
#define VIRTIO_NET_F_GUEST_TSO4		7
#define VIRTIO_NET_F_GUEST_TSO6		8
#define VIRTIO_NET_F_HOST_TSO4		11
#define VIRTIO_NET_F_HOST_TSO6		12
#define VIRTIO_NET_F_MRG_RXBUF		15
#define VIRTIO_NET_F_STATUS		16

#define VIRTIO_NET_S_LINK_UP		1

/* Every packet starts with it (virtio 1.x: num_buffers always there). */
struct virtio_net_hdr {
	uint8_t flags;
	uint8_t gso_type;
	uint16_t hdr_len;
	uint16_t gso_size;
	uint16_t csum_start;
	uint16_t csum_offset;
	uint16_t num_buffers;
};

/* Config space offsets */
#define VIRTIO_NET_CFG_MAC		0x00	/* 6 bytes */
#define VIRTIO_NET_CFG_STATUS		0x06	/* le16 */
#define VIRTIO_NET_CFG_MAX_PAIRS	0x08	/* le16 */
#define VIRTIO_NET_CFG_MTU		0x0a	/* le16 */
#define VIRTIO_NET_CFG_LEN		0x0c

/*
 * virtio-balloon. Queues are numbered in this order, skipping the ones
 * whose feature was not negotiated (Linux's virtio_mmio gives the next
 * index only to queues it sets up): without FREE_PAGE_HINT, which gpmm
 * does not offer, inflate 0, deflate 1, stats 2, reporting 3.
 */
#define VIRTIO_BALLOON_F_STATS_VQ	1
#define VIRTIO_BALLOON_F_DEFLATE_ON_OOM	2
#define VIRTIO_BALLOON_F_REPORTING	5

#define VIRTIO_BALLOON_PFN_SHIFT	12	/* PFNs are 4 KiB, whatever the guest's page */
#define VIRTIO_BALLOON_CFG_NUM_PAGES	0x00	/* le32: target, device writes */
#define VIRTIO_BALLOON_CFG_ACTUAL	0x04	/* le32: pages held, driver writes */

struct virtio_balloon_stat {
	uint16_t tag;
	uint64_t val;
} __attribute__((packed));

#define VIRTIO_BALLOON_S_SWAP_IN	0
#define VIRTIO_BALLOON_S_SWAP_OUT	1
#define VIRTIO_BALLOON_S_MAJFLT		2
#define VIRTIO_BALLOON_S_MINFLT		3
#define VIRTIO_BALLOON_S_MEMFREE	4
#define VIRTIO_BALLOON_S_MEMTOT		5
#define VIRTIO_BALLOON_S_AVAIL		6
#define VIRTIO_BALLOON_S_CACHES		7
#define VIRTIO_BALLOON_S_HTLB_PGALLOC	8
#define VIRTIO_BALLOON_S_HTLB_PGFAIL	9
#define VIRTIO_BALLOON_S_NR		10

#endif
