/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A pool service client's view of the pool: the files of the pageblocks
 * it holds frames in, and nothing else (pool_files.c).
 */
#ifndef GPMM_POOL_FILES_H
#define GPMM_POOL_FILES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "mm/mm.h"

struct pool_files;

/* A view of @frames frames that maps nothing yet. */
__must_check int pool_files_init(uint64_t frames, struct pool_files **out);
void pool_files_fini(struct pool_files *f);
/* Frame f's bytes are at base + f * 4 KiB while its pageblock is held. */
uint8_t *pool_files_base(const struct pool_files *f);
/* @fd (ours from now) is pageblock @pb's file: mapped, unless it is the one mapped. */
__must_check int pool_files_install(struct pool_files *f, uint64_t pb, int fd);
/* A block of @order at @frame came to us (@held) or went back. */
void pool_files_hold(struct pool_files *f, uint64_t frame, unsigned int order, bool held);
/* Everything went back at once (POOL_RELEASE). */
void pool_files_drop_all(struct pool_files *f);
/* The file and offset behind a frame we hold (not a copy), or -ENOENT. */
int pool_files_fd(struct pool_files *f, uint64_t frame, off_t *off);

#endif
