/* SPDX-License-Identifier: GPL-2.0 */
/*
 * QMP framing, shared by the server (qmp.c) and the client (qmp_client.c):
 * JSON values one after another on a stream, with any whitespace between.
 */
#ifndef GPMM_QMP_WIRE_H
#define GPMM_QMP_WIRE_H

#include "vmm/core/compiler.h"

#include <jansson.h>
#include <stddef.h>

/*
 * Decode the first message of @buf[0..@len). Returns 1 with *@msg set and
 * *@used the bytes it took (leading whitespace included); 0 when the bytes
 * end inside a message (read more; *@used = whitespace skipped); -1 on a
 * parse error. @flags go to json_loadb (e.g. JSON_DECODE_ANY).
 */
__must_check int qmp_wire_decode(const char *buf, size_t len, size_t flags, json_t **msg,
		    size_t *used);
/*
 * Room for at least 4 KiB more after @len bytes, doubling the buffer up to
 * @max; -ENOBUFS past @max (a message that large is refused), -ENOMEM.
 */
__must_check int qmp_wire_grow(char **buf, size_t *cap, size_t len, size_t max);

#endif
