/* io_uring engine (liburing): one ring per worker, registered file, buffers and ring fd when
 * the kernel allows, one submit per batch (never waiting), at most w->reap_max completions taken per wait
 * (fio's iodepth_batch_complete_max). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "iowatt.h"
#include "multifile.h"

#ifdef HAVE_LIBURING
#include <liburing.h>

struct uring_ctx {
	struct io_uring ring;
	int fixed_bufs;
	int fixed_file;
	unsigned staged;        /* SQEs prepared but not yet handed to the kernel */
	unsigned async_every;   /* IOSQE_ASYNC on every Nth SQE, 0 = never */
	unsigned async_n;
};

/* Can a read on this descriptor be tried without blocking? Block devices whose driver lacks
 * nowait support (zram, most bio-based drivers) and some file systems cannot: io_uring then
 * fails every inline attempt with -EAGAIN and hands the request to an io-wq kernel worker, which
 * then does the device work (on zram the copy) -- reported so that a reader knows where the CPU
 * went. preadv2(RWF_NOWAIT) fails with EOPNOTSUPP exactly in that case (the kernel checks the
 * file's FMODE_NOWAIT before any I/O); otherwise it may read one block, which is harmless.
 * Punting at once (IOSQE_ASYNC, force_async=1) was measured on zram and is not the default: it
 * moves ~300 ns per I/O of preparation from this thread into the io-wq worker, which is the
 * bottleneck there and then spends ~550 ns more per I/O (-8 % IOPS, same total CPU). */
static int fd_supports_nowait(struct worker *w)
{
	struct iovec iov = { .iov_base = w->reqs[0].buf, .iov_len = opt_min_bs(w->job->o) };
	ssize_t r = preadv2(w->fd, &iov, 1, (off_t)w->job->o->offset, RWF_NOWAIT);
	return !(r < 0 && errno == EOPNOTSUPP);
}

static int uring_init(struct worker *w)
{
	struct uring_ctx *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	unsigned entries = 1;
	while (entries < w->depth)
		entries <<= 1;
	int r = -EINVAL;
#if defined(IORING_SETUP_SINGLE_ISSUER) && defined(IORING_SETUP_DEFER_TASKRUN)
	r = io_uring_queue_init(entries, &c->ring, IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN);
#endif
	if (r == -EINVAL)
		r = io_uring_queue_init(entries, &c->ring, 0);
	if (r < 0) {
		free(c);
		return (r == -ENOSYS || r == -EPERM) ? -ENOSYS : r;
	}
	struct iovec *iov = calloc(w->depth, sizeof(*iov));
	if (iov) {
		for (unsigned i = 0; i < w->depth; i++) {
			iov[i].iov_base = w->reqs[i].buf;
			iov[i].iov_len = w->job->max_bs;
		}
		c->fixed_bufs = io_uring_register_buffers(&c->ring, iov, w->depth) == 0;
		free(iov);
	}
	/* one file per worker: registered; several (multifile.c): each request names its own */
	c->fixed_file = (!w->mfw || w->mfw->n == 1) && io_uring_register_files(&c->ring, &w->fd, 1) == 0;
	/* a registered ring fd spares io_uring_enter() the fget/fput of the ring per call */
	w->uring_ring_fd_registered = io_uring_register_ring_fd(&c->ring) == 1;
	w->uring_nowait = fd_supports_nowait(w);
	c->async_every = w->job->o->force_async;
	w->ctx = c;
	return 0;
}

static int uring_queue(struct worker *w, struct io_req *r)
{
	struct uring_ctx *c = w->ctx;
	struct io_uring_sqe *sqe = io_uring_get_sqe(&c->ring);
	if (!sqe)
		return -EBUSY;
	int fd = c->fixed_file ? 0 : r->fd;
	if (c->fixed_bufs) {
		if (r->ddir == DDIR_READ)
			io_uring_prep_read_fixed(sqe, fd, r->buf, r->len, r->off, r->idx);
		else
			io_uring_prep_write_fixed(sqe, fd, r->buf, r->len, r->off, r->idx);
	} else {
		if (r->ddir == DDIR_READ)
			io_uring_prep_read(sqe, fd, r->buf, r->len, r->off);
		else
			io_uring_prep_write(sqe, fd, r->buf, r->len, r->off);
	}
	sqe->ioprio = r->ioprio; /* cmdprio_*: 0 = the thread's priority (prio, prioclass) */
	if (c->fixed_file)
		sqe->flags |= IOSQE_FIXED_FILE;
	if (c->async_every && ++c->async_n >= c->async_every) {
		sqe->flags |= IOSQE_ASYNC;
		c->async_n = 0;
	}
	io_uring_sqe_set_data(sqe, r);
	c->staged++;
	return 0;
}

static int uring_submit(struct uring_ctx *c)
{
	int r;
	do
		r = io_uring_submit(&c->ring);
	while (r == -EINTR || r == -EAGAIN);
	if (r >= 0)
		c->staged = 0;
	return r;
}

/* As fio's io_uring engine: every submission goes to the kernel at once, without waiting
 * (io_uring_enter(n, 0, GETEVENTS): with DEFER_TASKRUN that call also posts the completions that
 * arrived meanwhile), and the reap then takes what is in the completion ring, entering the kernel
 * to wait only when it holds fewer than the minimum. Until 2026-12-06 the last submission rode on
 * the wait's io_uring_enter(n, 1); the same number of calls, but A/B on loop-ext4 (randrw 70/30
 * QD16, 16 pairs at load 2-3) gave a median 1.05x IOPS for fio's pattern. Without liburing 2.3
 * (no io_uring_submit_and_get_events, no DEFER_TASKRUN) the last submission rides on the wait. */
static int uring_commit(struct worker *w, int last)
{
	struct uring_ctx *c = w->ctx;
#ifdef IORING_SETUP_DEFER_TASKRUN
	if (last) {
		int r;
		do
			r = io_uring_submit_and_get_events(&c->ring);
		while (r == -EINTR || r == -EAGAIN);
		if (r >= 0)
			c->staged = 0;
		return r;
	}
#else
	if (last)
		return (int)c->staged;
#endif
	return uring_submit(c);
}

static int uring_getevents(struct worker *w, unsigned min, uint64_t timeout_ns)
{
	struct uring_ctx *c = w->ctx;
	struct io_uring_cqe *cqe;
	int r;
	if (min) {
		if (timeout_ns) {
			struct __kernel_timespec ts = { .tv_sec = (long long)(timeout_ns / 1000000000ull),
							.tv_nsec = (long long)(timeout_ns % 1000000000ull) };
			if (c->staged) {
				r = io_uring_submit_and_wait_timeout(&c->ring, &cqe, min, &ts, NULL);
				if (r >= 0 || r == -ETIME)
					c->staged = 0;
			} else {
				r = io_uring_wait_cqes(&c->ring, &cqe, min, &ts, NULL);
			}
			if (r == -ETIME)
				r = 0;
		} else if (c->staged) {
			do
				r = io_uring_submit_and_wait(&c->ring, min);
			while (r == -EINTR || r == -EAGAIN);
			if (r >= 0)
				c->staged = 0;
		} else {
			r = io_uring_wait_cqe_nr(&c->ring, &cqe, min);
		}
		if (r < 0 && r != -EINTR)
			return r;
	} else if (c->staged) {
		r = uring_submit(c);
		if (r < 0)
			return r;
	}
	unsigned head, n = 0, cap = w->reap_max ? w->reap_max : w->depth;
	io_uring_for_each_cqe(&c->ring, head, cqe) {
		struct io_req *rq = io_uring_cqe_get_data(cqe);
		rq->res = cqe->res;
		w->done[n++] = rq;
		if (n == cap)
			break;
	}
	io_uring_cq_advance(&c->ring, n);
	return (int)n;
}

static void uring_cleanup(struct worker *w)
{
	struct uring_ctx *c = w->ctx;
	if (!c)
		return;
	io_uring_queue_exit(&c->ring);
	free(c);
	w->ctx = NULL;
}

static int uring_probe(void)
{
	struct io_uring ring;
	int r = io_uring_queue_init(2, &ring, 0);
	if (r < 0)
		return r;
	io_uring_queue_exit(&ring);
	return 0;
}

const struct engine_ops io_uring_ops = {
	.name = "io_uring", .flags = ENGINE_F_KWORKER, .probe = uring_probe, .init = uring_init, .queue = uring_queue, .commit = uring_commit,
	.getevents = uring_getevents, .cleanup = uring_cleanup,
};
#else
static int uring_absent(struct worker *w) { (void)w; return -ENOSYS; }
const struct engine_ops io_uring_ops = { .name = "io_uring", .flags = ENGINE_F_ABSENT | ENGINE_F_KWORKER, .init = uring_absent };
#endif
