// SPDX-License-Identifier: GPL-2.0
/*
 * Fragmentation report. One walk over the pool's pageblocks (mm's walker,
 * as vmstat.c's walk_zones_in_node) feeds the host figures, each VM's
 * view of the blocks it touches, and the picture.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "devices/virtio/virtio_balloon.h"
#include "devices/virtio/virtio_mmio.h"
#include "devices/virtio/virtio_net.h"
#include "vmm/sys/host.h"
#include "vmm/core/config.h"
#include "vmm/control/report.h"
#include "vmm/memory/guest_mem.h"
#include "vmm/memory/huge_backing.h"
#include "vmm/memory/page_move.h"
#include "vmm/memory/swap.h"
#include "vmm/pool_service/pool_client.h"

static const char type_char[MIGRATE_TYPES] = { 'U', 'R', 'M' };

struct walk {
	struct mm_pageblock_info *pbi;
	uint64_t nr;
};

static void collect(void *opaque, uint64_t pb, const struct mm_pageblock_info *info)
{
	struct walk *w = opaque;

	w->pbi[pb] = *info;
}

static json_t *orders_json(const uint64_t *counts)
{
	json_t *a = json_array();

	for (unsigned int o = 0; o < MM_MAX_ORDER; o++)
		json_array_append_new(a, json_integer((json_int_t)counts[o]));
	return a;
}

static json_t *by_type(const uint64_t *v)
{
	json_t *o = json_object();

	for (int t = 0; t < MIGRATE_TYPES; t++)
		json_object_set_new(o, mm_migratetype_name(t), json_integer((json_int_t)v[t]));
	return o;
}

static char *proc_text(const struct mm_stats *st, bool pagetype)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	if (pagetype)
		mm_print_pagetypeinfo(st, "gpmm", f);
	else
		mm_print_buddyinfo(st, "gpmm", f);
	fclose(f);
	return buf;
}

/*
 * The pool's host memory beside its allocated memory: rss_bytes is the
 * kernel's count (the memfd's blocks), pageblocks ours; a pool that gives
 * memory back shows rss following allocated, one that does not its peak.
 */
static json_t *host_memory_json(struct pool *pool, const struct mm_stats *st)
{
	const struct mm_counters *c = &st->counters;
	uint64_t allocated = 0;

	for (int t = 0; t < MIGRATE_TYPES; t++)
		allocated += st->allocated_pages[t];
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:I, s:s}",
		"rss_bytes", (json_int_t)st->host_bytes,
		"allocated_bytes", (json_int_t)(allocated << MM_PAGE_SHIFT),
		"cached_bytes", (json_int_t)(st->pcp_pages << MM_PAGE_SHIFT),
		"pageblocks", (json_int_t)st->host_pageblocks,
		"huge_pageblocks", (json_int_t)st->host_huge_pageblocks,
		"made_huge", (json_int_t)c->host_huge,
		"made_huge_failed", (json_int_t)c->host_huge_fail,
		"given_back_pageblocks", (json_int_t)c->host_released,
		"huge_on_first_use", pool->host.huge,
		"release_ms", (json_int_t)pool->host.release_ms,
		"huge_error", st->host_huge_errno ? strerror(st->host_huge_errno) : "");
}

static json_t *host_json(struct pool *pool, const struct mm_stats *st)
{
	const struct mm_counters *c = &st->counters;
	char *bi = proc_text(st, false), *pti = proc_text(st, true);
	json_t *types = json_object(), *h;

	for (int t = 0; t < MIGRATE_TYPES; t++)
		json_object_set_new(types, mm_migratetype_name(t),
				    orders_json(st->nr_free_type[t]));
	h = json_pack("{s:I, s:I, s:I, s:o, s:o, s:o, s:I, s:f, s:f, s:f, s:b, s:s, s:s}",
		"pool_bytes", (json_int_t)(st->frames << MM_PAGE_SHIFT),
		"free_bytes", (json_int_t)(st->free_pages << MM_PAGE_SHIFT),
		"pageblocks", (json_int_t)st->pageblocks,
		"buddyinfo", orders_json(st->nr_free),
		"pagetypeinfo", types,
		"pageblocks_by_type", by_type(st->pageblocks_type),
		"mixed_pageblocks", (json_int_t)st->mixed_pageblocks,
		"unusable_index_9", mm_unusable_index(st, MM_PAGEBLOCK_ORDER),
		"fragmentation_index_9", mm_fragmentation_index(st, MM_PAGEBLOCK_ORDER),
		"fragmentation_score", mm_fragmentation_score(st),
		"grouping", st->grouping,
		"buddyinfo_text", bi ? bi : "",
		"pagetypeinfo_text", pti ? pti : "");
	json_object_set_new(h, "counters", json_pack(
		"{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
		"compact_stall", (json_int_t)c->compact_stall,
		"compact_success", (json_int_t)c->compact_success,
		"compact_fail", (json_int_t)c->compact_fail,
		"pgmigrate_success", (json_int_t)c->pgmigrate_success,
		"pgmigrate_fail", (json_int_t)c->pgmigrate_fail,
		"lumpy_attempt", (json_int_t)c->lumpy_attempt,
		"lumpy_success", (json_int_t)c->lumpy_success,
		"reclaim_success", (json_int_t)c->reclaim_success,
		"reclaim_fail", (json_int_t)c->reclaim_fail,
		"claim_block", (json_int_t)c->claim_block,
		"claim_deferred", (json_int_t)c->claim_deferred,
		"fallbacks", (json_int_t)(c->fallback[0] + c->fallback[1] + c->fallback[2]),
		"pageblock_steal", (json_int_t)c->pageblock_steal,
		"kcompactd_wake", (json_int_t)c->kcompactd_wake));
	json_object_set_new(h, "host_memory", host_memory_json(pool, st));
	json_object_set_new(h, "free_blocks_2m",
			    json_integer((json_int_t)mm_free_blocks(st, MM_PAGEBLOCK_ORDER)));
	json_object_set_new(h, "free_pageblocks", json_integer((json_int_t)st->free_pageblocks));
	/* what the pool promised against what it may: its admission count (the service's own) */
	json_object_set_new(h, "overcommit", json_real(pool->host.overcommit_pct / 100.0));
	json_object_set_new(h, "lendable_bytes", json_integer((json_int_t)pool_lendable(pool)));
	if (pool->mm)
		json_object_set_new(h, "promised_bytes", json_integer((json_int_t)
				    __atomic_load_n(&pool->admitted, __ATOMIC_RELAXED)));
	free(bi);
	free(pti);
	return h;
}

/*
 * Mark the pageblocks this VM's frames sit in, and count its frames by the
 * migratetype the allocator holds them under (asked of mm/, not assumed:
 * a pinned ring or a reclaimable page would show here). A 2 MiB backing is
 * one order-9 block: asked once for its 512 frames.
 */
static void vm_frames(struct vm *vm, uint8_t *touched, uint64_t by_type[MIGRATE_TYPES])
{
	uint64_t pages = vm_populated_pages(vm) + MM_PAGEBLOCK_PAGES, n = 0;
	uint32_t *heads = malloc(pages * sizeof(*heads));
	uint8_t *whole = malloc(pages);
	struct mm_frame_info *info = malloc(pages * sizeof(*info));

	pthread_mutex_lock(&vm->mem_lock);
	for (unsigned int i = 0; heads && whole && info && i < vm->nr_regions; i++) {
		const struct vm_region *r = &vm->regions[i];

		for (uint64_t idx = 0; idx < r->size >> MM_PAGE_SHIFT && n < pages; idx++) {
			uint32_t f = r->backing[idx];
			bool block = r->huge[idx >> MM_PAGEBLOCK_ORDER] != RANGE_4K;

			if (f == NIL_FRAME)
				continue;
			touched[f >> MM_PAGEBLOCK_ORDER] = 1;
			if (block && (idx & (MM_PAGEBLOCK_PAGES - 1)))
				continue;
			whole[n] = block;
			heads[n++] = f;
		}
	}
	pthread_mutex_unlock(&vm->mem_lock);
	/* asked in one batch: a round trip of the pool service's, not one a page */
	if (heads && whole && info && pool_frames_info(vm->pool, heads, n, info) == 0)
		for (uint64_t i = 0; i < n; i++)
			if (info[i].state == MM_FRAME_ALLOC)
				by_type[info[i].mt] += whole[i] ? MM_PAGEBLOCK_PAGES : 1;
	free(heads);
	free(whole);
	free(info);
}

/*
 * Why this VM's RAM is not (all) on 2 MiB host pages, when the reason is
 * known: its policy, the host's kernel (vmm/sys/host.c), or the kernel's answer
 * to MADV_COLLAPSE. NULL when nothing stands in the way.
 */
static json_t *huge_limit_json(struct vm *vm)
{
	static const enum host_cap_id needed[] = {
		HOST_UFFD_WP_SHMEM, HOST_COLLAPSE_SHMEM, HOST_THP,
	};
	const struct vm_migstats *m = &vm->migstats;

	if (!vm->cfg.huge)
		return json_string("2 MiB assembly is off for this VM (huge=off)");
	for (size_t i = 0; i < sizeof(needed) / sizeof(needed[0]); i++)
		if (!host_has(needed[i]))
			return json_sprintf("host kernel %s lacks %s (%s): %s",
					    host_caps()->kernel, host_cap_name(needed[i]),
					    host_caps()->cap[needed[i]].detail,
					    host_cap_loss(needed[i]));
	if (m->collapse_fail)
		return json_sprintf("MADV_COLLAPSE refused %llu of %llu assembled ranges "
				    "(last: %s): those stay mapped by 4 KiB PTEs",
				    (unsigned long long)m->collapse_fail,
				    (unsigned long long)m->ranges_assembled,
				    strerror(m->collapse_errno));
	return json_null();
}

#define LOAD(x) ((json_int_t)__atomic_load_n(&(x), __ATOMIC_RELAXED))

/*
 * How first touches were served. A range backed whole by its first fault
 * counts 2 MiB populated; how much of it the guest has written since is
 * not knowable from the host (no fault tells), and the report says so.
 */
static json_t *first_touch_json(struct vm *vm)
{
	return json_pack("{s:s, s:I, s:I, s:I, s:I, s:s}",
		"policy", config_fault_name(vm->cfg.fault),
		"huge_ranges", LOAD(vm->stats.huge_first),
		"kernel_zeroed", LOAD(vm->stats.huge_first_kernel_zeroed),
		"fell_back_to_4k", LOAD(vm->stats.huge_first_fallback),
		"zero_us", LOAD(vm->stats.zero_ns) / 1000,
		"touched_note", "a range backed whole at first touch counts 2 MiB populated; "
				"what the guest wrote inside it is not known to the host");
}

/*
 * What the guest gave back: the VM's own count of frames returned to the
 * pool (gmem_discard), beside what its balloon was asked and told.
 */
static json_t *balloon_json(struct vm *vm)
{
	const struct vm_discard_stats *d = &vm->discard;
	struct virtio_balloon_info b;
	json_t *j = json_pack("{s:I, s:I, s:I, s:I}",
		"returned_bytes", LOAD(d->bytes), "discards", LOAD(d->calls),
		"discard_failed", LOAD(d->failed), "blocks_returned", LOAD(d->blocks));

	json_object_set_new(j, "present", json_boolean(!virtio_balloon_query(&vm->mach, &b, false)));
	if (!json_is_true(json_object_get(j, "present")))
		return j;
	json_object_update_new(j, json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
		"target_bytes", (json_int_t)b.target_bytes,
		"actual_bytes", (json_int_t)b.actual_bytes,
		"inflated_pages", (json_int_t)b.inflated_pages,
		"deflated_pages", (json_int_t)b.deflated_pages,
		"reported_bytes", (json_int_t)b.reported_bytes,
		"bad_pfns", (json_int_t)b.bad_pfns,
		"stats_updates", (json_int_t)b.stats_updates));
	return j;
}

/*
 * What the pool promised the VM, what of it is backed now, what the VM's
 * reclaim clock would take next (backed ranges not touched since the
 * hand last passed) and what is in its swap file: counted under mem_lock
 * from the VM's own maps, the swap counts from where swap.c moves pages.
 */
static json_t *memory_json(struct vm *vm)
{
	const struct vm_swap *sw = &vm->swap;
	const struct vm_pressure *pr = &vm->pressure;
	uint64_t cold = 0;

	pthread_mutex_lock(&vm->mem_lock);
	for (unsigned int i = 0; i < vm->nr_regions; i++) {
		const struct vm_region *r = &vm->regions[i];

		for (uint64_t g = 0; r->referenced && g < r->size >> MM_PAGEBLOCK_SHIFT; g++)
			cold += r->referenced[g] & RANGE_SEEN ? 0 : r->populated[g];
	}
	pthread_mutex_unlock(&vm->mem_lock);
	return json_pack("{s:I, s:I, s:I, s:I, s:b, s:{s:I, s:I, s:I}, "
			 "s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
			 "s:I, s:I, s:I, s:I}}",
		"promised_bytes", (json_int_t)vm->admitted,
		"used_bytes", (json_int_t)(vm_populated_pages(vm) << MM_PAGE_SHIFT),
		"reclaimable_bytes", (json_int_t)(cold << MM_PAGE_SHIFT),
		"swapped_bytes", (json_int_t)(LOAD(sw->pages_now) << MM_PAGE_SHIFT),
		"swap_on", swap_enabled(vm),
		"balloon_pressure", "taken_bytes", LOAD(pr->taken_bytes),
		"steps", LOAD(pr->balloon_steps), "relaxes", LOAD(pr->balloon_relaxes),
		"swap", "out_ranges", LOAD(sw->out_ranges), "out_blocks", LOAD(sw->out_blocks),
		"out_pages", LOAD(sw->out_pages), "zero_pages", LOAD(sw->zero_pages),
		"in_pages", LOAD(sw->in_pages),
		"in_ranges", LOAD(sw->in_ranges), "refaults_10s", LOAD(sw->refaults),
		"reclaim_failed", LOAD(sw->reclaim_failed), "errors", LOAD(sw->errors),
		"background_ranges", LOAD(sw->background), "fault_waits", LOAD(sw->waits),
		"armed_ranges", LOAD(sw->armed), "armed_written", LOAD(sw->sample_hits),
		"out_us", LOAD(sw->out_ns) / 1000, "in_us", LOAD(sw->in_ns) / 1000,
		"lumpy_pages", LOAD(sw->lumpy_pages), "lumpy_declined", LOAD(sw->lumpy_declined));
}

/* Each virtio device, and how often its driver broke the rules. */
static json_t *virtio_json(struct vm *vm)
{
	struct virtio_mmio_info info[VIRTIO_MMIO_SLOTS];
	unsigned int n = virtio_mmio_list(&vm->mach, info, VIRTIO_MMIO_SLOTS);
	json_t *a = json_array();

	for (unsigned int i = 0; i < n; i++)
		json_array_append_new(a, json_pack("{s:s, s:I, s:i, s:i, s:I, s:I, s:I, s:I, s:I}",
			"name", info[i].name, "base", (json_int_t)info[i].base,
			"gsi", (int)info[i].gsi, "status", (int)info[i].status,
			"notifies", (json_int_t)info[i].notifies,
			"bad_rings", (json_int_t)info[i].bad_rings,
			"bad_accesses", (json_int_t)info[i].bad_accesses,
			"resets", (json_int_t)info[i].resets,
			"irq_errors", (json_int_t)info[i].irq_errors));
	return a;
}

/* Each network interface: the device's own counts of what it moved and refused. */
static json_t *net_json(struct vm *vm)
{
	struct virtio_net_info n;
	json_t *a = json_array();
	char mac[18];

	for (unsigned int i = 0; !virtio_net_query(&vm->mach, i, &n); i++) {
		snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", n.mac[0], n.mac[1],
			 n.mac[2], n.mac[3], n.mac[4], n.mac[5]);
		json_array_append_new(a, json_pack("{s:s, s:b, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
			"mac", mac, "vnet_hdr", n.vnet_hdr, "offloads", n.offloads,
			"rx_packets", (json_int_t)n.rx_packets, "rx_bytes", (json_int_t)n.rx_bytes,
			"tx_packets", (json_int_t)n.tx_packets, "tx_bytes", (json_int_t)n.tx_bytes,
			"rx_dropped", (json_int_t)n.rx_dropped, "tx_dropped", (json_int_t)n.tx_dropped,
			"tx_errors", (json_int_t)n.tx_errors, "rx_waits", (json_int_t)n.rx_waits));
	}
	return a;
}

/*
 * The VM's 2 MiB ranges as they are now, in one pass under mem_lock (a
 * range's backing and its count of pages change together under it): each
 * range is in exactly one of the states counted, so they add up to ranges.
 */
struct range_census {
	uint64_t ranges, touched, full, huge, on_block, sampled, full_4k, partly, untouched;
	uint64_t given_back;	/* of the untouched: the guest gave them back */
	uint64_t partly_pages;	/* pages backed in the partly touched ranges */
};

/*
 * A range the reclaim clock write-protected sits on its 2 MiB block but is
 * mapped by PTEs until its first write (swap.c, __arm_range): smaps does
 * not count it as PMD-mapped, and neither does the census, which says why.
 */
static bool range_sampled(const struct vm_region *r, uint64_t g)
{
	return r->referenced && (r->referenced[g] & RANGE_ARMED);
}

static void range_census(struct vm *vm, struct range_census *c)
{
	memset(c, 0, sizeof(*c));
	pthread_mutex_lock(&vm->mem_lock);
	for (unsigned int i = 0; i < vm->nr_regions; i++) {
		const struct vm_region *r = &vm->regions[i];

		for (uint64_t g = 0; g < r->size >> MM_PAGEBLOCK_SHIFT; g++) {
			uint16_t n = r->populated[g];

			c->ranges++;
			c->touched += n > 0;
			c->full += n == MM_PAGEBLOCK_PAGES;
			if (r->huge[g] == RANGE_PMD && range_sampled(r, g)) {
				c->sampled++;
			} else if (r->huge[g] == RANGE_PMD) {
				c->huge++;
			} else if (r->huge[g] == RANGE_BLOCK) {
				c->on_block++;
			} else if (n == MM_PAGEBLOCK_PAGES) {
				c->full_4k++;
			} else if (n) {
				c->partly++;
				c->partly_pages += n;
			} else {
				c->untouched++;
				c->given_back += r->given_back[g] != 0;
			}
		}
	}
	pthread_mutex_unlock(&vm->mem_lock);
}

/* Lines of /proc/self/maps: the mappings vm.max_map_count caps, 0 when unreadable. */
uint64_t report_process_mappings(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	uint64_t n = 0;
	int c;

	if (!f)
		return 0;
	while ((c = getc_unlocked(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

uint64_t report_max_map_count(void)
{
	const char *test = getenv("GPMM_TEST_MAX_MAP_COUNT");

	return test ? strtoull(test, NULL, 10) : host_max_map_count();
}

uint64_t report_map_count_warn_at(uint64_t limit)
{
	return limit - limit / 4;
}

int report_map_count_warning(uint64_t mappings, uint64_t limit, char *buf, size_t len)
{
	if (!limit || mappings < report_map_count_warn_at(limit))
		return 0;
	snprintf(buf, len, "this process holds %llu memory mappings, %llu%% of the host's limit "
		 "(vm.max_map_count = %llu): guest RAM on scattered 4 KiB frames takes one mapping "
		 "per run of adjacent frames, and at the limit the next guest page cannot be mapped "
		 "and its VM fails. Raise the limit (sysctl -w vm.max_map_count=%llu), or keep "
		 "2 MiB assembly on (--huge on): a 2 MiB range on one block is one mapping",
		 (unsigned long long)mappings,
		 (unsigned long long)(mappings * 100 / limit), (unsigned long long)limit,
		 (unsigned long long)(limit * 4));
	return 1;
}

static json_t *assembly_json(struct vm *vm, const struct range_census *c)
{
	const struct vm_migstats *m = &vm->migstats;
	json_t *j = json_pack("{s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
		"enabled", vm->cfg.huge, "ranges", (json_int_t)c->ranges,
		"ranges_touched", (json_int_t)c->touched,
		"ranges_full", (json_int_t)c->full,
		"ranges_huge", (json_int_t)c->huge,
		"assembled", (json_int_t)m->ranges_assembled,
		"assembled_onto_host_huge", (json_int_t)m->ranges_onto_huge,
		"split", (json_int_t)m->ranges_split,
		"fail_no_block", (json_int_t)m->assemble_fail_nomem,
		"fail_busy", (json_int_t)m->assemble_fail_busy);

	/* the ranges now, each in one state: they add up to "ranges" */
	json_object_update_new(j, json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
		"ranges_on_block", (json_int_t)c->on_block,
		"ranges_sampled", (json_int_t)c->sampled,
		"ranges_full_4k", (json_int_t)c->full_4k,
		"ranges_partly_touched", (json_int_t)c->partly,
		"partly_touched_bytes", (json_int_t)(c->partly_pages << MM_PAGE_SHIFT),
		"ranges_untouched", (json_int_t)c->untouched,
		"ranges_given_back", (json_int_t)c->given_back,
		"target_pct", (json_int_t)vm->cfg.huge_target,
		"collapse_failed", (json_int_t)m->collapse_fail));
	return j;
}

static json_t *vm_json(struct vm *vm, const struct walk *w, uint8_t *touched)
{
	const struct vm_migstats *m = &vm->migstats;
	uint64_t pop = vm_populated_pages(vm) << MM_PAGE_SHIFT;
	uint64_t blocks[MIGRATE_TYPES] = { 0 }, mixed = 0;
	uint64_t frames[MIGRATE_TYPES] = { 0 };
	uint64_t in_type[MIGRATE_TYPES] = { 0 };
	uint64_t mappings, huge, kbytes, limit = report_max_map_count();
	int64_t kernel = vm_huge_bytes_kernel(vm, &mappings);
	struct range_census rc;
	json_t *j;

	memset(touched, 0, w->nr);
	vm_frames(vm, touched, frames);
	for (uint64_t pb = 0; pb < w->nr; pb++) {
		const struct mm_pageblock_info *i = &w->pbi[pb];

		if (!touched[pb])
			continue;
		blocks[i->mt]++;
		in_type[i->mt] += i->used_pages;
		if (i->alloc_types & (i->alloc_types - 1))
			mixed++;
	}
	range_census(vm, &rc);
	huge = rc.huge << MM_PAGEBLOCK_SHIFT;
	kbytes = kernel >= 0 ? (uint64_t)kernel : 0;
	j = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:b}",
		"name", vm->cfg.name, "status", vm_state_name(vm_get_state(vm)),
		"ram_bytes", (json_int_t)vm->cfg.ram_bytes,
		"populated_bytes", (json_int_t)pop,
		"huge_backed_bytes", (json_int_t)kbytes,
		"huge_backed_bytes_bookkeeping", (json_int_t)huge,
		/* of populated RAM: 0..100 (the SVG, older readers), 0..1; and of all RAM */
		"huge_backed_pct", pop ? 100.0 * (double)kbytes / (double)pop : 0.0,
		"huge_backed_ratio", pop ? (double)kbytes / (double)pop : 0.0,
		"huge_backed_ratio_of_ram", vm->cfg.ram_bytes ?
			(double)kbytes / (double)vm->cfg.ram_bytes : 0.0,
		"kernel_agrees", kernel >= 0 && (uint64_t)kernel == huge);
	/* smaps unreadable: the two sources cannot be compared, not disagreeing */
	if (kernel < 0)
		json_object_set_new(j, "kernel_agrees", json_null());
	json_object_set_new(j, "huge_backing_limit", huge_limit_json(vm));
	json_object_set_new(j, "free_errors", json_integer((json_int_t)__atomic_load_n(
		&m->free_errors, __ATOMIC_RELAXED)));
	/* on a 2 MiB block, mapped by one PMD or not yet */
	json_object_set_new(j, "assembled_bytes", json_integer(
		(json_int_t)((rc.huge + rc.on_block + rc.sampled) << MM_PAGEBLOCK_SHIFT)));
	json_object_set_new(j, "frames_by_type", by_type(frames));
	json_object_set_new(j, "pages_in_pageblocks_of_type", by_type(in_type));
	json_object_set_new(j, "pageblocks_by_type", by_type(blocks));
	json_object_set_new(j, "mixed_pageblocks", json_integer((json_int_t)mixed));
	/* every 4 KiB page not next to its neighbour's frame is a host VMA */
	json_object_set_new(j, "host_mappings", json_integer((json_int_t)mappings));
	json_object_set_new(j, "process_mappings",
			    json_integer((json_int_t)report_process_mappings()));
	json_object_set_new(j, "max_map_count", json_integer((json_int_t)limit));
	json_object_set_new(j, "map_count_warn_at",
			    json_integer((json_int_t)report_map_count_warn_at(limit)));
	json_object_set_new(j, "migrations", json_pack(
		"{s:I, s:I, s:{s:I, s:I, s:I}, s:I, s:I, s:f, s:f, s:I}",
		"pages", (json_int_t)m->pages, "bytes", (json_int_t)m->bytes,
		"failures", "busy", (json_int_t)m->fail_busy, "gone", (json_int_t)m->fail_gone,
		"other", (json_int_t)m->fail_other,
		"stalls", (json_int_t)vm->mig.nr_stalls,
		"stall_samples", (json_int_t)(vm->mig.nr_stalls < VM_STALL_SAMPLES ?
					      vm->mig.nr_stalls : VM_STALL_SAMPLES),
		"stall_p50_us", vm_stall_percentile(vm, 50) / 1e3,
		"stall_p99_us", vm_stall_percentile(vm, 99) / 1e3,
		"range_max_us", (json_int_t)(m->range_ns_max / 1000)));
	/* a stall is timed from the earliest moment its write can have happened */
	json_object_set_new(json_object_get(j, "migrations"), "stall_timed_from",
			    json_string("earliest possible fault (an upper bound)"));
	json_object_set_new(json_object_get(j, "migrations"), "stalls_unrecorded",
			    json_integer((json_int_t)vm->mig.stalls_unrecorded));
	json_object_set_new(j, "assembly", assembly_json(vm, &rc));
	json_object_set_new(j, "first_touch", first_touch_json(vm));
	if (vm->pool->client)
		json_object_set_new(j, "pool_client", json_pack("{s:I, s:I, s:b}",
			"cached_frames", (json_int_t)pool_client_cached(vm->pool->client),
			"refused_frames", (json_int_t)pool_client_refused(vm->pool->client),
			"service_gone", pool_client_gone(vm->pool->client)));
	json_object_set_new(j, "memory", memory_json(vm));
	json_object_set_new(j, "balloon", balloon_json(vm));
	json_object_set_new(j, "virtio", virtio_json(vm));
	json_object_set_new(j, "net", net_json(vm));
	return j;
}

/* One character per pageblock, for the picture. */
static json_t *map_json(const struct walk *w, const uint32_t *owners, unsigned int nr)
{
	char *types = malloc(w->nr + 1), *owner = malloc(w->nr + 1), *huge = malloc(w->nr + 1);
	json_t *j;

	if (!types || !owner || !huge) {
		free(types);
		free(owner);
		free(huge);
		return json_null();
	}
	for (uint64_t pb = 0; pb < w->nr; pb++) {
		const struct mm_pageblock_info *i = &w->pbi[pb];
		bool mixed = i->alloc_types & (i->alloc_types - 1);

		types[pb] = !i->used_pages ? '.' : mixed ? 'x' : type_char[i->mt];
		owner[pb] = i->owner == MM_NO_OWNER ? '.' : i->owner == MM_OWNER_MIXED ? '*' : '?';
		for (unsigned int v = 0; v < nr && v < 36; v++)
			if (i->owner == owners[v])
				owner[pb] = "0123456789abcdefghijklmnopqrstuvwxyz"[v];
		huge[pb] = i->whole ? 'H' : '.';
	}
	types[w->nr] = owner[w->nr] = huge[w->nr] = '\0';
	j = json_pack("{s:s, s:s, s:s}", "types", types, "owners", owner, "huge", huge);
	free(types);
	free(owner);
	free(huge);
	return j;
}

json_t *report_build(struct pool *pool, struct vm **vms, unsigned int nr,
		     bool map)
{
	return report_build_owners(pool, vms, nr, map, NULL, 0);
}

json_t *report_build_owners(struct pool *pool, struct vm **vms, unsigned int nr, bool map,
			    const uint32_t *others, unsigned int nr_others)
{
	uint32_t owners[36];
	unsigned int nr_owners = 0;
	struct walk w = { .nr = pool_frames(pool) >> MM_PAGEBLOCK_ORDER };
	json_t *arr = json_array(), *root;
	struct mm_stats st;
	uint8_t *touched;

	w.pbi = calloc(w.nr, sizeof(*w.pbi));
	touched = calloc(w.nr, 1);
	/* a VM process whose pool service is gone still reports itself */
	if (pool->client && pool_client_gone(pool->client) && w.pbi && touched) {
		for (unsigned int i = 0; i < nr; i++)
			json_array_append_new(arr, vm_json(vms[i], &w, touched));
		free(w.pbi);
		free(touched);
		return json_pack("{s:o, s:{s:s}}", "vms", arr, "host", "error",
				 "the pool service is gone: this VM keeps what it has");
	}
	if (!w.pbi || !touched || pool_pageblock_walk(pool, collect, &w) ||
	    pool_stats(pool, &st)) {
		free(w.pbi);
		free(touched);
		json_decref(arr);
		return NULL;
	}
	for (unsigned int i = 0; i < nr; i++) {
		json_t *v = vm_json(vms[i], &w, touched);

		/* its index among the picture's owners (map_json below) */
		json_object_set_new(v, "map_owner", json_integer(i));
		json_array_append_new(arr, v);
	}
	root = json_pack("{s:o, s:o}", "vms", arr, "host", host_json(pool, &st));
	for (unsigned int i = 0; i < nr && nr_owners < 36; i++)
		owners[nr_owners++] = vms[i]->owner;
	for (unsigned int i = 0; i < nr_others && nr_owners < 36; i++)
		owners[nr_owners++] = others[i];
	if (map)
		json_object_set_new(root, "map", map_json(&w, owners, nr_owners));
	free(w.pbi);
	free(touched);
	return root;
}

static double mib(json_t *o, const char *key)
{
	return (double)json_integer_value(json_object_get(o, key)) / (1 << 20);
}

static json_int_t num(json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

static double real(json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

static const char *str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "?";
}

/* "VM NAME (status): how much of its RAM is on 2 MiB host pages". */
static void print_headline_text(json_t *v, FILE *f)
{
	fprintf(f, "VM %s (%s): %.0f MiB RAM; %.1f MiB of it touched, %.1f MiB of that on 2 MiB "
		"host pages (%.1f%% of touched, %.1f%% of RAM)\n", str(v, "name"), str(v, "status"),
		mib(v, "ram_bytes"), mib(v, "populated_bytes"), mib(v, "huge_backed_bytes"),
		100.0 * real(v, "huge_backed_ratio"), 100.0 * real(v, "huge_backed_ratio_of_ram"));
	if (json_is_false(json_object_get(v, "kernel_agrees")))
		fprintf(f, "  [the kernel's smaps and gpmm's bookkeeping DISAGREE: %.1f MiB on 2 MiB "
			"pages by gpmm's count]\n", mib(v, "huge_backed_bytes_bookkeeping"));
	if (json_is_string(json_object_get(v, "huge_backing_limit")))
		fprintf(f, "  huge backing limited: %s\n", str(v, "huge_backing_limit"));
}

/* Why whole ranges wait on 4 KiB pages: every cause the report can see. */
static void why_whole_4k(json_t *a, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	if (!json_is_true(json_object_get(a, "enabled")))
		n += (size_t)snprintf(buf + n, len - n,
				      "; 2 MiB assembly is off for this VM (--huge off)");
	else if (num(a, "target_pct") < 100)
		n += (size_t)snprintf(buf + n, len - n, "; it assembles up to --huge-target %lld%% "
				      "of its touched RAM", num(a, "target_pct"));
	if (n < len && num(a, "fail_no_block"))
		n += (size_t)snprintf(buf + n, len - n, "; %lld tries since start found no free "
				      "2 MiB block", num(a, "fail_no_block"));
	if (n < len && num(a, "fail_busy"))
		n += (size_t)snprintf(buf + n, len - n, "; %lld tries since start found a page "
				      "busy (pinned, or being moved)", num(a, "fail_busy"));
	if (!n)
		snprintf(buf, len, "; the assembler has not reached them yet");
}

/* The touched RAM not on 2 MiB pages, and the RAM not touched, with the reasons. */
static void print_rest_text(json_t *v, FILE *f)
{
	json_t *a = json_object_get(v, "assembly");
	const char *sep = "";
	char why[512];

	fputs("  why not the rest:", f);
	if (num(v, "ram_bytes") > num(v, "populated_bytes")) {
		fprintf(f, " %.1f MiB of RAM never touched, or given back by the guest: nothing "
			"to back", mib(v, "ram_bytes") - mib(v, "populated_bytes"));
		sep = ";";
	}
	if (num(a, "ranges_partly_touched")) {
		fprintf(f, "%s %.1f MiB on 4 KiB pages in %lld partly touched 2 MiB ranges (a range "
			"is assembled once the guest has touched all 512 of its pages)", sep,
			mib(a, "partly_touched_bytes"), num(a, "ranges_partly_touched"));
		sep = ";";
	}
	if (num(a, "ranges_full_4k")) {
		why_whole_4k(a, why, sizeof(why));
		fprintf(f, "%s %lld whole ranges still on 4 KiB pages (%s)", sep,
			num(a, "ranges_full_4k"), why + 2);
		sep = ";";
	}
	if (num(a, "ranges_on_block")) {
		fprintf(f, "%s %lld ranges on a 2 MiB block that the kernel has not mapped as one "
			"huge page (MADV_COLLAPSE refused %lld times since start)", sep,
			num(a, "ranges_on_block"), num(a, "collapse_failed"));
		sep = ";";
	}
	if (num(a, "ranges_sampled")) {
		fprintf(f, "%s %lld ranges on a 2 MiB block mapped by 4 KiB pages while the reclaim "
			"clock write-protects them (their first write maps them huge again)", sep,
			num(a, "ranges_sampled"));
		sep = ";";
	}
	fputs(*sep ? "\n" : " nothing: all of its RAM is on 2 MiB host pages\n", f);
	fprintf(f, "  2 MiB ranges now: %lld on 2 MiB host pages, %lld whole on 4 KiB pages, "
		"%lld partly touched, %lld untouched (%lld of them given back by the guest)",
		num(a, "ranges_huge"), num(a, "ranges_full_4k"), num(a, "ranges_partly_touched"),
		num(a, "ranges_untouched"), num(a, "ranges_given_back"));
	if (num(a, "ranges_on_block"))
		fprintf(f, ", %lld on a block not mapped huge", num(a, "ranges_on_block"));
	if (num(a, "ranges_sampled"))
		fprintf(f, ", %lld on a block the clock samples", num(a, "ranges_sampled"));
	fprintf(f, "; %lld in all\n", num(a, "ranges"));
}

static void print_first_touch_text(json_t *t, FILE *f)
{
	bool is_auto = !strcmp(str(t, "policy"), "auto");

	if (!strcmp(str(t, "policy"), "4k") && !num(t, "huge_ranges")) {
		fputs("  first touches since start (--fault 4k): every one took 4 KiB pages,"
		      " as the policy says; assembly makes 2 MiB of them\n", f);
		return;
	}
	fprintf(f, "  first touches since start (--fault %s): %lld ranges backed whole by a free "
		"2 MiB block", str(t, "policy"), num(t, "huge_ranges"));
	if (num(t, "huge_ranges"))
		fprintf(f, " (each counts 2 MiB touched, however much of it the guest wrote; "
			"%lld of them already zero from the kernel, zeroing the others took %.1f ms)",
			num(t, "kernel_zeroed"), (double)num(t, "zero_us") / 1e3);
	fprintf(f, ", %lld got 4 KiB pages for want of a free block%s\n", num(t, "fell_back_to_4k"),
		is_auto ? " to spare (auto leaves the pool's last 1/16 of blocks to assembly)" : "");
}

static void print_assembly_text(json_t *a, json_t *m, FILE *f)
{
	fprintf(f, "  assembly since start (%s): %lld ranges moved live onto a 2 MiB block "
		"(%lld onto blocks already host huge pages: no copy by the kernel), %lld split "
		"back to 4 KiB; tries that failed: %lld found no free 2 MiB block, %lld a busy page",
		json_is_true(json_object_get(a, "enabled")) ? "on" : "off",
		num(a, "assembled"), num(a, "assembled_onto_host_huge"), num(a, "split"),
		num(a, "fail_no_block"), num(a, "fail_busy"));
	if (num(a, "assembled"))
		fprintf(f, "; the slowest assembly took %.1f ms (getting its block, compaction "
			"included, copying, collapsing)", (double)num(m, "range_max_us") / 1e3);
	fputc('\n', f);
}

static void print_moves_text(json_t *a, json_t *m, FILE *f)
{
	json_t *fail = json_object_get(m, "failures");
	json_int_t in_ranges = num(a, "assembled") * MM_PAGEBLOCK_PAGES;

	fprintf(f, "  pages moved live since start: %lld (%.1f MiB): %lld by assemblies, %lld one "
		"by one (compaction); failed: busy %lld, gone %lld, other %lld; ", num(m, "pages"),
		mib(m, "bytes"), in_ranges, num(m, "pages") - in_ranges, num(fail, "busy"),
		num(fail, "gone"), num(fail, "other"));
	if (!num(m, "stalls"))
		fputs("no vCPU stalled on a page being moved\n", f);
	else
		fprintf(f, "vCPUs stalled %lld times on a page being moved: p50 %.1f us, p99 %.1f us "
			"(an upper bound)\n", num(m, "stalls"), real(m, "stall_p50_us"),
			real(m, "stall_p99_us"));
}

static void print_placement_text(json_t *v, FILE *f)
{
	json_t *pb = json_object_get(v, "pageblocks_by_type");
	json_int_t maps = num(v, "process_mappings"), at = num(v, "map_count_warn_at");

	fprintf(f, "  host pageblocks holding its RAM: %lld (%lld Movable, %lld Reclaimable, %lld "
		"Unmovable), %lld of them mixing types; host mappings: %lld for its RAM, %lld in "
		"its process, of at most %lld (vm.max_map_count)%s\n",
		num(pb, "Movable") + num(pb, "Reclaimable") + num(pb, "Unmovable"),
		num(pb, "Movable"), num(pb, "Reclaimable"), num(pb, "Unmovable"),
		num(v, "mixed_pageblocks"), num(v, "host_mappings"), maps, num(v, "max_map_count"),
		at && maps >= at ? ": NEAR THE LIMIT, raise vm.max_map_count" : "");
}

static void print_memory_text(json_t *v, FILE *f)
{
	json_t *m = json_object_get(v, "memory"), *s = json_object_get(m, "swap");
	json_t *bp = json_object_get(m, "balloon_pressure");

	if (!m)
		return;
	fprintf(f, "  memory: %.1f MiB promised, %.1f MiB backed (%.1f MiB cold by the reclaim "
		"clock), %.1f MiB swapped out; balloon pressure holds %.1f MiB (%lld asks, %lld "
		"given back)", mib(m, "promised_bytes"), mib(m, "used_bytes"),
		mib(m, "reclaimable_bytes"), mib(m, "swapped_bytes"), mib(bp, "taken_bytes"),
		num(bp, "steps"), num(bp, "relaxes"));
	if (!json_is_true(json_object_get(m, "swap_on"))) {
		fputs("; swap off\n", f);
		return;
	}
	fprintf(f, "; swap: %lld ranges out (%lld whole 2 MiB blocks; %lld in the background, the "
		"rest at a fault; %.1f ms in all), %lld pages out (%lld zero, no write), %lld back "
		"(%lld ranges whole; %.1f ms reading), %lld back within 10 s, %lld ranges "
		"write-protected by the clock (%lld found written), %lld reclaims found nothing, "
		"%lld file errors; lumpy reclaim took %lld pages one by one to free pageblocks "
		"(%lld asked for looked in use and were moved instead)\n",
		num(s, "out_ranges"), num(s, "out_blocks"), num(s, "background_ranges"),
		num(s, "out_us") / 1000.0, num(s, "out_pages"), num(s, "zero_pages"),
		num(s, "in_pages"), num(s, "in_ranges"), num(s, "in_us") / 1000.0,
		num(s, "refaults_10s"), num(s, "armed_ranges"), num(s, "armed_written"),
		num(s, "reclaim_failed"), num(s, "errors"), num(s, "lumpy_pages"),
		num(s, "lumpy_declined"));
}

static void print_balloon_text(json_t *v, FILE *f)
{
	json_t *b = json_object_get(v, "balloon"), *d;
	size_t i;

	if (json_is_true(json_object_get(b, "present")))
		fprintf(f, "  balloon: target %.1f MiB, guest keeps %.1f MiB; %lld pages inflated, "
			"%lld deflated, %.1f MiB reported free\n", mib(b, "target_bytes"),
			mib(b, "actual_bytes"), num(b, "inflated_pages"), num(b, "deflated_pages"),
			mib(b, "reported_bytes"));
	fprintf(f, "  given back by the guest since start: %.1f MiB to the pool (%lld whole 2 MiB "
		"blocks among it) in %lld discards, %lld failed\n", mib(b, "returned_bytes"),
		num(b, "blocks_returned"), num(b, "discards"), num(b, "discard_failed"));
	json_array_foreach(json_object_get(v, "virtio"), i, d)
		fprintf(f, "  %s at 0x%llx (GSI %lld): status 0x%02llx, %lld notifies, "
			"%lld broken rings, %lld bad register accesses, %lld resets\n",
			str(d, "name"), (unsigned long long)num(d, "base"), num(d, "gsi"),
			(unsigned long long)num(d, "status"), num(d, "notifies"),
			num(d, "bad_rings"), num(d, "bad_accesses"), num(d, "resets"));
	json_array_foreach(json_object_get(v, "net"), i, d)
		fprintf(f, "  net %s%s: received %lld packets (%.1f MiB), sent %lld (%.1f MiB); "
			"dropped %lld in, %lld out; %lld refused by the tap\n", str(d, "mac"),
			json_is_true(json_object_get(d, "offloads")) ? " (offloads)" : "",
			num(d, "rx_packets"), mib(d, "rx_bytes"), num(d, "tx_packets"),
			mib(d, "tx_bytes"), num(d, "rx_dropped"), num(d, "tx_dropped"),
			num(d, "tx_errors"));
}

/* A VM in another process: the pool service's count of its frames. */
static void print_process_text(json_t *p, FILE *f)
{
	if (!p)
		return;
	fprintf(f, "  process %lld (owner %lld): the pool counts %lld frames owned (%.1f MiB), "
		"the service %lld lent, quota %lld; %lld moves asked, %lld answered late; ",
		num(p, "pid"), num(p, "owner"), num(p, "frames_owned"),
		(double)num(p, "frames_owned") / 256.0, num(p, "frames_held"), num(p, "quota_frames"),
		num(p, "moves_asked"), num(p, "moves_late"));
	if (json_is_integer(json_object_get(p, "report_age_ms")))
		fprintf(f, "report %lld ms old\n", num(p, "report_age_ms"));
	else
		fputs("no report yet\n", f);
}

/*
 * A tenant of the pool that is no VM (gpmm fragmenting-tenant): it holds
 * frames and answers moves, and has no RAM, faults or huge backings to
 * speak of.
 */
static void print_tenant_text(json_t *t, FILE *f)
{
	json_t *p = json_object_get(t, "process");

	fprintf(f, "pool tenant %s (not a VM; process %lld, owner %lld): holds %lld pages "
		"(%.1f MiB) of the pool by the pool's count, %lld by the service's, quota %lld; "
		"%lld moves asked of it, %lld answered late\n", str(t, "name"), num(p, "pid"),
		num(p, "owner"), num(p, "frames_owned"), (double)num(p, "frames_owned") / 256.0,
		num(p, "frames_held"), num(p, "quota_frames"), num(p, "moves_asked"),
		num(p, "moves_late"));
}

static void print_service_text(json_t *s, FILE *f)
{
	if (!s)
		return;
	fprintf(f, "pool service on %s: %lld client process%s, %.0f MiB lent (%.0f MiB admitted"
		" with the daemon's own VMs, of %.0f MiB it may lend); %lld connections, %lld refused, %lld bad messages, "
		"%lld walks refused; %lld frames given back by processes that ended, %lld taken "
		"back from %lld processes that died holding them; %lld moves timed out (answer "
		"within %lld ms)\n",
		str(s, "socket"), num(s, "clients"), num(s, "clients") == 1 ? "" : "es",
		mib(s, "lent_bytes"), mib(s, "admitted_bytes"), mib(s, "lendable_bytes"),
		num(s, "connections"),
		num(s, "refused"), num(s, "bad_messages"), num(s, "walks_refused"),
		num(s, "frames_released"), num(s, "frames_reclaimed"),
		num(s, "clients_died_holding_frames"), num(s, "moves_timed_out"),
		num(s, "answer_ms"));
}

static void print_vm_text(json_t *v, FILE *f)
{
	json_t *a = json_object_get(v, "assembly"), *m = json_object_get(v, "migrations");

	/* a VM process that has not reported yet: its name and the pool's count */
	if (!json_object_get(v, "ram_bytes")) {
		fprintf(f, "VM %s (%s): no report from its process yet\n", str(v, "name"),
			str(v, "status"));
		print_process_text(json_object_get(v, "process"), f);
		return;
	}
	print_headline_text(v, f);
	if (a)
		print_rest_text(v, f);
	if (json_is_object(json_object_get(v, "first_touch")))
		print_first_touch_text(json_object_get(v, "first_touch"), f);
	if (a && m) {
		print_assembly_text(a, m, f);
		print_moves_text(a, m, f);
	}
	print_placement_text(v, f);
	print_memory_text(v, f);
	print_balloon_text(v, f);
	print_process_text(json_object_get(v, "process"), f);
}

/* Free 2 MiB blocks, or why there is none; and how scattered the free memory is. */
static void print_pool_text(json_t *h, FILE *f)
{
	fprintf(f, "host pool %.0f MiB: %.1f MiB free", mib(h, "pool_bytes"), mib(h, "free_bytes"));
	if (real(h, "overcommit") > 1.0 && json_object_get(h, "promised_bytes"))
		fprintf(f, ", %.0f MiB promised of %.0f it lends (overcommit %.2f)",
			mib(h, "promised_bytes"), mib(h, "lendable_bytes"), real(h, "overcommit"));
	fputs("; ", f);
	if (num(h, "free_blocks_2m"))
		fprintf(f, "%lld free 2 MiB blocks now", num(h, "free_blocks_2m"));
	else if (num(h, "free_bytes"))
		fprintf(f, "no free 2 MiB block: fragmentation index(9) %.3f (toward 1 the lack is "
			"fragmentation, which compaction undoes; toward 0 it is free memory)",
			real(h, "fragmentation_index_9"));
	else
		fputs("no free memory", f);
	fprintf(f, "; %.1f%% of the free memory in pieces under 2 MiB (unusable index(9) %.3f); "
		"%lld pageblocks mixing types; grouping by mobility %s\n",
		100.0 * real(h, "unusable_index_9"), real(h, "unusable_index_9"),
		num(h, "mixed_pageblocks"),
		json_is_true(json_object_get(h, "grouping")) ? "on" : "off");
}

static void print_host_memory_text(json_t *m, FILE *f)
{
	fprintf(f, "host memory: RSS %.1f MiB (the memfd, by the kernel) for %.1f MiB allocated "
		"+ %.1f MiB cached; %lld pageblocks backed, %lld of them host huge pages; the pool "
		"gave %lld free pageblocks (%.1f MiB) back to the host since start (",
		mib(m, "rss_bytes"), mib(m, "allocated_bytes"), mib(m, "cached_bytes"),
		num(m, "pageblocks"), num(m, "huge_pageblocks"), num(m, "given_back_pageblocks"),
		(double)num(m, "given_back_pageblocks") * (MM_PAGEBLOCK_SIZE >> 20));
	if (num(m, "release_ms"))
		fprintf(f, "each once free %lld to %lld ms)\n", num(m, "release_ms"),
			2 * num(m, "release_ms"));
	else
		fputs("never: --pool-release-ms 0)\n", f);
	if (num(m, "made_huge_failed"))
		fprintf(f, "  %lld pageblocks could not be made host huge pages: %s\n",
			num(m, "made_huge_failed"), str(m, "huge_error"));
}

static void print_host_work_text(json_t *c, FILE *f)
{
	fprintf(f, "pool work since start: direct compaction %lld times for a 2 MiB block "
		"(%lld made one, %lld did not), background compaction woken %lld times; %lld pages "
		"moved (%lld failed); lumpy reclaim freed %lld blocks in %lld tries; %lld blocks "
		"reclaimed (%lld kept by their owners or failed); %lld blocks taken for unmovable "
		"allocations (%lld claims deferred after failures)\n",
		num(c, "compact_stall"), num(c, "compact_success"), num(c, "compact_fail"),
		num(c, "kcompactd_wake"), num(c, "pgmigrate_success"), num(c, "pgmigrate_fail"),
		num(c, "lumpy_success"), num(c, "lumpy_attempt"), num(c, "reclaim_success"),
		num(c, "reclaim_fail"), num(c, "claim_block"), num(c, "claim_deferred"));
}

void report_print_text(json_t *report, FILE *f)
{
	json_t *h = json_object_get(report, "host"), *v;
	size_t i;

	json_array_foreach(json_object_get(report, "vms"), i, v)
		print_vm_text(v, f);
	json_array_foreach(json_object_get(report, "tenants"), i, v)
		print_tenant_text(v, f);
	if (json_object_get(h, "error")) {
		fprintf(f, "host pool: %s\n", str(h, "error"));
		return;
	}
	print_service_text(json_object_get(report, "pool_service"), f);
	print_pool_text(h, f);
	print_host_memory_text(json_object_get(h, "host_memory"), f);
	print_host_work_text(json_object_get(h, "counters"), f);
}

void report_print_tables(json_t *report, FILE *f)
{
	json_t *h = json_object_get(report, "host");
	const char *bi = json_string_value(json_object_get(h, "buddyinfo_text"));
	const char *pti = json_string_value(json_object_get(h, "pagetypeinfo_text"));

	if (!bi || !pti)
		return;
	fprintf(f, "the pool's free lists, as Linux's /proc/buddyinfo then /proc/pagetypeinfo "
		"(free blocks of order 0..%d: 4 KiB << order; order 9 is 2 MiB):\n%s%s",
		MM_MAX_ORDER - 1, bi, pti);
}

static const char *const vm_colours[] = {
	"#1565c0", "#ef6c00", "#00838f", "#6d4c41", "#c2185b", "#558b2f",
};

static const char *cell_fill(char t)
{
	switch (t) {
	case 'M': return "#66bb6a";
	case 'R': return "#ffca28";
	case 'U': return "#e53935";
	case 'x': return "#8e24aa";
	default: return "#eeeeee";
	}
}

static const char *owner_stroke(char o)
{
	if (o == '.')
		return "none";
	if (o == '*')
		return "#000000";
	if (o >= '0' && o <= '9')
		return vm_colours[(o - '0') % 6];
	if (o >= 'a' && o <= 'z')
		return vm_colours[(o - 'a' + 10) % 6];
	return "#607d8b";
}

/*
 * Text width in an SVG, measured conservatively so that the picture can
 * be sized to its text, without a font at hand: the advance of each
 * glyph, in thousandths of the font size, at least what DejaVu Sans
 * (Debian's sans-serif; checked against its hmtx table for every
 * printable ASCII glyph) and Verdana, a wide sans-serif, give it.
 * Bytes past ASCII (a UTF-8 name) count as the widest glyph. And never
 * less than 0.62 em a character, more than either font's average for
 * the report's text.
 */
static unsigned int glyph_width_permille(unsigned char c)
{
	if (c >= 0x80 || c == '%')
		return 1080;
	if (strchr(" .,:;'!|ijl()[]fIJrt-/\\", c))
		return 460;
	if (strchr("mwMW@", c))
		return 1000;
	if (c >= 'A' && c <= 'Z')
		return 800;
	if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
		return 640;
	return 840;
}

static unsigned int svg_text_width(const char *s, unsigned int font_px)
{
	unsigned long w = 0, floor = 620 * strlen(s);

	for (const char *p = s; *p; p++)
		w += glyph_width_permille((unsigned char)*p);
	w = w > floor ? w : floor;
	return (unsigned int)((w * font_px + 999) / 1000);
}

/* @s with the five characters XML reserves escaped: a name may hold them. */
static void svg_put_escaped(const char *s, FILE *f)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '\'': fputs("&apos;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

#define SVG_FONT_PX		12
#define SVG_TITLE_PX		14
#define SVG_MARGIN		10
#define SVG_LEGEND_KEYS		5
#define SVG_MAX_LINES		64	/* VMs and tenants in the legend */

/* The legend's line for one VM or tenant, and its map owner's colour. */
static const char *svg_owner_line(json_t *v, bool tenant, char *buf, size_t len)
{
	json_t *p = json_object_get(v, "process");

	if (tenant)
		snprintf(buf, len, "tenant %s (not a VM): %lld pages, %.1f MiB of the pool",
			 str(v, "name"), num(p, "frames_owned"),
			 (double)num(p, "frames_owned") / 256.0);
	else if (!json_object_get(v, "ram_bytes"))
		snprintf(buf, len, "VM %s: no report from its process yet", str(v, "name"));
	else
		snprintf(buf, len, "VM %s: %.1f%% of %.0f MiB touched on 2 MiB pages",
			 str(v, "name"), real(v, "huge_backed_pct"), mib(v, "populated_bytes"));
	return vm_colours[num(v, "map_owner") % 6];
}

static const char svg_keys_note[] =
	"H: one 2 MiB allocation (a huge backing); black outline: several owners";

/* Every line of the legend under the map, one per VM and tenant. */
static size_t svg_owner_lines(json_t *report, char (*lines)[256], const char **colour,
			      size_t max)
{
	static const char *const lists[] = { "vms", "tenants" };
	size_t n = 0, i;
	json_t *v;

	for (size_t l = 0; l < 2; l++)
		json_array_foreach(json_object_get(report, lists[l]), i, v)
			if (n < max) {
				colour[n] = svg_owner_line(v, l == 1, lines[n], sizeof(lines[n]));
				n++;
			}
	return n;
}

static void svg_legend(FILE *f, int y, char (*lines)[256], const char **colour, size_t n)
{
	static const struct { char t; const char *label; } key[SVG_LEGEND_KEYS] = {
		{ '.', "free" }, { 'M', "movable" }, { 'R', "reclaimable" },
		{ 'U', "unmovable" }, { 'x', "mixed types" },
	};
	int x = SVG_MARGIN;

	for (size_t k = 0; k < SVG_LEGEND_KEYS; k++, x += 120)
		fprintf(f, "<rect x='%d' y='%d' width='14' height='14' fill='%s'/>"
			"<text x='%d' y='%d'>%s</text>\n", x, y, cell_fill(key[k].t),
			x + 18, y + 12, key[k].label);
	y += 22;
	for (size_t i = 0; i < n; i++, y += 20) {
		fprintf(f, "<rect x='%d' y='%d' width='14' height='14' fill='none' stroke='%s' "
			"stroke-width='3'/><text x='%d' y='%d'>", SVG_MARGIN, y, colour[i],
			SVG_MARGIN + 18, y + 12);
		svg_put_escaped(lines[i], f);
		fputs("</text>\n", f);
	}
	fprintf(f, "<text x='%d' y='%d'>%s</text>\n", SVG_MARGIN, y + 12, svg_keys_note);
}

/* Wide enough for the map, the title and every legend line, measured. */
static unsigned int svg_width(size_t map_px, const char *title, char (*lines)[256], size_t n)
{
	unsigned int w = (unsigned int)map_px + 2 * SVG_MARGIN, t;

	if (w < 640)
		w = 640;
	/* the keys: five of 120 px, the last label included */
	t = SVG_MARGIN + 120 * (SVG_LEGEND_KEYS - 1) + 18 +
	    svg_text_width("mixed types", SVG_FONT_PX) + SVG_MARGIN;
	w = t > w ? t : w;
	t = 2 * SVG_MARGIN + svg_text_width(title, SVG_TITLE_PX);
	w = t > w ? t : w;
	t = 2 * SVG_MARGIN + svg_text_width(svg_keys_note, SVG_FONT_PX);
	w = t > w ? t : w;
	for (size_t i = 0; i < n; i++) {
		t = 2 * SVG_MARGIN + 18 + svg_text_width(lines[i], SVG_FONT_PX);
		w = t > w ? t : w;
	}
	return w;
}

/*
 * The pool at a glance: one square per 2 MiB pageblock, coloured by what
 * is allocated in it, outlined by the VM that owns it, H where a VM's
 * 2 MiB backing fills it whole.
 */
int report_write_svg(json_t *report, FILE *f)
{
	json_t *map = json_object_get(report, "map");
	json_t *hm = json_object_get(json_object_get(report, "host"), "host_memory");
	const char *types = json_string_value(json_object_get(map, "types"));
	const char *owners = json_string_value(json_object_get(map, "owners"));
	const char *huge = json_string_value(json_object_get(map, "huge"));
	char (*lines)[256];
	const char *colour[SVG_MAX_LINES];
	char title[256];
	size_t n, cols, rows, cell, nr_lines;
	unsigned int width;
	int height;

	if (!types || !owners || !huge)
		return -1;
	lines = calloc(SVG_MAX_LINES, sizeof(*lines));
	if (!lines)
		return -1;
	n = strlen(types);
	cols = n <= 1024 ? 32 : 128;
	cell = n <= 1024 ? 18 : 8;
	rows = (n + cols - 1) / cols;
	snprintf(title, sizeof(title), "gpmm pool: %zu pageblocks of 2 MiB, unusable index(9) "
		 "%.3f, host RSS %.1f MiB for %.1f MiB allocated", n,
		 real(json_object_get(report, "host"), "unusable_index_9"), mib(hm, "rss_bytes"),
		 mib(hm, "allocated_bytes"));
	nr_lines = svg_owner_lines(report, lines, colour, SVG_MAX_LINES);
	width = svg_width(cols * cell, title, lines, nr_lines);
	height = (int)(rows * cell) + 60 + 20 * (int)nr_lines + 50;
	fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%u' height='%d' "
		"viewBox='0 0 %u %d' font-family='sans-serif' font-size='%d'>\n", width, height,
		width, height, SVG_FONT_PX);
	fprintf(f, "<rect width='100%%' height='100%%' fill='white'/>\n");
	fprintf(f, "<text x='%d' y='20' font-size='%d'>%s</text>\n", SVG_MARGIN, SVG_TITLE_PX,
		title);
	for (size_t i = 0; i < n; i++) {
		size_t x = SVG_MARGIN + (i % cols) * cell, y = 30 + (i / cols) * cell;

		fprintf(f, "<rect x='%zu' y='%zu' width='%zu' height='%zu' fill='%s' stroke='%s' "
			"stroke-width='2'/>", x + 1, y + 1, cell - 2, cell - 2,
			cell_fill(types[i]), owner_stroke(owners[i]));
		if (huge[i] == 'H' && cell >= 12)
			fprintf(f, "<text x='%zu' y='%zu' font-size='10' fill='white'>H</text>",
				x + cell / 2 - 3, y + cell / 2 + 4);
		fputc('\n', f);
	}
	svg_legend(f, 40 + (int)(rows * cell), lines, colour, nr_lines);
	fprintf(f, "</svg>\n");
	free(lines);
	return ferror(f) ? -1 : 0;
}
