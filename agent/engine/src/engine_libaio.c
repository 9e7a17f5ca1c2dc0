/* libaio engine: io_submit / io_getevents on a per-worker context. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iowatt.h"

#ifdef HAVE_LIBAIO
#include <libaio.h>

struct aio_ctx {
	io_context_t ctx;
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
	w->ctx = c;
	return 0;
}

static int aio_queue(struct worker *w, struct io_req *r)
{
	struct aio_ctx *c = w->ctx;
	struct iocb *cb = &c->iocbs[r->idx];
	if (r->ddir == DDIR_READ)
		io_prep_pread(cb, w->fd, r->buf, r->len, (long long)r->off);
	else
		io_prep_pwrite(cb, w->fd, r->buf, r->len, (long long)r->off);
	cb->data = r;
	c->pending[c->npending++] = cb;
	return 0;
}

static int aio_commit(struct worker *w)
{
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
	int n;
	do
		n = io_getevents(c->ctx, (long)min, (long)w->depth, c->events, tp);
	while (n == -EINTR);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		struct io_req *r = c->events[i].data;
		long res = (long)c->events[i].res;
		r->res = res;
		w->done[i] = r;
	}
	return n;
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
	.name = "libaio", .sync = 0, .probe = aio_probe, .init = aio_init, .queue = aio_queue, .commit = aio_commit,
	.getevents = aio_getevents, .cleanup = aio_cleanup,
};
#else
static int aio_absent(struct worker *w) { (void)w; return -ENOSYS; }
const struct engine_ops libaio_ops = { .name = "libaio", .init = aio_absent };
#endif
