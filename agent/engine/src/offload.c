/* io_submit_mode=offload (fio's meaning, HOWTO "io_submit_mode"): the job thread generates,
 * paces and accounts its I/Os as always, but hands each one to a pool of `iodepth` submission
 * threads of its own, which issue it through the job's ioengine and wait for it. So a psync job
 * with iodepth=8 has up to 8 I/Os in flight (fio's workqueue: one worker per unit of depth, each
 * queueing one io_u and reaping it), and the job thread's pacing never waits on the device.
 *
 * To the worker loop this is an asynchronous engine (run_async): queue() stages, commit() hands
 * the staged requests to the pool, getevents() takes the finished ones back. Each pool thread has
 * a private shadow worker for the real engine (its own libaio context or io_uring ring, created
 * in that thread, since io_uring's single-issuer ring belongs to its creator). Pool threads inherit
 * the job thread's I/O priority, nice value, CPU and memory policy (created after pace.c and
 * numa.c set them). A request's submission time is taken when a pool thread picks it up, so slat
 * holds the hand-off wait, as in fio; its completion is counted when the job thread reaps it.
 * The pool threads' CPU is added to the job's usr_cpu/sys_cpu: what the job costs (fio reports the
 * job thread's alone, RUSAGE_THREAD, so its offloaded job looks nearly free). fio 3.33 refuses
 * io_uring here ("can't be used with offloaded submit"), and so does the engine (options.c); with
 * libaio each pool thread has its own context, as each of fio's workers has. Bounds (--limits):
 * iodepth x numjobs pool threads of one job, at most OFFLOAD_MAX_THREADS; with an asynchronous
 * engine each also holds a private worker (~130 KiB), at most OFFLOAD_MAX_ASYNC_THREADS. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "iowatt.h"

#define OFFLOAD_STACK_BYTES (1u << 20) /* a pool thread only calls the ioengine (ASan builds need more than 64 KiB) */
#define NS_PER_S 1000000000ull

struct offload_ctx;
struct pool_thread {
	struct offload_ctx *c;
	struct worker *shadow;          /* async engines: the engine's view (fd, depth, reqs, its own ctx);
					 * a synchronous engine is called with the job's worker (read only) */
	pthread_t t;
	int started;
};

struct offload_ctx {
	const struct engine_ops *inner;
	struct worker *w;               /* the job thread's worker */
	pthread_mutex_t mu;
	pthread_cond_t more, done_cv, ready_cv;
	struct io_req **pending;        /* ring of depth: handed over, not yet picked up */
	unsigned phead, pn;
	struct io_req **finished;       /* completed, not yet reaped by the job thread */
	unsigned fn;
	struct io_req **staged;         /* queued by the job thread since the last commit */
	unsigned sn;
	unsigned depth, nready, nthreads;
	int init_err, quit;
	double usr_s, sys_s;            /* the pool threads' CPU, summed as each exits */
	struct pool_thread *pt;
};

static int inner_io(struct pool_thread *p, struct io_req *r)
{
	const struct engine_ops *e = p->c->inner;
	if (e->flags & ENGINE_F_SYNC) {
		int q = e->queue(p->c->w, r); /* psync reads only the worker's fd (trims); null nothing */
		return q < 0 ? q : 0;
	}
	int q = e->queue(p->shadow, r);
	if (q < 0)
		return q;
	int n = e->commit(p->shadow, 1);
	if (n < 0)
		return n;
	for (;;) {
		n = e->getevents(p->shadow, 1, 0);
		if (n < 0 && n != -EINTR)
			return n;
		if (n > 0)
			return 0; /* depth 1 in use: the one completion is r's */
	}
}

static void *pool_main(void *arg)
{
	struct pool_thread *p = arg;
	struct offload_ctx *c = p->c;
	int err = p->shadow ? c->inner->init(p->shadow) : 0;
	pthread_mutex_lock(&c->mu);
	if (err && !c->init_err)
		c->init_err = err;
	c->nready++;
	pthread_cond_broadcast(&c->ready_cv);
	while (!err) {
		while (!c->pn && !c->quit)
			pthread_cond_wait(&c->more, &c->mu);
		if (!c->pn)
			break;
		struct io_req *r = c->pending[c->phead];
		c->phead = (c->phead + 1) % c->depth;
		c->pn--;
		pthread_mutex_unlock(&c->mu);
		r->t_sub = now_ns();
		int e = inner_io(p, r);
		if (e < 0)
			r->res = e;
		pthread_mutex_lock(&c->mu);
		c->finished[c->fn++] = r;
		pthread_cond_signal(&c->done_cv);
	}
	pthread_mutex_unlock(&c->mu);
	if (!err && p->shadow && p->shadow->ctx)
		c->inner->cleanup(p->shadow);
	struct rusage ru;
	if (!getrusage(RUSAGE_THREAD, &ru)) {
		pthread_mutex_lock(&c->mu);
		c->usr_s += (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
		c->sys_s += (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
		pthread_mutex_unlock(&c->mu);
	}
	return NULL;
}

static void offload_stop(struct offload_ctx *c)
{
	pthread_mutex_lock(&c->mu);
	c->quit = 1;
	pthread_cond_broadcast(&c->more);
	pthread_mutex_unlock(&c->mu);
	for (unsigned i = 0; i < c->nthreads; i++)
		if (c->pt[i].started)
			pthread_join(c->pt[i].t, NULL);
}

static void offload_free(struct offload_ctx *c)
{
	pthread_mutex_destroy(&c->mu);
	pthread_cond_destroy(&c->more);
	pthread_cond_destroy(&c->done_cv);
	pthread_cond_destroy(&c->ready_cv);
	for (unsigned i = 0; c->pt && i < c->depth; i++)
		if (c->pt[i].shadow) {
			free(c->pt[i].shadow->done);
			free(c->pt[i].shadow);
		}
	free(c->pending);
	free(c->finished);
	free(c->staged);
	free(c->pt);
	free(c);
}

/* an async engine's private view of the worker, for one pool thread */
static struct worker *shadow_of(struct worker *w)
{
	size_t sz = (sizeof(struct worker) + CACHELINE - 1) & ~(size_t)(CACHELINE - 1);
	struct worker *s = aligned_alloc(CACHELINE, sz);
	if (!s)
		return NULL;
	memset(s, 0, sz);
	s->job = w->job;
	s->id = w->id;
	s->fd = w->fd;
	s->mfw = w->mfw;
	s->reqs = w->reqs; /* io_uring registers every buffer and names it by r->idx */
	s->depth = w->depth;
	s->done = calloc(w->depth, sizeof(*s->done));
	if (!s->done) {
		free(s);
		return NULL;
	}
	return s;
}

static int offload_init(struct worker *w)
{
	struct offload_ctx *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->inner = engine_find(w->job->o->ioengine);
	c->w = w;
	c->depth = w->depth;
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->more, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* getevents' timeout is on the monotonic clock */
	pthread_cond_init(&c->done_cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_cond_init(&c->ready_cv, NULL);
	c->pending = calloc(c->depth, sizeof(*c->pending));
	c->finished = calloc(c->depth, sizeof(*c->finished));
	c->staged = calloc(c->depth, sizeof(*c->staged));
	c->pt = calloc(c->depth, sizeof(*c->pt));
	if (!c->inner || !c->pending || !c->finished || !c->staged || !c->pt) {
		offload_free(c);
		return -ENOMEM;
	}
	int err = 0;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, OFFLOAD_STACK_BYTES); /* a pool thread only calls the engine */
	for (unsigned i = 0; i < c->depth; i++) {
		struct pool_thread *p = &c->pt[i];
		p->c = c;
		if (!(c->inner->flags & ENGINE_F_SYNC) && !(p->shadow = shadow_of(w))) {
			err = -ENOMEM;
			break;
		}
		int e = pthread_create(&p->t, &attr, pool_main, p);
		if (e) {
			err = -e;
			break;
		}
		p->started = 1;
		c->nthreads++;
	}
	pthread_attr_destroy(&attr);
	pthread_mutex_lock(&c->mu);
	while (c->nready < c->nthreads)
		pthread_cond_wait(&c->ready_cv, &c->mu);
	if (!err)
		err = c->init_err;
	pthread_mutex_unlock(&c->mu);
	if (err) {
		offload_stop(c);
		offload_free(c);
		return err;
	}
	w->ctx = c;
	return 0;
}

static int offload_queue(struct worker *w, struct io_req *r)
{
	struct offload_ctx *c = w->ctx;
	if (c->sn >= c->depth)
		return -EBUSY;
	c->staged[c->sn++] = r;
	return 0;
}

static int offload_commit(struct worker *w, int last)
{
	struct offload_ctx *c = w->ctx;
	(void)last;
	unsigned n = c->sn;
	if (!n)
		return 0;
	pthread_mutex_lock(&c->mu);
	for (unsigned i = 0; i < n; i++)
		c->pending[(c->phead + c->pn++) % c->depth] = c->staged[i];
	if (n == 1)
		pthread_cond_signal(&c->more);
	else
		pthread_cond_broadcast(&c->more);
	pthread_mutex_unlock(&c->mu);
	c->sn = 0;
	return (int)n;
}

static int offload_getevents(struct worker *w, unsigned min, uint64_t timeout_ns)
{
	struct offload_ctx *c = w->ctx;
	struct timespec ts = { 0, 0 };
	if (timeout_ns) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t t = (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec + timeout_ns;
		ts.tv_sec = (time_t)(t / NS_PER_S);
		ts.tv_nsec = (long)(t % NS_PER_S);
	}
	pthread_mutex_lock(&c->mu);
	while (c->fn < min) {
		if (!timeout_ns) {
			pthread_cond_wait(&c->done_cv, &c->mu);
		} else if (pthread_cond_timedwait(&c->done_cv, &c->mu, &ts) == ETIMEDOUT) {
			break;
		}
	}
	unsigned n = c->fn;
	memcpy(w->done, c->finished, n * sizeof(*w->done));
	c->fn = 0;
	pthread_mutex_unlock(&c->mu);
	return (int)n;
}

static void offload_cleanup(struct worker *w)
{
	struct offload_ctx *c = w->ctx;
	offload_stop(c);
	w->usr_s += c->usr_s;
	w->sys_s += c->sys_s;
	offload_free(c);
	w->ctx = NULL;
}

static const struct engine_ops offload_ops = {
	.name = "offload", .flags = 0, .init = offload_init, .queue = offload_queue, .commit = offload_commit,
	.getevents = offload_getevents, .cleanup = offload_cleanup,
};

const struct engine_ops *offload_engine(void)
{
	return &offload_ops;
}
