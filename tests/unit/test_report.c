// SPDX-License-Identifier: GPL-2.0
/*
 * The report as the operator reads it (vmm/control/report.c, metrics.c):
 * the text of hand-made report documents, line by line, where each count
 * must say what it counts (now or since start, of touched RAM or of all
 * of it, the guest's giving back or the pool's); the raw tables only on
 * request, once; Prometheus' ratio in 0..1; the vm.max_map_count warning
 * only near the limit. And the host half of a real pool's report, whose
 * free 2 MiB blocks must be what its buddy lists hold.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "vmm/control/report.h"
#include "vmm/memory/pool_backend.h"
#include "vmm/sys/host.h"
#include "tests/suite.h"

#define MIB	(1LL << 20)

/*
 * The VM of the demo's report as measured (tests/demo/fragmented-host):
 * 256 MiB, 98 MiB touched, 47 ranges huge, 4 partly touched; what each
 * test changes, it changes in the document.
 */
static json_t *demo_vm(void)
{
	json_t *v = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:b, s:n}",
		"name", "demo", "status", "shutdown", "ram_bytes", 256 * MIB,
		"populated_bytes", 98 * MIB, "huge_backed_bytes", 94 * MIB,
		"huge_backed_bytes_bookkeeping", 94 * MIB, "huge_backed_pct", 9400.0 / 98,
		"huge_backed_ratio", 94.0 / 98, "huge_backed_ratio_of_ram", 94.0 / 256,
		"kernel_agrees", 1, "huge_backing_limit");

	json_object_update_new(v, json_pack("{s:{s:I, s:I, s:I}, s:I, s:I, s:I, s:I, s:I}",
		"pageblocks_by_type", "Movable", (json_int_t)60, "Reclaimable", (json_int_t)0,
		"Unmovable", (json_int_t)0, "mixed_pageblocks", (json_int_t)0,
		"host_mappings", (json_int_t)589, "process_mappings", (json_int_t)700,
		"max_map_count", (json_int_t)65530, "map_count_warn_at", (json_int_t)49148));
	json_object_set_new(v, "migrations", json_pack(
		"{s:I, s:I, s:{s:I, s:I, s:I}, s:I, s:f, s:f, s:I}",
		"pages", (json_int_t)50775, "bytes", (json_int_t)50775 * 4096,
		"failures", "busy", (json_int_t)0, "gone", (json_int_t)0, "other", (json_int_t)0,
		"stalls", (json_int_t)0, "stall_p50_us", 0.0, "stall_p99_us", 0.0,
		"range_max_us", (json_int_t)1426107));
	json_object_set_new(v, "assembly", json_pack(
		"{s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I,"
		" s:I, s:I}",
		"enabled", 1, "ranges", (json_int_t)128, "ranges_touched", (json_int_t)51,
		"ranges_full", (json_int_t)47, "ranges_huge", (json_int_t)47,
		"assembled", (json_int_t)96, "assembled_onto_host_huge", (json_int_t)96,
		"split", (json_int_t)0, "fail_no_block", (json_int_t)0, "fail_busy", (json_int_t)0,
		"ranges_on_block", (json_int_t)0, "ranges_full_4k", (json_int_t)0,
		"ranges_partly_touched", (json_int_t)4, "partly_touched_bytes", 4 * MIB,
		"ranges_untouched", (json_int_t)77, "ranges_given_back", (json_int_t)45,
		"target_pct", (json_int_t)100, "collapse_failed", (json_int_t)0));
	json_object_set_new(v, "first_touch", json_pack("{s:s, s:I, s:I, s:I, s:I}",
		"policy", "auto", "huge_ranges", (json_int_t)0, "kernel_zeroed", (json_int_t)0,
		"fell_back_to_4k", (json_int_t)93, "zero_us", (json_int_t)0));
	json_object_set_new(v, "balloon", json_pack("{s:b, s:I, s:I, s:I, s:I}",
		"present", 0, "returned_bytes", (json_int_t)(101.7 * MIB),
		"discards", (json_int_t)56, "discard_failed", (json_int_t)0,
		"blocks_returned", (json_int_t)49));
	return v;
}

static json_t *demo_host(json_int_t free_blocks, double frag_index)
{
	json_t *h = json_pack("{s:I, s:I, s:I, s:I, s:f, s:f, s:b, s:I, s:s, s:s}",
		"pool_bytes", 512 * MIB, "free_bytes", (json_int_t)(284.3 * MIB),
		"free_blocks_2m", free_blocks, "mixed_pageblocks", (json_int_t)0,
		"unusable_index_9", 0.705, "fragmentation_index_9", frag_index, "grouping", 1,
		"pageblocks", (json_int_t)256,
		"buddyinfo_text", "Node 0, zone     gpmm  12364  17830 2 0 3 8 10 6 6 8 17\n",
		"pagetypeinfo_text", "Page block order: 9\nPages per block:  512\n");

	json_object_set_new(h, "host_memory", json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
		"rss_bytes", 428 * MIB, "allocated_bytes", (json_int_t)(227.7 * MIB),
		"cached_bytes", (json_int_t)0, "pageblocks", (json_int_t)214,
		"huge_pageblocks", (json_int_t)214, "given_back_pageblocks", (json_int_t)47,
		"release_ms", (json_int_t)1000));
	json_object_set_new(h, "counters", json_pack(
		"{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
		"compact_stall", (json_int_t)66, "compact_success", (json_int_t)66,
		"compact_fail", (json_int_t)0, "kcompactd_wake", (json_int_t)0,
		"pgmigrate_success", (json_int_t)14152, "pgmigrate_fail", (json_int_t)0,
		"lumpy_success", (json_int_t)0, "lumpy_attempt", (json_int_t)66,
		"reclaim_success", (json_int_t)0, "reclaim_fail", (json_int_t)0,
		"claim_block", (json_int_t)0, "claim_deferred", (json_int_t)0));
	return h;
}

static json_t *report_of(json_t *vm, json_t *host)
{
	return json_pack("{s:[o], s:o}", "vms", vm, "host", host);
}

/* @fn's output on @r, as one string to free. */
static char *render(void (*fn)(json_t *, FILE *), json_t *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CU_ASSERT_FATAL(f != NULL);
	fn(r, f);
	fclose(f);
	return buf;
}

static unsigned int count(const char *hay, const char *needle)
{
	unsigned int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* The line of @text that begins with @prefix, as a string to free, or NULL. */
static char *line_of(const char *text, const char *prefix)
{
	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, prefix, strlen(prefix)))
			return strndup(p, strcspn(p, "\n"));
	return NULL;
}

static void assert_line(const char *text, const char *prefix, const char *want)
{
	char *got = line_of(text, prefix);

	CU_ASSERT_PTR_NOT_NULL(got);
	if (got && strcmp(got, want))
		fprintf(stderr, "\n  got:  %s\n  want: %s\n", got, want);
	CU_ASSERT(got && !strcmp(got, want));
	free(got);
}

/* The demo's report, line by line: what an operator reads at the end of make demo. */
static void test_text_golden(void)
{
	json_t *r = report_of(demo_vm(), demo_host(17, -1.0));
	char *t = render(report_print_text, r);

	assert_line(t, "VM ", "VM demo (shutdown): 256 MiB RAM; 98.0 MiB of it touched, 94.0 MiB "
		    "of that on 2 MiB host pages (95.9% of touched, 36.7% of RAM)");
	assert_line(t, "  why not", "  why not the rest: 158.0 MiB of RAM never touched, or given "
		    "back by the guest: nothing to back; 4.0 MiB on 4 KiB pages in 4 partly touched "
		    "2 MiB ranges (a range is assembled once the guest has touched all 512 of its "
		    "pages)");
	assert_line(t, "  2 MiB ranges now", "  2 MiB ranges now: 47 on 2 MiB host pages, 0 whole "
		    "on 4 KiB pages, 4 partly touched, 77 untouched (45 of them given back by the "
		    "guest); 128 in all");
	assert_line(t, "  first touches", "  first touches since start (--fault auto): 0 ranges "
		    "backed whole by a free 2 MiB block, 93 got 4 KiB pages for want of a free "
		    "block to spare (auto leaves the pool's last 1/16 of blocks to assembly)");
	assert_line(t, "  assembly", "  assembly since start (on): 96 ranges moved live onto a "
		    "2 MiB block (96 onto blocks already host huge pages: no copy by the kernel), "
		    "0 split back to 4 KiB; tries that failed: 0 found no free 2 MiB block, 0 a busy "
		    "page; the slowest assembly took 1426.1 ms (getting its block, compaction "
		    "included, copying, collapsing)");
	assert_line(t, "  pages moved", "  pages moved live since start: 50775 (198.3 MiB): 49152 "
		    "by assemblies, 1623 one by one (compaction); failed: busy 0, gone 0, other 0; "
		    "no vCPU stalled on a page being moved");
	assert_line(t, "  host pageblocks", "  host pageblocks holding its RAM: 60 (60 Movable, "
		    "0 Reclaimable, 0 Unmovable), 0 of them mixing types; host mappings: 589 for its "
		    "RAM, 700 in its process, of at most 65530 (vm.max_map_count)");
	assert_line(t, "  given back", "  given back by the guest since start: 101.7 MiB to the "
		    "pool (49 whole 2 MiB blocks among it) in 56 discards, 0 failed");
	assert_line(t, "host pool ", "host pool 512 MiB: 284.3 MiB free; 17 free 2 MiB blocks now; "
		    "70.5% of the free memory in pieces under 2 MiB (unusable index(9) 0.705); "
		    "0 pageblocks mixing types; grouping by mobility on");
	assert_line(t, "host memory", "host memory: RSS 428.0 MiB (the memfd, by the kernel) for "
		    "227.7 MiB allocated + 0.0 MiB cached; 214 pageblocks backed, 214 of them host "
		    "huge pages; the pool gave 47 free pageblocks (94.0 MiB) back to the host since "
		    "start (each once free 1000 to 2000 ms)");
	assert_line(t, "pool work", "pool work since start: direct compaction 66 times "
		    "for a 2 MiB block (66 made one, 0 did not), background compaction woken 0 "
		    "times; 14152 pages moved (0 failed); lumpy reclaim freed 0 blocks in 66 tries; "
		    "0 blocks reclaimed (0 kept by their owners or failed); 0 blocks taken for "
		    "unmovable allocations (0 claims deferred after failures)");
	/* one line begins "host pool" (tests/libvirt/demo cuts the report there) */
	CU_ASSERT_EQUAL(count(t, "\nhost pool"), 1);
	/* nothing unexplained: no Linux sentinel, no stall figures of no stall */
	CU_ASSERT_PTR_NULL(strstr(t, "-1.000"));
	CU_ASSERT_PTR_NULL(strstr(t, "fragmentation index"));
	CU_ASSERT_PTR_NULL(strstr(t, "p50"));
	CU_ASSERT_PTR_NULL(strstr(t, "DISAGREE"));
	free(t);
	json_decref(r);
}

/* No free 2 MiB block: then the fragmentation index means something, and is said. */
static void test_fragmentation_index_when_no_block(void)
{
	json_t *r = report_of(demo_vm(), demo_host(0, 0.997));
	char *t = render(report_print_text, r);

	assert_line(t, "host pool ", "host pool 512 MiB: 284.3 MiB free; no free 2 MiB block: "
		    "fragmentation index(9) 0.997 (toward 1 the lack is fragmentation, which "
		    "compaction undoes; toward 0 it is free memory); 70.5% of the free memory in "
		    "pieces under 2 MiB (unusable index(9) 0.705); 0 pageblocks mixing types; "
		    "grouping by mobility on");
	free(t);
	json_decref(r);
}

/* vCPU stalls, when there were some; whole ranges on 4 KiB pages, and why. */
static void test_stalls_and_reasons(void)
{
	json_t *v = demo_vm(), *a = json_object_get(v, "assembly");
	json_t *m = json_object_get(v, "migrations"), *r;
	char *t;

	json_object_set_new(m, "stalls", json_integer(3));
	json_object_set_new(m, "stall_p50_us", json_real(12.5));
	json_object_set_new(m, "stall_p99_us", json_real(80.25));
	json_object_set_new(a, "ranges_full_4k", json_integer(2));
	json_object_set_new(a, "fail_no_block", json_integer(5));
	json_object_set_new(a, "fail_busy", json_integer(1));
	r = report_of(v, demo_host(0, 0.9));
	t = render(report_print_text, r);
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "; vCPUs stalled 3 times on a page being moved: "
				      "p50 12.5 us, p99 80.2 us (an upper bound)\n"));
	CU_ASSERT_PTR_NULL(strstr(t, "no vCPU stalled"));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "; 2 whole ranges still on 4 KiB pages (5 tries since "
				      "start found no free 2 MiB block; 1 tries since start found "
				      "a page busy (pinned, or being moved))\n"));
	free(t);
	json_decref(r);

	/* assembly off: that is the reason, before any count of tries */
	v = demo_vm();
	a = json_object_get(v, "assembly");
	json_object_set_new(a, "enabled", json_false());
	json_object_set_new(a, "ranges_full_4k", json_integer(3));
	r = report_of(v, demo_host(4, -1.0));
	t = render(report_print_text, r);
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "; 3 whole ranges still on 4 KiB pages (2 MiB assembly "
				      "is off for this VM (--huge off))\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "  assembly since start (off): "));
	free(t);
	json_decref(r);

	/* ranges the reclaim clock write-protects: on their block, mapped 4 KiB for now */
	v = demo_vm();
	a = json_object_get(v, "assembly");
	json_object_set_new(a, "ranges_sampled", json_integer(6));
	r = report_of(v, demo_host(4, -1.0));
	t = render(report_print_text, r);
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "; 6 ranges on a 2 MiB block mapped by 4 KiB pages while "
				      "the reclaim clock write-protects them (their first write "
				      "maps them huge again)\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, ", 6 on a block the clock samples; 128 in all\n"));
	free(t);
	json_decref(r);
}

/* All of the RAM huge: nothing to explain, and said so. */
static void test_nothing_left(void)
{
	json_t *v = demo_vm(), *a = json_object_get(v, "assembly"), *r;
	char *t;

	json_object_set_new(v, "populated_bytes", json_integer(256 * MIB));
	json_object_set_new(v, "huge_backed_bytes", json_integer(256 * MIB));
	json_object_set_new(v, "huge_backed_ratio", json_real(1.0));
	json_object_set_new(v, "huge_backed_ratio_of_ram", json_real(1.0));
	json_object_set_new(a, "ranges_partly_touched", json_integer(0));
	r = report_of(v, demo_host(4, -1.0));
	t = render(report_print_text, r);
	assert_line(t, "  why not", "  why not the rest: nothing: all of its RAM is on 2 MiB host "
		    "pages");
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "(100.0% of touched, 100.0% of RAM)"));
	free(t);
	json_decref(r);

	/* a fresh pool: first touches took whole blocks, most already zero */
	v = demo_vm();
	json_object_update_new(json_object_get(v, "first_touch"), json_pack(
		"{s:I, s:I, s:I, s:I}", "huge_ranges", (json_int_t)92, "kernel_zeroed",
		(json_int_t)87, "fell_back_to_4k", (json_int_t)0, "zero_us", (json_int_t)55403));
	r = report_of(v, demo_host(4, -1.0));
	t = render(report_print_text, r);
	assert_line(t, "  first touches", "  first touches since start (--fault auto): 92 ranges "
		    "backed whole by a free 2 MiB block (each counts 2 MiB touched, however much "
		    "of it the guest wrote; 87 of them already zero from the kernel, zeroing the "
		    "others took 55.4 ms), 0 got 4 KiB pages for want of a free block to spare "
		    "(auto leaves the pool's last 1/16 of blocks to assembly)");
	free(t);
	json_decref(r);

	/* --fault 4k: 4 KiB pages are the policy, not a want of blocks */
	v = demo_vm();
	json_object_set_new(json_object_get(v, "first_touch"), "policy", json_string("4k"));
	r = report_of(v, demo_host(4, -1.0));
	t = render(report_print_text, r);
	assert_line(t, "  first touches", "  first touches since start (--fault 4k): every one "
		    "took 4 KiB pages, as the policy says; assembly makes 2 MiB of them");
	free(t);
	json_decref(r);
}

/* The raw tables: not in the text; once, under their legend, on request. */
static void test_tables_behind_flag(void)
{
	json_t *r = report_of(demo_vm(), demo_host(17, -1.0));
	char *t = render(report_print_text, r), *tab = render(report_print_tables, r);

	CU_ASSERT_PTR_NULL(strstr(t, "Node 0, zone"));
	CU_ASSERT_PTR_NULL(strstr(t, "Page block order"));
	CU_ASSERT_EQUAL(count(tab, "Node 0, zone"), 1);
	CU_ASSERT_EQUAL(count(tab, "Page block order"), 1);
	CU_ASSERT(!strncmp(tab, "the pool's free lists, as Linux's /proc/buddyinfo then "
			   "/proc/pagetypeinfo (free blocks of order 0..10: 4 KiB << order; "
			   "order 9 is 2 MiB):\nNode 0, zone", 127));
	free(t);
	free(tab);
	json_decref(r);
}

/* A VM process that has not reported yet: its name and the pool's count, no zeros. */
static void test_process_without_report(void)
{
	json_t *v = json_pack("{s:s, s:s, s:{s:I, s:I, s:I}}", "name", "fragmenting-tenant",
			      "status", "starting", "process", "pid", (json_int_t)42,
			      "owner", (json_int_t)3, "frames_owned", (json_int_t)32768);
	json_t *r = report_of(v, demo_host(0, 0.99));
	char *t = render(report_print_text, r);

	assert_line(t, "VM ", "VM fragmenting-tenant (starting): no report from its process yet");
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "  process 42 (owner 3): the pool counts 32768 frames "
				      "owned (128.0 MiB)"));
	CU_ASSERT_PTR_NULL(strstr(t, "0 MiB RAM"));
	free(t);
	json_decref(r);
}

/* The value of the sample line that begins with @name (not its HELP line). */
static double metric(const char *text, const char *name)
{
	for (const char *p = text; p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, name, strlen(name)))
			return strtod(p + strlen(name), NULL);
	return -1.0;
}

/* A _ratio runs 0..1: the huge-backed share of touched RAM. */
static void test_prometheus_ratio(void)
{
	json_t *r = report_of(demo_vm(), demo_host(17, -1.0));
	char *t = render(report_write_prometheus, r);
	double ratio = metric(t, "gpmm_vm_huge_backed_ratio{vm=\"demo\"} ");

	CU_ASSERT(ratio > 0.0 && ratio <= 1.0);
	CU_ASSERT_DOUBLE_EQUAL(ratio, 94.0 / 98.0, 1e-12);
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "# HELP gpmm_vm_huge_backed_ratio Share of the populated "
				      "(touched) guest RAM on 2 MiB host pages, 0..1.\n"));
	CU_ASSERT_DOUBLE_EQUAL(metric(t, "gpmm_pool_free_2m_blocks "), 17.0, 1e-12);
	free(t);
	json_decref(r);
}

/* Warned near vm.max_map_count (3/4 of it), never before, never when unknown. */
static void test_map_count_warning(void)
{
	char msg[768];
	uint64_t mine = report_process_mappings();

	CU_ASSERT_EQUAL(report_map_count_warn_at(65530), 49148);
	CU_ASSERT_EQUAL(report_map_count_warning(67, 65530, msg, sizeof(msg)), 0);
	CU_ASSERT_EQUAL(report_map_count_warning(49147, 65530, msg, sizeof(msg)), 0);
	CU_ASSERT_EQUAL(report_map_count_warning(49148, 65530, msg, sizeof(msg)), 1);
	CU_ASSERT(!strncmp(msg, "this process holds 49148 memory mappings, 75% of the host's "
			   "limit (vm.max_map_count = 65530)", 85));
	CU_ASSERT_PTR_NOT_NULL(strstr(msg, "sysctl -w vm.max_map_count=262120"));
	CU_ASSERT_EQUAL(report_map_count_warning(1000000, 0, msg, sizeof(msg)), 0);
	/* this process's own count: its binary, libc, stack at least */
	CU_ASSERT(mine >= 3 && mine < 65530);
	/* the test hook stands in for the host's limit, and only when set */
	setenv("GPMM_TEST_MAX_MAP_COUNT", "8", 1);
	CU_ASSERT_EQUAL(report_max_map_count(), 8);
	unsetenv("GPMM_TEST_MAX_MAP_COUNT");
	CU_ASSERT_EQUAL(report_max_map_count(), host_max_map_count());
}

/*
 * The host half of a real pool's report: fresh, every pageblock is a free
 * 2 MiB block; with one page kept in each, none is, and the text names the
 * fragmentation index instead.
 */
static void test_real_pool_host(void)
{
	enum { PAGES = 4 * MM_PAGEBLOCK_PAGES };
	struct pool *pool;
	long frames[PAGES];
	json_t *r;
	char *t;

	CU_ASSERT_FATAL(pool_open(PAGES << MM_PAGE_SHIFT, true, &pool) == 0);
	r = report_build(pool, NULL, 0, false);
	CU_ASSERT_FATAL(r != NULL);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_object_get(r, "host"),
							   "free_blocks_2m")), 4);
	t = render(report_print_text, r);
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "host pool 8 MiB: 8.0 MiB free; 4 free 2 MiB blocks now;"));
	free(t);
	json_decref(r);
	for (int i = 0; i < PAGES; i++)
		frames[i] = pool_alloc_page(pool, NULL, 1);
	for (int i = 0; i < PAGES; i++)
		if (frames[i] >= 0 && frames[i] % MM_PAGEBLOCK_PAGES)
			CU_ASSERT_EQUAL(pool_free(pool, NULL, (uint64_t)frames[i], 0), 0);
	r = report_build(pool, NULL, 0, false);
	CU_ASSERT_FATAL(r != NULL);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_object_get(r, "host"),
							   "free_blocks_2m")), 0);
	t = render(report_print_text, r);
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "; no free 2 MiB block: fragmentation index(9) 0."));
	CU_ASSERT_PTR_NULL(strstr(t, "-1.000"));
	free(t);
	json_decref(r);
	for (int i = 0; i < PAGES; i++)
		if (frames[i] >= 0 && !(frames[i] % MM_PAGEBLOCK_PAGES))
			CU_ASSERT_EQUAL(pool_free(pool, NULL, (uint64_t)frames[i], 0), 0);
	pool_close(pool);
}

int register_report_suite(void)
{
	static const struct suite_test tests[] = {
		{ "text: the demo's report, line by line", test_text_golden },
		{ "text: fragmentation index only without a free block",
		  test_fragmentation_index_when_no_block },
		{ "text: stalls, and why whole ranges stay on 4 KiB", test_stalls_and_reasons },
		{ "text: nothing left to explain", test_nothing_left },
		{ "text: raw tables only on request, once", test_tables_behind_flag },
		{ "text: a VM process without a report", test_process_without_report },
		{ "prometheus: huge_backed_ratio in 0..1", test_prometheus_ratio },
		{ "max_map_count: warned only near the limit", test_map_count_warning },
		{ "host half of a real pool's report", test_real_pool_host },
	};
	return SUITE("report", tests);
}
