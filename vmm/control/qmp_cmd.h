/* SPDX-License-Identifier: GPL-2.0 */
/*
 * QMP commands as tables (qmp.c: gpmm's own and QEMU's basic ones;
 * qmp_qemu.c: what libvirt's QEMU driver asks a QEMU it started). A
 * command returns its reply's "return" value, or NULL with the error.
 */
#ifndef GPMM_QMP_CMD_H
#define GPMM_QMP_CMD_H

#include <jansson.h>
#include <stdbool.h>

struct conn;
struct dvm;

struct qmp_err {
	const char *cls;	/* QEMU's error class: GenericError, ... */
	char desc[256];
};

struct qmp_cmd {
	const char *name;
	json_t *(*fn)(struct conn *c, json_t *args, struct qmp_err *e);
	bool daemon_only;	/* not on a VM's own socket */
};

extern const struct qmp_cmd qmp_cmds[];
extern const struct qmp_cmd qmp_qemu_cmds[];

/* Fill @e; returns NULL, for `return qmp_fail(...)`. */
json_t *qmp_fail(struct qmp_err *e, const char *cls, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The VM a command is about: the socket's own, or "vm": NAME, or the only one. */
struct dvm *qmp_target_vm(struct conn *c, json_t *args, struct qmp_err *e);
/* The same, but failing when that VM has ended (its dvm still listed, the vm gone). */
struct dvm *qmp_target_live(struct conn *c, json_t *args, struct qmp_err *e);

#endif
