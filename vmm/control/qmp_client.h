/* SPDX-License-Identifier: GPL-2.0 */
/* The CLI's side of QMP: connect, negotiate, execute, read events. */
#ifndef GPMM_QMP_CLIENT_H
#define GPMM_QMP_CLIENT_H

#include "vmm/core/compiler.h"
#include "vmm/control/qmp_wire.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * A daemon that stops answering must not hang the CLI: every read waits
 * at most QMPC_ANSWER_TIMEOUT seconds unless qmpc_wait_forever() said
 * otherwise (a client that follows a VM's events for its whole life).
 */
#define QMPC_ANSWER_TIMEOUT	120

struct qmp_client {
	int fd;
	char *buf;
	size_t len, cap;
	struct qmp_framer framer;	/* where the message in buf stands */
	bool timed_out;		/* the last read gave up waiting */
};

__must_check int qmpc_connect(struct qmp_client *q, const char *path, char *err, size_t errlen);
void qmpc_close(struct qmp_client *q);
void qmpc_wait_forever(struct qmp_client *q);
/* Next message (reply or event); NULL when the peer is gone. */
json_t *qmpc_read(struct qmp_client *q);
/*
 * Run a command and return its "return" value (new reference), or NULL
 * with the error's text in @err. Events that arrive meanwhile go to
 * @on_event when given, else are dropped.
 */
json_t *qmpc_execute(struct qmp_client *q, const char *cmd, json_t *args,
		     void (*on_event)(json_t *ev, void *opaque), void *opaque,
		     char *err, size_t errlen);

/* Where sockets live: $GPMM_RUN_DIR, else /run/gpmm (made 0700). */
const char *gpmm_run_dir(void);
/* Where a VM looks for the host pool service by default (a static buffer). */
const char *gpmm_pool_socket(void);

#endif
