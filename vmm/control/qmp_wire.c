// SPDX-License-Identifier: GPL-2.0
/*
 * QMP framing (qmp_wire.h): one JSON value at a time off a stream. The
 * framer finds where a value ends by scanning its bytes once, keeping its
 * place across reads, and hands jansson only a whole value: a message
 * arriving in many small reads costs what it would in one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/control/qmp_wire.h"

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/*
 * What ends a bare token (number, true, false, null, garbage) at the top:
 * until one comes, the token may go on in the next read.
 */
static bool ends_token(char c)
{
	return is_space(c) || (c && strchr("{}[]\",:", c));
}

/*
 * Whether @c, outside a string, can still be part of a JSON value: a
 * letter only while the bare word it extends begins true, false or null.
 * A byte that cannot ends the value where it stands, so that garbage in
 * an open object ("{bad json") is refused at once, not waited on until a
 * closing brace that may never come.
 */
static bool can_be_json(struct qmp_framer *f, char c)
{
	static const char *const words[] = { "true", "false", "null" };

	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
		if (f->word_len >= sizeof(f->word) - 1)
			return false;
		f->word[f->word_len++] = c;
		f->word[f->word_len] = '\0';
		for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
			if (!strncmp(words[i], f->word, f->word_len))
				return true;
		/* an exponent: 1e5, 2E-3 */
		return f->word_len == 1 && (c == 'e' || c == 'E');
	}
	f->word_len = 0;
	return is_space(c) || (c >= '0' && c <= '9') || (c && strchr("{}[]:,\"-+.", c));
}

/*
 * One byte of a value that opened with '{', '[' or '"'; true when it was
 * the value's last. Brackets are only counted, not matched: "{]" is a
 * value to jansson, which refuses it.
 */
static bool scan_nested(struct qmp_framer *f, char c)
{
	if (f->in_string) {
		if (f->escaped)
			f->escaped = false;
		else if (c == '\\')
			f->escaped = true;
		else if (c == '"')
			f->in_string = false;
		return !f->in_string && !f->depth;
	}
	if (!can_be_json(f, c))
		return true;	/* jansson says why not */
	if (c == '"')
		f->in_string = true;
	else if (c == '{' || c == '[')
		f->depth++;
	else if (c == '}' || c == ']')
		return --f->depth == 0;
	return false;
}

/*
 * Scan @buf[@from..@len) for the end of the value that starts at @buf[0];
 * its length, or 0 while it goes on past @len.
 */
static size_t scan(struct qmp_framer *f, const char *buf, size_t from, size_t len)
{
	char first = buf[0];

	for (size_t i = from; i < len; i++) {
		f->bytes_scanned++;
		if (i == 0 && first == '"') {
			f->in_string = true;
			continue;
		}
		if (first == '{' || first == '[' || first == '"') {
			if (scan_nested(f, buf[i]))
				return i + 1;
		} else if (i == 0 && ends_token(first)) {
			return 1;	/* '}', ']', ':' or ',' alone: jansson says why not */
		} else if (ends_token(buf[i])) {
			return i;
		}
	}
	/* a bare token (12, true) may go on in the next read, as a value may */
	return 0;
}

static void framer_restart(struct qmp_framer *f)
{
	f->started = false;
	f->scanned = 0;
	f->depth = 0;
	f->in_string = false;
	f->escaped = false;
	f->word_len = 0;
}

int qmp_wire_decode(struct qmp_framer *f, const char *buf, size_t len, size_t flags,
		    json_t **msg, size_t *used)
{
	json_error_t jerr;
	size_t off = 0, end;

	if (!f->started) {
		while (off < len && is_space(buf[off])) {
			f->bytes_scanned++;
			off++;
		}
		*used = off;
		if (off == len)
			return 0;
		f->started = true;
	}
	*used = off;
	end = scan(f, buf + off, f->scanned, len - off);
	if (!end) {
		f->scanned = len - off;
		return 0;
	}
	framer_restart(f);
	f->parses++;
	*msg = json_loadb(buf + off, end, flags, &jerr);
	if (!*msg)
		return -1;
	*used = off + end;
	return 1;
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
