// SPDX-License-Identifier: GPL-2.0
/*
 * Fault injection: make the host calls the pool and the VMM depend on
 * (memfd_create, mmap, madvise, KVM ioctls) and frame allocations fail at
 * chosen points, so that tests can walk every error path and check that
 * nothing leaks and no other VM notices.
 *
 * A point is "the Nth call at a site" (each site counts its calls from 1)
 * or "each call with probability P/1000" from a seeded generator, so a
 * failing run is repeated exactly. Built only with GPMM_FAULT_INJECT; a
 * build without it compiles mm_fault_hit() to a constant false.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mm/mm.h"

#ifdef GPMM_FAULT_INJECT

static const char *const site_names[MM_FAULT_NR_SITES] = {
	[MM_FAULT_MEMFD]	= "memfd",
	[MM_FAULT_MMAP]		= "mmap",
	[MM_FAULT_MADVISE]	= "madvise",
	[MM_FAULT_KVM]		= "kvm",
	[MM_FAULT_FRAME]	= "frame",
	[MM_FAULT_SYSCALL]	= "syscall",
	[MM_FAULT_LANDLOCK]	= "landlock",
};

/*
 * Counters are bumped from any thread: atomics, not a lock, so that a
 * site inside a locked region takes no lock of its own (no order to keep).
 */
struct fault_rule {
	uint64_t nth;		/* fail call nth (1-based); 0: none */
	bool from_nth;		/* and every call after it */
	unsigned int permille;	/* random failures, out of 1000 */
};

static struct fault_rule rules[MM_FAULT_NR_SITES];
static uint64_t calls[MM_FAULT_NR_SITES];
static uint64_t injected[MM_FAULT_NR_SITES];
static uint64_t rng_state;
static bool armed;

static uint64_t rng_next(void)
{
	uint64_t x = __atomic_add_fetch(&rng_state, 0x9e3779b97f4a7c15ULL, __ATOMIC_RELAXED);

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

bool mm_fault_hit(enum mm_fault_site site)
{
	const struct fault_rule *r;
	uint64_t n;
	bool hit;

	if (!__atomic_load_n(&armed, __ATOMIC_ACQUIRE))
		return false;
	r = &rules[site];
	n = __atomic_add_fetch(&calls[site], 1, __ATOMIC_RELAXED);
	hit = (r->nth && (n == r->nth || (r->from_nth && n > r->nth))) ||
	      (r->permille && rng_next() % 1000 < r->permille);
	if (hit)
		__atomic_add_fetch(&injected[site], 1, __ATOMIC_RELAXED);
	return hit;
}

static int site_of(const char *name, size_t len)
{
	for (int i = 0; i < MM_FAULT_NR_SITES; i++)
		if (strlen(site_names[i]) == len && !strncmp(site_names[i], name, len))
			return i;
	return -1;
}

static int parse_rule(const char *s, struct fault_rule *r, char *err, size_t errlen)
{
	char *end;

	if (!strncmp(s, "rand:", 5)) {
		unsigned long p = strtoul(s + 5, &end, 10);

		if (end == s + 5 || p > 1000 || (*end && *end != ','))
			goto bad;
		r->permille = (unsigned int)p;
		return 0;
	}
	r->nth = strtoull(s, &end, 10);
	if (end == s || !r->nth)
		goto bad;
	r->from_nth = *end == '+';
	end += r->from_nth;
	if (*end && *end != ',')
		goto bad;
	return 0;
bad:
	snprintf(err, errlen, "fault rule '%.40s': want N, N+ or rand:PERMILLE", s);
	return -EINVAL;
}

/*
 * SPEC is "site:N,site:N+,site:rand:P[,seed:S]": fail the Nth call, the
 * Nth and every later one, or each with probability P/1000. Counting starts
 * again from zero; an empty SPEC disarms and only counts calls.
 */
int mm_fault_configure(const char *spec, char *err, size_t errlen)
{
	struct fault_rule next[MM_FAULT_NR_SITES] = { 0 };
	uint64_t seed = 1;
	const char *s = spec;

	while (s && *s) {
		const char *colon = strchr(s, ':');
		int site;

		if (!colon)
			goto bad;
		if (colon - s == 4 && !strncmp(s, "seed", 4)) {
			seed = strtoull(colon + 1, NULL, 0);
		} else {
			site = site_of(s, (size_t)(colon - s));
			if (site < 0)
				goto bad;
			if (parse_rule(colon + 1, &next[site], err, errlen))
				return -EINVAL;
		}
		s = strchr(colon, ',');
		s = s ? s + 1 : NULL;
	}
	__atomic_store_n(&armed, false, __ATOMIC_RELEASE);
	memcpy(rules, next, sizeof(rules));
	memset(calls, 0, sizeof(calls));
	memset(injected, 0, sizeof(injected));
	rng_state = seed;
	__atomic_store_n(&armed, true, __ATOMIC_RELEASE);
	return 0;
bad:
	snprintf(err, errlen, "fault spec '%.60s': want SITE:RULE[,...] with SITE one of "
		 "memfd mmap madvise kvm frame syscall (or seed:N)", s);
	return -EINVAL;
}

void mm_fault_print(FILE *f)
{
	for (int i = 0; i < MM_FAULT_NR_SITES; i++)
		fprintf(f, "%s %llu %llu\n", site_names[i],
			(unsigned long long)__atomic_load_n(&calls[i], __ATOMIC_RELAXED),
			(unsigned long long)__atomic_load_n(&injected[i], __ATOMIC_RELAXED));
}

#else

int mm_fault_configure(const char *spec, char *err, size_t errlen)
{
	snprintf(err, errlen, "this gpmm was built without fault injection (FAULT_INJECT=0)");
	return -EOPNOTSUPP;
}

void mm_fault_print(FILE *f)
{
}

#endif
