// SPDX-License-Identifier: GPL-2.0
/*
 * One host pool for many VM processes (vmm/pool_service/pool_service.c): `gpmm daemon`
 * lends, `gpmm run --host-pool` borrows, `gpmm fragmenting-tenant` fragments. Every
 * figure is checked against a second source: a VM's huge backing against
 * the kernel's smaps of its process, the service's count of a process's
 * frames against what the process itself says it holds, and the whole
 * pool's frames against the sum of the live owners' and the free ones.
 */
#define _GNU_SOURCE
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "tests/integration/harness.h"
#include "tests/suite.h"
#include "tests/svg_check.h"
#include "vmm/pool_service/pool_service.h"

#define POOL_MIB	1024
#define VM_RAM_MIB	10		/* memloop writes 8 MiB of it */
#define FRAG_ONE_IN	4		/* the fragmenter keeps one page in 4 */
/*
 * of most of the pool: as much as admission leaves beside the VMs' 54 MiB,
 * so that the pool's free pageblocks fall a few short of what the VMs
 * back huge and the service must have the fragmenter compact itself
 */
#define FRAG_SPREAD_MIB	976
#define FRAG_PAGES	((FRAG_SPREAD_MIB << 20) / 4096 / FRAG_ONE_IN)
#define NR_VMS		3

static char out[1 << 20];

struct hp_env {
	char ctl[128], pool[128], metrics[128];
	int daemon_pid, frag_pid;
	int vm_pid[NR_VMS];
};

static json_t *first_vm(json_t *r)
{
	return json_array_get(json_object_get(r, "vms"), 0);
}

static json_int_t num(json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

static bool start_service(struct hp_env *e, const char *extra)
{
	char cmd[1024];

	snprintf(e->ctl, sizeof(e->ctl), "%s/hp.sock", test_run_dir());
	snprintf(e->pool, sizeof(e->pool), "%s/hp-pool.sock", test_run_dir());
	snprintf(e->metrics, sizeof(e->metrics), "%s/hp.prom", test_run_dir());
	snprintf(cmd, sizeof(cmd), "%s daemon --socket %s --pool-socket %s --pool %dM "
		 "--metrics %s %s", gpmm_bin(), e->ctl, e->pool, POOL_MIB, e->metrics, extra);
	e->daemon_pid = spawn_bg("hp-daemon", cmd);
	return e->daemon_pid > 0 && log_says("hp-daemon", "lending the pool", 300);
}

static int start_vm(struct hp_env *e, const char *name, bool stall, const char *extra)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "%s %s run --host-pool=%s --kernel %s --ram %dM --name %s "
		 "--console file:%s/%s.con %s", stall ? "env GPMM_TEST_ASSEMBLY_STALL=15" : "",
		 gpmm_bin(), e->pool, payload("memloop"), VM_RAM_MIB, name, test_run_dir(), name,
		 extra);
	return spawn_bg(name, cmd);
}

/* A VM's huge-backed share by its process's smaps, of what it has populated. */
static double smaps_share(const char *name, int pid)
{
	json_t *r = frag_json(name);
	json_int_t pop = num(first_vm(r), "populated_bytes");
	long long kb = smaps_pmd_kb(pid);

	json_decref(r);
	return pop > 0 && kb >= 0 ? 100.0 * (double)kb * 1024 / (double)pop : -1;
}

static bool lost_write(const char *name)
{
	return sh(NULL, 0, "grep -q 'lost write' %s/%s.con", test_run_dir(), name) == 0;
}

static void stop_all(struct hp_env *e)
{
	for (int i = 0; i < NR_VMS; i++)
		if (e->vm_pid[i] > 0)
			kill(e->vm_pid[i], SIGTERM);
	if (e->frag_pid > 0)
		kill(e->frag_pid, SIGTERM);
	sleep(1);
	if (e->daemon_pid > 0)
		kill(e->daemon_pid, SIGTERM);
	sh(NULL, 0, "sleep 1; pkill -KILL -f 'hp-pool.sock' || true");
}

/*
 * The pool's frames add up: free ones and those the pool's walk finds
 * owned by each live process make the whole pool; and each process's
 * count by the pool is what the process itself says it holds.
 */
static bool frames_add_up(struct hp_env *e, json_int_t frag_frames, unsigned int live_vms)
{
	for (int tries = 0; tries < 60; tries++) {
		json_t *r = frag_json(e->ctl), *v;
		json_int_t owned = 0, free_frames;
		unsigned int agree = 0, procs = 0;
		size_t i;

		if (!r)
			continue;
		free_frames = num(json_object_get(r, "host"), "free_bytes") / 4096;
		/* the tenant, listed apart from the VMs */
		json_array_foreach(json_object_get(r, "tenants"), i, v) {
			json_t *p = json_object_get(v, "process");

			owned += num(p, "frames_owned");
			procs++;
			agree += num(p, "frames_owned") == frag_frames;
		}
		json_array_foreach(json_object_get(r, "vms"), i, v) {
			json_t *p = json_object_get(v, "process");
			const char *name = json_string_value(json_object_get(v, "name"));
			json_t *own;

			owned += num(p, "frames_owned");
			procs++;
			/* the VM's own account, asked of its process */
			own = frag_json(name);
			agree += num(p, "frames_owned") ==
				 num(first_vm(own), "populated_bytes") / 4096 +
				 num(json_object_get(first_vm(own), "pool_client"), "cached_frames");
			json_decref(own);
		}
		json_decref(r);
		if (procs == live_vms + 1 && agree == procs &&
		    free_frames + owned == (POOL_MIB << 20) / 4096)
			return true;
		fprintf(stderr, "\n  accounting try %d: %u processes, %u agree, free %lld + "
			"owned %lld of %d frames", tries, procs, agree, (long long)free_frames,
			(long long)owned, (POOL_MIB << 20) / 4096);
		sleep(1);
	}
	return false;
}

static void test_three_vm_processes(void)
{
	static const char *const names[NR_VMS] = { "hp1", "hp2", "hp3" };
	struct hp_env e = { 0 };
	char cmd[512];
	double share[NR_VMS] = { 0 };
	bool killed_mid = false;
	time_t t0 = time(NULL);
	json_t *v;
	int done = 0;

	CU_ASSERT_FATAL(start_service(&e, ""));
	/* the fourth: one page in four of most of the pool, movable */
	snprintf(cmd, sizeof(cmd), "%s fragmenting-tenant --host-pool=%s --spread %d --one-in %d",
		 gpmm_bin(), e.pool, FRAG_SPREAD_MIB, FRAG_ONE_IN);
	e.frag_pid = spawn_bg("fragment", cmd);
	CU_ASSERT_FATAL(log_says("fragment", "ready", 600));
	fprintf(stderr, "\n  fragmenter ready after %ld s", (long)(time(NULL) - t0));
	/* most of the free memory is in the fragmenter's sparse pageblocks */
	v = frag_json(e.ctl);
	CU_ASSERT(json_real_value(json_object_get(json_object_get(v, "host"),
						  "unusable_index_9")) > 0.9);
	json_decref(v);
	/*
	 * The third (32 MiB written: 16 ranges) stops its 16th assembly with
	 * the block in hand (a test hook), past 90%, and is killed there.
	 */
	for (int i = 0; i < NR_VMS; i++) {
		char extra[64] = "";

		if (i == 2)
			snprintf(extra, sizeof(extra), "--ram 34M");
		e.vm_pid[i] = start_vm(&e, names[i], i == 2, extra);
	}
	for (int i = 0; i < NR_VMS; i++)
		CU_ASSERT_FATAL(e.vm_pid[i] > 0);
	/* all three reach 90% by their own smaps; bounded by count, not time */
	for (int t = 0; t < 600 && done != (1 << NR_VMS) - 1; t++) {
		for (int i = 0; i < NR_VMS; i++) {
			if (done & (1 << i))
				continue;
			share[i] = smaps_share(names[i], e.vm_pid[i]);
			if (share[i] >= 90.0)
				done |= 1 << i;
		}
		usleep(300000);
	}
	for (int i = 0; i < NR_VMS; i++) {
		fprintf(stderr, "\n  %s: %.1f%% huge-backed by smaps", names[i], share[i]);
		if (share[i] < 90.0 && sh(out, sizeof(out), "tail -5 %s/%s.log", test_run_dir(),
					  names[i]) == 0)
			fprintf(stderr, "; its log:\n%s", out);
		CU_ASSERT(share[i] >= 90.0);
		CU_ASSERT(!lost_write(names[i]));
	}
	/*
	 * What each VM process can reach of the pool, by the kernel's word:
	 * its own pageblocks' files, RAM plus the quota's slack at most (the
	 * whole pool's memfd, before issue 26, was 1 GiB for each).
	 */
	for (int i = 0; i < NR_VMS; i++) {
		int files = 0;
		long long ram = (i == 2 ? 34 : VM_RAM_MIB) << 20;
		long long slack = POOL_SERVICE_SLACK_FRAMES * 4096LL;
		long long bytes = shared_memory_bytes(e.vm_pid[i], &files);

		fprintf(stderr, "\n  %s reaches %lld MiB of shared memory in %d files (RAM %lld MiB)",
			names[i], bytes >> 20, files, ram >> 20);
		CU_ASSERT(bytes >= 0 && bytes <= ram + slack);
	}
	/* the third is in the middle of an assembly, its block in hand: SIGKILL */
	CU_ASSERT(log_says(names[2], "assembly stalled holding", 300));
	v = frag_json(names[2]);
	killed_mid = num(json_object_get(first_vm(v), "assembly"), "ranges_huge") <
		     num(json_object_get(first_vm(v), "assembly"), "ranges_full");
	fprintf(stderr, "\n  %s killed with %lld of %lld full ranges huge (%ld s in)", names[2],
		(long long)num(json_object_get(first_vm(v), "assembly"), "ranges_huge"),
		(long long)num(json_object_get(first_vm(v), "assembly"), "ranges_full"),
		(long)(time(NULL) - t0));
	json_decref(v);
	kill(e.vm_pid[2], SIGKILL);
	e.vm_pid[2] = 0;
	CU_ASSERT(killed_mid);
	CU_ASSERT(frames_add_up(&e, FRAG_PAGES, 2));
	v = frag_json(e.ctl);
	CU_ASSERT(num(json_object_get(v, "pool_service"), "frames_reclaimed") >= (32 << 20) / 4096);
	fprintf(stderr, "\n  %lld frames taken back from the killed VM's process",
		(long long)num(json_object_get(v, "pool_service"), "frames_reclaimed"));
	CU_ASSERT_EQUAL(num(json_object_get(v, "pool_service"), "clients"), 3);
	json_decref(v);
	/* the two others run on, huge-backed, without a lost write */
	sleep(3);
	for (int i = 0; i < 2; i++) {
		CU_ASSERT_EQUAL(kill(e.vm_pid[i], 0), 0);
		CU_ASSERT(smaps_share(names[i], e.vm_pid[i]) >= 90.0);
		CU_ASSERT(!lost_write(names[i]));
	}
	/* the host-wide report, the picture and the metrics name every process */
	if (sh(out, sizeof(out), "%s frag --qmp %s --svg %s/hp.svg 2>&1 && "
	       "grep -c 'VM hp1' %s/hp.svg", gpmm_bin(), e.ctl, test_run_dir(), test_run_dir())) {
		fprintf(stderr, "\n  svg: %.500s", out);
		CU_FAIL("the picture names hp1");
	}
	fprintf(stderr, "\n  all checked after %ld s", (long)(time(NULL) - t0));
	CU_ASSERT_EQUAL(sh(out, sizeof(out), "cat %s", e.metrics), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "gpmm_vm_huge_backed_bytes{vm=\"hp1\"}"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "gpmm_pool_free_bytes "));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "gpmm_pool_frames_reclaimed_total "));
	/* the fragmenter's pages were moved by the service and kept their contents */
	kill(e.frag_pid, SIGTERM);
	snprintf(cmd, sizeof(cmd), "0 of %d lost", FRAG_PAGES);
	CU_ASSERT(log_says("fragment", cmd, 300));
	CU_ASSERT(!log_says("fragment", ": 0 pages moved", 1));
	e.frag_pid = 0;
	for (int i = 0; i < 2; i++)
		sh(NULL, 0, "%s destroy %s", gpmm_bin(), names[i]);
	/* every frame back in the pool */
	for (int t = 0; t < 100; t++) {
		v = frag_json(e.ctl);
		done = num(json_object_get(v, "host"), "free_bytes") == (POOL_MIB << 20);
		json_decref(v);
		if (done)
			break;
		sleep(1);
	}
	CU_ASSERT(done);
	e.vm_pid[0] = e.vm_pid[1] = 0;
	stop_all(&e);
}

/*
 * The service dies under a running VM: the VM keeps running on what it
 * has and says it cannot grow; a new service starts on the same socket.
 */
static void test_service_dies(void)
{
	struct hp_env e = { 0 };
	json_t *r;

	CU_ASSERT_FATAL(start_service(&e, ""));
	e.vm_pid[0] = start_vm(&e, "orphan", false, "");
	CU_ASSERT_FATAL(e.vm_pid[0] > 0);
	CU_ASSERT_FATAL(log_says("orphan", "host pool service", 300));
	CU_ASSERT(sh(NULL, 0, "for i in $(seq 600); do grep -q touched %s/orphan.con && exit 0; "
		     "sleep 0.2; done; exit 1", test_run_dir()) == 0);
	kill(e.daemon_pid, SIGKILL);
	CU_ASSERT(log_says("orphan", "pool service is gone", 300));
	sleep(2);
	CU_ASSERT_EQUAL(kill(e.vm_pid[0], 0), 0);
	CU_ASSERT(!lost_write("orphan"));
	r = frag_json("orphan");
	CU_ASSERT(json_is_true(json_object_get(json_object_get(first_vm(r), "pool_client"),
					       "service_gone")));
	CU_ASSERT(num(first_vm(r), "populated_bytes") >= 8LL << 20);
	json_decref(r);
	/* a new service replaces the dead one's socket; the orphan stays as it is */
	CU_ASSERT(start_service(&e, ""));
	r = frag_json(e.ctl);
	CU_ASSERT_EQUAL(num(json_object_get(r, "pool_service"), "clients"), 0);
	json_decref(r);
	CU_ASSERT_EQUAL(sh(NULL, 0, "%s destroy orphan", gpmm_bin()), 0);
	e.vm_pid[0] = 0;
	stop_all(&e);
}

/* A VM too big for what the pool has left is refused, and says why. */
static void test_admission(void)
{
	struct hp_env e = { 0 };
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "--allow %s", guests_dir());
	CU_ASSERT_FATAL(start_service(&e, cmd));
	snprintf(cmd, sizeof(cmd), "%s run --host-pool=%s --kernel %s --ram 1030M --name big",
		 gpmm_bin(), e.pool, payload("memloop"));
	CU_ASSERT_EQUAL(sh(out, sizeof(out), "%s 2>&1", cmd), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "larger than the pool"));
	snprintf(cmd, sizeof(cmd), "%s run --host-pool=%s/nosuch.sock --kernel %s --ram 8M",
		 gpmm_bin(), test_run_dir(), payload("memloop"));
	CU_ASSERT_EQUAL(sh(out, sizeof(out), "%s 2>&1", cmd), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "no pool service"));
	/*
	 * The daemon's own VM (gpmm-vm-create) counts in the same admission:
	 * with 1000 MiB of the pool promised to it, a VM process of 64 MiB
	 * does not fit (the service used to count its own clients only).
	 */
	snprintf(cmd, sizeof(cmd), "%s run --daemon %s --kernel %s --ram 1000M --name inproc "
		 "--console file:%s/inproc.con", gpmm_bin(), e.ctl, payload("memloop"),
		 test_run_dir());
	CU_ASSERT(spawn_bg("inproc", cmd) > 0);
	/* its console comes to the client that asked for it: the guest runs */
	if (log_says("inproc", "memloop", 300)) {
		snprintf(cmd, sizeof(cmd), "%s run --host-pool=%s --kernel %s --ram 64M --name late",
			 gpmm_bin(), e.pool, payload("memloop"));
		CU_ASSERT_EQUAL(sh(out, sizeof(out), "%s 2>&1", cmd), 1);
		CU_ASSERT_PTR_NOT_NULL(strstr(out, "do not fit"));
	} else {
		CU_FAIL("the daemon made no VM inproc");
		if (sh(out, sizeof(out), "tail -3 %s/inproc.log", test_run_dir()) == 0)
			fprintf(stderr, "\n  inproc: %s", out);
	}
	stop_all(&e);
}


/* The SVG in @path: its text fits the picture (tests/svg_check.h). */
static bool svg_file_fits(const char *path)
{
	static char svg[1 << 20];

	return !sh(svg, sizeof(svg), "cat %s", path) && svg_text_fits(svg);
}

/*
 * `gpmm frag --socket DAEMON` as an operator reads it, while a VM process
 * and a fragmenting tenant share the daemon's pool: the tenant is listed
 * as a tenant holding pages, not as a VM; no "(null)", no negative age, no
 * disagreement the report did not measure; the picture's text fits it.
 */
static void test_report_with_a_tenant(void)
{
	struct hp_env e = { 0 };
	char cmd[512], svg[256];
	json_t *r = NULL, *v;
	bool reported = false;

	CU_ASSERT_FATAL(start_service(&e, ""));
	snprintf(cmd, sizeof(cmd), "%s fragmenting-tenant --host-pool=%s --spread 64 --one-in 4",
		 gpmm_bin(), e.pool);
	e.frag_pid = spawn_bg("fragment", cmd);
	CU_ASSERT_FATAL(log_says("fragment", "ready", 300));
	e.vm_pid[0] = start_vm(&e, "hpr", false, "");
	CU_ASSERT_FATAL(e.vm_pid[0] > 0);
	/* bounded by count: the VM process's first report reaches the service */
	for (int t = 0; t < 300 && !reported; t++) {
		r = frag_json(e.ctl);
		for (size_t i = 0; (v = json_array_get(json_object_get(r, "vms"), i)); i++)
			if (json_object_get(v, "ram_bytes"))
				reported = true;
		json_decref(r);
		if (!reported)
			usleep(300000);
	}
	CU_ASSERT_FATAL(reported);
	/*
	 * A report taken while a first touch backs a range whole may count it
	 * before the kernel maps it (and says DISAGREE): a second look agrees.
	 */
	for (int i = 0; i < 10; i++) {
		CU_ASSERT_EQUAL(sh(out, sizeof(out), "%s frag --socket %s 2>&1", gpmm_bin(), e.ctl), 0);
		if (!strstr(out, "DISAGREE"))
			break;
		usleep(500000);
	}
	fprintf(stderr, "\n  %.3000s", out);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "pool tenant fragmenting-tenant (not a VM"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "holds 4096 pages"));
	CU_ASSERT_PTR_NULL(strstr(out, "VM fragmenting-tenant"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "VM hpr ("));
	CU_ASSERT_PTR_NULL(strstr(out, "(null)"));
	CU_ASSERT_PTR_NULL(strstr(out, " -1 ms"));
	CU_ASSERT_PTR_NULL(strstr(out, "report -"));
	CU_ASSERT_PTR_NULL(strstr(out, "DISAGREE"));
	snprintf(svg, sizeof(svg), "%s/hpr.svg", test_run_dir());
	CU_ASSERT_EQUAL(sh(out, sizeof(out), "%s frag --socket %s --svg %s 2>&1", gpmm_bin(),
			   e.ctl, svg), 0);
	CU_ASSERT_EQUAL(sh(out, sizeof(out), "grep -c '(null)\\|VM fragmenting-tenant' %s", svg), 1);
	CU_ASSERT_EQUAL(sh(out, sizeof(out), "grep -c 'tenant fragmenting-tenant (not a VM)' %s",
			   svg), 0);
	CU_ASSERT(svg_file_fits(svg));
	kill(e.frag_pid, SIGTERM);
	CU_ASSERT(log_says("fragment", "0 of 4096 lost", 300));
	e.frag_pid = 0;
	sh(NULL, 0, "%s destroy hpr", gpmm_bin());
	e.vm_pid[0] = 0;
	stop_all(&e);
}

static const struct suite_test tests[] = {
	{ "three VM processes on a fragmented service pool", test_three_vm_processes },
	{ "the service dies under a running VM", test_service_dies },
	{ "admission says why", test_admission },
	{ "the report of a pool shared with a tenant", test_report_with_a_tenant },
};

int register_hostpool_suite(void)
{
	return SUITE("hostpool", tests);
}
