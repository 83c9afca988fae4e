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

/* mmio: a 32-bit store of GPMM_MMIO_VALUE to this GPA in the PCI hole. */
#define GPMM_MMIO_GPA		0xd0000000ULL
#define GPMM_MMIO_VALUE		0xdeadbeefU

#endif
