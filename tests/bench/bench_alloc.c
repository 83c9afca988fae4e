// SPDX-License-Identifier: GPL-2.0
/*
 * `gpmm bench alloc`: order-0 alloc+free throughput through the per-thread
 * lists, plain buddy against grouping, with 1 and 2 threads. Rounds of the
 * two policies alternate and the median round counts, so a noisy
 * neighbour slows both alike.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mm/mm.h"
#include "tests/bench/bench.h"

#define RING		256
#define ROUNDS		5

struct worker {
	struct mm_pool *pool;
	uint64_t ops;
	int err;
};

/* Mostly movable with a sprinkle of the other types, as a host would see. */
static enum mm_migratetype type_of(uint64_t i)
{
	unsigned int k = i & 15;

	return k == 0 ? MIGRATE_UNMOVABLE : k < 4 ? MIGRATE_RECLAIMABLE
						  : MIGRATE_MOVABLE;
}

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	long ring[RING];
	struct mm_pcp *pcp;
	uint64_t i;

	w->err = mm_pcp_create(w->pool, &pcp);
	if (w->err)
		return NULL;
	for (i = 0; i < RING; i++)
		ring[i] = mm_alloc(w->pool, pcp, 0, type_of(i), 0);
	for (i = 0; i < w->ops / 2; i++) {
		long *slot = &ring[i % RING];

		if (*slot >= 0 && mm_free(w->pool, pcp, (uint64_t)*slot))
			w->err = -EINVAL;
		*slot = mm_alloc(w->pool, pcp, 0, type_of(i), 0);
		if (*slot < 0)
			w->err = (int)*slot;
	}
	for (i = 0; i < RING; i++)
		if (ring[i] >= 0)
			mm_free(w->pool, pcp, (uint64_t)ring[i]);
	mm_pcp_destroy(pcp);
	return NULL;
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One round: @threads workers of @ops operations each; returns ops/s. */
static double run_round(bool grouping, int threads, uint64_t ops, int *err)
{
	struct mm_pool_config cfg = { .size = 256UL << 20, .grouping = grouping };
	struct worker w[2];
	pthread_t tid[2];
	struct mm_pool *pool;
	double t0, t1;

	*err = mm_pool_create(&cfg, &pool);
	if (*err)
		return 0;
	t0 = now_seconds();
	for (int i = 0; i < threads; i++) {
		w[i] = (struct worker){ .pool = pool, .ops = ops };
		pthread_create(&tid[i], NULL, worker_run, &w[i]);
	}
	for (int i = 0; i < threads; i++) {
		pthread_join(tid[i], NULL);
		if (w[i].err)
			*err = w[i].err;
	}
	t1 = now_seconds();
	mm_pool_destroy(pool);
	return (double)ops * threads / (t1 - t0);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct alloc_result {
	const char *policy;
	int threads;
	double ops_per_sec;
};

static const char alloc_usage[] =
	"usage: gpmm bench alloc [--ops N] [--json]\n"
	"Order-0 alloc+free throughput through per-thread lists, buddy vs\n"
	"grouping, 1 and 2 threads; N operations per thread per round (default 20M).\n";

int cmd_bench_alloc(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "ops", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct alloc_result res[4];
	uint64_t ops = 20000000;
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
		case 'j': json = true; break;
		case 'h': fputs(alloc_usage, stdout); return 0;
		default: fputs(alloc_usage, stderr); return 2;
		}
	}
	for (int threads = 1; threads <= 2; threads++) {
		double rate[2][ROUNDS];

		for (int r = 0; r < ROUNDS && !err; r++)
			for (int g = 0; g < 2 && !err; g++)
				rate[g][r] = run_round(g, threads, ops, &err);
		if (err)
			break;
		for (int g = 0; g < 2; g++) {
			qsort(rate[g], ROUNDS, sizeof(double), cmp_double);
			res[n++] = (struct alloc_result){ g ? "grouping" : "buddy",
							  threads, rate[g][ROUNDS / 2] };
		}
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
		json_object_set_new(root, "grouping_cost_pct_1t",
			json_real(100.0 * (1.0 - res[1].ops_per_sec / res[0].ops_per_sec)));
		json_object_set_new(root, "grouping_cost_pct_2t",
			json_real(100.0 * (1.0 - res[3].ops_per_sec / res[2].ops_per_sec)));
		json_object_set_new(root, "metadata_bytes_per_frame", json_real(meta));
		json_dumpf(root, stdout, JSON_INDENT(2));
		putchar('\n');
		json_decref(root);
		return 0;
	}
	printf("gpmm bench alloc: order-0 alloc+free via per-thread lists, %llu ops/thread, median of %d rounds\n\n",
	       (unsigned long long)ops, ROUNDS);
	printf("%-10s %8s %14s\n", "policy", "threads", "ops/s");
	for (int i = 0; i < n; i++)
		printf("%-10s %8d %14.0f\n", res[i].policy, res[i].threads,
		       res[i].ops_per_sec);
	printf("\ngrouping/buddy: %.3f (1 thread), %.3f (2 threads)\n",
	       res[1].ops_per_sec / res[0].ops_per_sec,
	       res[3].ops_per_sec / res[2].ops_per_sec);
	printf("metadata_bytes_per_frame: %.3f (Linux struct page: 64)\n", meta);
	return 0;
}
