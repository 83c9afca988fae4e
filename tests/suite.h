/* SPDX-License-Identifier: GPL-2.0 */
/* A CUnit suite from a table of tests: every suite file registers this way. */
#ifndef GPMM_TESTS_SUITE_H
#define GPMM_TESTS_SUITE_H

#include <CUnit/CUnit.h>
#include <stddef.h>

struct suite_test {
	const char *name;
	CU_TestFunc fn;
};

static inline int suite_register(const char *name, const struct suite_test *tests,
				 size_t n)
{
	CU_pSuite s = CU_add_suite(name, NULL, NULL);

	if (!s)
		return CU_get_error();
	for (size_t i = 0; i < n; i++)
		if (!CU_add_test(s, tests[i].name, tests[i].fn))
			return CU_get_error();
	return CUE_SUCCESS;
}

#define SUITE(name, tests) suite_register(name, tests, sizeof(tests) / sizeof(tests[0]))

#endif
