// SPDX-License-Identifier: GPL-2.0
/* The SVG checks the report's tests share (tests/svg_check.h). */
#include <stdio.h>
#include <string.h>

#include "tests/svg_check.h"

static unsigned int plain_text_width(size_t n, unsigned int px)
{
	return (unsigned int)(n * px * 6 / 10);
}

bool svg_text_fits(const char *svg)
{
	unsigned int vw = 0, vh = 0;
	const char *p = strstr(svg, "viewBox='0 0 ");
	bool fits = true;

	if (!p || sscanf(p, "viewBox='0 0 %u %u'", &vw, &vh) != 2) {
		fputs("\n  no viewBox in the picture", stderr);
		return false;
	}
	for (p = strstr(svg, "<text "); p; p = strstr(p + 1, "<text ")) {
		unsigned int x = 0, px = 12;
		const char *body = strchr(p, '>'), *end = strstr(p, "</text>"), *fs;

		if (!body || !end || sscanf(p, "<text x='%u'", &x) != 1)
			return false;
		fs = strstr(p, "font-size='");
		if (fs && fs < body)
			sscanf(fs, "font-size='%u'", &px);
		if (x + plain_text_width((size_t)(end - body - 1), px) > vw) {
			fprintf(stderr, "\n  past the right edge (%u): %.*s", vw,
				(int)(end - body - 1), body + 1);
			fits = false;
		}
	}
	return fits;
}
