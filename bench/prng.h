/* SPDX-License-Identifier: GPL-2.0 */
/* A small seeded PRNG (xoshiro256**), so every workload replays exactly. */
#ifndef GPMM_PRNG_H
#define GPMM_PRNG_H

#include <stdint.h>

struct prng {
	uint64_t s[4];
};

void prng_seed(struct prng *r, uint64_t seed);
uint64_t prng_next(struct prng *r);
/* Uniform in [0, n). */
uint64_t prng_below(struct prng *r, uint64_t n);
/* Uniform in [0, 1). */
double prng_unit(struct prng *r);
/* Exponentially distributed with the given mean. */
double prng_exp(struct prng *r, double mean);

#endif
