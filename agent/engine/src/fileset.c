/* iowatt-engine --vdbench=FILE --directory=DIR: vdbench-style file sets, native.
 *
 * The model is vdbench's (Vdbench Users Guide, "Filesystem testing"):
 *   - fsd: `depth` levels of directories below the anchor, `width` new directories in each,
 *     `files` files in each lowest-level directory: width^depth leaf directories, files x
 *     width^depth files (depth=5,width=5,files=2: 3,905 directories, 6,250 files). Names as
 *     vdbench's: vdb.<level>_<n>.dir, vdb_f<nnnn>.file (n from 1 within the parent).
 *   - fwd: threads that each select a file (fileselect random/sequential), own it while they
 *     use it (unless fileio=(random,shared)), and run one operation on it: read/write in
 *     xfersize blocks, at random block-aligned offsets for fileio=random (`stopafter` blocks,
 *     default 100, then the next file) or the whole file in order for fileio=sequential; with
 *     rdpct every block is a read with that probability, else a write. Reads and writes open
 *     and close the file around the blocks (counted as open and close operations).
 *   - rd: format=yes creates the structure and fills every file before the run (restart: only
 *     what is missing; no: uses what is there); fwdrate caps the operations per second of all
 *     threads together; elapsed/interval/warmup in seconds; warmup intervals are reported and
 *     left out of the totals.
 * `--scale=X` multiplies files (per leaf directory), sizes and elapsed; the JSON says what ran.
 *
 * Safety: DIR is opened once (through the confined open under --beneath); every path is opened
 * beneath it with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) (confined_open); files are
 * created O_EXCL; a file or directory that was there before is never removed, and at the end
 * everything this run created is removed (unless --keep), also after ENOSPC (exit 1) and
 * SIGINT/SIGTERM. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "fileset.h"
#include "optable.h"
#include "iowatt.h"

enum { ST_EXISTS = 1, ST_OURS = 2, ST_BUSY = 4 };

struct fs_set {
	const struct vdb_fsd *d;
	int rootfd;
	int made_root;                  /* several fsds: DIR/<name> made by this run */
	uint64_t fpl;                   /* files per leaf directory (scaled) */
	uint64_t nleaf, nfiles, ndirs;
	uint64_t lvl_off[18], lvl_n[18]; /* directories of level k (1..depth) at dstate[lvl_off[k]] */
	_Atomic uint8_t *fstate, *dstate;
	uint64_t *fsize;
	uint64_t size_sum;
	uint64_t fmt_chunk;             /* format writes: the largest xfersize of its workloads */
	struct vdb_dist size;           /* scaled */
};

struct fs_work {
	const struct vdb_fwd *w;
	struct fs_set *src, *dst;
	int op;                         /* resolved: -1 = read/write by rdpct */
	int rdpct;
	struct vdb_dist xfer;
	uint64_t max_xfer;
	_Atomic uint64_t cursor;        /* fileselect=sequential */
	_Atomic unsigned exhausted;     /* threads that found nothing to do */
};

struct ivop {
	uint64_t ops, bytes;
	struct lstat lat;
};
/* one interval of the run, all threads merged (each thread folds its own into it at the
 * interval's end, under ivlock: once per thread and interval, never per operation) */
struct fs_hpair {
	uint64_t cnt;
	uint32_t idx;
};
struct runiv {
	struct ivop op[VOP_N];
	struct fs_hpair *h[VOP_N];         /* sparse histogram, sorted by bucket */
	uint32_t hn[VOP_N];
	int used;
};

struct fs_run;
struct fs_thread {
	struct fs_run *run;
	struct fs_work *wk;
	unsigned id, nth_all;
	struct rng rng;
	unsigned char *buf;
	uint64_t rate_period, next_due;
	uint64_t budget;                /* rd maxdata: bytes this thread may still move */
	int spent;                      /* rd maxdata: nothing left for this thread */
	uint64_t t_end;                 /* when it returned */
	/* current interval */
	uint32_t cur_index;
	uint64_t next_tick;
	struct ivop cur[VOP_N];
	uint64_t *curhist[VOP_N];
	uint64_t files_created, dirs_created, files_deleted, dirs_removed;
	int gave_up;
	pthread_t th;
	/* format */
	uint64_t fmt_files, fmt_bytes;
};

struct fs_run {
	struct vdb_cfg *c;
	struct fs_set set[VDB_MAXDEF];
	int nset;
	struct fs_work work[VDB_MAXDEF];
	int nwork;
	struct fs_thread *th;
	unsigned nth;
	int dirfd;
	double scale;
	uint64_t elapsed_ns, interval_ns, warmup_ns;
	uint64_t t_start;
	_Atomic int stop;
	_Atomic unsigned finished;      /* threads that returned */
	pthread_mutex_t ivlock;
	struct runiv *ivs;              /* [max_iv] */
	uint32_t max_iv, warm_iv, last_iv; /* last_iv: highest used index + 1 */
	struct ivop tot[VOP_N];         /* the measured intervals (index >= warm_iv) */
	uint64_t *tot_hist[VOP_N];
	_Alignas(128) _Atomic uint64_t moved; /* rd maxdata: bytes claimed by reads and writes (own lines) */
	_Alignas(128) int maxdata_pad;
	_Atomic int maxdata_reached;
	pthread_mutex_t errlock;
	int err;
	char errmsg[600];
	int odirect_any;
	/* format */
	unsigned fmt_threads;
	uint64_t fmt_dirs;
	int fmt_set;                    /* the set being formatted */
};

static void run_fail(struct fs_run *r, int e, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void run_fail(struct fs_run *r, int e, const char *fmt, ...)
{
	pthread_mutex_lock(&r->errlock);
	if (!r->err) {
		r->err = e;
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(r->errmsg, sizeof(r->errmsg), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&r->errlock);
	atomic_store(&r->stop, 1);
}

static inline int stopping(struct fs_run *r)
{
	return g_stop || atomic_load_explicit(&r->stop, memory_order_relaxed);
}

/* ---- names ---- */

/* path of directory (level k, ordinal j) relative to the set's root; returns its length */
static size_t dir_path(const struct fs_set *s, unsigned k, uint64_t j, char *buf, size_t len)
{
	if (k == 0) {
		buf[0] = 0;
		return 0;
	}
	size_t n = dir_path(s, k - 1, j / s->d->width, buf, len);
	int w = snprintf(buf + n, len - n, "%svdb.%u_%llu.dir", n ? "/" : "", k,
			 (unsigned long long)(j % s->d->width + 1));
	return n + (size_t)w;
}

static void file_path(const struct fs_set *s, uint64_t i, char *buf, size_t len)
{
	size_t n = dir_path(s, s->d->depth, i / s->fpl, buf, len);
	snprintf(buf + n, len - n, "%svdb_f%04llu.file", n ? "/" : "", (unsigned long long)(i % s->fpl + 1));
}

static inline uint64_t leaf_dir_index(const struct fs_set *s, uint64_t i)
{
	return s->d->depth ? s->lvl_off[s->d->depth] + i / s->fpl : UINT64_MAX;
}

static inline int leaf_exists(const struct fs_set *s, uint64_t i)
{
	uint64_t di = leaf_dir_index(s, i);
	return di == UINT64_MAX || (atomic_load(&s->dstate[di]) & ST_EXISTS);
}

/* ---- accounting ---- */

/* merge a dense histogram into a sparse one (new array) */
static struct fs_hpair *sparse_merge(const struct fs_hpair *a, uint32_t an, const uint64_t *dense, uint32_t *outn)
{
	uint32_t n = an;
	for (unsigned i = 0; i < HIST_NR; i++)
		n += dense[i] != 0;
	struct fs_hpair *o = malloc((size_t)(n ? n : 1) * sizeof(*o));
	if (!o)
		die_code(EXIT_FAIL, "out of memory");
	uint32_t k = 0, j = 0;
	for (unsigned i = 0; i < HIST_NR; i++) {
		uint64_t c = dense[i];
		while (j < an && a[j].idx < i)
			o[k++] = a[j++];
		if (j < an && a[j].idx == i)
			c += a[j++].cnt;
		if (c)
			o[k++] = (struct fs_hpair){ .idx = i, .cnt = c };
	}
	while (j < an)
		o[k++] = a[j++];
	*outn = k;
	return o;
}

static void ivop_merge(struct ivop *dst, const struct ivop *src)
{
	dst->ops += src->ops;
	dst->bytes += src->bytes;
	lstat_merge(&dst->lat, &src->lat);
}

static void iv_roll(struct fs_thread *t)
{
	struct fs_run *r = t->run;
	int any = 0;
	for (int k = 0; k < VOP_N; k++)
		any |= t->cur[k].ops != 0;
	if (any) {
		/* an operation that ends after the last boundary belongs to the last interval */
		uint32_t ix = t->cur_index < r->max_iv ? t->cur_index : r->max_iv - 1;
		pthread_mutex_lock(&r->ivlock);
		struct runiv *v = &r->ivs[ix];
		v->used = 1;
		if (ix + 1 > r->last_iv)
			r->last_iv = ix + 1;
		for (int k = 0; k < VOP_N; k++) {
			if (!t->cur[k].ops)
				continue;
			uint64_t *h = t->curhist[k];
			ivop_merge(&v->op[k], &t->cur[k]);
			uint32_t n;
			struct fs_hpair *m = sparse_merge(v->h[k], v->hn[k], h, &n);
			free(v->h[k]);
			v->h[k] = m;
			v->hn[k] = n;
			if (ix >= r->warm_iv) {
				ivop_merge(&r->tot[k], &t->cur[k]);
				for (unsigned i = 0; i < HIST_NR; i++)
					r->tot_hist[k][i] += h[i];
			}
			memset(h, 0, HIST_NR * sizeof(uint64_t));
		}
		pthread_mutex_unlock(&r->ivlock);
	}
	for (int k = 0; k < VOP_N; k++) {
		memset(&t->cur[k], 0, sizeof(t->cur[k]));
		lstat_init(&t->cur[k].lat);
	}
}

static inline void tick(struct fs_thread *t, uint64_t now)
{
	if (now < t->next_tick)
		return;
	iv_roll(t);
	struct fs_run *r = t->run;
	t->cur_index = (uint32_t)((now - r->t_start) / r->interval_ns);
	t->next_tick = r->t_start + (uint64_t)(t->cur_index + 1) * r->interval_ns;
}

static inline uint64_t op_done(struct fs_thread *t, int op, uint64_t t0, uint64_t bytes)
{
	uint64_t now = now_ns();
	tick(t, now);
	uint64_t d = now - t0;
	struct ivop *o = &t->cur[op];
	o->ops++;
	o->bytes += bytes;
	lstat_add(&o->lat, d);
	if (!t->curhist[op]) {
		t->curhist[op] = calloc(HIST_NR, sizeof(uint64_t));
		if (!t->curhist[op])
			die_code(EXIT_FAIL, "out of memory");
	}
	t->curhist[op][hist_idx(d)]++;
	return now;
}

/* fwdrate: each thread's share of the operations per second */
static inline void pace(struct fs_thread *t)
{
	if (!t->rate_period)
		return;
	uint64_t now = now_ns();
	if (t->next_due > now) {
		struct timespec ts = mono_deadline(t->next_due);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	t->next_due += t->rate_period;
	if (t->next_due + 1000000000ull < now)
		t->next_due = now; /* far behind (a stall): no burst to catch up */
}

static uint64_t dist_max(const struct vdb_dist *d)
{
	uint64_t m = 0;
	for (int k = 0; k < d->n; k++)
		if (d->v[k] > m)
			m = d->v[k];
	return m;
}

static uint64_t dist_pick(const struct vdb_dist *d, struct rng *rg)
{
	if (d->n == 1)
		return d->v[0];
	double u = rng_unit(rg) * 100.0, acc = 0;
	for (int k = 0; k < d->n; k++) {
		acc += d->pct[k];
		if (u < acc)
			return d->v[k];
	}
	return d->v[d->n - 1];
}

/* ---- file selection ---- */

enum sel_want { WANT_EXISTING, WANT_OURS, WANT_ABSENT };

static inline int eligible(const struct fs_set *s, uint64_t i, uint8_t st, enum sel_want want)
{
	if (st & ST_BUSY)
		return 0;
	switch (want) {
	case WANT_EXISTING:
		return st & ST_EXISTS;
	case WANT_OURS:
		return (st & ST_EXISTS) && (st & ST_OURS);
	default:
		return !(st & ST_EXISTS) && (i == UINT64_MAX || leaf_exists(s, i)); /* UINT64_MAX: a directory */
	}
}

static int try_claim(_Atomic uint8_t *a, const struct fs_set *s, uint64_t i, enum sel_want want, int claim)
{
	uint8_t st = atomic_load(a);
	while (eligible(s, i, st, want)) {
		if (!claim)
			return 1;
		if (atomic_compare_exchange_weak(a, &st, (uint8_t)(st | ST_BUSY)))
			return 1;
	}
	return 0;
}

static inline void release(_Atomic uint8_t *a, int claimed)
{
	if (claimed)
		atomic_fetch_and(a, (uint8_t)~ST_BUSY);
}

/* an index in [0, n) of states[] that is eligible (claimed unless !claim); -1 none at all, -2 all
 * eligible ones busy now */
static int64_t select_in(struct fs_thread *t, const struct fs_set *s, _Atomic uint8_t *states, uint64_t n,
			 enum sel_want want, int claim, int files)
{
	struct fs_work *wk = t->wk;
	if (!n)
		return -1;
	if (wk->w->fileselect_seq) {
		for (uint64_t tries = 0; tries < n; tries++) {
			uint64_t i = atomic_fetch_add(&wk->cursor, 1) % n;
			if (try_claim(&states[i], s, files ? i : UINT64_MAX, want, claim))
				return (int64_t)i;
		}
	} else {
		for (int tries = 0; tries < 32; tries++) {
			uint64_t i = rng_below(&t->rng, n);
			if (try_claim(&states[i], s, files ? i : UINT64_MAX, want, claim))
				return (int64_t)i;
		}
		uint64_t start = rng_below(&t->rng, n);
		for (uint64_t k = 0; k < n; k++) {
			uint64_t i = (start + k) % n;
			if (try_claim(&states[i], s, files ? i : UINT64_MAX, want, claim))
				return (int64_t)i;
		}
	}
	/* nothing now: is anything eligible but busy? */
	for (uint64_t i = 0; i < n; i++) {
		uint8_t st = atomic_load(&states[i]);
		if ((st & ST_BUSY) && eligible(s, files ? i : UINT64_MAX, (uint8_t)(st & ~ST_BUSY), want))
			return -2;
	}
	return -1;
}

/* ---- operations ---- */

static int open_flags(const struct fs_set *s, int write)
{
	int f = write ? O_RDWR : O_RDONLY;
	if (s->d->direct)
		f |= O_DIRECT;
	if (s->d->osync)
		f |= O_SYNC;
	if (s->d->odsync)
		f |= O_DSYNC;
	return f;
}

static int io_full(int fd, unsigned char *buf, uint64_t len, uint64_t off, int write)
{
	uint64_t done = 0;
	while (done < len) {
		ssize_t n = write ? pwrite(fd, buf + done, (size_t)(len - done), (off_t)(off + done))
				  : pread(fd, buf + done, (size_t)(len - done), (off_t)(off + done));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return write ? -ENOSPC : -EIO;
		done += (uint64_t)n;
	}
	return 0;
}

static void io_fail(struct fs_thread *t, const struct fs_set *s, uint64_t i, const char *what, int e)
{
	char p[PATH_MAX];
	file_path(s, i, p, sizeof(p));
	run_fail(t->run, e, "%s '%s': %s%s", what, p, strerror(e),
		 e == ENOSPC ? " (the file set does not fit: lower --scale or free space)" : "");
}

/* rd maxdata: each thread takes the shared budget in chunks of 64 blocks (one atomic add per
 * chunk, not per block); the last chunk is cut at the budget, so exactly maxdata bytes move when
 * it is a multiple of the transfer size. 0, or -1 when the budget is spent (the run stops). */
static int budget_take(struct fs_thread *t, uint64_t xs)
{
	struct fs_run *r = t->run;
	if (t->budget < xs) {
		uint64_t chunk = 64 * xs, max = r->c->rd.maxdata;
		uint64_t prev = atomic_fetch_add_explicit(&r->moved, chunk, memory_order_relaxed);
		t->budget += prev >= max ? 0 : prev + chunk > max ? max - prev : chunk;
		if (t->budget < xs) {
			/* spent: this thread ends; the others finish what they hold */
			atomic_store(&r->maxdata_reached, 1);
			t->spent = 1;
			return -1;
		}
	}
	t->budget -= xs;
	return 0;
}

/* read/write blocks of one file: random (stopafter blocks) or the whole file in order */
static void op_rw(struct fs_thread *t)
{
	struct fs_work *wk = t->wk;
	struct fs_set *s = wk->src;
	int claim = !wk->w->shared;
	int64_t i = select_in(t, s, s->fstate, s->nfiles, WANT_EXISTING, claim, 1);
	if (i < 0) {
		t->gave_up = i == -1;
		if (i == -2)
			sched_yield();
		return;
	}
	int writes = wk->op == VOP_WRITE || (wk->op < 0 && wk->rdpct < 100);
	char p[PATH_MAX];
	file_path(s, (uint64_t)i, p, sizeof(p));
	uint64_t t0 = now_ns();
	int fd = confined_open(s->rootfd, p, open_flags(s, writes), 0);
	if (fd < 0) {
		release(&s->fstate[i], claim);
		io_fail(t, s, (uint64_t)i, "open", -fd);
		return;
	}
	op_done(t, VOP_OPEN, t0, 0);
	uint64_t fsz = s->fsize[i];
	uint64_t nblocks = !fsz ? 0 : wk->w->fileio_seq ? UINT64_MAX : wk->w->stopafter; /* an empty file (format=no): open, close */
	uint64_t pos = 0;
	for (uint64_t b = 0; b < nblocks && !stopping(t->run); b++) {
		uint64_t xs = dist_pick(&wk->xfer, &t->rng);
		if (xs > fsz)
			xs = fsz;
		uint64_t off;
		if (wk->w->fileio_seq) {
			if (pos >= fsz)
				break;
			off = pos;
			if (off + xs > fsz)
				xs = fsz - off;
			pos += xs;
		} else {
			off = rng_below(&t->rng, fsz / xs) * xs;
		}
		int wr = wk->op == VOP_WRITE ? 1 : wk->op == VOP_READ ? 0 : (int)(rng_below(&t->rng, 100) >= (uint64_t)wk->rdpct);
		if (t->run->c->rd.maxdata && budget_take(t, xs) < 0)
			break;
		pace(t);
		uint64_t s0 = now_ns();
		int rc = io_full(fd, t->buf, xs, off, wr);
		if (rc < 0) {
			io_fail(t, s, (uint64_t)i, wr ? "write" : "read", -rc);
			break;
		}
		op_done(t, wr ? VOP_WRITE : VOP_READ, s0, xs);
	}
	t0 = now_ns();
	if (close(fd) < 0 && !t->run->err)
		io_fail(t, s, (uint64_t)i, "close", errno);
	else
		op_done(t, VOP_CLOSE, t0, 0);
	release(&s->fstate[i], claim);
}

static int fill_file(struct fs_thread *t, const struct fs_set *s, int fd, uint64_t size, uint64_t chunk,
		     uint64_t *written)
{
	for (uint64_t off = 0; off < size && !stopping(t->run);) {
		uint64_t n = size - off < chunk ? size - off : chunk;
		int rc = io_full(fd, t->buf, n, off, 1);
		if (rc < 0)
			return rc;
		off += n;
		*written += n;
	}
	(void)s;
	return 0;
}

/* a file of s for one operation (create, delete, open/close, getattr, setattr): selected and
 * claimed, its path in p (PATH_MAX), paced; -1 when there is none (the thread gives up when
 * select_in says nothing is left) */
static int64_t pick_file(struct fs_thread *t, const struct fs_set *s, enum sel_want want, int claim, char *p)
{
	int64_t i = select_in(t, s, s->fstate, s->nfiles, want, claim, 1);
	if (i < 0) {
		t->gave_up = i == -1;
		return -1;
	}
	file_path(s, (uint64_t)i, p, PATH_MAX);
	pace(t);
	return i;
}

static void op_create(struct fs_thread *t)
{
	struct fs_work *wk = t->wk;
	struct fs_set *s = wk->src;
	char p[PATH_MAX];
	int64_t i = pick_file(t, s, WANT_ABSENT, 1, p);
	if (i < 0)
		return;
	uint64_t t0 = now_ns();
	int fd = confined_open(s->rootfd, p, open_flags(s, 1) | O_CREAT | O_EXCL, 0600);
	if (fd < 0) {
		release(&s->fstate[i], 1);
		if (fd == -ENOENT)
			return; /* its directory went (rmdir in another workload): skipped */
		io_fail(t, s, (uint64_t)i, "create", -fd);
		return;
	}
	atomic_fetch_or(&s->fstate[i], (uint8_t)(ST_EXISTS | ST_OURS));
	uint64_t written = 0;
	int rc = fill_file(t, s, fd, s->fsize[i], wk->max_xfer, &written);
	close(fd);
	if (rc < 0)
		io_fail(t, s, (uint64_t)i, "create", -rc);
	else
		op_done(t, VOP_CREATE, t0, written);
	t->files_created++;
	release(&s->fstate[i], 1);
}

static void op_delete(struct fs_thread *t)
{
	struct fs_set *s = t->wk->src;
	char p[PATH_MAX];
	int64_t i = pick_file(t, s, WANT_OURS, 1, p);
	if (i < 0)
		return;
	uint64_t t0 = now_ns();
	/* unlinkat on the parent opened beneath the root: no link in the path */
	const char *leaf;
	int dfd = confined_parent(s->rootfd, p, &leaf), rc = 0;
	if (dfd < 0)
		rc = dfd;
	else if (unlinkat(dfd, leaf, 0) < 0)
		rc = -errno;
	confined_parent_close(s->rootfd, dfd);
	if (rc < 0) {
		release(&s->fstate[i], 1);
		io_fail(t, s, (uint64_t)i, "delete", -rc);
		return;
	}
	op_done(t, VOP_DELETE, t0, 0);
	atomic_fetch_and(&s->fstate[i], (uint8_t)~(ST_EXISTS | ST_OURS));
	t->files_deleted++;
	release(&s->fstate[i], 1);
}

/* open (then close), getattr, setattr on one existing file */
static void op_meta(struct fs_thread *t, int op)
{
	struct fs_set *s = t->wk->src;
	int claim = !t->wk->w->shared;
	char p[PATH_MAX];
	int64_t i = pick_file(t, s, WANT_EXISTING, claim, p);
	if (i < 0)
		return;
	uint64_t t0 = now_ns();
	int fd = confined_open(s->rootfd, p, op == VOP_SETATTR ? O_WRONLY : O_RDONLY, 0);
	if (fd < 0) {
		release(&s->fstate[i], claim);
		io_fail(t, s, (uint64_t)i, vdb_op_names[op], -fd);
		return;
	}
	if (op == VOP_OPEN || op == VOP_CLOSE) {
		op_done(t, VOP_OPEN, t0, 0);
		t0 = now_ns();
		close(fd);
		op_done(t, VOP_CLOSE, t0, 0);
	} else if (op == VOP_GETATTR) {
		struct stat st;
		int rc = fstat(fd, &st);
		close(fd);
		if (rc < 0)
			io_fail(t, s, (uint64_t)i, "getattr", errno);
		else
			op_done(t, VOP_GETATTR, t0, 0);
	} else {
		int rc = futimens(fd, NULL);
		close(fd);
		if (rc < 0)
			io_fail(t, s, (uint64_t)i, "setattr", errno);
		else
			op_done(t, VOP_SETATTR, t0, 0);
	}
	release(&s->fstate[i], claim);
}

/* mkdir / rmdir of lowest-level directories (mkdir makes missing parents too, each counted) */
static void op_dir(struct fs_thread *t, int op)
{
	struct fs_set *s = t->wk->src;
	unsigned depth = s->d->depth;
	if (!depth) {
		t->gave_up = 1;
		return;
	}
	_Atomic uint8_t *leafs = &s->dstate[s->lvl_off[depth]];
	uint64_t n = s->lvl_n[depth];
	int64_t j = -1;
	/* a claimed leaf that is eligible: absent (mkdir) or ours and without files (rmdir) */
	for (int round = 0; round < 2 && j < 0; round++) {
		int64_t c = select_in(t, s, leafs, n, op == VOP_MKDIR ? WANT_ABSENT : WANT_OURS, 1, 0);
		if (c < 0) {
			t->gave_up = c == -1;
			return;
		}
		if (op == VOP_RMDIR) {
			int empty = 1;
			for (uint64_t f = (uint64_t)c * s->fpl; f < ((uint64_t)c + 1) * s->fpl && empty; f++)
				empty = !(atomic_load(&s->fstate[f]) & ST_EXISTS);
			if (!empty) {
				release(&leafs[c], 1);
				continue;
			}
		}
		j = c;
	}
	if (j < 0)
		return;
	char p[PATH_MAX];
	pace(t);
	if (op == VOP_MKDIR) {
		for (unsigned k = 1; k <= depth && !stopping(t->run); k++) {
			uint64_t jj = (uint64_t)j;
			for (unsigned up = depth; up > k; up--)
				jj /= s->d->width;
			_Atomic uint8_t *st = &s->dstate[s->lvl_off[k] + jj];
			if (k < depth && (atomic_load(st) & ST_EXISTS))
				continue;
			dir_path(s, k, jj, p, sizeof(p));
			const char *leaf;
			int dfd = confined_parent(s->rootfd, p, &leaf);
			uint64_t t0 = now_ns();
			int rc = dfd < 0 ? dfd : mkdirat(dfd, leaf, 0700) < 0 ? -errno : 0;
			confined_parent_close(s->rootfd, dfd);
			if (rc == -EEXIST && k < depth)
				continue; /* another thread made the parent */
			if (rc < 0) {
				run_fail(t->run, -rc, "mkdir '%s': %s", p, strerror(-rc));
				break;
			}
			op_done(t, VOP_MKDIR, t0, 0);
			atomic_fetch_or(st, (uint8_t)(ST_EXISTS | ST_OURS));
			t->dirs_created++;
		}
	} else {
		dir_path(s, depth, (uint64_t)j, p, sizeof(p));
		const char *leaf;
		int dfd = confined_parent(s->rootfd, p, &leaf);
		uint64_t t0 = now_ns();
		int rc = dfd < 0 ? dfd : unlinkat(dfd, leaf, AT_REMOVEDIR) < 0 ? -errno : 0;
		confined_parent_close(s->rootfd, dfd);
		if (rc < 0) {
			run_fail(t->run, -rc, "rmdir '%s': %s", p, strerror(-rc));
		} else {
			op_done(t, VOP_RMDIR, t0, 0);
			atomic_fetch_and(&leafs[j], (uint8_t)~(ST_EXISTS | ST_OURS));
			t->dirs_removed++;
		}
	}
	release(&leafs[j], 1);
}

/* copy / move a file of the source fsd to a free file name of the target fsd */
static void op_copymove(struct fs_thread *t, int op)
{
	struct fs_work *wk = t->wk;
	struct fs_set *s = wk->src, *d = wk->dst;
	/* a free target slot first, then a source file */
	int64_t dj = select_in(t, d, d->fstate, d->nfiles, WANT_ABSENT, 1, 1);
	if (dj < 0) {
		t->gave_up = dj == -1;
		if (dj == -2)
			sched_yield();
		return;
	}
	uint64_t di = (uint64_t)dj;
	int64_t i = select_in(t, s, s->fstate, s->nfiles, op == VOP_MOVE ? WANT_OURS : WANT_EXISTING, 1, 1);
	if (i < 0) {
		release(&d->fstate[di], 1);
		t->gave_up = i == -1;
		if (i == -2)
			sched_yield();
		return;
	}
	char ps[PATH_MAX], pd[PATH_MAX];
	file_path(s, (uint64_t)i, ps, sizeof(ps));
	file_path(d, di, pd, sizeof(pd));
	pace(t);
	uint64_t t0 = now_ns();
	int rc = 0;
	uint64_t bytes = 0;
	if (op == VOP_MOVE) {
		/* rename between the two parents, each opened beneath its root */
		const char *sleaf, *dleaf;
		int sfd = confined_parent(s->rootfd, ps, &sleaf), dfd = confined_parent(d->rootfd, pd, &dleaf);
		if (sfd < 0 || dfd < 0)
			rc = sfd < 0 ? sfd : dfd;
		else if (renameat2(sfd, sleaf, dfd, dleaf, RENAME_NOREPLACE) < 0)
			rc = -errno;
		confined_parent_close(s->rootfd, sfd);
		confined_parent_close(d->rootfd, dfd);
		if (!rc) {
			atomic_fetch_and(&s->fstate[i], (uint8_t)~(ST_EXISTS | ST_OURS));
			atomic_fetch_or(&d->fstate[di], (uint8_t)(ST_EXISTS | ST_OURS));
		}
	} else {
		int in = confined_open(s->rootfd, ps, open_flags(s, 0), 0);
		int out = in < 0 ? -1 : confined_open(d->rootfd, pd, open_flags(d, 1) | O_CREAT | O_EXCL, 0600);
		if (in < 0)
			rc = in;
		else if (out < 0)
			rc = out;
		else {
			atomic_fetch_or(&d->fstate[di], (uint8_t)(ST_EXISTS | ST_OURS));
			uint64_t sz = s->fsize[i];
			for (uint64_t off = 0; off < sz && !rc;) {
				uint64_t n = sz - off < wk->max_xfer ? sz - off : wk->max_xfer;
				rc = io_full(in, t->buf, n, off, 0);
				if (!rc)
					rc = io_full(out, t->buf, n, off, 1);
				off += n;
				bytes += n;
			}
			d->fsize[di] = sz;
		}
		if (in >= 0)
			close(in);
		if (out >= 0)
			close(out);
	}
	if (rc < 0)
		run_fail(t->run, -rc, "%s '%s' to '%s': %s", vdb_op_names[op], ps, pd, strerror(-rc));
	else
		op_done(t, op, t0, bytes);
	release(&d->fstate[di], 1);
	release(&s->fstate[i], 1);
}

static void *thread_main(void *arg)
{
	struct fs_thread *t = arg;
	struct fs_run *r = t->run;
	struct fs_work *wk = t->wk;
	t->next_tick = r->t_start + r->interval_ns;
	t->next_due = now_ns();
	while (!stopping(r) && !t->gave_up && !t->spent) {
		switch (wk->op) {
		case -1:
		case VOP_READ:
		case VOP_WRITE:
			op_rw(t);
			break;
		case VOP_CREATE:
			op_create(t);
			break;
		case VOP_DELETE:
			op_delete(t);
			break;
		case VOP_OPEN:
		case VOP_CLOSE:
		case VOP_GETATTR:
		case VOP_SETATTR:
			op_meta(t, wk->op);
			break;
		case VOP_MKDIR:
		case VOP_RMDIR:
			op_dir(t, wk->op);
			break;
		default:
			op_copymove(t, wk->op);
			break;
		}
	}
	if (t->gave_up)
		atomic_fetch_add(&wk->exhausted, 1);
	t->t_end = now_ns();
	tick(t, UINT64_MAX); /* close the last (partial) interval */
	atomic_fetch_add(&r->finished, 1);
	return NULL;
}

/* ---- format ---- */

static int dir_make(struct fs_run *r, struct fs_set *s, unsigned k, uint64_t j, int create)
{
	char p[PATH_MAX];
	dir_path(s, k, j, p, sizeof(p));
	_Atomic uint8_t *st = &s->dstate[s->lvl_off[k] + j];
	const char *name;
	int dfd = confined_parent(s->rootfd, p, &name);
	if (dfd < 0) {
		if (dfd == -ENOENT && !create)
			return 0;
		run_fail(r, -dfd, "open directory '%s': %s", p, strerror(-dfd));
		return dfd;
	}
	int rc = 0;
	if (create && mkdirat(dfd, name, 0700) == 0) {
		atomic_store(st, ST_EXISTS | ST_OURS);
		r->fmt_dirs++;
	} else if (!create || errno == EEXIST) {
		struct stat sb;
		if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0) {
			if (!S_ISDIR(sb.st_mode)) {
				run_fail(r, ENOTDIR, "'%s' exists and is not a directory (refused)", p);
				rc = -ENOTDIR;
			} else {
				atomic_store(st, ST_EXISTS);
			}
		} else if (create || errno != ENOENT) {
			rc = -errno;
			run_fail(r, errno, "directory '%s': %s", p, strerror(errno));
		}
	} else {
		rc = -errno;
		run_fail(r, errno, "mkdir '%s': %s%s", p, strerror(errno),
			 errno == ENOSPC ? " (the file set does not fit: lower --scale or free space)" : "");
	}
	confined_parent_close(s->rootfd, dfd);
	return rc;
}

static void *format_main(void *arg)
{
	struct fs_thread *t = arg;
	struct fs_run *r = t->run;
	struct fs_set *s = &r->set[r->fmt_set];
	int mode = r->c->rd.format;
	char p[PATH_MAX];
	/* in the workload's largest transfer, as the workload will write: the page cache's folios
	 * follow the size of the writes that filled it, and 4k writes into a file written in 1 MiB
	 * calls cost twice the system time on ext4 (per-buffer walk of a large folio) */
	uint64_t chunk = s->fmt_chunk;
	for (uint64_t i = t->id; i < s->nfiles && !stopping(r); i += r->fmt_threads) {
		if (!leaf_exists(s, i))
			continue;
		file_path(s, i, p, sizeof(p));
		if (mode == VDB_FORMAT_NO) {
			int fd = confined_open(s->rootfd, p, O_RDONLY, 0);
			if (fd >= 0) {
				struct stat sb;
				if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode)) {
					atomic_store(&s->fstate[i], ST_EXISTS);
					if ((uint64_t)sb.st_size < s->fsize[i])
						s->fsize[i] = (uint64_t)sb.st_size;
				}
				close(fd);
			}
			continue;
		}
		int fd = confined_open(s->rootfd, p, open_flags(s, 1) | O_CREAT | O_EXCL, 0600);
		if (fd == -EEXIST) {
			if (mode == VDB_FORMAT_YES) {
				run_fail(r, EEXIST, "format=yes: '%s' already exists (the engine never replaces a file it did "
						    "not create: use format=restart or format=no, or an empty directory)", p);
				break;
			}
			fd = confined_open(s->rootfd, p, O_RDONLY, 0);
			struct stat sb;
			if (fd < 0 || fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || (uint64_t)sb.st_size < s->fsize[i]) {
				if (fd >= 0)
					close(fd);
				run_fail(r, EEXIST, "format=restart: '%s' exists but is not a regular file of %llu bytes or more "
						    "(refused: it was not created by this run)", p, (unsigned long long)s->fsize[i]);
				break;
			}
			close(fd);
			atomic_store(&s->fstate[i], ST_EXISTS);
			continue;
		}
		if (fd < 0) {
			io_fail(t, s, i, "format: create", -fd);
			break;
		}
		atomic_store(&s->fstate[i], ST_EXISTS | ST_OURS);
		t->fmt_files++;
		int rc = fill_file(t, s, fd, s->fsize[i], chunk, &t->fmt_bytes);
		if (close(fd) < 0 && !rc)
			rc = -errno;
		if (rc < 0) {
			io_fail(t, s, i, "format: write", -rc);
			break;
		}
	}
	return NULL;
}

/* ---- cleanup: what this run created, files first, then directories deepest first ---- */

static int cleanup_set(struct fs_set *s, int dirfd, uint64_t *files, uint64_t *dirs)
{
	int bad = 0;
	char p[PATH_MAX];
	if (s->rootfd < 0) {
		/* the set's root was made but could not be opened: nothing under it is ours */
		if (!s->made_root)
			return 0;
		if (unlinkat(dirfd, s->d->name, AT_REMOVEDIR) < 0) {
			warnmsg("vdbench: cleanup: cannot remove directory '%s': %s", s->d->name, strerror(errno));
			return -1;
		}
		s->made_root = 0;
		(*dirs)++;
		return 0;
	}
	for (uint64_t i = 0; i < s->nfiles; i++) {
		if ((atomic_load(&s->fstate[i]) & (ST_EXISTS | ST_OURS)) != (ST_EXISTS | ST_OURS))
			continue;
		file_path(s, i, p, sizeof(p));
		const char *leaf;
		int dfd = confined_parent(s->rootfd, p, &leaf);
		if (dfd < 0 || unlinkat(dfd, leaf, 0) < 0) {
			warnmsg("vdbench: cleanup: cannot remove '%s': %s", p, strerror(dfd < 0 ? -dfd : errno));
			bad = 1;
		} else {
			(*files)++;
			atomic_store(&s->fstate[i], 0);
		}
		confined_parent_close(s->rootfd, dfd);
	}
	for (unsigned k = s->d->depth; k >= 1; k--) {
		for (uint64_t j = 0; j < s->lvl_n[k]; j++) {
			if ((atomic_load(&s->dstate[s->lvl_off[k] + j]) & ST_OURS) == 0)
				continue;
			dir_path(s, k, j, p, sizeof(p));
			const char *leaf;
			int dfd = confined_parent(s->rootfd, p, &leaf);
			if (dfd < 0 || unlinkat(dfd, leaf, AT_REMOVEDIR) < 0) {
				warnmsg("vdbench: cleanup: cannot remove directory '%s': %s", p,
					strerror(dfd < 0 ? -dfd : errno));
				bad = 1;
			} else {
				(*dirs)++;
				atomic_store(&s->dstate[s->lvl_off[k] + j], 0);
			}
			confined_parent_close(s->rootfd, dfd);
		}
	}
	if (s->made_root) {
		close(s->rootfd);
		s->rootfd = -1;
		if (unlinkat(dirfd, s->d->name, AT_REMOVEDIR) < 0) {
			warnmsg("vdbench: cleanup: cannot remove directory '%s': %s", s->d->name, strerror(errno));
			bad = 1;
		} else {
			(*dirs)++;
		}
	}
	return bad ? -1 : 0;
}

/* ---- report ---- */

struct agg {
	uint64_t ops[VOP_N], bytes[VOP_N];
	struct lstat lat[VOP_N];
	uint64_t *hist[VOP_N];
};

static void agg_init(struct agg *a)
{
	memset(a, 0, sizeof(*a));
	for (int k = 0; k < VOP_N; k++) {
		lstat_init(&a->lat[k]);
		a->hist[k] = calloc(HIST_NR, sizeof(uint64_t));
		if (!a->hist[k])
			die_code(EXIT_FAIL, "out of memory");
	}
}

static void agg_free(struct agg *a)
{
	for (int k = 0; k < VOP_N; k++)
		free(a->hist[k]);
}

/* interval ix (all threads), or with ix = -1 the measured intervals' totals */
static void agg_collect(struct agg *a, const struct fs_run *r, int64_t ix)
{
	for (int k = 0; k < VOP_N; k++) {
		const struct ivop *o = ix >= 0 ? &r->ivs[ix].op[k] : &r->tot[k];
		a->ops[k] += o->ops;
		a->bytes[k] += o->bytes;
		if (o->ops)
			lstat_merge(&a->lat[k], &o->lat);
		if (ix < 0) {
			for (unsigned i = 0; i < HIST_NR; i++)
				a->hist[k][i] += r->tot_hist[k][i];
		} else {
			for (uint32_t j = 0; j < r->ivs[ix].hn[k]; j++)
				a->hist[k][r->ivs[ix].h[k][j].idx] += r->ivs[ix].h[k][j].cnt;
		}
	}
}

static double cpu_pct(const struct cpustat *a, const struct cpustat *b, int sys_only)
{
	if (!a->ok || !b->ok)
		return -1;
	uint64_t d[10], total = 0;
	for (int i = 0; i < 8; i++) {
		d[i] = b->v[i] >= a->v[i] ? b->v[i] - a->v[i] : 0;
		total += d[i];
	}
	if (!total)
		return 0;
	uint64_t busy = sys_only ? d[2] + d[5] + d[6] : total - d[3] - d[4] - d[7];
	return 100.0 * (double)busy / (double)total;
}

struct cpusnap {
	struct cpustat host;
	double usr_s, sys_s;
};

static void snap_cpu(struct cpusnap *c)
{
	cpustat_read(&c->host);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	c->usr_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
	c->sys_s = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static void emit_cpu(struct jw *w, const struct cpusnap *a, const struct cpusnap *b, uint64_t ops)
{
	jw_obj(w, "cpu");
	double tot = cpu_pct(&a->host, &b->host, 0), sys = cpu_pct(&a->host, &b->host, 1);
	if (tot < 0) {
		jw_null(w, "total_pct");
		jw_null(w, "system_pct");
	} else {
		jw_dbl(w, "total_pct", tot);
		jw_dbl(w, "system_pct", sys);
	}
	double pu = b->usr_s - a->usr_s, ps = b->sys_s - a->sys_s;
	jw_dbl(w, "process_user_s", pu);
	jw_dbl(w, "process_system_s", ps);
	jw_dbl(w, "process_ns_per_op", ops ? (pu + ps) * 1e9 / (double)ops : 0);
	jw_obj_end(w);
}

static uint64_t counted_ops(const struct agg *a)
{
	uint64_t n = 0;
	for (int k = 0; k < VOP_N; k++)
		if (k != VOP_OPEN && k != VOP_CLOSE)
			n += a->ops[k];
	return n;
}

static void emit_agg(struct jw *w, const struct agg *a, uint64_t ns, int bins, const struct cpusnap *c0,
		     const struct cpusnap *c1)
{
	double secs = (double)ns / 1e9;
	jw_u64(w, "duration_ns", ns);
	jw_obj(w, "ops");
	for (int k = 0; k < VOP_N; k++) {
		if (!a->ops[k])
			continue;
		jw_obj(w, vdb_op_names[k]);
		jw_u64(w, "ops", a->ops[k]);
		jw_dbl(w, "rate", secs > 0 ? (double)a->ops[k] / secs : 0);
		jw_u64(w, "bytes", a->bytes[k]);
		emit_lstat(w, "resp_ns", &a->lat[k], a->hist[k], bins);
		jw_obj_end(w);
	}
	jw_obj_end(w);
	uint64_t rb = a->bytes[VOP_READ], wb = a->bytes[VOP_WRITE] + a->bytes[VOP_CREATE];
	if (a->ops[VOP_COPY])
		wb += a->bytes[VOP_COPY], rb += a->bytes[VOP_COPY];
	jw_u64(w, "read_bytes", rb);
	jw_u64(w, "write_bytes", wb);
	jw_dbl(w, "read_bw_bytes", secs > 0 ? (double)rb / secs : 0);
	jw_dbl(w, "write_bw_bytes", secs > 0 ? (double)wb / secs : 0);
	jw_dbl(w, "read_mb_s", secs > 0 ? (double)rb / secs / 1048576.0 : 0);
	jw_dbl(w, "write_mb_s", secs > 0 ? (double)wb / secs / 1048576.0 : 0);
	uint64_t n = counted_ops(a);
	jw_u64(w, "ops_total", n);
	jw_dbl(w, "rate_total", secs > 0 ? (double)n / secs : 0);
	emit_cpu(w, c0, c1, n);
}

static void emit_dist(struct jw *w, const char *key, const struct vdb_dist *d)
{
	jw_arr(w, key);
	for (int k = 0; k < d->n; k++) {
		jw_obj(w, NULL);
		jw_u64(w, "bytes", d->v[k]);
		jw_dbl(w, "pct", d->pct[k]);
		jw_obj_end(w);
	}
	jw_arr_end(w);
}

struct fs_report {
	const char *file, *dir, *beneath;
	int keep, jsonplus, interrupted, sig;
	struct timeval tv;
	uint64_t run_ns, meas_ns, fmt_ns;
	uint32_t niv, warm_iv;
	struct cpusnap *cpu;            /* [niv + 1]: at the run's start and each interval's end */
	struct cpusnap fmt0, fmt1;
	struct diskstat d0, d1;
	uint64_t files_created, dirs_created, files_deleted, dirs_removed, fmt_files, fmt_bytes, fmt_dirs;
	uint64_t clean_files, clean_dirs;
	int exhausted;
};

/* interval i of the report, all threads merged into a (agg_free it), its end in the run (*end, ns
 * from the start; the last one ends with the run) and its length, ns */
static uint64_t interval_agg(const struct fs_run *r, const struct fs_report *rp, uint32_t i, struct agg *a,
			     uint64_t *end)
{
	agg_init(a);
	agg_collect(a, r, i);
	uint64_t b0 = (uint64_t)i * r->interval_ns, b1 = b0 + r->interval_ns;
	if (b1 > rp->run_ns)
		b1 = rp->run_ns;
	*end = b1;
	return b1 > b0 ? b1 - b0 : 0;
}

static void report_json(struct fs_run *r, const struct fs_report *rp)
{
	const struct vdb_cfg *c = r->c;
	struct agg tot;
	agg_init(&tot);
	agg_collect(&tot, r, -1);
	struct jw w;
	jw_init(&w, stdout);
	jw_obj(&w, NULL);
	emit_preamble(&w, &rp->tv);
	jw_obj(&w, "global options");
	jw_str(&w, "vdbench", rp->file);
	jw_str(&w, "directory", rp->dir);
	jw_obj_end(&w);
	jw_arr(&w, "jobs");
	jw_obj(&w, NULL);
	jw_str(&w, "jobname", c->rd.name);
	jw_i64(&w, "groupid", 0);
	jw_i64(&w, "error", r->err);
	jw_i64(&w, "eta", 0);
	jw_u64(&w, "elapsed", (rp->run_ns + 999999999ull) / 1000000000ull);
	jw_obj(&w, "job options");
	jw_str(&w, "name", c->rd.name);
	jw_obj_end(&w);
	emit_dir_totals(&w, "read", tot.bytes[VOP_READ], tot.ops[VOP_READ], rp->meas_ns, &tot.lat[VOP_READ],
			tot.hist[VOP_READ]);
	emit_dir_totals(&w, "write", tot.bytes[VOP_WRITE], tot.ops[VOP_WRITE], rp->meas_ns, &tot.lat[VOP_WRITE],
			tot.hist[VOP_WRITE]);
	emit_empty_dir(&w, "trim");
	const struct cpusnap *c0 = &rp->cpu[rp->warm_iv < rp->niv ? rp->warm_iv : rp->niv], *c1 = &rp->cpu[rp->niv];
	double secs = (double)rp->meas_ns / 1e9;
	jw_u64(&w, "job_runtime", (rp->meas_ns + 500000) / 1000000);
	jw_dbl(&w, "usr_cpu", secs > 0 ? 100.0 * (c1->usr_s - c0->usr_s) / secs : 0);
	jw_dbl(&w, "sys_cpu", secs > 0 ? 100.0 * (c1->sys_s - c0->sys_s) / secs : 0);
	emit_job_iowatt(&w, "vdbench-fileset", rp->meas_ns, r->err ? r->errmsg : NULL);
	jw_obj_end(&w);
	jw_arr_end(&w);
	jw_arr(&w, "disk_util");
	emit_disk_util(&w, &rp->d0, &rp->d1, rp->run_ns);
	jw_arr_end(&w);

	jw_obj(&w, "fileset");
	jw_str(&w, "model", "vdbench");
	jw_str(&w, "parameter_file", rp->file);
	jw_str(&w, "directory", rp->dir);
	jw_str_or_null(&w, "beneath", rp->beneath);
	jw_bool(&w, "kept", rp->keep);
	jw_dbl(&w, "scale", r->scale);
	jw_arr(&w, "fsd");
	for (int k = 0; k < r->nset; k++) {
		const struct fs_set *s = &r->set[k];
		jw_obj(&w, NULL);
		jw_str(&w, "name", s->d->name);
		jw_str(&w, "anchor_given", s->d->anchor);
		jw_str(&w, "anchor", r->nset > 1 ? s->d->name : ".");
		jw_u64(&w, "depth", s->d->depth);
		jw_u64(&w, "width", s->d->width);
		jw_u64(&w, "files_given", s->d->files);
		jw_u64(&w, "files", s->fpl);
		emit_dist(&w, "size_given", &s->d->size);
		emit_dist(&w, "size", &s->size);
		jw_u64(&w, "total_files", s->nfiles);
		jw_u64(&w, "total_directories", s->ndirs);
		jw_u64(&w, "total_bytes", s->size_sum);
		jw_bool(&w, "o_direct", s->d->direct);
		jw_bool(&w, "o_sync", s->d->osync);
		jw_bool(&w, "o_dsync", s->d->odsync);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_arr(&w, "fwd");
	for (int k = 0; k < r->nwork; k++) {
		const struct fs_work *wk = &r->work[k];
		jw_obj(&w, NULL);
		jw_str(&w, "name", wk->w->name);
		jw_str(&w, "fsd", wk->src->d->name);
		if (wk->dst)
			jw_str(&w, "target_fsd", wk->dst->d->name);
		jw_str(&w, "operation", wk->op < 0 ? "read/write" : vdb_op_names[wk->op]);
		if (wk->op < 0 || wk->op == VOP_READ || wk->op == VOP_WRITE)
			jw_i64(&w, "rdpct", wk->rdpct);
		else
			jw_null(&w, "rdpct");
		emit_dist(&w, "xfersize", &wk->xfer);
		jw_str(&w, "fileselect", wk->w->fileselect_seq ? "sequential" : "random");
		jw_str(&w, "fileio", wk->w->fileio_seq ? "sequential" : "random");
		jw_bool(&w, "shared", wk->w->shared);
		jw_u64(&w, "threads", wk->w->threads);
		jw_u64(&w, "stopafter", wk->w->stopafter);
		jw_bool(&w, "exhausted", atomic_load(&wk->exhausted) == wk->w->threads);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_obj(&w, "rd");
	jw_str(&w, "name", c->rd.name);
	if (c->rd.fwdrate > 0)
		jw_dbl(&w, "fwdrate", c->rd.fwdrate);
	else
		jw_str(&w, "fwdrate", "max");
	jw_str(&w, "format", c->rd.format == VDB_FORMAT_YES ? "yes" : c->rd.format == VDB_FORMAT_RESTART ? "restart" : "no");
	jw_u64(&w, "elapsed_given_s", c->rd.elapsed_s);
	jw_u64(&w, "elapsed_ns", r->elapsed_ns);
	jw_u64(&w, "interval_ns", r->interval_ns);
	jw_u64(&w, "warmup_ns", r->warmup_ns);
	if (c->rd.maxdata)
		jw_u64(&w, "maxdata", c->rd.maxdata);
	else
		jw_null(&w, "maxdata");
	jw_bool(&w, "maxdata_reached", atomic_load(&r->maxdata_reached));
	jw_obj_end(&w);
	jw_obj(&w, "format");
	jw_u64(&w, "elapsed_ns", rp->fmt_ns);
	jw_u64(&w, "files_created", rp->fmt_files);
	jw_u64(&w, "directories_created", rp->fmt_dirs);
	jw_u64(&w, "bytes_written", rp->fmt_bytes);
	emit_cpu(&w, &rp->fmt0, &rp->fmt1, rp->fmt_files);
	jw_obj_end(&w);
	jw_u64(&w, "elapsed_ns", rp->run_ns);
	jw_u64(&w, "measured_ns", rp->meas_ns);
	jw_u64(&w, "warmup_intervals", rp->warm_iv < rp->niv ? rp->warm_iv : rp->niv);
	jw_bool(&w, "exhausted", rp->exhausted);
	jw_u64(&w, "files_created", rp->fmt_files + rp->files_created);
	jw_u64(&w, "directories_created", rp->fmt_dirs + rp->dirs_created);
	jw_u64(&w, "files_deleted", rp->files_deleted);
	jw_u64(&w, "directories_removed", rp->dirs_removed);
	jw_obj(&w, "cleanup");
	jw_u64(&w, "files_removed", rp->clean_files);
	jw_u64(&w, "directories_removed", rp->clean_dirs);
	jw_obj_end(&w);
	jw_obj(&w, "total");
	emit_agg(&w, &tot, rp->meas_ns, rp->jsonplus, c0, c1);
	jw_obj_end(&w);
	jw_arr(&w, "intervals");
	for (uint32_t i = 0; i < rp->niv; i++) {
		struct agg a;
		uint64_t end, ns = interval_agg(r, rp, i, &a, &end);
		jw_obj(&w, NULL);
		jw_u64(&w, "index", i + 1);
		jw_u64(&w, "end_ns", end);
		jw_bool(&w, "warmup", i < rp->warm_iv);
		emit_agg(&w, &a, ns, 0, &rp->cpu[i], &rp->cpu[i + 1]);
		jw_obj_end(&w);
		agg_free(&a);
	}
	jw_arr_end(&w);
	jw_str_or_null(&w, "error", r->err ? r->errmsg : NULL);
	jw_obj_end(&w);

	jw_obj(&w, "iowatt");
	emit_iowatt_head(&w, "vdbench", rp->interrupted, rp->sig);
	cpustat_emit(&w, "system_cpu", &rp->cpu[0].host, &rp->cpu[rp->niv].host);
	jw_obj_end(&w);
	jw_obj_end(&w);
	fputc('\n', stdout);
	fflush(stdout);
	agg_free(&tot);
}

static void print_line(const char *label, const struct agg *a, uint64_t ns, const struct cpusnap *c0,
		       const struct cpusnap *c1)
{
	double secs = (double)ns / 1e9;
	uint64_t n = counted_ops(a);
	double rr = secs > 0 ? (double)a->ops[VOP_READ] / secs : 0, wr = secs > 0 ? (double)a->ops[VOP_WRITE] / secs : 0;
	double rb = secs > 0 ? (double)a->bytes[VOP_READ] / secs / 1048576.0 : 0;
	double wb = secs > 0 ? (double)(a->bytes[VOP_WRITE] + a->bytes[VOP_CREATE]) / secs / 1048576.0 : 0;
	double oc = secs > 0 ? (double)a->ops[VOP_OPEN] / secs : 0;
	struct lstat all;
	lstat_init(&all);
	for (int k = 0; k < VOP_N; k++)
		if (k != VOP_OPEN && k != VOP_CLOSE && a->lat[k].n)
			lstat_merge(&all, &a->lat[k]);
	printf("%-8s %10.1f %8.3f %10.1f %8.3f %10.1f %8.3f %9.2f %9.2f %8.1f %6.1f %6.1f\n", label,
	       secs > 0 ? (double)n / secs : 0, lstat_mean(&all) / 1e6, rr,
	       lstat_mean(&a->lat[VOP_READ]) / 1e6, wr, lstat_mean(&a->lat[VOP_WRITE]) / 1e6, rb, wb, oc,
	       cpu_pct(&c0->host, &c1->host, 0), cpu_pct(&c0->host, &c1->host, 1));
}

static void report_normal(struct fs_run *r, const struct fs_report *rp)
{
	printf("vdbench file set (iowatt-engine %s) rd=%s in %s, scale %g\n", IOWATT_VERSION, r->c->rd.name, rp->dir,
	       r->scale);
	for (int k = 0; k < r->nset; k++)
		printf("fsd=%s: %llu directories, %llu files, %llu bytes\n", r->set[k].d->name,
		       (unsigned long long)r->set[k].ndirs, (unsigned long long)r->set[k].nfiles,
		       (unsigned long long)r->set[k].size_sum);
	printf("format: %llu files, %llu directories, %.3f s\n", (unsigned long long)rp->fmt_files,
	       (unsigned long long)rp->fmt_dirs, (double)rp->fmt_ns / 1e9);
	printf("%-8s %10s %8s %10s %8s %10s %8s %9s %9s %8s %6s %6s\n", "interval", "ops/s", "resp_ms", "read/s",
	       "read_ms", "write/s", "write_ms", "rd_MB/s", "wr_MB/s", "open/s", "cpu%", "sys%");
	for (uint32_t i = 0; i < rp->niv; i++) {
		struct agg a;
		uint64_t end, ns = interval_agg(r, rp, i, &a, &end);
		char label[32];
		snprintf(label, sizeof(label), "%u%s", i + 1, i < rp->warm_iv ? "w" : "");
		print_line(label, &a, ns, &rp->cpu[i], &rp->cpu[i + 1]);
		agg_free(&a);
	}
	struct agg tot;
	agg_init(&tot);
	agg_collect(&tot, r, -1);
	const struct cpusnap *c0 = &rp->cpu[rp->warm_iv < rp->niv ? rp->warm_iv : rp->niv];
	print_line("avg", &tot, rp->meas_ns, c0, &rp->cpu[rp->niv]);
	printf("\nper operation (measured intervals; ns):\n");
	for (int k = 0; k < VOP_N; k++) {
		const struct lstat *s = &tot.lat[k];
		if (!s->n)
			continue;
		static const double pct[3] = { 50.0, 99.0, 99.9 };
		uint64_t out[3];
		hist_percentiles(tot.hist[k], s->n, pct, 3, out);
		printf("  %-8s %10llu ops %10.1f/s  mean %.0f  p50 %llu  p99 %llu  p99.9 %llu  max %llu\n", vdb_op_names[k],
		       (unsigned long long)s->n, (double)s->n / ((double)rp->meas_ns / 1e9), lstat_mean(s),
		       (unsigned long long)out[0], (unsigned long long)out[1], (unsigned long long)out[2],
		       (unsigned long long)s->max);
	}
	agg_free(&tot);
}

/* ---- setup ---- */

static struct fs_set *find_set(struct fs_run *r, const char *name)
{
	for (int k = 0; k < r->nset; k++)
		if (!strcmp(r->set[k].d->name, name))
			return &r->set[k];
	return NULL;
}

/* resolve fsd/fwd/rd into sets and workloads, with the scale; exits 2 on an inconsistency. With
 * store = 0 (--parse-only) no per-file state is allocated: a set's total bytes come from the same
 * draws the run makes (files x size for a fixed size), so a set too large to run is still described;
 * sizes are drawn one by one up to draws_max files (PARSE_DRAWS_MAX, CHECK_DRAWS_MAX), above it a
 * set's total is files x mean size */
#define PARSE_DRAWS_MAX (1ull << 24) /* --parse-only */
#define CHECK_DRAWS_MAX (1ull << 12) /* vdb_parse_check (the fuzz target): the same code, fewer draws */

static void resolve(struct fs_run *r, uint64_t seed, int store, uint64_t draws_max)
{
	struct vdb_cfg *c = r->c;
	const struct vdb_rd *rd = &c->rd;
	if (!rd->nfwd)
		die_usage("fwd", "rd=%s: fwd= is required", rd->name);
	r->nset = c->nfsd;
	for (int k = 0; k < c->nfsd; k++) {
		r->set[k].d = &c->fsd[k];
		r->set[k].rootfd = -1;
	}
	unsigned nth = 0;
	for (int k = 0; k < rd->nfwd; k++) {
		const struct vdb_fwd *fw = NULL;
		for (int j = 0; j < c->nfwd; j++)
			if (!strcmp(c->fwd[j].name, rd->fwd[k]))
				fw = &c->fwd[j];
		if (!fw)
			die_usage("fwd", "rd=%s: fwd=%s is not defined", rd->name, rd->fwd[k]);
		struct fs_work *wk = &r->work[r->nwork++];
		wk->w = fw;
		if (!fw->nfsd)
			die_usage("fsd", "fwd=%s: fsd= is required", fw->name);
		wk->src = find_set(r, fw->fsd[0]);
		if (!wk->src)
			die_usage("fsd", "fwd=%s: fsd=%s is not defined", fw->name, fw->fsd[0]);
		wk->op = fw->op;
		if (fw->op == VOP_COPY || fw->op == VOP_MOVE) {
			if (fw->nfsd != 2)
				die_usage("fsd", "fwd=%s: operation=%s needs fsd=(source,target)", fw->name, vdb_op_names[fw->op]);
			wk->dst = find_set(r, fw->fsd[1]);
			if (!wk->dst || wk->dst == wk->src)
				die_usage("fsd", "fwd=%s: target fsd=%s must be another defined fsd", fw->name, fw->fsd[1]);
		} else if (fw->nfsd != 1) {
			die_usage("fsd", "fwd=%s: two fsds only with operation=copy or move", fw->name);
		}
		wk->rdpct = fw->rdpct;
		if (fw->op < 0 && fw->rdpct < 0)
			wk->op = VOP_READ; /* vdbench's default operation */
		if ((fw->op == VOP_READ || fw->op == VOP_WRITE) && fw->rdpct >= 0)
			wk->op = -1; /* rdpct= mixes reads and writes */
		if (wk->op == VOP_READ)
			wk->rdpct = 100;
		else if (wk->op == VOP_WRITE)
			wk->rdpct = 0;
		wk->xfer = fw->xfer;
		for (int j = 0; j < wk->xfer.n; j++)
			if (wk->xfer.v[j] > wk->max_xfer)
				wk->max_xfer = wk->xfer.v[j];
		if (wk->src->d->direct || (wk->dst && wk->dst->d->direct))
			for (int j = 0; j < wk->xfer.n; j++)
				if (wk->xfer.v[j] % 512)
					die_usage("xfersize", "fwd=%s: %llu is not a multiple of 512, which openflags=o_direct needs",
						  fw->name, (unsigned long long)wk->xfer.v[j]);
		nth += fw->threads;
	}
	r->nth = nth;
	/* sets: scaled counts and sizes */
	for (int k = 0; k < r->nset; k++) {
		struct fs_set *s = &r->set[k];
		const struct vdb_fsd *d = s->d;
		uint64_t nleaf = 1, ndirs = 0;
		s->lvl_n[0] = 1;
		for (unsigned l = 1; l <= d->depth; l++) {
			if (nleaf > (1ull << 40) / d->width)
				die_usage("width", "fsd=%s: width^depth is too large", d->name);
			nleaf *= d->width;
			s->lvl_off[l] = ndirs;
			s->lvl_n[l] = nleaf;
			ndirs += nleaf;
		}
		s->nleaf = nleaf;
		s->ndirs = ndirs;
		double f = floor((double)d->files * r->scale + 0.5);
		s->fpl = f < 1 ? 1 : (uint64_t)f;
		/* exclusive use needs a file per thread: scaled counts never go below that */
		unsigned users = 0;
		uint64_t max_xfer = 512;
		for (int j = 0; j < r->nwork; j++)
			if (r->work[j].src == s || r->work[j].dst == s) {
				users += r->work[j].w->threads;
				if (r->work[j].max_xfer > max_xfer)
					max_xfer = r->work[j].max_xfer;
			}
		s->fmt_chunk = max_xfer;
		if (r->scale != 1.0 && s->fpl * nleaf < users)
			s->fpl = (users + nleaf - 1) / nleaf;
		if (s->fpl > (1ull << 40) / nleaf)
			die_usage("files", "fsd=%s: files x width^depth is too large", d->name);
		s->nfiles = s->fpl * nleaf;
		s->size = d->size;
		for (int j = 0; j < s->size.n; j++) {
			uint64_t v = s->size.v[j];
			if (r->scale != 1.0) {
				/* a whole number of the largest transfers, at least one */
				double sv = floor((double)v * r->scale / (double)max_xfer + 0.5) * (double)max_xfer;
				v = sv < (double)max_xfer ? max_xfer : (uint64_t)sv;
			}
			if (d->direct && v % 512)
				die_usage("size", "fsd=%s: %llu is not a multiple of 512, which openflags=o_direct needs", d->name,
					  (unsigned long long)v);
			s->size.v[j] = v;
		}
	}
	for (int k = 0; k < r->nset && !store; k++) {
		struct fs_set *s = &r->set[k];
		if (s->size.n == 1) {
			if (__builtin_mul_overflow(s->nfiles, s->size.v[0], &s->size_sum))
				die_usage("size", "fsd=%s: files x size is too large", s->d->name);
			continue;
		}
		if (s->nfiles > draws_max) {
			/* drawing each size would take seconds: the expectation, files x mean size */
			double mean = 0;
			for (int j = 0; j < s->size.n; j++)
				mean += (double)s->size.v[j] * s->size.pct[j] / 100.0;
			double sum = floor(mean * (double)s->nfiles + 0.5);
			if (!(sum < 18446744073709551616.0))
				die_usage("size", "fsd=%s: the total size is too large", s->d->name);
			s->size_sum = (uint64_t)sum;
			continue;
		}
		struct rng rg;
		rng_seed(&rg, seed + (uint64_t)k);
		for (uint64_t i = 0; i < s->nfiles; i++)
			if (__builtin_add_overflow(s->size_sum, dist_pick(&s->size, &rg), &s->size_sum))
				die_usage("size", "fsd=%s: the total size is too large", s->d->name);
	}
	for (int k = 0; k < r->nset && store; k++) {
		struct fs_set *s = &r->set[k];
		s->fstate = calloc(s->nfiles, 1);
		s->dstate = calloc(s->ndirs + 1, 1);
		s->fsize = calloc(s->nfiles, sizeof(uint64_t));
		if (!s->fstate || !s->dstate || !s->fsize)
			die_code(EXIT_FAIL, "out of memory (the file set has %llu files: lower --scale)",
				 (unsigned long long)s->nfiles);
		struct rng rg;
		rng_seed(&rg, seed + (uint64_t)k);
		for (uint64_t i = 0; i < s->nfiles; i++) {
			s->fsize[i] = dist_pick(&s->size, &rg);
			s->size_sum += s->fsize[i];
		}
	}
	for (int k = 0; k < r->nwork; k++) {
		struct fs_work *wk = &r->work[k];
		if (!wk->w->shared && (wk->op < 0 || wk->op == VOP_READ || wk->op == VOP_WRITE) &&
		    wk->w->threads > wk->src->nfiles)
			die_usage("threads", "fwd=%s: %u threads need at least as many files (the fsd has %llu); use "
					     "fileio=(random,shared) or more files", wk->w->name, wk->w->threads,
				  (unsigned long long)wk->src->nfiles);
	}
}

static int rp_fmt_files_any(const struct fs_run *r)
{
	for (unsigned t = 0; t < r->nth; t++)
		if (r->th[t].fmt_files)
			return 1;
	return 0;
}

/* What the resolved (scaled) run can do at most (README § Parse-only facts). Bytes written: a file
 * slot is written only while it is absent (format, create, copy into it) and becomes absent again
 * only by delete or move out of its set, so a set without those is written at most once per
 * slot: its size_sum (or, when a copy writes into it, files x the largest source file); with
 * them, create/copy repeat for as long as the run lasts (unbounded). Reads/writes of blocks are
 * time-based: bounded only by rd maxdata (bytes read + written). Move, setattr and the rest
 * write no data. */
static void fs_bounds(const struct fs_run *r, struct file_bounds *b)
{
	const struct vdb_cfg *c = r->c;
	memset(b, 0, sizeof(*b));
	b->mode = "vdbench";
	b->threads = r->nth;
	b->written_bounded = 1;
	b->runtime_bounded = 1;
	b->runtime_s_max = (double)r->elapsed_ns / 1e9; /* warm-up intervals are part of elapsed */
	int rw_writes = 0;
	for (int k = 0; k < r->nwork; k++) {
		const struct fs_work *wk = &r->work[k];
		if (wk->max_xfer > b->max_block_bytes)
			b->max_block_bytes = wk->max_xfer;
		if (wk->op == VOP_WRITE || (wk->op < 0 && wk->rdpct < 100))
			rw_writes = 1;
	}
	if (rw_writes) {
		if (c->rd.maxdata)
			b->bytes_written_max = c->rd.maxdata;
		else
			b->written_bounded = 0;
	}
	for (int k = 0; k < r->nset; k++) {
		const struct fs_set *s = &r->set[k];
		if (__builtin_add_overflow(b->dataset_bytes, s->size_sum, &b->dataset_bytes))
			b->dataset_bytes = UINT64_MAX; /* beyond any host */
		b->files += s->nfiles;
		b->directories += s->ndirs;
		int src = 0, creates = 0, removes = 0;
		uint64_t copy_max = 0;
		for (int j = 0; j < r->nwork; j++) {
			const struct fs_work *wk = &r->work[j];
			if (wk->src == s) {
				src = 1;
				creates |= wk->op == VOP_CREATE;
				removes |= wk->op == VOP_DELETE || wk->op == VOP_MOVE;
			}
			if (wk->dst == s && wk->op == VOP_COPY) {
				creates = 1;
				if (dist_max(&wk->src->size) > copy_max)
					copy_max = dist_max(&wk->src->size);
			}
		}
		int formatted = src && c->rd.format != VDB_FORMAT_NO;
		if (formatted && s->fmt_chunk > b->max_block_bytes)
			b->max_block_bytes = s->fmt_chunk;
		if (creates && removes) {
			b->written_bounded = 0;
			continue;
		}
		if (!formatted && !creates)
			continue;
		if (copy_max) {
			uint64_t m = copy_max > dist_max(&s->size) ? copy_max : dist_max(&s->size), set_max;
			if (__builtin_mul_overflow(s->nfiles, m, &set_max) ||
			    __builtin_add_overflow(b->bytes_written_max, set_max, &b->bytes_written_max))
				b->written_bounded = 0; /* beyond 2^64 bytes: as good as unbounded */
		} else if (__builtin_add_overflow(b->bytes_written_max, s->size_sum, &b->bytes_written_max)) {
			b->written_bounded = 0;
		}
	}
	if (!b->written_bounded)
		b->bytes_written_max = 0;
}

/* ---- entry ---- */

int fileset_requested(int argc, char **argv)
{
	return mode_requested(argc, argv, "vdbench");
}

#define MAX_SECONDS (366ull * 86400) /* --elapsed, --interval, --warmup */
#define MAX_SCALE 1000.0

/* the flags of --vdbench beyond the file modes' common ones (mode_args_parse) */
struct fs_flags {
	double scale;
	uint64_t seed, o_elapsed, o_interval, o_warmup;
};

static void parse_scale(void *base, const struct opt_def *d, const char *name, const char *val)
{
	(void)d, (void)name;
	struct fs_flags *f = base;
	char *end;
	f->scale = strtod(val, &end);
	if (end == val || *end || !(f->scale > 0) || f->scale > MAX_SCALE)
		die_usage("scale", "must be a number above 0 (at most 1000), got '%s'", val);
}

#define FL(f) offsetof(struct fs_flags, f)
#define FL_SECS(n, f, lo)                                                                                   \
	{ .name = n, .type = OT_U64, .off = FL(f), .min = lo, .max = MAX_SECONDS,                            \
	  .bad = "must be a whole number of seconds (at least " #lo "), got '%s'" }
static const struct opt_def fs_opts[] = {
	{ .name = "scale", .type = OT_FUNC, .parse = parse_scale },
	FL_SECS("elapsed", o_elapsed, 1),
	FL_SECS("interval", o_interval, 1),
	FL_SECS("warmup", o_warmup, 0),
	{ .name = "randseed", .type = OT_U64, .off = FL(seed), .bad = "must be a whole number, got '%s'" },
};

void fileset_limits(struct jw *w)
{
	jw_obj(w, "vdbench");
	jw_dbl(w, "max_scale", MAX_SCALE); /* --scale: above 0, at most this */
	jw_obj(w, "elapsed");
	jw_u64(w, "min", 1);
	jw_u64(w, "max", MAX_SECONDS);
	jw_obj_end(w);
	jw_obj(w, "interval");
	jw_u64(w, "min", 1);
	jw_u64(w, "max", MAX_SECONDS);
	jw_obj_end(w);
	jw_obj(w, "warmup");
	jw_u64(w, "min", 0);
	jw_u64(w, "max", MAX_SECONDS);
	jw_obj_end(w);
	jw_u64(w, "max_definitions", VDB_MAXDEF);  /* fsd= / fwd= statements of each kind */
	jw_u64(w, "max_distribution", VDB_MAXDIST); /* value,percent pairs in one size list */
	jw_u64(w, "max_name_length", VDB_NAME - 1);
	jw_obj_end(w);
}

void vdb_parse_check(char *text)
{
	static struct vdb_cfg cfg;
	vdb_parse_text(&cfg, text);
	struct fs_run *r = calloc(1, sizeof(*r));
	if (!r)
		die_code(EXIT_FAIL, "out of memory");
	guard_own(r, NULL);
	r->c = &cfg;
	r->scale = 1.0;
	r->dirfd = -1;
	resolve(r, 0x5eed, 0, CHECK_DRAWS_MAX);
	guard_disown(r);
	free(r);
}

/* --vdbench's setup: the flags, the parameter file, the resolved (scaled) sets and the run's
 * elapsed, interval and warm-up; exits 2 on bad input */
static void fs_setup(struct fs_run *r, struct vdb_cfg *cfg, struct mode_args *args, struct fs_flags *fl, int argc,
		     char **argv)
{
	*args = (struct mode_args){ .mode = "vdbench", .file_what = "a parameter file", .allow_tsc = 1,
				    .own = fs_opts, .nown = sizeof(fs_opts) / sizeof(fs_opts[0]), .own_base = fl };
	mode_args_parse(args, argc, argv);
	double scale = fl->scale;
	uint64_t seed = fl->seed, o_elapsed = fl->o_elapsed, o_interval = fl->o_interval, o_warmup = fl->o_warmup;
	vdb_parse_file(cfg, args->file);
	r->c = cfg;
	r->scale = scale;
	r->dirfd = -1;
	pthread_mutex_init(&r->errlock, NULL);
	pthread_mutex_init(&r->ivlock, NULL);
	resolve(r, seed, !args->parse_only, PARSE_DRAWS_MAX);
	/* elapsed: --elapsed, else rd's elapsed times the scale (whole seconds, at least 1) */
	uint64_t el_s = cfg->rd.elapsed_s;
	if (scale != 1.0) {
		double sc = floor((double)el_s * scale + 0.5);
		el_s = sc < 1 ? 1 : (uint64_t)sc;
	}
	r->elapsed_ns = (o_elapsed ? o_elapsed : el_s) * 1000000000ull;
	r->interval_ns = (o_interval ? o_interval : cfg->rd.interval_s) * 1000000000ull;
	r->warmup_ns = (o_warmup != UINT64_MAX ? o_warmup : cfg->rd.warmup_s) * 1000000000ull;
	if (r->warmup_ns >= r->elapsed_ns)
		die_usage("warmup", "warmup (%llu s) must be shorter than elapsed (%llu s)",
			  (unsigned long long)(r->warmup_ns / 1000000000ull), (unsigned long long)(r->elapsed_ns / 1000000000ull));
}

/* --parse-only: the parsed and resolved definitions and the bounds, nothing touched */
static void fs_parse_only_report(struct fs_run *r, double scale)
{
	const struct vdb_cfg *c = r->c;
	/* the parsed and resolved definitions, nothing touched */
	struct jw w;
	jw_init(&w, stdout);
	jw_obj(&w, NULL);
	jw_arr(&w, "fsd");
	for (int k = 0; k < r->nset; k++) {
		const struct fs_set *s = &r->set[k];
		jw_obj(&w, NULL);
		jw_str(&w, "name", s->d->name);
		jw_str(&w, "anchor", s->d->anchor);
		jw_u64(&w, "depth", s->d->depth);
		jw_u64(&w, "width", s->d->width);
		jw_u64(&w, "files", s->d->files);
		emit_dist(&w, "size", &s->d->size);
		jw_bool(&w, "o_direct", s->d->direct);
		jw_u64(&w, "scaled_files", s->fpl);
		emit_dist(&w, "scaled_size", &s->size);
		jw_u64(&w, "total_files", s->nfiles);
		jw_u64(&w, "total_directories", s->ndirs);
		jw_u64(&w, "total_bytes", s->size_sum);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_arr(&w, "fwd");
	for (int k = 0; k < c->nfwd; k++) {
		const struct vdb_fwd *fw = &c->fwd[k];
		jw_obj(&w, NULL);
		jw_str(&w, "name", fw->name);
		jw_str(&w, "fsd", fw->fsd[0]);
		jw_str(&w, "operation", fw->op < 0 ? "" : vdb_op_names[fw->op]);
		jw_i64(&w, "rdpct", fw->rdpct);
		emit_dist(&w, "xfersize", &fw->xfer);
		jw_str(&w, "fileselect", fw->fileselect_seq ? "sequential" : "random");
		jw_str(&w, "fileio", fw->fileio_seq ? "sequential" : "random");
		jw_bool(&w, "shared", fw->shared);
		jw_u64(&w, "threads", fw->threads);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_obj(&w, "rd");
	jw_str(&w, "name", c->rd.name);
	jw_arr(&w, "fwd");
	for (int k = 0; k < c->rd.nfwd; k++)
		jw_str(&w, NULL, c->rd.fwd[k]);
	jw_arr_end(&w);
	if (c->rd.fwdrate > 0)
		jw_dbl(&w, "fwdrate", c->rd.fwdrate);
	else
		jw_str(&w, "fwdrate", "max");
	jw_str(&w, "format", c->rd.format == VDB_FORMAT_YES ? "yes" : c->rd.format == VDB_FORMAT_RESTART ? "restart" : "no");
	jw_u64(&w, "elapsed_s", c->rd.elapsed_s);
	jw_u64(&w, "interval_s", c->rd.interval_s);
	jw_u64(&w, "warmup_s", c->rd.warmup_s);
	jw_u64(&w, "run_elapsed_ns", r->elapsed_ns);
	jw_obj_end(&w);
	jw_dbl(&w, "scale", scale);
	struct file_bounds b;
	fs_bounds(r, &b);
	emit_bounds(&w, &b);
	jw_obj_end(&w);
	fputc('\n', stdout);
}

/* the set names checked again, DIR opened confined, and each set's root (DIR itself for one fsd,
 * DIR/<fsd name> for several) */
static void fs_open_roots(struct fs_run *r, const char *dir, const char *beneath)
{
	/* the parser admits only plain names (vdbench_parse.c check_name); checked again before any
	 * of them becomes a directory under DIR */
	for (int k = 0; k < r->nset; k++) {
		const char *nm = r->set[k].d->name;
		if (!nm[0] || strchr(nm, '/') || !strcmp(nm, ".") || !strcmp(nm, ".."))
			die_usage("fsd", "fsd=%s: a file system definition's name is a plain directory name", nm);
	}
	r->dirfd = open_confined_dir(dir, beneath, "vdbench");

	/* roots: DIR itself for one fsd, DIR/<fsd name> for several */
	for (int k = 0; k < r->nset; k++) {
		struct fs_set *s = &r->set[k];
		if (r->nset == 1) {
			s->rootfd = r->dirfd;
			continue;
		}
		if (mkdirat(r->dirfd, s->d->name, 0700) == 0)
			s->made_root = 1;
		else if (errno != EEXIST)
			run_fail(r, errno, "mkdir '%s': %s", s->d->name, strerror(errno));
		s->rootfd = r->err ? -1 : confined_open(r->dirfd, s->d->name, O_RDONLY | O_DIRECTORY, 0);
		if (!r->err && s->rootfd < 0)
			run_fail(r, -s->rootfd, "open '%s': %s", s->d->name, strerror(-s->rootfd));
	}
}

/* the threads of every workload: their generators, buffers and rate */
static void fs_threads_init(struct fs_run *r, uint64_t seed)
{
	const struct vdb_cfg *c = r->c;
	r->th = calloc(r->nth, sizeof(*r->th));
	if (!r->th)
		die_code(EXIT_FAIL, "out of memory");
	uint64_t maxbuf = 4096; /* every write (format, create, copy) is at most the largest transfer */
	for (int k = 0; k < r->nwork; k++)
		if (r->work[k].max_xfer > maxbuf)
			maxbuf = r->work[k].max_xfer;
	unsigned n = 0;
	for (int k = 0; k < r->nwork; k++)
		for (unsigned j = 0; j < r->work[k].w->threads; j++, n++) {
			struct fs_thread *t = &r->th[n];
			t->run = r;
			t->wk = &r->work[k];
			t->id = n;
			rng_seed(&t->rng, seed * 7919 + n + 1);
			if (posix_memalign((void **)&t->buf, 4096, maxbuf))
				die_code(EXIT_FAIL, "out of memory");
			for (uint64_t b = 0; b < maxbuf; b += 8) {
				uint64_t v = rng_next(&t->rng);
				memcpy(t->buf + b, &v, 8);
			}
			for (int o = 0; o < VOP_N; o++)
				lstat_init(&t->cur[o].lat);
			if (c->rd.fwdrate > 0)
				t->rate_period = (uint64_t)(1e9 * (double)r->nth / c->rd.fwdrate);
		}
}

/* the format phase (or, for format=no, finding what is there), timed and synced */
static void fs_format(struct fs_run *r, struct fs_report *rp, int progress)
{
	const struct vdb_cfg *c = r->c;
	/* format (or, for format=no, find what is there) */
	snap_cpu(&rp->fmt0);
	uint64_t f0 = now_ns();
	for (int k = 0; k < r->nset && !stopping(r); k++) {
		struct fs_set *s = &r->set[k];
		for (unsigned l = 1; l <= s->d->depth && !stopping(r); l++)
			for (uint64_t j = 0; j < s->lvl_n[l] && !stopping(r); j++) {
				uint64_t parent_ok = l == 1 || (atomic_load(&s->dstate[s->lvl_off[l - 1] + j / s->d->width]) & ST_EXISTS);
				if (parent_ok)
					dir_make(r, s, l, j, c->rd.format != VDB_FORMAT_NO);
			}
		int is_src = 0;
		for (int j = 0; j < r->nwork; j++)
			is_src |= r->work[j].src == s;
		if (!is_src && c->rd.format != VDB_FORMAT_NO)
			continue; /* a copy/move target only: its directories, no files */
		r->fmt_set = k;
		r->fmt_threads = r->nth < 8 ? r->nth : 8;
		for (unsigned t = 0; t < r->fmt_threads; t++)
			if (pthread_create(&r->th[t].th, NULL, format_main, &r->th[t]))
				die_code(EXIT_FAIL, "cannot start a thread");
		for (unsigned t = 0; t < r->fmt_threads; t++)
			pthread_join(r->th[t].th, NULL);
	}
	/* what format wrote reaches the device before the run, so the run does not measure its
	 * writeback (syncfs: this file system only) */
	if (rp_fmt_files_any(r) && !stopping(r))
		for (int k = 0; k < r->nset; k++)
			if (r->set[k].rootfd >= 0 && syncfs(r->set[k].rootfd) < 0)
				warnmsg("vdbench: syncfs after format: %s", strerror(errno));
	rp->fmt_ns = now_ns() - f0;
	if (progress) {
		fprintf(stderr, "{\"event\":\"progress\",\"mode\":\"vdbench\",\"phase\":\"format\",\"elapsed_ns\":%llu,"
				"\"done\":true}\n", (unsigned long long)rp->fmt_ns);
		fflush(stderr);
	}
	snap_cpu(&rp->fmt1);
	rp->fmt_dirs = r->fmt_dirs;
	for (unsigned t = 0; t < r->nth; t++) {
		rp->fmt_files += r->th[t].fmt_files;
		rp->fmt_bytes += r->th[t].fmt_bytes;
	}
}

/* the measured run: the threads for elapsed (or until stopped or exhausted), interval by interval */
static void fs_run_phase(struct fs_run *r, struct fs_report *rp, int progress)
{
	/* the run */
	uint32_t max_iv = (uint32_t)((r->elapsed_ns + r->interval_ns - 1) / r->interval_ns);
	rp->cpu = calloc((size_t)max_iv + 2, sizeof(*rp->cpu));
	if (!rp->cpu)
		die_code(EXIT_FAIL, "out of memory");
	rp->warm_iv = (uint32_t)((r->warmup_ns + r->interval_ns - 1) / r->interval_ns);
	r->max_iv = max_iv;
	r->warm_iv = rp->warm_iv;
	r->ivs = calloc(max_iv, sizeof(*r->ivs));
	if (!r->ivs)
		die_code(EXIT_FAIL, "out of memory");
	for (uint32_t i = 0; i < max_iv; i++)
		for (int k = 0; k < VOP_N; k++)
			lstat_init(&r->ivs[i].op[k].lat);
	for (int k = 0; k < VOP_N; k++) {
		lstat_init(&r->tot[k].lat);
		r->tot_hist[k] = calloc(HIST_NR, sizeof(uint64_t));
		if (!r->tot_hist[k])
			die_code(EXIT_FAIL, "out of memory");
	}
	unsigned started = 0;
	r->t_start = now_ns();
	snap_cpu(&rp->cpu[0]);
	if (!stopping(r)) {
		for (; started < r->nth; started++)
			if (pthread_create(&r->th[started].th, NULL, thread_main, &r->th[started])) {
				run_fail(r, EAGAIN, "cannot start thread %u", started);
				break;
			}
		uint32_t iv = 0;
		uint64_t end = r->t_start + r->elapsed_ns;
		while (!stopping(r)) {
			uint64_t next = r->t_start + (uint64_t)(iv + 1) * r->interval_ns;
			if (next > end)
				next = end;
			/* wake every 100 ms to notice a signal, an error or exhausted workloads */
			uint64_t now = now_ns();
			uint64_t wake = now + 100000000ull < next ? now + 100000000ull : next;
			struct timespec ts = mono_deadline(wake);
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
			now = now_ns();
			if (now >= next) {
				snap_cpu(&rp->cpu[++iv]);
				if (progress) {
					fprintf(stderr, "{\"event\":\"progress\",\"mode\":\"vdbench\",\"phase\":\"run\",\"interval\":%u,"
							"\"elapsed_ns\":%llu,\"percent\":%.1f}\n", iv, (unsigned long long)(now - r->t_start),
						100.0 * (double)(now - r->t_start) / (double)r->elapsed_ns);
					fflush(stderr);
				}
				if (next >= end || iv >= max_iv)
					break;
			}
			int all_done = 1;
			for (int k = 0; k < r->nwork; k++)
				all_done &= atomic_load(&r->work[k].exhausted) == r->work[k].w->threads;
			if (all_done) {
				rp->exhausted = 1;
				break;
			}
			if (atomic_load(&r->finished) == started)
				break; /* maxdata spent by every thread */
		}
		atomic_store(&r->stop, 1);
		for (unsigned t = 0; t < started; t++)
			pthread_join(r->th[t].th, NULL);
		/* the run ends when its last thread returned (not when this loop noticed) */
		uint64_t t_end = r->t_start;
		for (unsigned t = 0; t < started; t++)
			if (r->th[t].t_end > t_end)
				t_end = r->th[t].t_end;
		rp->run_ns = t_end - r->t_start;
		if (rp->run_ns > r->elapsed_ns && !g_stop && !r->err && !rp->exhausted)
			rp->run_ns = r->elapsed_ns; /* ops ending after the deadline land in the last interval */
		/* a stop between boundaries closes a partial interval */
		uint32_t niv = iv;
		uint32_t last_ix = r->last_iv;
		if (last_ix > niv || (uint64_t)niv * r->interval_ns < rp->run_ns) {
			niv = niv + 1 > max_iv ? max_iv : niv + 1;
			if (last_ix > niv)
				niv = last_ix;
			for (uint32_t k = iv + 1; k <= niv; k++)
				snap_cpu(&rp->cpu[k]);
		}
		rp->niv = niv;
	}
}

/* after the run: totals, cleanup (unless --keep), the report; the exit code */
static int fs_report_and_clean(struct fs_run *r, struct fs_report *rp, const char *devname, int keep, int normal,
			       const volatile sig_atomic_t *signo)
{
	uint64_t meas_from = (uint64_t)rp->warm_iv * r->interval_ns;
	rp->meas_ns = rp->run_ns > meas_from ? rp->run_ns - meas_from : 0;
	for (unsigned t = 0; t < r->nth; t++) {
		rp->files_created += r->th[t].files_created;
		rp->dirs_created += r->th[t].dirs_created;
		rp->files_deleted += r->th[t].files_deleted;
		rp->dirs_removed += r->th[t].dirs_removed;
	}
	int interrupted = g_stop != 0;
	/* everything this run created goes, also after an error or a signal */
	int clean_bad = 0;
	if (!keep)
		for (int k = 0; k < r->nset; k++)
			clean_bad |= cleanup_set(&r->set[k], r->dirfd, &rp->clean_files, &rp->clean_dirs) < 0;
	if (devname[0])
		diskstat_read(devname, &rp->d1);
	rp->interrupted = interrupted;
	rp->sig = interrupted && signo ? (int)*signo : 0;
	if (normal)
		report_normal(r, rp);
	else
		report_json(r, rp);
	int rc = EXIT_OK;
	if (r->err) {
		warnmsg("vdbench: %s (the run stopped%s)", r->errmsg,
			keep	    ? "; --keep left its files in place"
			: clean_bad ? "; it could not remove all it created: see the cleanup messages above"
				    : " and removed what it created");
		rc = EXIT_FAIL;
	}
	if (clean_bad && rc == EXIT_OK)
		rc = EXIT_FAIL;
	return rc;
}

static void fs_free(struct fs_run *r, struct fs_report *rp)
{
	for (unsigned t = 0; t < r->nth; t++) {
		free(r->th[t].buf);
		for (int o = 0; o < VOP_N; o++)
			free(r->th[t].curhist[o]);
	}
	for (int k = 0; k < r->nset; k++) {
		if (r->set[k].rootfd >= 0 && r->set[k].rootfd != r->dirfd)
			close(r->set[k].rootfd);
		free(r->set[k].fstate);
		free(r->set[k].dstate);
		free(r->set[k].fsize);
	}
	free(r->th);
	if (r->ivs)
		for (uint32_t i = 0; i < r->max_iv; i++)
			for (int k = 0; k < VOP_N; k++)
				free(r->ivs[i].h[k]);
	free(r->ivs);
	for (int k = 0; k < VOP_N; k++)
		free(r->tot_hist[k]);
	free(rp->cpu);
	close(r->dirfd);
}

int fileset_main(int argc, char **argv, const volatile sig_atomic_t *signo)
{
	struct fs_flags fl = { .scale = 1.0, .seed = 0x5eed, .o_warmup = UINT64_MAX };
	struct mode_args args;
	static struct vdb_cfg cfg;
	static struct fs_run r;
	fs_setup(&r, &cfg, &args, &fl, argc, argv);
	if (args.parse_only) {
		fs_parse_only_report(&r, fl.scale);
		return EXIT_OK;
	}
	fs_open_roots(&r, args.dir, args.beneath);
	fs_threads_init(&r, fl.seed);

	clock_init(args.allow_tsc);
	static struct fs_report rp;
	rp.file = args.file;
	rp.dir = args.dir;
	rp.beneath = args.beneath;
	rp.keep = args.keep;
	rp.jsonplus = args.jsonplus;
	gettimeofday(&rp.tv, NULL);
	char devname[64];
	fd_blockdev(r.dirfd, devname, sizeof(devname));
	if (devname[0])
		diskstat_read(devname, &rp.d0);

	fs_format(&r, &rp, args.progress);
	fs_run_phase(&r, &rp, args.progress);
	int rc = fs_report_and_clean(&r, &rp, devname, args.keep, args.normal, signo);
	fs_free(&r, &rp);
	return rc;
}
