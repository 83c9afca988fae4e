/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A VM console captured into memory, for those who read a guest's output
 * in-process (benchmarks, tests) instead of on a terminal.
 */
#ifndef GPMM_CONSOLE_BUF_H
#define GPMM_CONSOLE_BUF_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

struct console_buf {
	pthread_mutex_t lock;
	char text[16384];	/* what does not fit is dropped */
	size_t len;
};

void console_buf_init(struct console_buf *c);
/* A vm_console_fn: attach with vm->console = console_buf_write. */
void console_buf_write(void *opaque, const char *buf, size_t len);
bool console_buf_has(struct console_buf *c, const char *needle);

#endif
