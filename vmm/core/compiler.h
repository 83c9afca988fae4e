/* SPDX-License-Identifier: GPL-2.0 */
/* Attributes the VMM's headers share (mm/mm.h defines the same one). */
#ifndef GPMM_COMPILER_H
#define GPMM_COMPILER_H

/* A result that says whether it worked: the caller must look at it. */
#ifndef __must_check
#define __must_check		__attribute__((warn_unused_result))
#endif

#endif
