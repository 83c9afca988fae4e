/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The daemon: one process owning the pool and every VM that runs from it,
 * because fragmentation is a property across VMs. `gpmm run` is a daemon
 * with one foreground VM; `gpmm daemon` serves many over its control
 * socket. One thread (the loop) does all socket I/O.
 */
#ifndef GPMM_DAEMON_H
#define GPMM_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include <limits.h>
#include <stdint.h>

#include "vmm/memory/pool_backend.h"
#include "vmm/control/console.h"
#include "vmm/control/qmp_wire.h"
#include "vmm/core/vm.h"

struct daemon;
struct conn;
struct qemu_cmdline;

/* How a VM joins the daemon (daemon_add_vm). */
struct dvm_opts {
	struct conn *owner;	/* `gpmm run --daemon` client that keeps it, or NULL */
	bool foreground;	/* console on our terminal */
	bool start_paused;	/* QEMU's -S: vCPUs wait for QMP cont */
	int qmp_listen_fd;	/* an inherited listening QMP socket, or -1 */
	int console_log_fd;	/* a copy of the console output, or -1 */
	const struct qemu_cmdline *qemu;	/* libvirt's command line, or NULL */
};

struct dvm {
	struct daemon *d;
	struct vm *vm;
	int qmp_fd;		/* this VM's own QMP socket, or -1 */
	char qmp_path[108];
	int end_efd;		/* written when the VM ends */
	int console_rd;		/* guest serial output, read by the loop */
	int console_wr;
	uint64_t console_dropped;
	struct console con;	/* where the console goes, where keys come from */
	unsigned int resets;	/* guest-initiated restarts so far */
	char keys[4096];	/* console input the guest's UART has not taken yet */
	size_t keys_off, keys_len;
	struct conn *owner;	/* `gpmm run --daemon` client, or NULL */
	bool foreground;	/* console to our stdout */
	const struct qemu_cmdline *qemu;	/* started by libvirt, or NULL */
	const char *stop_reason;	/* QMP SHUTDOWN's reason when the host stopped it */
	bool reset_ends;	/* a guest reset ends the VM (QMP set-action reboot=shutdown) */
	unsigned int stats_period_s;	/* balloon statistics asked for this often, 0: not */
	uint64_t next_stats_ns;
	uint64_t balloon_actual;	/* last told in BALLOON_CHANGE */
	bool ended;
	struct dvm *next;
};

struct conn {
	struct daemon *d;
	int fd;
	struct dvm *vm;		/* connected to a VM's socket, else NULL */
	bool negotiated;
	bool dead;
	char *buf;
	size_t len, cap;
	struct qmp_framer framer;	/* where the message in buf stands */
	char *out;		/* replies and events not yet sent */
	size_t out_len, out_cap;
	struct conn *next;
};

/* QMP connections at once, over every socket of the process. */
#define DAEMON_MAX_CONNS	64

struct daemon {
	struct pool *pool;
	int listen_fd;
	char sock_path[108];
	struct dvm *vms;
	struct conn *conns;
	int sigfd;
	bool quitting;
	bool exit_when_idle;	/* `gpmm run`: leave when the VM is gone */
	int last_exit_code;
	bool verbose;
	bool print_stats;	/* the report of each VM as it ends (gpmm run --stats) */
	bool print_tables;	/* and the pool's buddyinfo and pagetypeinfo under it */
	bool map_count_warned;	/* said once that the process nears vm.max_map_count */
	struct assembler *assembler;
	struct pool_service *svc;	/* lends the pool to VM processes, or NULL */
	char metrics_path[PATH_MAX];	/* Prometheus text, rewritten each tick; "" = none */
	uint64_t next_tick_ns;
	bool sandboxed;		/* under the VMM's seccomp list: vCPUs add theirs */
	uint64_t conns_refused;	/* not the VMM's user, or past DAEMON_MAX_CONNS */
};

__must_check int daemon_init(struct daemon *d, struct pool *pool, const char *sock_path,
		char *err, size_t errlen);
/* Create and start a VM, as @opts say (NULL: no owner, not foreground). */
__must_check int daemon_add_vm(struct daemon *d, const struct vm_config *cfg,
		  const struct dvm_opts *opts, struct dvm **out,
		  char *err, size_t errlen);
/* Stop @v's VM for the host (QMP quit, a signal): SHUTDOWN says @reason. */
void daemon_stop_vm(struct dvm *v, const char *reason, int code);
struct dvm *daemon_find_vm(struct daemon *d, const char *name);
/*
 * The fragmentation report of @vms (this process's) and, with @all, of
 * every VM process the pool service lends to, each as its last report of
 * itself beside the service's own count of its frames.
 */
json_t *daemon_report(struct daemon *d, struct vm **vms, unsigned int nr, bool all, bool map);
int daemon_loop(struct daemon *d);
void daemon_fini(struct daemon *d);


/* qmp.c: the wire protocol on one connection */
void qmp_greet(struct conn *c);
/* Read and handle what arrived; -1 when the peer is gone. */
int qmp_input(struct conn *c);
void qmp_send(struct conn *c, json_t *msg);
/* Send what is queued; -EPIPE when the client is gone (then it is dead). */
int qmp_flush(struct conn *c);
void qmp_event(struct conn *c, const char *name, json_t *data);
/* Send an event to every connection watching @dvm (and its owner). */
void qmp_broadcast_vm(struct daemon *d, struct dvm *dvm, const char *name,
		      json_t *data);

#endif
