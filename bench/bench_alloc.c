// SPDX-License-Identifier: GPL-2.0
/*
 * `gpmm bench alloc`: order-0 alloc+free throughput through the per-thread
 * lists, plain buddy against grouping, with 1 and 2 threads. The machine
 * is noisy (its speed drifts by tens of percent over seconds), so both
 * policies run in one process on two live pools, alternating every 50,000
 * operations, and each accumulates only its own time: drift hits both
 * alike and the ratio stays honest.
 *
 * The grouping pool runs with every policy bit the VMM uses (MM_POLICY_ALL),
 * so whatever a policy adds to the order-0 fast path is in the figure.
 * --only runs one of the two, for an instruction count under callgrind.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mm/mm.h"
#include "bench/bench.h"
#include "vmm/core/vm.h"

#define RING		256
#define CHUNK		50000

#define RUN_BUDDY	0x1
#define RUN_GROUPING	0x2

struct worker {
	struct mm_pool **pools;	/* [0] buddy, [1] grouping */
	unsigned int run;	/* RUN_*: which of the two */
	uint64_t ops;		/* per policy */
	double seconds[2];
	int err;
};

/* Mostly movable with a sprinkle of the other types, as a host would see. */
static enum mm_migratetype type_of(uint64_t i)
{
	unsigned int k = i & 15;

	return k == 0 ? MIGRATE_UNMOVABLE : k < 4 ? MIGRATE_RECLAIMABLE
						  : MIGRATE_MOVABLE;
}

static int churn(struct mm_pool *pool, struct mm_pcp *pcp, long *ring,
		 uint64_t first, uint64_t n)
{
	int err = 0;

	for (uint64_t i = first; i < first + n; i++) {
		long *slot = &ring[i % RING];

		if (*slot >= 0 && mm_free(pool, pcp, (uint64_t)*slot))
			err = -EINVAL;
		*slot = mm_alloc(pool, pcp, 0, type_of(i), 0);
		if (*slot < 0)
			err = (int)*slot;
	}
	return err;
}

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	struct mm_pcp *pcp[2] = { NULL, NULL };
	long ring[2][RING];

	for (int g = 0; g < 2; g++) {
		if (!(w->run & (1U << g)))
			continue;
		w->err = mm_pcp_create(w->pools[g], &pcp[g]);
		if (w->err)
			goto out;
		for (int i = 0; i < RING; i++)
			ring[g][i] = mm_alloc(w->pools[g], pcp[g], 0, type_of(i), 0);
	}
	for (uint64_t done = 0; done < w->ops / 2 && !w->err; done += CHUNK) {
		/* which policy goes first alternates too: no order bias */
		for (int k = 0; k < 2; k++) {
			int g = (int)((done / CHUNK + k) & 1);
			uint64_t t0 = vm_now_ns();

			if (!(w->run & (1U << g)))
				continue;
			w->err = churn(w->pools[g], pcp[g], ring[g], done, CHUNK);
			w->seconds[g] += (double)(vm_now_ns() - t0) / 1e9;
		}
	}
	for (int g = 0; g < 2; g++)
		for (int i = 0; i < RING && pcp[g]; i++)
			if (ring[g][i] >= 0 && !w->err)
				w->err = mm_free(w->pools[g], pcp[g], (uint64_t)ring[g][i]);
out:
	mm_pcp_destroy(pcp[0]);
	mm_pcp_destroy(pcp[1]);
	return NULL;
}

/* Both policies side by side with @threads workers; ops/s of each. */
static int run_pair(int threads, uint64_t ops, unsigned int run, double rate[2])
{
	struct mm_pool *pools[2] = { NULL, NULL };
	struct worker w[2];
	pthread_t tid[2];
	int err = 0;

	for (int g = 0; g < 2 && !err; g++) {
		struct mm_pool_config cfg = { .size = 256UL << 20, .grouping = g,
					      .policy = g ? MM_POLICY_ALL : 0 };

		if (run & (1U << g))
			err = mm_pool_create(&cfg, &pools[g]);
	}
	for (int i = 0; i < threads && !err; i++) {
		w[i] = (struct worker){ .pools = pools, .run = run, .ops = ops };
		pthread_create(&tid[i], NULL, worker_run, &w[i]);
	}
	for (int i = 0; i < threads && !err; i++) {
		pthread_join(tid[i], NULL);
		if (w[i].err)
			err = w[i].err;
	}
	for (int g = 0; g < 2 && !err; g++) {
		double secs = 0;

		if (!(run & (1U << g)))
			continue;
		for (int i = 0; i < threads; i++)
			secs += w[i].seconds[g];
		/* every thread's own busy time: throughput adds up over threads */
		rate[g] = (double)ops * threads / (secs / threads);
	}
	mm_pool_destroy(pools[0]);
	mm_pool_destroy(pools[1]);
	return err;
}

struct alloc_result {
	const char *policy;
	int threads;
	double ops_per_sec;
};

static const char alloc_usage[] =
	"usage: gpmm bench alloc [--ops N] [--only buddy|grouping] [--json]\n"
	"Order-0 alloc+free throughput through per-thread lists, buddy vs\n"
	"grouping (with every policy bit on), 1 and 2 threads; N operations per\n"
	"thread per policy (default 40M), the two policies alternating every\n"
	"50,000 operations. --only runs one of them (for callgrind).\n";

int cmd_bench_alloc(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "ops", required_argument, NULL, 'n' },
		{ "only", required_argument, NULL, 'o' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	unsigned int run = RUN_BUDDY | RUN_GROUPING;
	struct alloc_result res[4];
	uint64_t ops = 40000000;
	bool json = false;
	int c, n = 0, err = 0;
	double meta;
	struct mm_pool *probe;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		char *end;

		switch (c) {
		case 'n':
			ops = strtoull(optarg, &end, 0);
			if (*end || !ops || *optarg == '-') {
				fprintf(stderr, "gpmm: --ops: invalid number '%s'\n", optarg);
				return 2;
			}
			break;
		case 'o':
			run = !strcmp(optarg, "buddy") ? RUN_BUDDY :
			      !strcmp(optarg, "grouping") ? RUN_GROUPING : 0;
			if (!run) {
				fputs(alloc_usage, stderr);
				return 2;
			}
			break;
		case 'j': json = true; break;
		case 'h': fputs(alloc_usage, stdout); return 0;
		default: fputs(alloc_usage, stderr); return 2;
		}
	}
	for (int threads = 1; threads <= 2 && !err; threads++) {
		double rate[2];

		err = run_pair(threads, ops, run, rate);
		for (int g = 0; g < 2 && !err; g++)
			if (run & (1U << g))
				res[n++] = (struct alloc_result){ g ? "grouping" : "buddy",
								  threads, rate[g] };
	}
	if (err) {
		fprintf(stderr, "gpmm bench alloc: %s\n", strerror(-err));
		return 1;
	}
	if (mm_pool_create(&(struct mm_pool_config){ .grouping = true }, &probe))
		return 1;
	meta = mm_metadata_bytes_per_frame(probe);
	mm_pool_destroy(probe);

	if (json) {
		json_t *root = json_object(), *arr = json_array();

		for (int i = 0; i < n; i++)
			json_array_append_new(arr, json_pack("{s:s, s:i, s:f}",
				"policy", res[i].policy, "threads", res[i].threads,
				"ops_per_sec", res[i].ops_per_sec));
		json_object_set_new(root, "results", arr);
		if (n == 4) {
			json_object_set_new(root, "grouping_cost_pct_1t",
				json_real(100.0 * (1.0 - res[1].ops_per_sec / res[0].ops_per_sec)));
			json_object_set_new(root, "grouping_cost_pct_2t",
				json_real(100.0 * (1.0 - res[3].ops_per_sec / res[2].ops_per_sec)));
		}
		json_object_set_new(root, "metadata_bytes_per_frame", json_real(meta));
		json_dumpf(root, stdout, JSON_INDENT(2));
		putchar('\n');
		json_decref(root);
		return 0;
	}
	printf("gpmm bench alloc: order-0 alloc+free via per-thread lists, %llu ops per thread\n"
	       "and policy, the policies alternating every %d ops in one process\n\n",
	       (unsigned long long)ops, CHUNK);
	printf("%-10s %8s %14s\n", "policy", "threads", "ops/s");
	for (int i = 0; i < n; i++)
		printf("%-10s %8d %14.0f\n", res[i].policy, res[i].threads,
		       res[i].ops_per_sec);
	if (n == 4)
		printf("\ngrouping/buddy: %.3f (1 thread), %.3f (2 threads)\n",
		       res[1].ops_per_sec / res[0].ops_per_sec,
		       res[3].ops_per_sec / res[2].ops_per_sec);
	printf("metadata_bytes_per_frame: %.3f (Linux struct page: 64)\n", meta);
	return 0;
}
