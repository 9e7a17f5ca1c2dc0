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
	/* the bounded wait (uring_poll_wait): on, its success score, waits since the last probe, and
	 * the CPU it may still spend (ns) */
	int poll;
	unsigned poll_score, poll_skipped, poll_every;
	int64_t poll_credit;
};

/* The bounded wait, ADR 0051. When the job thread needs completions that are not in the ring yet,
 * it watches the ring for up to POLL_WINDOW_NS before it sleeps in io_uring_enter(): with
 * DEFER_TASKRUN the kernel queues finished I/O as task work and sets IORING_SQ_TASKRUN (the ring
 * is set up with IORING_SETUP_TASKRUN_FLAG), and only then does the thread enter the kernel to
 * post it -- so a completion a few microseconds away costs no sleep, no wake-up IPI from the CPU
 * that finished it and, on a VM, no trip through the host to wake a halted vCPU. It is bounded
 * twice: it polls only while at least a quarter of the recent polls found what they waited for
 * (a score kept as an exponential average; else one wait in POLL_PROBE tries again, one in twice
 * as many after each probe that finds nothing, up to POLL_PROBE_MAX, so that a change of placement
 * is noticed within a few thousand waits at a cost of a few ns per I/O), and it may spend at most POLL_BUDGET_NS of CPU per completion
 * reaped, so a job never costs more than that above the plain wait. Where it cannot help (the
 * completing work needs this CPU: job thread and loop worker on one vCPU) it stops by itself.
 * Never in a paced job (rate, thinktime, latency_target, ...: their figures are the sleeps') nor
 * at iodepth 1 (a latency job: nothing else to do while the one I/O runs, and fio's QD1 figures
 * are taken with a sleeping thread). What the job does, counts and reports as I/O is unchanged;
 * the poll's CPU is the job thread's (usr_cpu), and iowatt.io_uring reports how often it ran. */
#define POLL_WINDOW_NS 20000
#define POLL_BUDGET_NS 600
#define POLL_PROBE 32
#define POLL_PROBE_MAX 1024

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

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
	r = io_uring_queue_init(entries, &c->ring,
				IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_TASKRUN_FLAG);
	if (r >= 0) /* the bounded wait needs the flag, and has nothing to wait for at depth 1 */
		c->poll = w->depth > 1;
	else if (r == -EINVAL)
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
	c->poll_score = 512; /* of 1024: polls until the first few tell otherwise */
	c->poll_every = POLL_PROBE;
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

#ifdef IORING_SETUP_DEFER_TASKRUN
/* the bounded wait (above): poll for min completions before blocking, when it is worth it */
static void uring_poll_wait(struct worker *w, struct uring_ctx *c, unsigned min)
{
	if (w->pace.on || io_uring_cq_ready(&c->ring) >= min || c->poll_credit <= 0)
		return;
	if (c->poll_score < 256 && ++c->poll_skipped < c->poll_every)
		return;
	c->poll_skipped = 0;
	uint64_t t0 = now_ns(), end = t0 + POLL_WINDOW_NS, t;
	unsigned k = 0;
	int hit = 0;
	for (;;) {
		if (IO_URING_READ_ONCE(*c->ring.sq.kflags) & IORING_SQ_TASKRUN) {
			io_uring_get_events(&c->ring); /* runs the task work: the completions are posted */
			if (io_uring_cq_ready(&c->ring) >= min) {
				hit = 1;
				break;
			}
		}
		cpu_relax();
		if (!(++k & 15) && now_ns() >= end)
			break;
	}
	t = now_ns() - t0;
	c->poll_credit -= (int64_t)t;
	c->poll_score = c->poll_score - c->poll_score / 8 + (hit ? 128 : 0);
	if (hit)
		c->poll_every = POLL_PROBE;
	else if (c->poll_score < 256 && c->poll_every < POLL_PROBE_MAX)
		c->poll_every <<= 1;
	w->uring_polls++;
	w->uring_poll_hits += (uint64_t)hit;
	w->uring_poll_ns += t;
}
#endif

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
#ifdef IORING_SETUP_DEFER_TASKRUN
			if (c->poll)
				uring_poll_wait(w, c, min);
#endif
			r = io_uring_cq_ready(&c->ring) >= min ? 0 : io_uring_wait_cqe_nr(&c->ring, &cqe, min);
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
	if (c->poll) { /* the poll's allowance: POLL_BUDGET_NS per completion, a few windows at most */
		c->poll_credit += (int64_t)n * POLL_BUDGET_NS;
		if (c->poll_credit > 4 * POLL_WINDOW_NS)
			c->poll_credit = 4 * POLL_WINDOW_NS;
	}
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
