/* SPDX-License-Identifier: GPL-2.0 */
/*
 * QMP framing, shared by the server (qmp.c) and the client (qmp_client.c):
 * JSON values one after another on a stream, with any whitespace between.
 */
#ifndef GPMM_QMP_WIRE_H
#define GPMM_QMP_WIRE_H

#include "vmm/core/compiler.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Where the framing of the message being read stands, kept between reads
 * (zeroed to start): each byte is scanned once, and jansson parses only a
 * whole value, so a message costs O(its size) however it is split.
 */
struct qmp_framer {
	bool started;		/* the message's first byte is @buf[0] from now on */
	size_t scanned;		/* bytes of it scanned so far */
	unsigned int depth;	/* '{' and '[' open */
	bool in_string, escaped;
	char word[6];		/* the bare word (true, false, null) being read */
	unsigned char word_len;
	/* the work done, for tests */
	uint64_t bytes_scanned;	/* bytes looked at */
	uint64_t parses;	/* whole values handed to jansson */
};

/*
 * Decode the first message of @buf[0..@len). Returns 1 with *@msg set and
 * *@used the bytes it took (leading whitespace included); 0 when the bytes
 * end inside a message (read more; *@used = whitespace skipped); -1 when
 * the message is complete but not JSON. The next call's @buf must start
 * *@used bytes further on, with the same bytes after that and any new ones
 * appended. @flags go to json_loadb (e.g. JSON_DECODE_ANY).
 */
__must_check int qmp_wire_decode(struct qmp_framer *f, const char *buf, size_t len,
				 size_t flags, json_t **msg, size_t *used);
/*
 * Room for at least 4 KiB more after @len bytes, doubling the buffer up to
 * @max; -ENOBUFS past @max (a message that large is refused), -ENOMEM.
 */
__must_check int qmp_wire_grow(char **buf, size_t *cap, size_t len, size_t max);

#endif
