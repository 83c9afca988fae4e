/* SPDX-License-Identifier: GPL-2.0 */
/* What the unit and integration suites check of the report's SVG picture. */
#ifndef GPMM_TESTS_SVG_CHECK_H
#define GPMM_TESTS_SVG_CHECK_H

#include <stdbool.h>

/*
 * Every <text> of @svg ends inside its viewBox, counting 0.6 em a
 * character (DejaVu Sans' advance for lowercase text; the report's own
 * measure is stricter, so its text must fit this one). A line that does
 * not fit is named on stderr.
 */
bool svg_text_fits(const char *svg);

#endif
