// SPDX-License-Identifier: GPL-2.0
/*
 * The status line is redrawn at most every PROGRESS_PERIOD_NS: a loop
 * doing 10^4 migrations a second must not spend its time on a terminal,
 * and a person cannot read faster anyway. The line is cut to the
 * terminal's width, because a wrapped line cannot be rewritten with \r.
 */
#include <stdarg.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "bench/progress.h"
#include "vmm/core/vm.h"

#define PROGRESS_PERIOD_NS	200000000ULL

void progress_init(struct progress *p, bool json)
{
	p->on = !json && isatty(STDERR_FILENO);
	p->next_ns = 0;
	p->shown = 0;
	p->what[0] = '\0';
}

static int term_columns(void)
{
	struct winsize ws;

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) || ws.ws_col < 2)
		return 80;
	return ws.ws_col;
}

static void draw(struct progress *p, const char *detail)
{
	char line[260];
	int len, cols = term_columns() - 1;

	len = snprintf(line, sizeof(line), "%s%s%s", p->what,
		       detail[0] ? ": " : "", detail);
	if (len >= (int)sizeof(line))
		len = sizeof(line) - 1;
	if (len > cols)
		len = cols;
	fprintf(stderr, "\r%.*s%*s", len, line, p->shown > len ? p->shown - len : 0, "");
	p->shown = len;
	p->next_ns = vm_now_ns() + PROGRESS_PERIOD_NS;
}

void progress_phase(struct progress *p, const char *fmt, ...)
{
	va_list ap;

	if (!p || !p->on)
		return;
	va_start(ap, fmt);
	vsnprintf(p->what, sizeof(p->what), fmt, ap);
	va_end(ap);
	draw(p, "");
}

void progress_tick(struct progress *p, const char *fmt, ...)
{
	char detail[160];
	va_list ap;

	if (!p || !p->on || vm_now_ns() < p->next_ns)
		return;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	draw(p, detail);
}

void progress_clear(struct progress *p)
{
	if (!p || !p->on || !p->shown)
		return;
	fprintf(stderr, "\r%*s\r", p->shown, "");
	p->shown = 0;
}
