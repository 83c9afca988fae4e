// SPDX-License-Identifier: GPL-2.0
/*
 * `gpmm bench frag`: Gorman's experiment on the pool. A load (built-in
 * workload or trace) runs once with plain buddy and once with grouping;
 * then everything movable and reclaimable is given back and we ask how
 * much of the memory not pinned by unmovable allocations is free in 2 MiB
 * blocks, i.e. could back a guest with huge pages.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mm/mm.h"
#include "tests/bench/bench.h"
#include "tests/bench/workload.h"

struct sink_ctx {
	struct replay *replay;
	char *err;
	size_t errlen;
};

static int replay_sink(void *ctx, const struct trace_event *ev)
{
	struct sink_ctx *c = ctx;

	return replay_event(c->replay, ev, c->err, c->errlen);
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int run_load(const struct frag_opts *o, FILE *trace, struct replay *r,
		    uint64_t pool_pages, char *err, size_t errlen)
{
	struct sink_ctx ctx = { r, err, errlen };
	const struct wl_profile *p;

	if (trace) {
		rewind(trace);
		return trace_replay_file(trace, r, err, errlen);
	}
	p = wl_profile_find(o->profile ? o->profile : "default");
	if (!p) {
		snprintf(err, errlen, "unknown workload profile '%s'", o->profile);
		return -EINVAL;
	}
	return wl_generate(p, pool_pages, o->seed, replay_sink, &ctx);
}

/*
 * Every unmovable page must live in some pageblock, so at best they fill
 * ceil(U / 512) blocks and every other block is free: that is the limit.
 */
static void measure_at_rest(const struct mm_stats *st, struct frag_result *res)
{
	uint64_t u = st->allocated_pages[MIGRATE_UNMOVABLE];
	uint64_t usable = st->frames - u;
	uint64_t huge = 0;
	uint64_t need = (u + MM_PAGEBLOCK_PAGES - 1) / MM_PAGEBLOCK_PAGES;

	for (unsigned int o = MM_PAGEBLOCK_ORDER; o < MM_MAX_ORDER; o++)
		huge += st->nr_free[o] << o;
	res->unmovable_pages = u;
	res->pool_pages = st->frames;
	res->huge_allocatable_pct = usable ? 100.0 * (double)huge / (double)usable : 0;
	res->physical_limit_pct = usable ?
		100.0 * (double)((st->pageblocks - need) * MM_PAGEBLOCK_PAGES) /
		(double)usable : 0;
	res->unusable_index_9 = mm_unusable_index(st, MM_PAGEBLOCK_ORDER);
	res->fragmentation_index_9 = mm_fragmentation_index(st, MM_PAGEBLOCK_ORDER);
	res->unmovable_pageblocks = st->pageblocks - st->free_pageblocks;
	res->fallbacks = st->counters.fallback[0] + st->counters.fallback[1] +
			 st->counters.fallback[2];
	res->pageblock_steals = st->counters.pageblock_steal;
}

static int open_trace(const struct frag_opts *o, FILE **trace,
		      uint64_t *pool_mib, char *err, size_t errlen)
{
	*trace = NULL;
	*pool_mib = o->pool_mib;
	if (o->trace) {
		*trace = fopen(o->trace, "r");
		if (!*trace) {
			int e = errno;

			snprintf(err, errlen, "cannot open trace %s: %s", o->trace,
				 strerror(e));
			return -e;
		}
		if (!*pool_mib)
			*pool_mib = trace_pool_mib(*trace);
	}
	if (!*pool_mib)
		*pool_mib = MM_DEFAULT_POOL_SIZE >> 20;
	return 0;
}

int bench_frag_measure(const struct frag_opts *o, const char *policy,
		       bool grouping, struct frag_result *res, char *err,
		       size_t errlen)
{
	struct mm_pool_config cfg = { .grouping = grouping };
	struct mm_pool *pool = NULL;
	struct mm_pcp *pcp = NULL;
	struct replay *r = NULL;
	struct mm_stats st;
	uint64_t pool_mib;
	FILE *trace;
	double t0 = now_seconds();
	int ret;

	memset(res, 0, sizeof(*res));
	res->policy = policy;
	ret = open_trace(o, &trace, &pool_mib, err, errlen);
	if (ret)
		return ret;
	cfg.size = pool_mib << 20;
	ret = mm_pool_create(&cfg, &pool);
	if (ret) {
		snprintf(err, errlen, "cannot create a %llu MiB pool: %s",
			 (unsigned long long)pool_mib, strerror(-ret));
		goto out;
	}
	ret = mm_pcp_create(pool, &pcp);
	if (!ret)
		ret = replay_create(pool, pcp, &r);
	if (!ret)
		ret = run_load(o, trace, r, mm_pool_frames(pool), err, errlen);
	if (ret)
		goto out;

	mm_drain_all(pool);
	ret = mm_stats(pool, &st);
	res->mixed_pageblocks = st.mixed_pageblocks;
	res->events = replay_counts(r)->events;
	res->alloc_failed = replay_counts(r)->alloc_failed;

	replay_free_types(r, 1U << MIGRATE_MOVABLE | 1U << MIGRATE_RECLAIMABLE);
	mm_drain_all(pool);
	if (!ret)
		ret = mm_stats(pool, &st);
	if (!ret)
		measure_at_rest(&st, res);
	res->seconds = now_seconds() - t0;
out:
	replay_destroy(r);
	mm_pcp_destroy(pcp);
	mm_pool_destroy(pool);
	if (trace)
		fclose(trace);
	return ret;
}

static json_t *result_json(const struct frag_result *r)
{
	return json_pack("{s:s, s:f, s:f, s:I, s:f, s:f, s:I, s:I, s:I, s:I, s:I, s:I, s:f}",
		"policy", r->policy,
		"huge_allocatable_pct", r->huge_allocatable_pct,
		"physical_limit_pct", r->physical_limit_pct,
		"mixed_pageblocks", (json_int_t)r->mixed_pageblocks,
		"unusable_index_9", r->unusable_index_9,
		"fragmentation_index_9", r->fragmentation_index_9,
		"unmovable_pageblocks", (json_int_t)r->unmovable_pageblocks,
		"unmovable_pages", (json_int_t)r->unmovable_pages,
		"fallbacks", (json_int_t)r->fallbacks,
		"pageblock_steals", (json_int_t)r->pageblock_steals,
		"events", (json_int_t)r->events,
		"alloc_failed", (json_int_t)r->alloc_failed,
		"seconds", r->seconds);
}

static void print_table(const struct frag_opts *o, const struct frag_result *res,
			int n)
{
	printf("gpmm bench frag: %s %s, pool %llu MiB, seed %llu\n",
	       o->trace ? "trace" : "profile",
	       o->trace ? o->trace : (o->profile ? o->profile : "default"),
	       (unsigned long long)(res[0].pool_pages >> 8),
	       (unsigned long long)o->seed);
	printf("at rest: movable and reclaimable freed, unmovable kept "
	       "(%llu pages = %.1f%% of the pool)\n\n",
	       (unsigned long long)res[0].unmovable_pages,
	       100.0 * (double)res[0].unmovable_pages / (double)res[0].pool_pages);
	printf("%-10s %12s %8s %10s %10s %9s %10s %10s %8s %7s %7s\n", "policy",
	       "huge_alloc%", "limit%", "mixed_pb", "unusable9", "frag9",
	       "U_blocks", "fallbacks", "steals", "failed", "secs");
	for (int i = 0; i < n; i++)
		printf("%-10s %12.2f %8.2f %10llu %10.3f %9.3f %10llu %10llu %8llu %7llu %7.2f\n",
		       res[i].policy, res[i].huge_allocatable_pct,
		       res[i].physical_limit_pct,
		       (unsigned long long)res[i].mixed_pageblocks,
		       res[i].unusable_index_9, res[i].fragmentation_index_9,
		       (unsigned long long)res[i].unmovable_pageblocks,
		       (unsigned long long)res[i].fallbacks,
		       (unsigned long long)res[i].pageblock_steals,
		       (unsigned long long)res[i].alloc_failed, res[i].seconds);
	if (n == 2 && res[0].huge_allocatable_pct > 0)
		printf("\nratio grouping/buddy: %.2fx\n",
		       res[1].huge_allocatable_pct / res[0].huge_allocatable_pct);
}

static void print_json(const struct frag_result *res, int n)
{
	json_t *root = json_object(), *arr = json_array();

	for (int i = 0; i < n; i++)
		json_array_append_new(arr, result_json(&res[i]));
	json_object_set_new(root, "results", arr);
	if (n == 2 && res[0].huge_allocatable_pct > 0)
		json_object_set_new(root, "ratio_grouping_buddy",
			json_real(res[1].huge_allocatable_pct /
				  res[0].huge_allocatable_pct));
	json_dumpf(root, stdout, JSON_INDENT(2));
	putchar('\n');
	json_decref(root);
}

static const char frag_usage[] =
	"usage: gpmm bench frag [--policy buddy|grouping|all] [--pool-mib N]\n"
	"                       [--seed N] [--profile NAME | --trace FILE] [--json]\n"
	"Fills the pool with a mixed workload, frees what is movable and\n"
	"reclaimable, and reports how much memory is allocatable as 2 MiB blocks.\n"
	"Profiles: default, vmhost, nearfull (gpmm bench trace-gen --list).\n";

static int parse_u64_arg(const char *name, const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	if (errno || *end || !*s || *s == '-') {
		fprintf(stderr, "gpmm: %s: invalid number '%s'\n", name, s);
		return -EINVAL;
	}
	return 0;
}

int cmd_bench_frag(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "policy", required_argument, NULL, 'p' },
		{ "pool-mib", required_argument, NULL, 'm' },
		{ "seed", required_argument, NULL, 's' },
		{ "profile", required_argument, NULL, 'w' },
		{ "trace", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct frag_opts o = { .seed = 1 };
	const char *policy = "all";
	struct frag_result res[2];
	char err[256];
	bool json = false;
	int c, n = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'p': policy = optarg; break;
		case 'm': if (parse_u64_arg("--pool-mib", optarg, &o.pool_mib)) return 2; break;
		case 's': if (parse_u64_arg("--seed", optarg, &o.seed)) return 2; break;
		case 'w': o.profile = optarg; break;
		case 't': o.trace = optarg; break;
		case 'j': json = true; break;
		case 'h': fputs(frag_usage, stdout); return 0;
		default: fputs(frag_usage, stderr); return 2;
		}
	}
	if (optind < argc || (strcmp(policy, "all") && strcmp(policy, "buddy") &&
			      strcmp(policy, "grouping"))) {
		fputs(frag_usage, stderr);
		return 2;
	}
	if (o.pool_mib && o.pool_mib % 2) {
		fprintf(stderr, "gpmm: --pool-mib must be a multiple of 2 (pageblocks are 2 MiB)\n");
		return 2;
	}
	if (strcmp(policy, "grouping") &&
	    bench_frag_measure(&o, "buddy", false, &res[n++], err, sizeof(err)))
		goto fail;
	if (strcmp(policy, "buddy") &&
	    bench_frag_measure(&o, "grouping", true, &res[n++], err, sizeof(err)))
		goto fail;
	if (json)
		print_json(res, n);
	else
		print_table(&o, res, n);
	return 0;
fail:
	fprintf(stderr, "gpmm bench frag: %s\n", err);
	return 1;
}

static int print_sink(void *ctx, const struct trace_event *ev)
{
	trace_print_event(ctx, ev);
	return 0;
}

static const char gen_usage[] =
	"usage: gpmm bench trace-gen [--profile NAME] [--pool-mib N] [--seed N]\n"
	"                            [-o FILE] | --list\n"
	"Writes a built-in workload as an allocation trace (DESIGN.md format).\n";

int cmd_bench_trace_gen(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "profile", required_argument, NULL, 'w' },
		{ "pool-mib", required_argument, NULL, 'm' },
		{ "seed", required_argument, NULL, 's' },
		{ "output", required_argument, NULL, 'o' },
		{ "list", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *name = "default", *out = NULL;
	uint64_t mib = 64, seed = 1;
	const struct wl_profile *p;
	FILE *f = stdout;
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'w': name = optarg; break;
		case 'm': if (parse_u64_arg("--pool-mib", optarg, &mib)) return 2; break;
		case 's': if (parse_u64_arg("--seed", optarg, &seed)) return 2; break;
		case 'o': out = optarg; break;
		case 'l':
			for (unsigned int i = 0; (p = wl_profile_at(i)); i++)
				printf("%-10s %s\n", p->name, p->desc);
			return 0;
		case 'h': fputs(gen_usage, stdout); return 0;
		default: fputs(gen_usage, stderr); return 2;
		}
	}
	p = wl_profile_find(name);
	if (!p || optind < argc || !mib || mib % 2) {
		if (!p)
			fprintf(stderr, "gpmm: unknown profile '%s' (try --list)\n", name);
		fputs(gen_usage, stderr);
		return 2;
	}
	if (out && !(f = fopen(out, "w"))) {
		perror(out);
		return 1;
	}
	fprintf(f, "# gpmm allocation trace: profile %s, seed %llu\n# %s\n# pool-mib %llu\n",
		p->name, (unsigned long long)seed, p->desc, (unsigned long long)mib);
	ret = wl_generate(p, (mib << 20) >> MM_PAGE_SHIFT, seed, print_sink, f);
	if (f != stdout && fclose(f))
		ret = -errno;
	if (ret)
		fprintf(stderr, "gpmm bench trace-gen: %s\n", strerror(-ret));
	return ret ? 1 : 0;
}
