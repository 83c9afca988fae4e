// SPDX-License-Identifier: GPL-2.0
/*
 * mm/'s own threads (kcompactd, page reporting) start with every signal
 * blocked: a library thread must never be the one a process signal is
 * delivered to. A VMM that waits for SIGTERM with a signalfd, or handles
 * it on its main thread, would otherwise be killed by the default action
 * taken on a thread it does not know about.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>

#include "mm/internal.h"

int mm_thread_start(pthread_t *thread, void *(*fn)(void *), void *arg,
		    const char *name)
{
	sigset_t all, old;
	int ret;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(thread, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!ret)
		pthread_setname_np(*thread, name);
	return ret;
}
