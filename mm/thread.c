// SPDX-License-Identifier: GPL-2.0
/*
 * mm/'s own threads (kcompactd, page reporting): a worker that does one
 * pass of its work every interval until it is stopped.
 *
 * They start with every signal blocked: a library thread must never be
 * the one a process signal is delivered to. A VMM that waits for SIGTERM
 * with a signalfd, or handles it on its main thread, would otherwise be
 * killed by the default action taken on a thread it does not know about.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

#include "mm/internal.h"

struct mm_worker {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
	unsigned int interval_ms;
	mm_work_fn work;
	struct mm_pool *pool;
	void *arg;
};

static void deadline_after(struct timespec *ts, unsigned int ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/* The work runs without the worker's lock: stopping never waits on a pass's lock. */
static void *worker_fn(void *arg)
{
	struct mm_worker *w = arg;

	pthread_mutex_lock(&w->lock);
	while (!w->stop) {
		struct timespec ts;

		deadline_after(&ts, w->interval_ms);
		pthread_cond_timedwait(&w->cond, &w->lock, &ts);
		if (w->stop)
			break;
		pthread_mutex_unlock(&w->lock);
		w->work(w->pool, w->arg);
		pthread_mutex_lock(&w->lock);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

int mm_worker_start(struct mm_worker **out, struct mm_pool *pool, unsigned int interval_ms,
		    mm_work_fn work, void *arg, const char *name)
{
	struct mm_worker *w = calloc(1, sizeof(*w));
	sigset_t all, old;
	int ret;

	if (!w)
		return -ENOMEM;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	w->interval_ms = interval_ms;
	w->work = work;
	w->pool = pool;
	w->arg = arg;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(&w->thread, NULL, worker_fn, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		pthread_mutex_destroy(&w->lock);
		pthread_cond_destroy(&w->cond);
		free(w);
		return ret;
	}
	pthread_setname_np(w->thread, name);
	*out = w;
	return 0;
}

void mm_worker_stop(struct mm_worker *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
	free(w);
}
