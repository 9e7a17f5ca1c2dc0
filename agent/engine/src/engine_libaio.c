/* libaio engine: io_submit / io_getevents on a per-worker context. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iowatt.h"

#ifdef HAVE_LIBAIO
#include <libaio.h>
#ifndef IOCB_FLAG_IOPRIO
#define IOCB_FLAG_IOPRIO (1 << 1) /* linux/aio_abi.h: aio_reqprio holds the I/O's priority */
#endif

/* The completion ring the kernel maps at the io_context_t address (fs/aio.c, a stable ABI the
 * kernel explicitly supports reaping from: user_refill_reqs_available() reads `head`). */
struct aio_uring {
	unsigned id, nr, head, tail;
	unsigned magic, compat_features, incompat_features, header_length;
	struct io_event events[];
};
#define AIO_RING_MAGIC 0xa10a10a1u

struct aio_ctx {
	io_context_t ctx;
	struct aio_uring *ring;         /* NULL: always use io_getevents() */
	struct iocb *iocbs;
	struct iocb **pending;
	unsigned npending;
	struct io_event *events;
};

static int aio_init(struct worker *w)
{
	struct aio_ctx *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->iocbs = calloc(w->depth, sizeof(*c->iocbs));
	c->pending = calloc(w->depth, sizeof(*c->pending));
	c->events = calloc(w->depth, sizeof(*c->events));
	if (!c->iocbs || !c->pending || !c->events)
		return -ENOMEM;
	int r = io_setup((int)w->depth, &c->ctx);
	if (r < 0) {
		free(c->iocbs);
		free(c->pending);
		free(c->events);
		free(c);
		return r == -ENOSYS ? -ENOSYS : r;
	}
	struct aio_uring *ring = (struct aio_uring *)c->ctx;
	if (ring->magic == AIO_RING_MAGIC && ring->incompat_features == 0)
		c->ring = ring;
	w->ctx = c;
	return 0;
}

/* Take up to max completions straight from the ring, without a system call. */
static unsigned ring_reap(struct aio_ctx *c, struct worker *w, unsigned max)
{
	struct aio_uring *ring = c->ring;
	unsigned head = ring->head, nr = ring->nr, n = 0;
	unsigned tail = __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);
	while (head != tail && n < max) {
		const struct io_event *ev = &ring->events[head];
		struct io_req *r = ev->data;
		r->res = (long)ev->res;
		w->done[n++] = r;
		head = head + 1 == nr ? 0 : head + 1;
	}
	if (n)
		__atomic_store_n(&ring->head, head, __ATOMIC_RELEASE);
	return n;
}

static int aio_queue(struct worker *w, struct io_req *r)
{
	struct aio_ctx *c = w->ctx;
	struct iocb *cb = &c->iocbs[r->idx];
	if (r->ddir == DDIR_READ)
		io_prep_pread(cb, r->fd, r->buf, r->len, (long long)r->off);
	else
		io_prep_pwrite(cb, r->fd, r->buf, r->len, (long long)r->off);
	if (r->ioprio) { /* cmdprio_*: this I/O's own priority (else the thread's) */
		cb->aio_reqprio = (short)r->ioprio;
		cb->u.c.flags |= IOCB_FLAG_IOPRIO;
	}
	cb->data = r;
	c->pending[c->npending++] = cb;
	return 0;
}

static int aio_commit(struct worker *w, int last)
{
	(void)last;
	struct aio_ctx *c = w->ctx;
	unsigned done = 0;
	while (done < c->npending) {
		int r = io_submit(c->ctx, (long)(c->npending - done), c->pending + done);
		if (r == -EAGAIN || r == -EINTR)
			continue;
		if (r < 0) {
			c->npending = 0;
			return r;
		}
		done += (unsigned)r;
	}
	c->npending = 0;
	return (int)done;
}

static int aio_getevents(struct worker *w, unsigned min, uint64_t timeout_ns)
{
	struct aio_ctx *c = w->ctx;
	struct timespec ts, *tp = NULL;
	if (timeout_ns) {
		ts.tv_sec = (time_t)(timeout_ns / 1000000000ull);
		ts.tv_nsec = (long)(timeout_ns % 1000000000ull);
		tp = &ts;
	}
	/* completions already in the ring (inline-completing devices, or several done while we
	 * were busy) need no io_getevents() call; wait in the kernel only when there are none */
	unsigned cap = w->reap_max ? w->reap_max : w->depth;
	unsigned got = c->ring ? ring_reap(c, w, cap) : 0;
	if (got >= min || got == cap)
		return (int)got;
	int n;
	do
		n = io_getevents(c->ctx, (long)(min - got), (long)(cap - got), c->events, tp);
	while (n == -EINTR);
	if (n < 0)
		return got ? (int)got : n;
	for (int i = 0; i < n; i++) {
		struct io_req *r = c->events[i].data;
		long res = (long)c->events[i].res;
		r->res = res;
		w->done[got + (unsigned)i] = r;
	}
	return (int)got + n;
}

static void aio_cleanup(struct worker *w)
{
	struct aio_ctx *c = w->ctx;
	if (!c)
		return;
	io_destroy(c->ctx);
	free(c->iocbs);
	free(c->pending);
	free(c->events);
	free(c);
	w->ctx = NULL;
}

static int aio_probe(void)
{
	io_context_t ctx = 0;
	int r = io_setup(1, &ctx);
	if (r < 0)
		return r;
	io_destroy(ctx);
	return 0;
}

const struct engine_ops libaio_ops = {
	.name = "libaio", .flags = 0, .probe = aio_probe, .init = aio_init, .queue = aio_queue, .commit = aio_commit,
	.getevents = aio_getevents, .cleanup = aio_cleanup,
};
#else
static int aio_absent(struct worker *w) { (void)w; return -ENOSYS; }
const struct engine_ops libaio_ops = { .name = "libaio", .flags = ENGINE_F_ABSENT, .init = aio_absent };
#endif
