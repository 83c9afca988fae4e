// SPDX-License-Identifier: GPL-2.0
/* QMP framing (qmp_wire.h): one JSON value at a time off a stream. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/control/qmp_wire.h"

int qmp_wire_decode(const char *buf, size_t len, size_t flags, json_t **msg,
		    size_t *used)
{
	json_error_t jerr;
	size_t off = 0;

	while (off < len && strchr(" \t\r\n", buf[off]))
		off++;
	*used = off;
	if (off == len)
		return 0;
	*msg = json_loadb(buf + off, len - off, JSON_DISABLE_EOF_CHECK | flags, &jerr);
	if (*msg) {
		*used = off + (size_t)jerr.position;
		return 1;
	}
	/* an incomplete value waits for more bytes; anything else is garbage */
	if (json_error_code(&jerr) == json_error_premature_end_of_input &&
	    jerr.position >= (int)(len - off) - 1)
		return 0;
	return -1;
}

int qmp_wire_grow(char **buf, size_t *cap, size_t len, size_t max)
{
	size_t want = *cap ? *cap : 8192;
	char *b;

	if (*cap - len >= 4096)
		return 0;
	while (want - len < 4096)
		want *= 2;
	if (want > max)
		return -ENOBUFS;
	b = realloc(*buf, want);
	if (!b)
		return -ENOMEM;
	*buf = b;
	*cap = want;
	return 0;
}
