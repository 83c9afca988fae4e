// SPDX-License-Identifier: GPL-2.0
/*
 * The fragmentation report in Prometheus' text exposition format, for the
 * monitoring operators already run (node_exporter's textfile collector
 * reads the file `gpmm daemon --metrics FILE` keeps; `gpmm frag
 * --prometheus` prints it once). Every value comes from the report, which
 * reads it from the pool and the VMs: nothing here is computed anew.
 */
#include <string.h>

#include "vmm/control/report.h"

struct metric {
	const char *name;
	const char *type;	/* gauge or counter */
	const char *help;
	const char *path[3];	/* keys from the object given, NULL-terminated */
};

static const struct metric pool_metrics[] = {
	{ "gpmm_pool_bytes", "gauge", "Size of the host pool.", { "pool_bytes" } },
	{ "gpmm_pool_free_bytes", "gauge", "Free memory on the pool's buddy lists.", { "free_bytes" } },
	{ "gpmm_pool_pageblocks", "gauge", "2 MiB pageblocks in the pool.", { "pageblocks" } },
	{ "gpmm_pool_free_2m_blocks", "gauge",
	  "Free 2 MiB blocks: what a 2 MiB allocation finds without compaction.",
	  { "free_blocks_2m" } },
	{ "gpmm_pool_mixed_pageblocks", "gauge",
	  "Pageblocks holding allocations of more than one migratetype.", { "mixed_pageblocks" } },
	{ "gpmm_pool_unusable_index", "gauge",
	  "Unusable free space index at order 9 (0: every free page is in a free 2 MiB block).",
	  { "unusable_index_9" } },
	{ "gpmm_pool_fragmentation_score", "gauge",
	  "Linux's proactive compaction score of the pool, 0..100.", { "fragmentation_score" } },
	{ "gpmm_pool_rss_bytes", "gauge", "Host memory the pool's memfd holds (st_blocks).",
	  { "host_memory", "rss_bytes" } },
	{ "gpmm_pool_allocated_bytes", "gauge", "Memory allocated from the pool.",
	  { "host_memory", "allocated_bytes" } },
	{ "gpmm_pool_compact_stall_total", "counter", "Direct compactions.",
	  { "counters", "compact_stall" } },
	{ "gpmm_pool_pgmigrate_success_total", "counter", "Pages migrated.",
	  { "counters", "pgmigrate_success" } },
	{ "gpmm_pool_pgmigrate_fail_total", "counter", "Page migrations that failed.",
	  { "counters", "pgmigrate_fail" } },
	{ "gpmm_pool_given_back_pageblocks_total", "counter",
	  "Free pageblocks given back to the host.", { "host_memory", "given_back_pageblocks" } },
};

static const struct metric vm_metrics[] = {
	{ "gpmm_vm_ram_bytes", "gauge", "Guest RAM size.", { "ram_bytes" } },
	{ "gpmm_vm_populated_bytes", "gauge", "Guest RAM backed by pool frames.",
	  { "populated_bytes" } },
	{ "gpmm_vm_huge_backed_bytes", "gauge",
	  "Guest RAM mapped by 2 MiB host pages (the kernel's smaps).", { "huge_backed_bytes" } },
	{ "gpmm_vm_huge_backed_ratio", "gauge",
	  "Share of the populated (touched) guest RAM on 2 MiB host pages, 0..1.",
	  { "huge_backed_ratio" } },
	{ "gpmm_vm_mixed_pageblocks", "gauge", "Pageblocks of this VM that hold several types.",
	  { "mixed_pageblocks" } },
	{ "gpmm_vm_migrated_pages_total", "counter", "Guest pages moved live.",
	  { "migrations", "pages" } },
	{ "gpmm_vm_ranges_assembled_total", "counter", "2 MiB ranges assembled.",
	  { "assembly", "assembled" } },
	{ "gpmm_vm_promised_bytes", "gauge", "Guest RAM the pool promised this VM.",
	  { "memory", "promised_bytes" } },
	{ "gpmm_vm_swapped_bytes", "gauge", "Guest RAM in the VM's swap file now.",
	  { "memory", "swapped_bytes" } },
	{ "gpmm_vm_reclaimable_bytes", "gauge",
	  "Backed guest RAM not touched since the reclaim clock last passed it.",
	  { "memory", "reclaimable_bytes" } },
	{ "gpmm_vm_swap_out_pages_total", "counter", "Guest pages written to the swap file.",
	  { "memory", "swap", "out_pages" } },
	{ "gpmm_vm_swap_out_blocks_total", "counter",
	  "2 MiB ranges swapped out whole from one block: pageblocks freed by reclaim.",
	  { "memory", "swap", "out_blocks" } },
	{ "gpmm_vm_swap_lumpy_pages_total", "counter",
	  "Guest pages the pool's lumpy reclaim swapped out one by one to free pageblocks.",
	  { "memory", "swap", "lumpy_pages" } },
	{ "gpmm_vm_swap_zero_pages_total", "counter",
	  "Guest pages swapped out as zeros: a hole in the file, no write.",
	  { "memory", "swap", "zero_pages" } },
	{ "gpmm_vm_balloon_pressure_bytes", "gauge",
	  "Balloon target the pool's watermarks hold back from this VM now.",
	  { "memory", "balloon_pressure", "taken_bytes" } },
	{ "gpmm_vm_balloon_pressure_steps_total", "counter",
	  "Times the pool's watermarks asked this VM's balloon for more.",
	  { "memory", "balloon_pressure", "steps" } },
	{ "gpmm_vm_swap_in_pages_total", "counter", "Guest pages read back from the swap file.",
	  { "memory", "swap", "in_pages" } },
	{ "gpmm_vm_swap_refaults_total", "counter",
	  "Pages read back within 10 s of going out (reclaimed wrongly).",
	  { "memory", "swap", "refaults_10s" } },
	{ "gpmm_vm_pool_frames", "gauge",
	  "Frames the pool service counts as owned by this VM's process (a walk of the pool).",
	  { "process", "frames_owned" } },
};

/* A tenant of the pool that is no VM (gpmm fragmenting-tenant): what it holds. */
static const struct metric tenant_metric = {
	"gpmm_tenant_pool_frames", "gauge",
	"Frames the pool counts as owned by a pool tenant that is not a VM (a walk of the pool).",
	{ "process", "frames_owned" } };

static const struct metric service_metrics[] = {
	{ "gpmm_pool_clients", "gauge", "Processes the pool service lends to: VMs and tenants.",
	  { "clients" } },
	{ "gpmm_pool_lent_bytes", "gauge", "RAM the pool service has promised its clients.",
	  { "lent_bytes" } },
	{ "gpmm_pool_frames_reclaimed_total", "counter",
	  "Frames taken back from VM processes that died holding them.", { "frames_reclaimed" } },
	{ "gpmm_pool_moves_timed_out_total", "counter",
	  "Moves a VM process did not answer in time (treated as pinned).", { "moves_timed_out" } },
	{ "gpmm_pool_bad_messages_total", "counter", "Malformed requests refused.",
	  { "bad_messages" } },
	{ "gpmm_pool_admitted_bytes", "gauge",
	  "RAM the pool has promised every VM it serves: the service's and the daemon's own.",
	  { "admitted_bytes" } },
	{ "gpmm_pool_lendable_bytes", "gauge",
	  "RAM the pool may promise: its size times its overcommit ratio.", { "lendable_bytes" } },
	{ "gpmm_pool_frames_released_total", "counter",
	  "Frames VM processes gave back at once as they ended.", { "frames_released" } },
	{ "gpmm_pool_walks_refused_total", "counter",
	  "Pool walks refused to clients past their rate.", { "walks_refused" } },
};

static json_t *lookup(json_t *o, const char *const *path)
{
	for (int i = 0; i < 3 && path[i] && o; i++)
		o = json_object_get(o, path[i]);
	return json_is_number(o) ? o : NULL;
}

/* A label value with Prometheus' three escapes. */
static void label_value(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', f);
		if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

static void header(FILE *f, const struct metric *m)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", m->name, m->help, m->name, m->type);
}

static void sample(FILE *f, const struct metric *m, json_t *v, const char *vm)
{
	fputs(m->name, f);
	if (vm) {
		fputs("{vm=\"", f);
		label_value(f, vm);
		fputs("\"}", f);
	}
	fprintf(f, " %.17g\n", json_number_value(v));
}

static void plain(FILE *f, const struct metric *tab, size_t n, json_t *o)
{
	for (size_t i = 0; i < n; i++) {
		json_t *v = lookup(o, tab[i].path);

		if (!v)
			continue;
		header(f, &tab[i]);
		sample(f, &tab[i], v, NULL);
	}
}

void report_write_prometheus(json_t *report, FILE *f)
{
	json_t *host = json_object_get(report, "host"), *vms = json_object_get(report, "vms"), *v;
	json_t *types = json_object_get(host, "pageblocks_by_type"), *n;
	bool any_tenant = false;
	const char *type;
	size_t i;

	plain(f, pool_metrics, sizeof(pool_metrics) / sizeof(pool_metrics[0]), host);
	fprintf(f, "# HELP gpmm_pool_pageblocks_by_type Pageblocks by migratetype.\n"
		"# TYPE gpmm_pool_pageblocks_by_type gauge\n");
	json_object_foreach(types, type, n)
		fprintf(f, "gpmm_pool_pageblocks_by_type{type=\"%s\"} %lld\n", type,
			(long long)json_integer_value(n));
	plain(f, service_metrics, sizeof(service_metrics) / sizeof(service_metrics[0]),
	      json_object_get(report, "pool_service"));
	for (size_t k = 0; k < sizeof(vm_metrics) / sizeof(vm_metrics[0]); k++) {
		bool any = false;

		json_array_foreach(vms, i, v) {
			json_t *x = lookup(v, vm_metrics[k].path);

			if (!x)
				continue;
			if (!any)
				header(f, &vm_metrics[k]);
			any = true;
			sample(f, &vm_metrics[k], x, json_string_value(json_object_get(v, "name")));
		}
	}
	json_array_foreach(json_object_get(report, "tenants"), i, v) {
		json_t *x = lookup(v, tenant_metric.path);

		if (!x)
			continue;
		if (!any_tenant)
			header(f, &tenant_metric);
		any_tenant = true;
		fprintf(f, "%s{tenant=\"", tenant_metric.name);
		label_value(f, json_string_value(json_object_get(v, "name")) ?: "");
		fprintf(f, "\"} %.17g\n", json_number_value(x));
	}
}
