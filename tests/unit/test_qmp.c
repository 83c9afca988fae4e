// SPDX-License-Identifier: GPL-2.0
/*
 * QMP on a connection, through qmp_input as the daemon loop calls it, over
 * a socketpair: no VM needs to run for what is tested here.
 */
#define _GNU_SOURCE
#include <CUnit/CUnit.h>
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "vmm/control/daemon.h"
#include "vmm/control/qmp_wire.h"
#include "tests/suite.h"

/*
 * A VM that ended in this round of the daemon loop: finish_vm dropped its
 * vm and marked its socket's connections dead, but the dvm is listed until
 * reap() and a command already on the wire is still handled. Every command
 * about the VM must answer an error then, not follow the NULL vm (found by
 * the qmp fuzz target: query-memory-size-summary did).
 */
static void test_ended_vm(void)
{
	static const char *const cmds[] = {
		"query-status", "stop", "cont", "query-memory-size-summary", "query-name",
		"query-balloon", "query-gpmm-balloon", "query-fragmentation",
		"query-cpus-fast", "query-stats", "quit", "system_powerdown",
	};
	struct daemon d = { 0 };
	struct dvm v = { .d = &d, .vm = NULL, .ended = true, .qmp_fd = -1 };
	/* finish_vm marked it dead, but then qmp_send would keep the replies from us */
	struct conn c = { .d = &d, .vm = &v, .negotiated = true };
	char buf[8192];
	int sv[2];

	CU_ASSERT_FATAL(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	d.vms = &v;
	d.conns = &c;
	c.fd = sv[0];
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		ssize_t n;

		n = snprintf(buf, sizeof(buf), "{\"execute\":\"%s\",\"arguments\":"
			     "{\"target\":\"vm\"}}", cmds[i]);
		CU_ASSERT_FATAL(write(sv[1], buf, (size_t)n) == n);
		CU_ASSERT_EQUAL(qmp_input(&c), 0);
		n = recv(sv[1], buf, sizeof(buf) - 1, MSG_DONTWAIT);
		CU_ASSERT(n > 0);
		buf[n > 0 ? n : 0] = '\0';
		if (strncmp(cmds[i], "quit", 4) && strncmp(cmds[i], "system_", 7) &&
		    !strstr(buf, "\"error\"")) {
			fprintf(stderr, "\n  %s answered: %s", cmds[i], buf);
			CU_FAIL("a command about an ended VM is refused");
		}
	}
	close(sv[0]);
	close(sv[1]);
	free(c.buf);
	free(c.out);
}

/* A connection over a socketpair, as the daemon loop would have it. */
struct qmp_pipe {
	struct daemon d;
	struct conn c;
	int peer;
};

static void pipe_open(struct qmp_pipe *p, bool negotiated)
{
	int sv[2];

	memset(p, 0, sizeof(*p));
	CU_ASSERT_FATAL(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	p->c = (struct conn){ .d = &p->d, .fd = sv[0], .negotiated = negotiated };
	p->d.conns = &p->c;
	p->peer = sv[1];
}

static void pipe_close(struct qmp_pipe *p)
{
	close(p->c.fd);
	close(p->peer);
	free(p->c.buf);
	free(p->c.out);
}

/* @len bytes of @s to the daemon, @piece at a time, each read by qmp_input. */
static int pipe_feed(struct qmp_pipe *p, const char *s, size_t len, size_t piece)
{
	for (size_t off = 0; off < len; off += piece) {
		size_t n = len - off < piece ? len - off : piece;

		CU_ASSERT_FATAL(write(p->peer, s + off, n) == (ssize_t)n);
		if (qmp_input(&p->c))
			return -1;
	}
	return 0;
}

/* Everything the daemon has written so far, as one string (caller frees). */
static char *pipe_replies(struct qmp_pipe *p)
{
	size_t cap = 1 << 16, len = 0;
	char *out = malloc(cap);
	ssize_t n;

	CU_ASSERT_FATAL(out != NULL);
	for (;;) {
		if (cap - len < 4096) {
			cap *= 2;
			out = realloc(out, cap);
			CU_ASSERT_FATAL(out != NULL);
		}
		n = recv(p->peer, out + len, cap - len - 1, MSG_DONTWAIT);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	out[len] = '\0';
	return out;
}

/*
 * Whether the replies so far hold @want and (when not NULL) @also; what
 * they held instead goes to stderr.
 */
static bool replies_say(struct qmp_pipe *p, const char *want, const char *also)
{
	char *out = pipe_replies(p);
	bool ok = strstr(out, want) && (!also || strstr(out, also));

	if (!ok)
		fprintf(stderr, "\n  replies: %s", out);
	free(out);
	return ok;
}

/* Bytes jansson allocated, while counting is on. */
static size_t jansson_bytes;

static void *counting_malloc(size_t n)
{
	jansson_bytes += n;
	return malloc(n);
}

/*
 * A command of 128 KiB (its id one long string) arrives 64 bytes per read.
 * Decoding must cost in proportion to the message: what jansson allocates
 * stays within a small multiple of its size (re-parsing the buffer on
 * every read allocated each partial string again: ~n^2/128 bytes), and
 * the framer scans each byte once and parses once. The reply echoes the
 * whole id: nothing of the message is lost.
 */
static void test_large_command_linear(void)
{
	const size_t idlen = 128 << 10;
	size_t len = idlen + 64;
	char *cmd = malloc(len), *id = malloc(idlen + 1), *out;
	json_malloc_t old_malloc;
	json_free_t old_free;
	struct qmp_pipe p;
	json_t *reply;

	CU_ASSERT_FATAL(cmd && id);
	for (size_t i = 0; i < idlen; i++)
		id[i] = "ab{}[]:, "[i % 9];
	id[idlen] = '\0';
	len = (size_t)snprintf(cmd, len, "{\"execute\": \"qmp_capabilities\", \"id\": \"%s\"}\r\n", id);
	pipe_open(&p, false);
	json_get_alloc_funcs(&old_malloc, &old_free);
	json_set_alloc_funcs(counting_malloc, free);
	jansson_bytes = 0;
	CU_ASSERT_EQUAL(pipe_feed(&p, cmd, len, 64), 0);
	json_set_alloc_funcs(old_malloc, old_free);
	if (jansson_bytes > 16 * len)
		fprintf(stderr, "\n  jansson allocated %zu bytes for a %zu-byte message\n",
			jansson_bytes, len);
	CU_ASSERT(jansson_bytes <= 16 * len);
	CU_ASSERT(p.c.framer.bytes_scanned <= len);
	CU_ASSERT_EQUAL(p.c.framer.parses, 1);
	CU_ASSERT(p.c.negotiated);
	out = pipe_replies(&p);
	reply = json_loads(out, 0, NULL);
	CU_ASSERT_FATAL(reply != NULL);
	CU_ASSERT(json_object_get(reply, "return") != NULL);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(reply, "id")), id);
	json_decref(reply);
	free(out);
	pipe_close(&p);
	free(cmd);
	free(id);
}

/* The framer alone: values split at every byte, several in one buffer. */
static void test_framer_splits(void)
{
	static const char stream[] =
		" {\"a\": \"}\\\"{[\", \"b\": [1, {\"c\": \"\\\\\"}]}\n"
		"[\"x\"]\"str\\\"ing\" 12 true\t{}[1e5, -2.5E-3, false, null]";
	static const char *const want[] = {
		"{\"a\": \"}\\\"{[\", \"b\": [1, {\"c\": \"\\\\\"}]}",
		"[\"x\"]", "\"str\\\"ing\"", "12", "true", "{}", "[1e5, -2.5E-3, false, null]",
	};
	size_t total = sizeof(stream) - 1;

	for (size_t piece = 1; piece <= total; piece++) {
		struct qmp_framer f = { 0 };
		char buf[sizeof(stream)];
		size_t len = 0, fed = 0, nmsg = 0;

		while (fed < total || len) {
			json_t *msg = NULL;
			size_t used = 0;
			int got;

			if (fed < total) {
				size_t n = total - fed < piece ? total - fed : piece;

				memcpy(buf + len, stream + fed, n);
				len += n;
				fed += n;
			}
			got = qmp_wire_decode(&f, buf, len, JSON_DECODE_ANY, &msg, &used);
			CU_ASSERT_FATAL(got >= 0);
			memmove(buf, buf + used, len - used);
			len -= used;
			if (!got) {
				if (fed == total)
					break;
				continue;
			}
			CU_ASSERT_FATAL(nmsg < sizeof(want) / sizeof(want[0]));
			{
				json_t *w = json_loads(want[nmsg], JSON_DECODE_ANY, NULL);

				CU_ASSERT(json_equal(msg, w));
				json_decref(w);
			}
			json_decref(msg);
			nmsg++;
		}
		CU_ASSERT_EQUAL(nmsg, sizeof(want) / sizeof(want[0]));
		CU_ASSERT_EQUAL(f.parses, nmsg);
		/* a bare token's end is looked at once more, as what follows it */
		CU_ASSERT(f.bytes_scanned <= total + nmsg);
	}
}

/*
 * Bad input: a complete value that is not JSON gets "JSON parse error"
 * and the next command on the connection is still answered; a message
 * that never ends gets a sentence before the connection closes.
 */
static void test_malformed(void)
{
	static const char bad[] = "{\"execute\": nope}";
	static const char good[] = "{\"execute\": \"qmp_capabilities\", \"id\": 7}";
	static const char version[] = "{\"execute\": \"query-version\", \"id\": 8}";
	struct qmp_pipe p;
	char *chunk;
	int ret = 0;

	pipe_open(&p, false);
	CU_ASSERT_EQUAL(pipe_feed(&p, bad, sizeof(bad) - 1, 3), 0);
	CU_ASSERT(replies_say(&p, "JSON parse error", NULL));
	CU_ASSERT_EQUAL(pipe_feed(&p, good, sizeof(good) - 1, 5), 0);
	CU_ASSERT(replies_say(&p, "\"return\"", "\"id\":7"));
	/*
	 * garbage in an object that never closes: refused at the garbage, not
	 * waited on (it swallowed every later command when only brackets were
	 * counted); the next command is answered
	 */
	CU_ASSERT_EQUAL(pipe_feed(&p, "{bad json\n", 10, 10), 0);
	CU_ASSERT(replies_say(&p, "JSON parse error", NULL));
	CU_ASSERT_EQUAL(pipe_feed(&p, version, sizeof(version) - 1, 5), 0);
	CU_ASSERT(replies_say(&p, "\"qemu\"", "\"id\":8"));
	/* a string that never closes: refused at the message limit, with why */
	chunk = malloc(4096);
	CU_ASSERT_FATAL(chunk != NULL);
	memset(chunk, 'x', 4096);
	CU_ASSERT_EQUAL(pipe_feed(&p, "{\"execute\": \"", 13, 13), 0);
	for (int i = 0; i < 1024 && !ret; i++)
		ret = pipe_feed(&p, chunk, 4096, 4096);
	CU_ASSERT_EQUAL(ret, -1);
	CU_ASSERT(replies_say(&p, "longer than", NULL));
	free(chunk);
	pipe_close(&p);
}

static const struct suite_test tests[] = {
	{ "commands about a VM that has just ended", test_ended_vm },
	{ "a large command in small reads decodes in linear time", test_large_command_linear },
	{ "the framer: values split anywhere", test_framer_splits },
	{ "malformed and endless messages: a clear error", test_malformed },
};

int register_qmp_suite(void)
{
	return SUITE("qmp", tests);
}
