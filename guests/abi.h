/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the flat payloads in guests/ and the host side (vmm/, tests/) must
 * agree on. Macros only, no guest code: host tests include this file to
 * check what a payload wrote or to write what a payload will check.
 *
 * Boot registers (DESIGN.md "Flat payload boot protocol"), on every vCPU:
 *   RIP = GPMM_PAYLOAD_BASE, RDI = guest RAM size in bytes,
 *   RSI = vCPU index, RDX = number of vCPUs (0 is read as 1),
 *   RSP = GPMM_PAYLOAD_BASE - index * GPMM_STACK_STRIDE.
 */
#ifndef GPMM_GUESTS_ABI_H
#define GPMM_GUESTS_ABI_H

#define GPMM_PAYLOAD_BASE	0x100000ULL
#define GPMM_STACK_STRIDE	0x4000ULL

#define GPMM_POST_PORT		0x80	/* first instruction of every payload */
#define GPMM_COM1_PORT		0x3f8
#define GPMM_EXIT_PORT		0x501	/* 32-bit out: stop the VM with status V */
#define GPMM_CHECKPOINT_PORT	0x502	/* 32-bit out: run host hook N, then go on */

/*
 * Exit statuses shared by the payloads: 0 passed, 1 a check failed,
 * 3 the payload ran past an access the VMM should have stopped it at
 * (mmio, triple). Payload-specific ones are listed with the payload.
 */
#define GPMM_EXIT_OK		0
#define GPMM_EXIT_FAIL		1
#define GPMM_EXIT_SURVIVED	3

/* exitcode: exits with this, so tests can see the status propagate. */
#define GPMM_EXIT_EXITCODE	42

/*
 * remap: vCPU 0 writes GPMM_REMAP_PATTERN(i) at GPMM_REMAP_GPA + i *
 * GPMM_REMAP_STRIDE for i < GPMM_REMAP_WORDS, then outs
 * GPMM_CHECKPOINT_REMAP to the checkpoint port. The hook moves the page to
 * another host frame and stores GPMM_REMAP_MARKER at GPMM_REMAP_MARKER_OFF
 * through the new frame. The payload then exits 0 if it sees all of that,
 * GPMM_EXIT_REMAP_PATTERN if a pattern word changed, GPMM_EXIT_REMAP_MARKER
 * if the marker is not there (it is still reading the old frame).
 *
 * The marker's hex digits spell "gpmmREMP"; in guest memory, little-endian,
 * its bytes read "PMERmmpg". Pattern words never reach the marker's offset:
 * the last one is at 63 * 64 = 4032.
 */
#define GPMM_CHECKPOINT_REMAP	1
#define GPMM_REMAP_GPA		0x300000ULL
#define GPMM_REMAP_STRIDE	64
#define GPMM_REMAP_WORDS	64
#define GPMM_REMAP_MARKER_OFF	4088
#define GPMM_REMAP_MARKER	0x67706d6d52454d50ULL
#define GPMM_REMAP_PATTERN(i)	\
	(0x7061747400000000ULL | (GPMM_REMAP_GPA + (unsigned long long)(i) * GPMM_REMAP_STRIDE))
#define GPMM_EXIT_REMAP_PATTERN	1
#define GPMM_EXIT_REMAP_MARKER	2

/*
 * mmio: a 32-bit store of GPMM_MMIO_VALUE to this GPA in the PCI hole,
 * where no device is (virtio-mmio devices sit from 0xd0000000).
 */
#define GPMM_MMIO_GPA		0xc0000000ULL
#define GPMM_MMIO_VALUE		0xdeadbeefU

/*
 * Virtio payloads and their tests (tests/integration/test_virtio.c).
 *
 * The test's disk image holds GPMM_VBLK_SECTORS sectors; every 8-byte word
 * at byte offset OFF of the image is GPMM_VBLK_PATTERN(OFF). A payload that
 * writes sector S puts GPMM_VBLK_WRITTEN(OFF) there instead.
 */
#define GPMM_VBLK_SECTORS	4096ULL		/* 2 MiB */
#define GPMM_VBLK_PATTERN(off)	(0x424c4b5300000000ULL | (unsigned long long)(off))
#define GPMM_VBLK_WRITTEN(off)	(0x5752495400000000ULL | (unsigned long long)(off))
#define GPMM_VBLK_WRITE_SECTOR	100		/* blkdrv writes 2 sectors here */
#define GPMM_EVIL_WRITE_SECTOR	7		/* virtio_evil writes 1 sector here */

/*
 * balloondrv, in GPMM_BALLOON_RAM of RAM, checkpoints on the way:
 *  1: [A, A + 4 MiB) touched (one word a page), its PFN lists ready
 *  2: [A, A + 2 MiB) inflated: 512 frames back in the pool
 *  3: [B, B + 4 MiB) touched: the host assembles both 2 MiB ranges
 *  4: [B, B + 3 MiB) inflated: one block freed whole, one split, half freed
 *  5: [C, C + 2 MiB) touched: the host asks for fresh stats
 *  6: stats sent again (MEMFREE = 2), [C, C + 2 MiB) reported free
 * then it checks inflated pages read as zeros and the rest kept its data.
 * Its stats say MEMTOT = RAM size, MEMFREE = how many times it sent them.
 */
#define GPMM_BALLOON_RAM	(32ULL << 20)
#define GPMM_BALLOON_A		(8ULL << 20)
#define GPMM_BALLOON_B		(16ULL << 20)
#define GPMM_BALLOON_C		(24ULL << 20)
#define GPMM_CHECKPOINT_BALLOON(n)	(0x100 + (n))

/*
 * balloonfollow: a balloon driver that follows the host's target (QMP
 * `balloon`) from the top of RAM down, never below GPMM_FOLLOW_FLOOR; it
 * touches the top GPMM_FOLLOW_TOUCHED bytes first, then prints "ready".
 */
#define GPMM_FOLLOW_FLOOR	(8ULL << 20)
#define GPMM_FOLLOW_TOUCHED	(16ULL << 20)

/*
 * firsttouch: vCPU 0 outs GPMM_CHECKPOINT_FIRSTTOUCH (the host looks at
 * the state the clock starts from), reads the TSC, writes one word in each
 * 4 KiB page of [GPMM_FIRSTTOUCH_BASE, RAM), reads the TSC again and
 * prints "firsttouch: N pages C cycles". What it times is the first touch
 * as the guest sees it: whatever backs the RAM, every trap, allocation,
 * zeroing and mapping on the way is inside C.
 */
#define GPMM_CHECKPOINT_FIRSTTOUCH	2
#define GPMM_FIRSTTOUCH_BASE	0x200000ULL

/*
 * hotcold: after GPMM_HOTCOLD_CHECK_PASS passes over its hot set vCPU 0
 * outs GPMM_CHECKPOINT_HOTCOLD (the host reads its reclaim counts, before
 * the guest reads its cold set back), then checks the cold set.
 */
#define GPMM_CHECKPOINT_HOTCOLD		3
#define GPMM_HOTCOLD_CHECK_PASS		64

#endif
