/* floor: the least CPU a job can cost -- the bare system-call loop of one ioengine, with no
 * statistics, no clock reads per I/O, no buffer refresh, no random map (xorshift offsets).
 *
 * Not an engine: a reference for bench/engine_vs_fio/run.py. What a benchmark tool spends above
 * this floor is its own overhead; what the floor itself spends is kernel and device work that no
 * tool can avoid. Prints one JSON line: {"ios": N, "seconds": S, "thread_cpu_s": C} where C is
 * getrusage(RUSAGE_THREAD) of the one thread doing I/O (io_uring's io-wq workers excluded, as in
 * fio's and iowatt's usr_cpu/sys_cpu).
 *
 *   floor ENGINE FILE SIZE_BYTES BS_BYTES QD SECONDS RW DIRECT
 *   ENGINE: psync | libaio | io_uring   RW: read | randread | randwrite | randrw70
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libaio.h>
#include <liburing.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t nblocks, bs, seq;
static int rwmode; /* 0 read, 1 randread, 2 randwrite, 3 randrw70 */

static inline uint64_t xs(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static inline void next(uint64_t *off, int *write)
{
	if (rwmode == 0) {
		*off = (seq++ % nblocks) * bs;
		*write = 0;
		return;
	}
	*off = (xs() % nblocks) * bs;
	*write = rwmode == 2 || (rwmode == 3 && xs() % 100 >= 70);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int fd;

static void aio_prep(struct iocb *cb, void *buf)
{
	uint64_t off;
	int w;
	next(&off, &w);
	if (w)
		io_prep_pwrite(cb, fd, buf, bs, (long long)off);
	else
		io_prep_pread(cb, fd, buf, bs, (long long)off);
}

static void uring_prep(struct io_uring *ring, char *buf, unsigned i)
{
	uint64_t off;
	int w;
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	next(&off, &w);
	if (w)
		io_uring_prep_write_fixed(sqe, 0, buf, bs, off, (int)i);
	else
		io_uring_prep_read_fixed(sqe, 0, buf, bs, off, (int)i);
	sqe->flags |= IOSQE_FIXED_FILE;
	sqe->user_data = i;
}

static void die(const char *what, int e)
{
	fprintf(stderr, "floor: %s: %s\n", what, strerror(e));
	exit(1);
}

int main(int argc, char **argv)
{
	if (argc != 9) {
		fprintf(stderr, "usage: floor ENGINE FILE SIZE_BYTES BS_BYTES QD SECONDS RW DIRECT\n");
		return 2;
	}
	const char *engine = argv[1], *rw = argv[7];
	uint64_t size = strtoull(argv[3], NULL, 10);
	bs = strtoull(argv[4], NULL, 10);
	unsigned qd = (unsigned)atoi(argv[5]);
	double secs = atof(argv[6]);
	int direct = atoi(argv[8]);
	rwmode = !strcmp(rw, "read") ? 0 : !strcmp(rw, "randread") ? 1 : !strcmp(rw, "randwrite") ? 2 : 3;
	nblocks = size / bs;
	fd = open(argv[2], (rwmode >= 2 ? O_RDWR : O_RDONLY) | (direct ? O_DIRECT : 0));
	if (fd < 0)
		die("open", errno);
	if (!strcmp(engine, "psync"))
		qd = 1;
	char **bufs = calloc(qd, sizeof(*bufs));
	for (unsigned i = 0; i < qd; i++) {
		if (posix_memalign((void **)&bufs[i], 4096, bs))
			die("memalign", ENOMEM);
		for (uint64_t k = 0; k < bs; k += 8) {
			uint64_t v = xs();
			memcpy(bufs[i] + k, &v, 8);
		}
	}
	uint64_t ios = 0;
	double t0 = now(), end = t0 + secs;
	struct rusage r0, r1;
	getrusage(RUSAGE_THREAD, &r0);
	uint64_t off;
	int w;
	if (!strcmp(engine, "psync")) {
		for (;;) {
			next(&off, &w);
			long r = w ? syscall(SYS_pwrite64, fd, bufs[0], bs, off) : syscall(SYS_pread64, fd, bufs[0], bs, off);
			if (r < 0)
				die("pread/pwrite", errno);
			if ((++ios & 255) == 0 && now() >= end)
				break;
		}
	} else if (!strcmp(engine, "libaio")) {
		io_context_t ctx = 0;
		int e = io_setup((int)qd, &ctx);
		if (e < 0)
			die("io_setup", -e);
		struct iocb *cbs = calloc(qd, sizeof(*cbs)), **ptrs = calloc(qd, sizeof(*ptrs));
		struct io_event *ev = calloc(qd, sizeof(*ev));
		for (unsigned i = 0; i < qd; i++) {
			aio_prep(&cbs[i], bufs[i]);
			ptrs[i] = &cbs[i];
		}
		if ((e = io_submit(ctx, qd, ptrs)) != (int)qd)
			die("io_submit", e < 0 ? -e : EIO);
		for (int stop = 0; !stop;) {
			int n = io_getevents(ctx, 1, qd, ev, NULL);
			if (n < 0)
				die("io_getevents", -n);
			for (int i = 0; i < n; i++) {
				struct iocb *cb = ev[i].obj;
				aio_prep(cb, cb->u.c.buf);
				ptrs[i] = cb;
			}
			ios += (uint64_t)n;
			if (ios >= 256 && now() >= end) {
				stop = 1; /* leave the rest in flight: io_destroy waits for them */
				break;
			}
			if ((e = io_submit(ctx, n, ptrs)) != n)
				die("io_submit", e < 0 ? -e : EIO);
		}
		io_destroy(ctx);
	} else {
		struct io_uring ring;
		unsigned entries = 1;
		while (entries < qd)
			entries <<= 1;
		int e = io_uring_queue_init(entries, &ring, IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN);
		if (e < 0)
			die("io_uring_queue_init", -e);
		struct iovec *iov = calloc(qd, sizeof(*iov));
		for (unsigned i = 0; i < qd; i++)
			iov[i] = (struct iovec){ bufs[i], bs };
		if ((e = io_uring_register_buffers(&ring, iov, qd)) < 0)
			die("register_buffers", -e);
		if ((e = io_uring_register_files(&ring, &fd, 1)) < 0)
			die("register_files", -e);
		io_uring_register_ring_fd(&ring);
		for (unsigned i = 0; i < qd; i++)
			uring_prep(&ring, bufs[i], i);
		for (int stop = 0; !stop;) {
			if ((e = io_uring_submit_and_wait(&ring, 1)) < 0 && e != -EINTR)
				die("io_uring_submit_and_wait", -e);
			struct io_uring_cqe *cqe;
			unsigned head, n = 0;
			io_uring_for_each_cqe(&ring, head, cqe) {
				if (cqe->res < 0)
					die("completion", -cqe->res);
				unsigned i = (unsigned)cqe->user_data;
				n++;
				uring_prep(&ring, bufs[i], i);
			}
			io_uring_cq_advance(&ring, n);
			ios += n;
			if (ios >= 256 && now() >= end)
				stop = 1;
		}
		io_uring_queue_exit(&ring);
	}
	getrusage(RUSAGE_THREAD, &r1);
	double t1 = now();
	double cpu = (double)(r1.ru_utime.tv_sec - r0.ru_utime.tv_sec) + (double)(r1.ru_utime.tv_usec - r0.ru_utime.tv_usec) / 1e6 +
		     (double)(r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) + (double)(r1.ru_stime.tv_usec - r0.ru_stime.tv_usec) / 1e6;
	printf("{\"ios\": %llu, \"seconds\": %.6f, \"thread_cpu_s\": %.6f}\n", (unsigned long long)ios, t1 - t0, cpu);
	return 0;
}
