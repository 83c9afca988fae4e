// SPDX-License-Identifier: GPL-2.0
/*
 * gpmm fragmenting-tenant: a tenant of the host pool that fragments it on
 * purpose.
 * It takes --spread MiB as blocks of --one-in pages (default 2), split,
 * and keeps the first page of each, so that it holds one page in every
 * --one-in of that memory, in every pageblock it touched. Its pages are movable:
 * it answers the service's requests to move one by copying it, as a VM
 * process does, and on SIGTERM it checks that every page still holds what
 * it wrote (exit 1 if one does not). For tests and benchmarks of grouping
 * and compaction across processes; an operator can use it to see what a
 * fragmenting neighbour does to their VMs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "vmm/core/config.h"
#include "vmm/pool_service/pool_client.h"
#include "vmm/pool_service/pool_proto.h"
#include "vmm/pool_service/pool_service.h"
#include "vmm/control/qmp_client.h"

struct tenant {
	uint8_t *base;
	uint32_t *frames;	/* our pages, in the order taken */
	uint32_t *index;	/* frame -> our page + 1, 0: not ours */
	uint64_t n;
	uint64_t moved;		/* atomic */
};

static uint64_t tag(uint64_t i)
{
	return 0x6672616700000000ULL ^ (i * 0x9e3779b97f4a7c15ULL);
}

static void stamp(struct tenant *t, uint64_t i)
{
	uint64_t *p = (uint64_t *)(t->base + ((uint64_t)t->frames[i] << MM_PAGE_SHIFT));

	for (size_t k = 0; k < MM_PAGE_SIZE / 8; k += 64)
		p[k] = tag(i) + k;
}

static bool intact(const struct tenant *t, uint64_t i)
{
	const uint64_t *p = (const uint64_t *)(t->base + ((uint64_t)t->frames[i] << MM_PAGE_SHIFT));

	for (size_t k = 0; k < MM_PAGE_SIZE / 8; k += 64)
		if (p[k] != tag(i) + k)
			return false;
	return true;
}

/*
 * A move asked by the service: copy, then switch. Only this callback
 * changes frames[] once the tenant holds, so no lock.
 */
static int tenant_migrate(void *priv, uint64_t old, uint64_t new, unsigned int order)
{
	struct tenant *t = priv;
	uint32_t i = t->index[old];

	if (order || !i)
		return order ? -EBUSY : -ENOENT;
	memcpy(t->base + (new << MM_PAGE_SHIFT), t->base + (old << MM_PAGE_SHIFT), MM_PAGE_SIZE);
	t->frames[i - 1] = (uint32_t)new;
	t->index[new] = i;
	t->index[old] = 0;
	__atomic_add_fetch(&t->moved, 1, __ATOMIC_RELAXED);
	return 0;
}

static const struct mm_owner_ops tenant_ops = { .migrate = tenant_migrate };

static uint64_t tenant_ram(uint64_t spread)
{
	uint64_t slack = (uint64_t)POOL_SERVICE_SLACK_FRAMES << MM_PAGE_SHIFT;

	return spread > slack + MM_PAGEBLOCK_SIZE ? spread - slack : MM_PAGEBLOCK_SIZE;
}

/* Take @keep blocks of 2^@order pages, keep the first page of each. */
static int take_scattered(struct pool_client *c, struct tenant *t, uint64_t keep,
			  unsigned int order)
{
	unsigned int per_call = 512U >> order;
	uint32_t blocks[512];

	while (t->n < keep) {
		uint64_t want = keep - t->n < per_call ? keep - t->n : per_call;
		long got = pool_client_alloc(c, order, (unsigned int)want,
					     POOL_ALLOC_NOWAIT | POOL_ALLOC_SPLIT, blocks, NULL);

		if (got <= 0)
			return got ? (int)got : -ENOMEM;
		for (long i = 0; i < got; i++) {
			for (uint32_t k = 1; k < 1U << order; k++) {
				int ret = pool_client_free(c, blocks[i] + k, 0);

				if (ret)
					return ret;
			}
			t->frames[t->n] = blocks[i];
			t->index[blocks[i]] = (uint32_t)t->n + 1;
			stamp(t, t->n++);
		}
		/* what the splits left in our cache goes back now */
		if (pool_client_drain(c))
			return -EPROTO;
	}
	return 0;
}

static const char fragment_usage[] =
	"usage: gpmm fragmenting-tenant [--host-pool=SOCKET] [--spread MIB] [--one-in N]\n"
	"Holds one 4 KiB page in every N (2, 4 ... 512; default 2) of MIB (default\n"
	"512) of the host pool, movable, until SIGTERM or SIGINT; then checks every\n"
	"page kept its contents through the moves the pool service asked of it\n"
	"(exit 1 if not).\n";

int cmd_fragmenting_tenant(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "host-pool", optional_argument, NULL, 'O' },
		{ "spread", required_argument, NULL, 's' },
		{ "one-in", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	char path[108], err[512];
	uint64_t spread = 512ULL << 20, bad = 0, one_in = 2;
	unsigned int order;
	struct pool_client_info info;
	struct pool_client *c;
	struct tenant t = { 0 };
	sigset_t set;
	char *end;
	int opt, sig, ret;

	snprintf(path, sizeof(path), "%s", gpmm_pool_socket());
	if (cli_check_options("gpmm fragmenting-tenant", opts, argc, argv))
		return 2;
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'O':
			if (optarg)
				snprintf(path, sizeof(path), "%s", optarg);
			break;
		case 's':
			spread = strtoull(optarg, &end, 10) << 20;
			if (*end || !spread || spread % (4ULL << 20)) {
				fprintf(stderr, "gpmm fragmenting-tenant: --spread wants a multiple of 4 MiB\n");
				return 2;
			}
			break;
		case 'n':
			one_in = strtoull(optarg, &end, 10);
			if (*end || one_in < 2 || one_in > 512 || (one_in & (one_in - 1))) {
				fprintf(stderr, "gpmm fragmenting-tenant: --one-in wants 2, 4 ... 512\n");
				return 2;
			}
			break;
		case 'h': fputs(fragment_usage, stdout); return 0;
		default: return 2;	/* cli_check_options said it */
		}
	}
	/* SIGTERM and SIGINT wait for sigwait, in every thread to come */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	order = (unsigned int)__builtin_ctzll(one_in);
	/*
	 * Its RAM, for the service's admission: the pageblocks it spreads
	 * over are its own (the service's quota is in pageblocks: RAM plus
	 * the slack), so it asks for as much RAM as makes them its quota.
	 */
	if (pool_client_connect(path, "fragmenting-tenant", tenant_ram(spread), POOL_CLIENT_TENANT,
				&c, &info, err, sizeof(err))) {
		fprintf(stderr, "gpmm fragmenting-tenant: %s\n", err);
		return 1;
	}
	t.frames = calloc(spread >> (MM_PAGE_SHIFT + order), sizeof(*t.frames));
	t.index = calloc(info.frames, sizeof(*t.index));
	t.base = info.base;	/* our pageblocks only, as they come */
	ret = t.frames && t.index ? 0 : -ENOMEM;
	if (!ret)
		ret = take_scattered(c, &t, spread >> (MM_PAGE_SHIFT + order), order);
	if (ret) {
		fprintf(stderr, "gpmm fragmenting-tenant: taking %llu KiB: %s\n",
			(unsigned long long)((spread / one_in) >> 10), strerror(-ret));
		pool_client_close(c);
		free(t.frames);
		free(t.index);
		return 1;
	}
	pool_client_set_owner(c, &tenant_ops, &t);
	printf("gpmm fragmenting-tenant: holding %llu KiB, one page in %llu of %llu MiB; ready\n",
	       (unsigned long long)((spread / one_in) >> 10), (unsigned long long)one_in,
	       (unsigned long long)(spread >> 20));
	fflush(stdout);
	if (sigwait(&set, &sig))
		sig = 0;
	pool_client_set_owner(c, NULL, NULL);
	for (uint64_t i = 0; i < t.n; i++)
		bad += !intact(&t, i);
	printf("gpmm fragmenting-tenant: %llu pages moved by the service, %llu of %llu lost their contents\n",
	       (unsigned long long)t.moved, (unsigned long long)bad, (unsigned long long)t.n);
	fflush(stdout);
	pool_client_close(c);
	free(t.frames);
	free(t.index);
	return bad ? 1 : 0;
}
