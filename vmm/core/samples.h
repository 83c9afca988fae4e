/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Timing samples, shared by vmm/ (stall percentiles) and bench/ (every
 * figure with a p50/p99): both sort uint64_t nanoseconds taken with
 * vm_now_ns(), the one monotonic clock, and must agree on the order.
 */
#ifndef GPMM_SAMPLES_H
#define GPMM_SAMPLES_H

#include <stdint.h>

/* qsort order of uint64_t samples, smallest first. */
static inline int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

#endif
