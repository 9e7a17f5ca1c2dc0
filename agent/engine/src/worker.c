/* Workers: one thread per numjobs clone, private counters and histograms, no locks in the
 * hot path. The main thread only reads the relaxed atomic "pub_*" counters for progress. */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "iowatt.h"
#include "verify.h"
#include "multifile.h"
#include "output.h"
#include "patterns.h"
#include "dedupe.h"
#include "control.h"

#define NS_PER_S 1000000000ull
#define LATE_START_NS 1000000ull /* an I/O issued > 1 ms after its intended start is late */

extern sem_t g_wake;

static inline unsigned depth_bucket(unsigned d)
{
	/* fio iodepth_level: 1, 2, 4, 8, 16, 32, >=64 */
	if (d >= 64) return 6;
	if (d >= 32) return 5;
	if (d >= 16) return 4;
	if (d >= 8) return 3;
	if (d >= 4) return 2;
	if (d >= 2) return 1;
	return 0;
}

static inline unsigned batch_bucket(unsigned n)
{
	/* fio iodepth_submit/complete: 0, 4, 8, 16, 32, 64, >=64 */
	if (n == 0) return 0;
	if (n <= 4) return 1;
	if (n <= 8) return 2;
	if (n <= 16) return 3;
	if (n <= 32) return 4;
	if (n <= 64) return 5;
	return 6;
}

static void rusage_now(double *usr, double *sys, uint64_t *ctx, uint64_t *majf, uint64_t *minf)
{
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	*usr = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
	*sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	*ctx = (uint64_t)(ru.ru_nvcsw + ru.ru_nivcsw);
	*majf = (uint64_t)ru.ru_majflt;
	*minf = (uint64_t)ru.ru_minflt;
}

/* CPU time of the io_uring kernel threads serving this worker's ring. io-wq workers are named
 * "iou-wrk-<tid>" and an SQPOLL thread "iou-sqp-<tid>" after the task that owns them; they are
 * threads of this process that never run user code, so their scheduler run time is all system
 * time. fio's usr_cpu/sys_cpu (RUSAGE_THREAD, as ours) leave them out; the report shows them
 * beside. A kernel worker that exits during the run takes its time with it (io-wq workers
 * linger 5 s idle, so under load they do not). */
static uint64_t kworker_ns(pid_t tid)
{
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return 0;
	char wrk[32], sqp[32];
	snprintf(wrk, sizeof(wrk), "iou-wrk-%d", (int)tid);
	snprintf(sqp, sizeof(sqp), "iou-sqp-%d", (int)tid);
	uint64_t sum = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char path[300], buf[64];
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		if (read_sysfs_str(path, buf, sizeof(buf)) < 0 || (strcmp(buf, wrk) && strcmp(buf, sqp)))
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/schedstat", e->d_name);
		if (read_sysfs_str(path, buf, sizeof(buf)) == 0)
			sum += strtoull(buf, NULL, 10);
	}
	closedir(d);
	return sum;
}

static void start_measuring(struct worker *w)
{
	w->measuring = 1;
	w->t_meas_start = w->t_ramp_end;
	w->next_tick = w->t_meas_start + NS_PER_S;
	double u, s;
	uint64_t c, ma, mi;
	rusage_now(&u, &s, &c, &ma, &mi);
	w->usr_s = -u;
	w->sys_s = -s;
	if (w->job->ops->flags & ENGINE_F_KWORKER)
		w->kworker0 = kworker_ns(w->tid);
	w->ctx_sw = (uint64_t)0 - c;
	w->majf = (uint64_t)0 - ma;
	w->minf = (uint64_t)0 - mi;
	if (w->logs)
		logs_worker_start(w); /* log times count from here */
}

static int push_point(struct worker *w, uint64_t t_ns)
{
	if (w->nseries == w->capseries) {
		size_t cap = w->capseries ? w->capseries * 2 : 64;
		struct series_pt *p = realloc(w->series, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		w->series = p;
		w->capseries = cap;
	}
	struct series_pt *pt = &w->series[w->nseries++];
	pt->t_ns = t_ns;
	for (int d = 0; d < 2; d++) {
		pt->ios[d] = w->iv_ios[d];
		pt->bytes[d] = w->iv_bytes[d];
		pt->hoff[d] = (uint32_t)w->nhpool;
		pt->hn[d] = 0;
		w->iv_ios[d] = w->iv_bytes[d] = 0;
		if (!pt->ios[d])
			continue;
		uint64_t *h = w->iv_hist + (size_t)d * HIST_NR;
		for (unsigned i = 0; i < HIST_NR; i++) {
			if (!h[i])
				continue;
			if (w->nhpool == w->caphpool) {
				size_t cap = w->caphpool ? w->caphpool * 2 : 1024;
				struct hpair *np = realloc(w->hpool, cap * sizeof(*np));
				if (!np)
					return -ENOMEM;
				w->hpool = np;
				w->caphpool = cap;
			}
			w->hpool[w->nhpool].idx = i;
			w->hpool[w->nhpool].cnt = (uint32_t)h[i];
			w->nhpool++;
			pt->hn[d]++;
			h[i] = 0;
		}
	}
	return 0;
}

static void close_intervals(struct worker *w, uint64_t t)
{
	while (t >= w->next_tick) {
		push_point(w, w->next_tick - w->t_meas_start);
		w->next_tick += NS_PER_S;
	}
}

/* exitall / exitall_on_error (src/sched.c) */
static inline int worker_told_to_stop(struct worker *w)
{
	return w->filled || atomic_load_explicit(&w->job->stop, memory_order_relaxed);
}

/* continue_on_error, as fio: only EIO and EILSEQ are non-fatal, and only for the kinds chosen.
 * fio's total_err counts every error (the fatal one too) and first_error is the first one's errno */
int worker_error_continues(struct worker *w, unsigned kind, int err)
{
	if (!w->total_err++)
		w->first_error = err;
	return ctl_error_ignored(w->job->o, kind, err); /* continue_on_error, ignore_error (control.c) */
}

/* startdelay: this clone's start, LO or a draw from [LO, HI] */
static void start_delay(struct worker *w)
{
	const struct options *o = w->job->o;
	uint64_t d = o->startdelay_ns;
	if (o->startdelay_hi_ns > o->startdelay_ns) {
		struct rng r;
		rng_seed(&r, o->randseed ^ 0x57a27de1a9ull ^ ((uint64_t)w->job->index << 20) ^ w->id);
		d += rng_below(&r, o->startdelay_hi_ns - o->startdelay_ns + 1);
	}
	w->delay_ns = d;
	(void)worker_sleep_until(w, w->t_start + d); /* the wait ends early on a stop */
	w->t_start = now_ns();
}

static inline void account(struct worker *w, struct io_req *r, uint64_t t_done, int sync)
{
	if (w->mfw)
		mf_completed(w, r);
	if (r->res < 0) {
		/* as fio: an I/O that failed is counted in total_ios (issued), never in bytes or latency */
		if (w->measuring)
			w->d[r->ddir].ios++;
		if (w->job->o->fill_device && (r->res == -ENOSPC || r->res == -EDQUOT)) {
			w->filled = 1; /* fio's fill_device: the file system is full, the clone ends without error */
			return;
		}
		int goes_on = worker_error_continues(w, r->ddir == DDIR_READ ? CE_READ : CE_WRITE, (int)-r->res);
		if (w->job->o->error_dump || !goes_on) /* fio's error_dump: a fatal error is always printed */
			ctl_dump_io_error(w->job->o, w->mfw ? w->job->mf->files[w->mfw->st[r->fidx].file].tgt.path
							    : w->job->tgt.path,
					  (int)-r->res, r->ddir, r->off, r->len);
		if (goes_on) {
			/* fio's number_ios counts the I/Os that did not fail (io_blocks) and those queued */
			if (w->measuring && w->nios && !w->vw)
				w->nios--;
			return;
		}
		if (!w->err) {
			w->err = (int)r->res;
			snprintf(w->errmsg, sizeof(w->errmsg), "%s at offset %llu: %s",
				 r->ddir == DDIR_READ ? "read" : r->ddir == DDIR_WRITE ? "write" : "trim",
				 (unsigned long long)r->off,
				 strerror((int)-r->res));
		}
		return;
	}
	if (w->pace.on) /* thinktime counts, max_latency, latency_target, rate_min (pace.c) */
		pace_complete(w, r, t_done);
	if (!w->measuring) {
		if (t_done < w->t_ramp_end) {
			w->ramp_done += r->len;
			return;
		}
		/* the byte budget (size x loops) starts after the ramp, as in fio: what is still
		 * in flight now (issued - completed during the ramp) counts towards it */
		w->issued -= w->ramp_done;
		start_measuring(w);
	}
	if (t_done >= w->next_tick)
		close_intervals(w, t_done);
	struct dstat *d = &w->d[r->ddir];
	if (r->res > 0 && (uint64_t)r->res != r->len) /* fio: one of 0 bytes is not short */
		d->short_ios++;
	uint64_t clat = t_done - r->t_sub;
	unsigned idx = hist_idx(clat);
	lstat_add(&d->clat, clat);
	d->hist[idx]++;
	const int series = r->ddir != DDIR_TRIM; /* the per-second series are reads and writes */
	if (series)
		w->iv_hist[(size_t)r->ddir * HIST_NR + idx]++;
	if (sync != 1) { /* 2: a trim an async engine completed inline (run_async): no slat, as fio's */
		if (!sync) {
			uint64_t slat = r->t_sub - r->t_prep;
			lstat_add(&d->slat, slat);
			d->shist[hist_idx(slat)]++;
		}
		uint64_t lat = t_done - r->t_prep;
		lstat_add(&d->lat, lat);
		d->lhist[hist_idx(lat)]++;
		if (w->cp)
			cmdprio_account(w, r, clat, lat);
	}
	if (w->schedhist) {
		uint64_t s = t_done - r->t_intended;
		lstat_add(&w->sched, s);
		w->schedhist[hist_idx(s)]++;
		if (r->t_sub - r->t_intended > LATE_START_NS && r->t_sub > r->t_intended)
			w->late_starts++;
	}
	d->ios++;
	d->bytes += (uint64_t)r->res;
	if (series) {
		w->iv_ios[r->ddir]++;
		w->iv_bytes[r->ddir] += (uint64_t)r->res;
	}
	if (w->logs) /* write_*_log (src/logs.c); trims too, direction 2, as fio */
		logs_io(w, t_done, r->ddir, (uint64_t)r->res, r->off, r->t_sub - r->t_prep, clat, t_done - r->t_prep, !sync,
			w->cp && r->ddir < 2 && w->job->o->cmdprio.nprios[r->ddir] ? r->ioprio : 0xffffu);
}

static inline void publish(struct worker *w)
{
	for (int d = 0; d < 2; d++) {
		atomic_store_explicit(&w->pub_ios[d], w->d[d].ios, memory_order_relaxed);
		atomic_store_explicit(&w->pub_bytes[d], w->d[d].bytes, memory_order_relaxed);
	}
}

/* Buffer content: incompressible random data by default; each write gets a fresh 8-byte
 * stamp in every 512-byte sector so no two written blocks are identical (dedupe-proof). */
static void fill_buffer(const struct options *o, struct rng *rng, unsigned char *buf, uint64_t len)
{
	for (uint64_t i = 0; i + 8 <= len; i += 8) {
		uint64_t v = rng_next(rng);
		memcpy(buf + i, &v, 8);
	}
	if (o->zero_buffers) {
		memset(buf, 0, len);
	} else if (o->compress_pct) {
		uint64_t z = 512ull * o->compress_pct / 100;
		for (uint64_t s = 0; s < len; s += 512)
			memset(buf + s, 0, (size_t)(len - s < z ? len - s : z));
	}
}

/* Copy n bytes of the pool, XORed with a fresh 64-bit key, so that blocks taken from
 * overlapping pool regions still share no byte sequence a compressor or dedupe could find.
 * 16-byte vector steps (SSE2 on x86-64, NEON on arm64); src is 8-byte aligned, dst 4 KiB. */
typedef uint64_t v2u64 __attribute__((vector_size(16)));
static inline void xor_copy(unsigned char *dst, const unsigned char *src, uint32_t n, uint64_t key)
{
	const v2u64 k = { key, key };
	uint32_t i = 0;
	for (; i + 64 <= n; i += 64) {
		v2u64 a, b, c, d;
		memcpy(&a, src + i, 16);
		memcpy(&b, src + i + 16, 16);
		memcpy(&c, src + i + 32, 16);
		memcpy(&d, src + i + 48, 16);
		a ^= k;
		b ^= k;
		c ^= k;
		d ^= k;
		memcpy(dst + i, &a, 16);
		memcpy(dst + i + 16, &b, 16);
		memcpy(dst + i + 32, &c, 16);
		memcpy(dst + i + 48, &d, 16);
	}
	for (; i + 8 <= n; i += 8) {
		uint64_t v;
		memcpy(&v, src + i, 8);
		v ^= key;
		memcpy(dst + i, &v, 8);
	}
	for (; i < n; i++)
		dst[i] = src[i] ^ (unsigned char)(key >> (8 * (i & 7)));
}

/* Refresh a write buffer (fio's refill_buffers; the default here): pool data at a random offset
 * XORed with a per-write key: incompressible and unique per write at memcpy cost. With
 * buffer_compress_percentage=P each 512-byte chunk is P % zeros followed by such data. */
static inline void refresh_buffer(struct worker *w, struct io_req *r)
{
	const struct options *o = w->job->o;
	unsigned char *b = r->buf;
	if (w->vw && w->vw->fills)
		return; /* verify family: src/verify.c filled the block with its header and checksum */
	if (w->dedupe) { /* dedupe_percentage: unique or a repeat, from a seed (src/dedupe.c) */
		dedupe_fill(w, b, r->len);
		return;
	}
	if (o->zero_buffers) {
		if (rw_reads(o->rw)) /* a read may have filled the buffer */
			memset(b, 0, r->len);
		return;
	}
	if (!o->refill_buffers && !(o->compress_pct && rw_reads(o->rw))) {
		/* refill_buffers=0 (fio's default): content set once at start; a fresh 8-byte stamp
		 * in every 512-byte sector keeps blocks distinct for naive dedupe. Compression 1..99 %
		 * turns refill on (options_finalize); at 100 % the buffer stays all zeros. Mixed jobs
		 * with compression refill: a read may have overwritten the zeros. */
		if (o->compress_pct || !o->scramble_buffers)
			return; /* scramble_buffers=0: the content as set at start (fio: no small_content_scramble) */
		uint64_t key = rng_next(&w->rng);
		for (uint32_t s = 0; s + 8 <= r->len; s += 512) {
			uint64_t v = key ^ (r->off + s);
			memcpy(b + s, &v, 8);
		}
		return;
	}
	const unsigned char *pool = w->job->pool;
	uint64_t span = w->job->pool_len - r->len;
	if (o->compress_pct) {
		uint32_t z = 512u * o->compress_pct / 100;
		for (uint32_t s = 0; s < r->len; s += 512) {
			uint32_t n = r->len - s < 512 ? r->len - s : 512;
			uint32_t zz = z < n ? z : n;
			memset(b + s, 0, zz);
			if (n > zz)
				xor_copy(b + s + zz, pool + (rng_below(&w->rng, span) & ~7ull), n - zz, rng_next(&w->rng));
		}
	} else {
		xor_copy(b, pool + (rng_below(&w->rng, span) & ~7ull), r->len, rng_next(&w->rng));
	}
}

static inline uint64_t pick_bs(struct worker *w, int ddir)
{
	const struct options *o = w->job->o;
	if (!o->nbssplit[ddir])
		return o->bs[ddir];
	unsigned p = (unsigned)rng_below(&w->rng, 100), acc = 0;
	for (int i = 0; i < o->nbssplit[ddir]; i++) {
		acc += o->bssplit[ddir][i].pct;
		if (p < acc)
			return o->bssplit[ddir][i].bs;
	}
	return o->bssplit[ddir][o->nbssplit[ddir] - 1].bs;
}

static inline int map_test(const uint64_t *m, uint64_t b) { return (int)(m[b >> 6] >> (b & 63)) & 1; }
static inline void map_set(uint64_t *m, uint64_t b) { m[b >> 6] |= 1ull << (b & 63); }

/* The first block not covered at or after b, wrapping to the region's start; nblocks when the map
 * is full. A word at a time: over a pass the scans cost O(nblocks log nblocks / 64). */
static uint64_t map_next_free(const uint64_t *m, uint64_t nblocks, uint64_t b)
{
	const uint64_t nw = (nblocks + 63) / 64;
	for (int wrap = 0; wrap < 2; wrap++) {
		uint64_t i = b >> 6, word = ~m[i] & (~0ull << (b & 63));
		for (;;) {
			if (word) {
				uint64_t f = (i << 6) + (uint64_t)__builtin_ctzll(word);
				if (f < nblocks)
					return f;
				break;
			}
			if (++i == nw)
				break;
			word = ~m[i];
		}
		b = 0;
	}
	return nblocks;
}

/* fio's bssplit draw at an offset where the drawn size does not fit before the region's end: the
 * first entry, in list order, at or after the drawn one that fits; none -> draw again (when no
 * entry of the direction fits at all, the room left: the I/O is cut at the end). */
static uint64_t pick_bs_fitting(struct worker *w, int ddir, uint64_t room)
{
	const struct options *o = w->job->o;
	int fits = 0;
	for (int i = 0; i < o->nbssplit[ddir]; i++)
		fits |= o->bssplit[ddir][i].pct && o->bssplit[ddir][i].bs <= room;
	if (!fits) /* no size of this direction fits (e.g. a write list of 16k, reads of 4k): cut it */
		return room;
	for (;;) {
		unsigned p = (unsigned)rng_below(&w->rng, 100), acc = 0;
		for (int i = 0; i < o->nbssplit[ddir]; i++) {
			acc += o->bssplit[ddir][i].pct;
			if (p < acc && o->bssplit[ddir][i].pct && o->bssplit[ddir][i].bs <= room)
				return o->bssplit[ddir][i].bs;
		}
	}
}

/* Random map for mixed block sizes (bssplit, or different read and write sizes), as fio's: a
 * uniform random smallest-size block; when an earlier I/O covered it, the next block not covered
 * after it (wrapping); the I/O is cut short where it would run into covered blocks. A size that
 * does not fit before the region's end is drawn again as fio does (bssplit: pick_bs_fitting;
 * bsrange: the range again, fio's get_next_buflen; until 2026-12-06 it was cut at the end);
 * otherwise (one size, or no size fits) it is cut at the end. So a pass touches every block
 * exactly once and size x loops bytes are exactly the region loops times; taking the free block
 * after a covered one (rather than any free block) starts I/Os at the heads of gaps, which is why
 * fio cuts few of them short.
 * perm_i counts the blocks covered in this pass. Returns the (possibly shortened) length and
 * sets *blk. The sizes of the two directions differ: map_claim_units. */
static uint64_t map_claim(struct worker *w, uint64_t bs, uint64_t *blk, int ddir)
{
	if (w->perm_i >= w->nblocks) { /* a full pass done: empty map */
		w->perm_i = 0;
		memset(w->map, 0, ((w->nblocks + 63) / 64) * sizeof(uint64_t));
	}
	uint64_t b = rng_below(&w->rng, w->nblocks);
	if (map_test(w->map, b))
		b = map_next_free(w->map, w->nblocks, b);
	const uint64_t room = (w->nblocks - b) * w->minbs;
	const struct options *o = w->job->o;
	if (bs > room && ddir >= 0 && o->nbssplit[ddir]) {
		bs = pick_bs_fitting(w, ddir, room);
	} else if (bs > room && ddir >= 0 && o->bsrange[ddir][1] && o->bsrange[ddir][0] <= room) {
		do /* bsrange: fio draws the size after the offset, again until it fits (get_next_buflen) */
			bs = pat_bsrange_draw(w, ddir);
		while (bs > room);
	}
	uint64_t want = (bs + w->minbs - 1) / w->minbs, n = 1;
	map_set(w->map, b);
	while (n < want && b + n < w->nblocks && !map_test(w->map, b + n))
		map_set(w->map, b + n++);
	w->perm_i += n;
	*blk = b;
	return n < want ? n * w->minbs : bs;
}


/* fio's map when the two directions' smallest sizes differ (bs=4k,64k; bssplit=4k/50:16k/50,64k):
 * the map has a bit per smallest block of the job, but each direction draws its block in units of
 * its own smallest size (fio's default blockalign) and marks the map as if its bits were such
 * units (fio 3.33 io_u.c: __get_next_rand_offset, mark_random_map): a 64k write drawn at block b
 * claims bit b, so writes take bits of the map's first sixteenth. A pass ends early where a
 * covered block's next free bit lies beyond the region (fio's fill_io_u fails: the file is done)
 * -- randrw on 4 MiB: ~3 MiB in ~80 I/Os on average in fio 3.33 (from a few to ~170). Kept as fio
 * does it, so that I/O counts compare. A size that does not fit before the end: another entry of
 * the list, as fio. */
static uint64_t map_claim_units(struct worker *w, uint64_t *bs, int d)
{
	const uint64_t u = w->dunit[d];
	if (w->perm_i >= w->nblocks) { /* every bit set: a new pass */
		w->perm_i = 0;
		memset(w->map, 0, ((w->nblocks + 63) / 64) * sizeof(uint64_t));
	}
	uint64_t b = rng_below(&w->rng, w->rsize / u);
	if (map_test(w->map, b))
		b = map_next_free(w->map, w->nblocks, b);
	if (b >= w->nblocks || b * u + u > w->rsize)
		return OFF_PASS_END;
	const uint64_t off = b * u, room = w->rsize - off;
	if (*bs > room) /* only with a list: a single size per direction is u, which fits */
		*bs = pick_bs_fitting(w, d, room);
	const uint64_t want = (*bs + u - 1) / u;
	uint64_t n = 1;
	map_set(w->map, b);
	while (n < want && b + n < w->nblocks && !map_test(w->map, b + n))
		map_set(w->map, b + n++);
	w->perm_i += n;
	if (n < want)
		*bs = n * u;
	return off;
}

uint64_t worker_pick_bs(struct worker *w, int ddir)
{
	return pick_bs(w, ddir);
}

/* A random offset (relative to the region) for an I/O of *bs bytes: from the distribution, the
 * random map (which may cut *bs short) or a uniform draw. */
static uint64_t rand_off_d(struct worker *w, uint64_t *bs, int ddir)
{
	const struct options *o = w->job->o;
	uint64_t blk, off;
	if (o->dist != DIST_RANDOM) {
		blk = perm_at(&w->scatter, distgen_next(&w->dg, &w->rng));
	} else if (o->norandommap) {
		blk = rng_below(&w->rng, w->nblocks);
	} else if (w->map) {
		if (ddir >= 0 && w->dunit[ddir])
			return map_claim_units(w, bs, ddir);
		*bs = map_claim(w, *bs, &blk, ddir);
	} else {
		if (w->perm_i == w->nblocks) { /* a full pass done: new permutation */
			w->perm_i = 0;
			perm_init(&w->perm, w->nblocks, rng_next(&w->rng));
		}
		blk = perm_at(&w->perm, w->perm_i++);
	}
	off = blk * w->minbs;
	if (off + *bs > w->rsize)
		off = (w->rsize - *bs) / w->minbs * w->minbs;
	return off;
}

uint64_t worker_rand_off(struct worker *w, uint64_t *bs, int ddir)
{
	return rand_off_d(w, bs, ddir);
}

/* Next I/O: direction, size, offset inside [offset, offset+size) of the current file. 1 when the
 * byte budget (size x loops) is used up, 2 when no file can take one now (multifile.c: reap first). */
static inline int gen_io_raw(struct worker *w, struct io_req *r)
{
	const struct options *o = w->job->o;
	if (!o->time_based && w->issued >= w->budget && w->measuring)
		return 1; /* during ramp_time the budget does not run down (see account()) */
	/* number_ios: like size, a budget of number_ios x loops I/Os (fio 3.33 goes on without
	 * rewinding when the count ends a pass); time_based runs ignore it, as fio's. trimwrite: its
	 * passes' own rule, a file's in patterns.c, several files' in multifile.c */
	if (o->number_ios && !o->time_based && w->measuring && !(w->pat && rw_trimwrite(o->rw))) {
		if (!rw_trimwrite(o->rw) ? w->nios / o->loops >= o->number_ios
					 : w->mfw ? mf_trimwrite_count_reached(w) : w->nios / 2 / o->loops >= o->number_ios)
			return 1;
	}
	if (w->pat) /* rw=X:N, bsrange, blockalign, zoned, ... (src/patterns.c) */
		return pat_next(w, r);
	int ddir;
	switch (o->rw) {
	case RW_READ: case RW_RANDREAD: ddir = DDIR_READ; break;
	case RW_WRITE: case RW_RANDWRITE: ddir = DDIR_WRITE; break;
	case RW_TRIM: case RW_RANDTRIM: ddir = DDIR_TRIM; break; /* a multi-file job's (patterns.c) */
	case RW_TRIMWRITE: case RW_RANDTRIMWRITE: ddir = DDIR_TRIM; break; /* a multi-file job's: or its write */
	default:
		ddir = rng_below(&w->rng, 100) < o->rwmixread ? DDIR_READ : DDIR_WRITE;
		if (w->pace.on) /* rates: the other direction when this one is ahead of its rate (pace.c) */
			ddir = pace_ddir(w, ddir);
		break;
	}
	if (w->mfw && mf_select(w))
		return w->err ? 1 : 2;
	if (ddir == DDIR_TRIM && rw_trimwrite(o->rw) && mf_trimwrite(w, r)) { /* the trimmed block's write */
		w->issued += r->len;
		w->nios += w->measuring;
		mf_issued(w, r, r->len);
		return 0;
	}
	const int od = ddir == DDIR_TRIM ? DDIR_WRITE : ddir; /* fio: trims take the writes' sizes and offsets */
	uint64_t bs = pick_bs(w, od), off;
	if (rw_is_random(o->rw)) {
		off = rand_off_d(w, &bs, od);
		if (off == OFF_PASS_END) { /* fio ends the pass: the next one, if any, with an empty map */
			w->perm_i = w->nblocks;
			const uint64_t pass = w->nblocks * w->minbs;
			if (!o->time_based && w->measuring) {
				uint64_t next = (w->issued / pass + 1) * pass;
				if (next >= w->budget)
					return 1;
				w->issued = next;
			}
			bs = pick_bs(w, od);
			off = rand_off_d(w, &bs, od); /* a fresh map: its draw always fits */
		}
	} else {
		off = w->seq_pos[od];
		if (off + bs > w->rsize && off < w->rsize && o->nbssplit[od])
			bs = pick_bs_fitting(w, od, w->rsize - off); /* fio draws again until one fits */
		else if (off + bs > w->rsize)
			off = 0;
		w->seq_pos[od] = off + bs;
	}
	r->ddir = (uint8_t)ddir;
	r->len = (uint32_t)bs;
	r->off = w->roff + off;
	w->issued += bs;
	w->nios += w->measuring;
	if (w->mfw)
		mf_issued(w, r, bs);
	return 0;
}

/* fio's pre_read (filesetup.c pre_read_file): [off, off + len) of the file read once, in the job's
 * largest read block, into the page cache, before the job's clock starts. A short read fails the
 * job with EIO, as fio's. 0 or -errno (message in w->errmsg) */
int worker_pre_read(struct worker *w, int fd, uint64_t off, uint64_t len)
{
	const struct options *o = w->job->o;
	uint64_t bs = o->bs[DDIR_READ];
	for (int i = 0; i < o->nbssplit[DDIR_READ]; i++)
		if (o->bssplit[DDIR_READ][i].bs > bs)
			bs = o->bssplit[DDIR_READ][i].bs;
	if (o->bsrange[DDIR_READ][1] > bs)
		bs = o->bsrange[DDIR_READ][1];
	if (bs > len)
		bs = len;
	if (!bs)
		return 0;
	void *b = malloc(bs);
	if (!b)
		return -ENOMEM;
	int err = 0;
	for (uint64_t done = 0; done < len && !g_stop;) {
		uint64_t n = len - done < bs ? len - done : bs;
		ssize_t r = pread(fd, b, n, (off_t)(off + done));
		if (r != (ssize_t)n) {
			err = -EIO;
			snprintf(w->errmsg, sizeof(w->errmsg), "pre_read: %s at offset %llu", r < 0 ? strerror(errno) : "short read",
				 (unsigned long long)(off + done));
			break;
		}
		done += n;
	}
	free(b);
	return err;
}

int worker_gen_raw(struct worker *w, struct io_req *r)
{
	return gen_io_raw(w, r);
}

/* the next I/O; with verify, src/verify.c adds its phases around the workload's generator */
static inline int gen_io(struct worker *w, struct io_req *r)
{
	if (__builtin_expect(w->vw != NULL, 0))
		return verify_gen(w, r);
	return gen_io_raw(w, r);
}

void worker_reset_stats(struct worker *w, uint64_t now)
{
	for (int d = 0; d < 3; d++) { /* read, write, trim */
		struct dstat *s = &w->d[d];
		s->ios = s->bytes = s->short_ios = 0;
		lstat_init(&s->slat);
		lstat_init(&s->clat);
		lstat_init(&s->lat);
		memset(s->hist, 0, sizeof(s->hist));
		memset(s->lhist, 0, sizeof(s->lhist));
		if (d < 2)
			w->iv_ios[d] = w->iv_bytes[d] = 0;
	}
	memset(w->iv_hist, 0, 2 * HIST_NR * sizeof(uint64_t));
	if (w->schedhist)
		memset(w->schedhist, 0, HIST_NR * sizeof(uint64_t));
	lstat_init(&w->sched);
	lstat_init(&w->synclat);
	w->late_starts = 0;
	memset(w->depth_hist, 0, sizeof(w->depth_hist));
	memset(w->submit_hist, 0, sizeof(w->submit_hist));
	memset(w->complete_hist, 0, sizeof(w->complete_hist));
	w->nseries = w->nhpool = 0;
	if (w->cp)
		cmdprio_worker_reset(w);
	start_measuring(w);
	w->t_meas_start = now;
	w->next_tick = now + NS_PER_S;
}

int worker_setup_offsets(struct worker *w)
{
	const struct options *o = w->job->o;
	w->minbs = opt_min_bs(o);
	/* offset_increment: clone k's region starts k increments further; without size it runs to the
	 * end of the target (fio's per-clone size), else each clone has size bytes */
	uint64_t shift = ctl_clone_offset(o, w->id) - o->offset; /* percentages align it (control.c) */
	w->roff = o->offset + shift;
	w->rsize = o->size_set ? o->size : o->size - shift;
	w->nblocks = w->rsize / w->minbs;
	/* io_size: that many bytes (in whole smallest blocks) inside the region instead of the region */
	w->budget = (o->io_size ? o->io_size / w->minbs : w->nblocks) * w->minbs * o->loops;
	perm_init(&w->perm, w->nblocks, rng_next(&w->rng));
	perm_init(&w->scatter, w->nblocks, o->randseed ^ 0x5ca77e5ull);
	if (rw_is_random(o->rw) && o->dist == DIST_RANDOM && !o->norandommap && opt_max_bs(o) > w->minbs) {
		w->map = calloc((w->nblocks + 63) / 64, sizeof(uint64_t));
		if (!w->map)
			return -ENOMEM;
		uint64_t m[2];
		for (int d = 0; d < 2; d++) {
			m[d] = o->nbssplit[d] ? opt_bssplit_min(o, d) : o->bs[d];
		}
		/* map_claim_units; trims draw as writes (fio: bs=4k,8k trims 8k blocks in 8k units) */
		for (int d = 0; d < 2 && m[0] != m[1] && (!pat_active(o) || pat_trims_only(o)); d++)
			w->dunit[d] = m[d];
	}
	if (o->dist != DIST_RANDOM && distgen_init(&w->dg, o->dist, o->dist_param, w->nblocks) < 0)
		return -EINVAL;
	return pat_setup(w);
}

int worker_next_io(struct worker *w, struct io_req *r)
{
	return gen_io(w, r);
}

static void do_sync(struct worker *w, int end)
{
	const struct options *o = w->job->o;
	uint64_t t0 = now_ns();
	int r = (o->fdatasync_n && !end) ? fdatasync(w->fd) : fsync(w->fd);
	uint64_t t1 = now_ns();
	if (r < 0 && !w->err) {
		w->err = -errno;
		snprintf(w->errmsg, sizeof(w->errmsg), "fsync: %s", strerror(errno));
	}
	if (w->measuring || end)
		lstat_add(&w->synclat, t1 - t0);
	w->writes_since_sync = 0;
}

static inline uint64_t sync_every(const struct options *o)
{
	return o->fsync_n ? o->fsync_n : o->fdatasync_n;
}

/* Sleep until t (the now_ns() clock) in slices of at most STOP_SLICE_NS, so that a stop ends the
 * wait within one slice: SIGINT/SIGTERM interrupt only the thread the kernel delivers them to
 * (mostly the main thread), and exitall/exit_what only set a flag. A rate of 300 B/s in 4 KiB
 * blocks waits 13.6 s between I/Os: fio's examples/exitwhat.fio took 27.8 s here (fio 5-9 s)
 * while its rated jobs slept through the stop; now 1.6 s. 1 when told to stop. */
int worker_sleep_until(struct worker *w, uint64_t t)
{
	for (;;) {
		if (g_stop || worker_told_to_stop(w))
			return 1;
		uint64_t now = now_ns();
		if (now >= t)
			return 0;
		struct timespec ts = mono_deadline(t - now > STOP_SLICE_NS ? now + STOP_SLICE_NS : t);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR && !g_stop)
			;
	}
}

/* thinktime_spin: busy until t, or until told to stop */
int worker_spin_until(struct worker *w, uint64_t t)
{
	unsigned n = 0;
	while (now_ns() < t)
		if (!(++n & 1023) && (g_stop || worker_told_to_stop(w)))
			return 1;
	return 0;
}

/* fio's sync engines (psync): a read or write that moved fewer bytes than asked goes again for its
 * rest at the offset reached, until done (fio's io_queue_event with FIO_Q_COMPLETED and a resid):
 * every issue counts in total_ios, a short one in short_ios without its bytes (fio adds only the
 * last issue's to io_bytes), and an issue that moves 0 bytes fails with EIO (fio's "full resid":
 * a read at or past the end of a file create_on_open made). r is left as its last issue, for
 * account(); *whole keeps the block, which sync_whole() puts back (verify, the next I/O) */
static void sync_rest(struct worker *w, struct io_req *r, struct io_req *whole)
{
	*whole = *r;
	while (r->res >= 0 && (uint64_t)r->res < r->len) {
		if (r->res == 0) {
			r->res = -EIO;
			return;
		}
		if (w->measuring) {
			w->d[r->ddir].ios++;
			w->d[r->ddir].short_ios++;
		}
		r->buf = (char *)r->buf + r->res;
		r->off += (uint64_t)r->res;
		r->len -= (uint32_t)r->res;
		w->job->ops->queue(w, r);
	}
}

/* after sync_rest and account(): the whole block again, read or written whole when the rest was */
static void sync_whole(struct io_req *r, const struct io_req *whole)
{
	int64_t res = r->res == r->len ? whole->len : r->res;
	r->buf = whole->buf;
	r->off = whole->off;
	r->len = whole->len;
	r->res = res;
}

static void run_sync(struct worker *w)
{
	struct job *j = w->job;
	const struct options *o = j->o;
	const struct engine_ops *ops = j->ops;
	struct io_req *r = &w->reqs[0];
	const uint64_t deadline = w->deadline, every = sync_every(o);
	uint64_t t0;

	while (!g_stop && !w->err && !worker_told_to_stop(w)) {
		if (gen_io(w, r))
			break; /* sync: no I/O in flight, so never busy */
		if (w->pace.on && pace_wait_sync(w, r, deadline)) /* rate, thinktime, flow, latency_target */
			break;
		t0 = now_ns();
		if (r->ddir == DDIR_WRITE)
			refresh_buffer(w, r);
		r->t_prep = r->t_sub = t0;
		ops->queue(w, r);
		struct io_req whole;
		const int split = r->res >= 0 && (uint64_t)r->res < r->len && r->ddir != DDIR_TRIM;
		if (__builtin_expect(split, 0))
			sync_rest(w, r, &whole);
		uint64_t t1 = now_ns();
		w->depth_hist[0]++;
		w->submit_hist[1]++;
		w->complete_hist[1]++;
		account(w, r, t1, 1);
		if (__builtin_expect(split, 0))
			sync_whole(r, &whole);
		if (r->vcheck)
			verify_done(w, r);
		publish(w);
		if (r->res < 0 && w->err)
			break;
		if (every && r->ddir == DDIR_WRITE && ++w->writes_since_sync >= every)
			do_sync(w, 0);
		if (t1 >= deadline)
			break;
	}
}

/* Hand staged[from, to) to the engine: their clat starts now (like fio, just before the submit
 * call; slat = preparation). last: the worker reaps right after. */
static int submit_range(struct worker *w, struct io_req **staged, unsigned from, unsigned to, int last,
			uint64_t *tsub)
{
	*tsub = now_ns();
	for (unsigned i = from; i < to; i++)
		staged[i]->t_sub = *tsub;
	w->submit_hist[batch_bucket(to - from)]++;
	return w->job->ops->commit(w, last);
}

/* fio's io_completed: an asynchronous read or write that moved fewer bytes than asked, but some,
 * is requeued for its rest at the offset reached (its bytes are not counted; it counts as an
 * issue and in short_ios); a rest of 0 bytes completes with 0 bytes and no error (fio: the file's
 * size as fio knows it is the region's end, which a rest always starts before). fio issues a
 * requeued rest before any new I/O, but only while its loop goes on: its bytes were counted when
 * the whole block was issued, so a rest at the end of the job's bytes is dropped (a create_on_open
 * read short at the file's end: 4 I/Os, 8 KiB for 16 KiB of 4 KiB reads of a 10 KiB file, as fio).
 * 0: the rest is in flight; 1: dropped; < 0: it could not be queued (r->res is the error) */
static int async_rest(struct worker *w, struct io_req *r)
{
	const struct options *o = w->job->o;
	uint32_t n = (uint32_t)r->res;
	if (w->measuring) {
		w->d[r->ddir].ios++;
		w->d[r->ddir].short_ios++;
	}
	int room = !g_stop && !w->err && !worker_told_to_stop(w) &&
		   ((w->vw && w->vw->mode != VM_WRITE) || o->time_based || !w->measuring || w->issued < w->budget);
	if (!room)
		return 1;
	w->issued += r->len - n;
	r->buf = (char *)r->buf + n;
	r->off += n;
	r->len -= n;
	r->done_before += n;
	int q = w->job->ops->queue(w, r);
	if (q >= 0) {
		struct io_req *one = r;
		uint64_t t;
		q = submit_range(w, &one, 0, 1, 0, &t);
	}
	if (q < 0)
		r->res = q;
	return q < 0 ? q : 0;
}

/* after async_rest's last issue was accounted: the whole block again (verify, the next I/O) */
static void async_whole(struct io_req *r)
{
	uint32_t n = r->done_before;
	if (r->res == r->len)
		r->res = r->len + n;
	r->buf = (char *)r->buf - n;
	r->off -= n;
	r->len += n;
	r->done_before = 0;
}

static void run_async(struct worker *w)
{
	struct job *j = w->job;
	const struct options *o = j->o;
	const struct engine_ops *ops = j->ops;
	const uint64_t deadline = w->deadline, every = sync_every(o);
	/* iodepth_batch_submit (fio's default 1): give the device each I/O as soon as it is ready
	 * instead of holding a whole refill batch back while the rest is prepared -- measured on a
	 * loop device, batching the refill cost 20-25 % of random-write IOPS */
	const unsigned batch = o->iodepth_batch ? o->iodepth_batch : w->depth;
	struct io_req **staged = malloc(sizeof(*staged) * w->depth);
	int stopping = 0;

	if (!staged) {
		w->err = -ENOMEM;
		return;
	}
	for (;;) {
		if (g_stop || w->err || worker_told_to_stop(w))
			stopping = 1;
		unsigned nst = 0, ncom = 0;
		int serr = 0, waiting = 0;
		uint64_t tprep = now_ns(), wait_until = 0;
		while (!stopping && (w->nfree || w->pace.held)) {
			if (every && w->writes_since_sync >= every)
				break; /* drain, then sync */
			if (w->vw && verify_hold(w))
				break; /* verify_backlog: drain, then read back */
			/* pacing (pace.c) may hold a generated I/O back until it is due */
			struct io_req *r = w->pace.held ? w->pace.held : w->freelist[w->nfree - 1];
			int g = w->pace.held ? 0 : gen_io(w, r);
			if (g) {
				stopping = g == 1; /* 2: every servable file is busy, reap first */
				break;
			}
			if (!w->pace.held)
				w->nfree--;
			w->pace.held = NULL;
			if (w->pace.on) {
				int pg = pace_gate(w, r, tprep, &wait_until);
				if (pg == PACE_STOP) {
					w->freelist[w->nfree++] = r;
					stopping = 1;
					break;
				}
				if (pg == PACE_WAIT) {
					w->pace.held = r;
					waiting = 1;
					break;
				}
			}
			if (r->ddir == DDIR_WRITE) {
				refresh_buffer(w, r);
				w->writes_since_sync++;
			}
			r->t_prep = tprep;
			if (__builtin_expect(r->ddir == DDIR_TRIM, 0)) {
				/* fio's libaio and io_uring (FIO_ASYNCIO_SYNC_TRIM): what is staged is
				 * submitted first, then the trim is one synchronous BLKDISCARD, complete
				 * before the next I/O is prepared; what is in flight stays in flight */
				if (nst > ncom) {
					serr = submit_range(w, staged, ncom, nst, 0, &tprep);
					if (serr < 0) {
						w->freelist[w->nfree++] = r;
						break;
					}
					ncom = nst;
				}
				r->t_sub = now_ns();
				engine_trim(w, r);
				uint64_t t1 = now_ns();
				w->depth_hist[depth_bucket(1)]++; /* fio: io_u_mark_depth(td, 1) */
				w->submit_hist[1]++;
				w->complete_hist[1]++;
				account(w, r, t1, 2);
				w->freelist[w->nfree++] = r;
				publish(w);
				if (w->err) {
					stopping = 1;
					break;
				}
				tprep = t1;
				continue;
			}
			if (w->cp)
				cmdprio_pick(w, r); /* cmdprio_*: this I/O's priority (cmdprio.c) */
			int q = ops->queue(w, r);
			if (q < 0) {
				w->err = q;
				snprintf(w->errmsg, sizeof(w->errmsg), "queue: %s", strerror(-q));
				w->nfree++;
				stopping = 1;
				break;
			}
			staged[nst++] = r;
			w->inflight++;
			if (nst - ncom >= batch && w->nfree) { /* more may follow: submit these now */
				serr = submit_range(w, staged, ncom, nst, 0, &tprep);
				if (serr < 0)
					break;
				ncom = nst;
			}
		}
		/* like fio: every I/O of a batch counts at the depth reached after the batch */
		w->depth_hist[depth_bucket(w->inflight)] += nst;
		if (serr >= 0 && nst > ncom) {
			uint64_t tsub;
			serr = submit_range(w, staged, ncom, nst, 1, &tsub);
		}
		if (serr < 0) {
			w->err = serr;
			snprintf(w->errmsg, sizeof(w->errmsg), "submit: %s", strerror(-serr));
			w->inflight -= nst - ncom;
			w->nfree += nst - ncom;
			break;
		}
		if (w->inflight == 0) {
			if (stopping)
				break;
			if (every && w->writes_since_sync >= every) {
				do_sync(w, 0);
				continue;
			}
			if (waiting) {
				if (now_ns() >= deadline)
					break;
				if (wait_until > now_ns() + 1)
					worker_sleep_until(w, wait_until < deadline ? wait_until : deadline);
				else
					sched_yield();
			}
			continue;
		}
		uint64_t timeout = 0;
		if (waiting && wait_until && !stopping) {
			uint64_t n = now_ns(), until = wait_until < deadline ? wait_until : deadline;
			timeout = until > n ? until - n : 1;
			if (timeout > STOP_SLICE_NS) /* a stop ends the wait within a slice */
				timeout = STOP_SLICE_NS;
		}
		/* fio's iodepth_batch_complete_min/_max: wait for that many (as many as are in flight
		 * at most), take at most max (fio's default: one, then its slot is refilled at once) */
		int n = ops->getevents(w, o->reap_min < w->inflight ? o->reap_min : w->inflight, timeout);
		uint64_t tdone = now_ns();
		if (n < 0) {
			w->err = n;
			snprintf(w->errmsg, sizeof(w->errmsg), "getevents: %s", strerror(-n));
			break;
		}
		if (n)
			w->complete_hist[batch_bucket((unsigned)n)]++;
		for (int i = 0; i < n; i++) {
			struct io_req *r = w->done[i];
			int rest = -1;
			if (__builtin_expect(r->res > 0 && (uint64_t)r->res < r->len && r->ddir != DDIR_TRIM, 0))
				rest = async_rest(w, r);
			if (rest == 0)
				continue; /* its rest is in flight */
			if (rest == 1) { /* counted as a short issue; its rest is not issued */
				r->res = 0; /* no bytes, as fio's io_bytes */
				if (w->mfw)
					mf_completed(w, r);
				w->inflight--;
				w->freelist[w->nfree++] = r;
				continue;
			}
			account(w, r, tdone, 0);
			if (__builtin_expect(r->done_before != 0, 0))
				async_whole(r);
			if (r->vcheck)
				verify_done(w, r);
			w->inflight--;
			w->freelist[w->nfree++] = r;
		}
		publish(w);
		if (tdone >= deadline)
			stopping = 1;
	}
	/* wait for anything still in flight before the engine is torn down */
	w->reap_max = w->depth;
	while (w->inflight > 0) {
		int n = ops->getevents(w, 1, 0);
		if (n <= 0)
			break;
		w->inflight -= (unsigned)n;
	}
	free(staged);
}

void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct job *j = w->job;
	const struct options *o = j->o;
	int err = 0;

	/* A private copy of the descriptor table: the kernel then looks up this thread's fd without
	 * taking a reference on the shared struct file for every pread/pwrite (its single-owner fast
	 * path, which fio's per-job processes get for free), and numjobs threads on one file stop
	 * bouncing that reference count between CPUs. The copies close when the thread exits. */
	(void)unshare(CLONE_FILES);
	w->tid = gettid();
	/* numa_cpu_nodes, numa_mem_policy: before the buffers are allocated and touched (src/numa.c) */
	if (o->numa.cpu_text[0] || o->numa.mem_mode)
		err = numa_thread_apply(o, w->errmsg, sizeof(w->errmsg));
	w->depth = (j->ops->flags & ENGINE_F_SYNC) ? 1 : o->iodepth;
	w->reap_max = o->reap_max < w->depth ? o->reap_max : w->depth;
	w->reqs = calloc(w->depth, sizeof(*w->reqs));
	w->freelist = calloc(w->depth, sizeof(*w->freelist));
	w->done = calloc(w->depth, sizeof(*w->done));
	w->iv_hist = calloc(2 * HIST_NR, sizeof(uint64_t));
	if (pace_rated(o))
		w->schedhist = calloc(HIST_NR, sizeof(uint64_t));
	if (!w->reqs || !w->freelist || !w->done || !w->iv_hist || (pace_rated(o) && !w->schedhist))
		err = -ENOMEM;
	rng_seed(&w->rng, o->randseed * 0x100000001b3ull + (uint64_t)j->index * 7919 + w->id + 1);
	uint64_t bufsz = (j->max_bs + 4095) & ~4095ull;
	for (unsigned i = 0; !err && i < w->depth; i++) {
		void *b;
		if (posix_memalign(&b, 4096, bufsz)) {
			err = -ENOMEM;
			break;
		}
		fill_buffer(o, &w->rng, b, bufsz);
		w->reqs[i].buf = b;
		w->reqs[i].idx = (uint16_t)i;
		w->freelist[w->nfree++] = &w->reqs[i];
	}
	for (int d = 0; d < 3; d++) {
		lstat_init(&w->d[d].slat);
		lstat_init(&w->d[d].clat);
		lstat_init(&w->d[d].lat);
	}
	lstat_init(&w->synclat);
	lstat_init(&w->sched);
	if (!err)
		err = j->mf ? mf_worker_init(w) : worker_setup_offsets(w);
	if (!err && o->verify)
		err = verify_worker_init(w);
	if (!err)
		err = dedupe_worker_init(w);
	if (!err && j->logs)
		err = logs_worker_init(w);
	if (!err)
		err = cmdprio_worker_init(w); /* cmdprio_* (cmdprio.c) */
	pace_worker_init(w); /* rates, flow, latency_target, prio, nice (pace.c) */
	if (pace_rated(o) || o->pace.think_ns) {
		/* open loop: latency counts from the intended start, so the thread's own wake-up delay
		 * is in it; the default 50 us timer slack would add up to that much to every I/O (and
		 * to every thinktime stall) */
		(void)prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	}
	if (!j->mf)
		w->fd = j->fd;
	for (unsigned i = 0; !err && i < w->depth; i++)
		w->reqs[i].fd = w->fd;
	if (!err)
		err = j->ops->init(w);
	w->err = err;
	if (err && !w->errmsg[0])
		snprintf(w->errmsg, sizeof(w->errmsg), "%s init: %s", j->ops->name, strerror(-err));

	if (!err && o->pre_read && !j->err)
		w->err = err = w->mfw ? mf_pre_read(w) : worker_pre_read(w, w->fd, w->roff, w->rsize);
	pthread_barrier_wait(&j->ready);
	pthread_barrier_wait(&j->go); /* main set t_start/deadline, or j->err to abort */
	w->t_start = now_ns(); /* released with the other jobs of its start (sched.c); its own clock from here */
	if (!w->err && !j->err && (o->startdelay_ns || o->startdelay_hi_ns))
		start_delay(w);
	w->t_ramp_end = w->t_start + o->ramp_ns;
	if (!w->err && !j->err && !o->create_only && !g_stop && !worker_told_to_stop(w)) {
		w->deadline = o->runtime_ns ? w->t_ramp_end + o->runtime_ns : UINT64_MAX;
		if (w->vw)
			verify_start(w);
		if (w->t_ramp_end == w->t_start)
			start_measuring(w);
		if (j->ops->flags & ENGINE_F_SYNC)
			run_sync(w);
		else
			run_async(w);
		if (w->pace.on && !worker_told_to_stop(w))
			pace_final_stall(w);
		/* as fio, the final fsync is part of the job's time: a buffered write job with
		 * end_fsync=1 reports what reached the device, not page-cache speed */
		/* fsync_on_close: fio's do_io ends with the same fsync of every file as end_fsync */
		const int end_sync = (o->end_fsync || o->fsync_on_close) && rw_writes(o->rw);
		if (end_sync && !w->err && !w->mfw)
			do_sync(w, 1);
		for (unsigned i = 0; end_sync && w->mfw && i < w->mfw->n && !w->err; i++)
			if (w->mfw->st[i].fd >= 0) { /* every open file of a multi-file job, as fio */
				w->fd = w->mfw->st[i].fd;
				do_sync(w, 1);
			}
		/* verify family: read back and check what was written (src/verify.c) */
		if (w->vw) {
			while (verify_next_phase(w)) {
				if (j->ops->flags & ENGINE_F_SYNC)
					run_sync(w);
				else
					run_async(w);
				if (!verify_next_pass(w)) /* a hole pattern's next pass (fio's job loop) */
					break;
				if (j->ops->flags & ENGINE_F_SYNC)
					run_sync(w);
				else
					run_async(w);
			}
			verify_finish(w);
		}
		w->t_end = now_ns();
		if (w->measuring) {
			uint64_t tick_start = w->next_tick - NS_PER_S;
			uint64_t rest = w->t_end > tick_start ? w->t_end - tick_start : 0;
			if (rest >= NS_PER_S / 10 || w->nseries == 0) {
				push_point(w, w->t_end - w->t_meas_start);
			} else if (w->iv_ios[0] || w->iv_ios[1]) {
				/* fold a short tail into the last full interval */
				w->nseries--;
				struct series_pt last = w->series[w->nseries];
				/* re-add the last interval's histogram into the live one */
				for (int d = 0; d < 2; d++) {
					for (uint32_t k = 0; k < last.hn[d]; k++) {
						struct hpair hp = w->hpool[last.hoff[d] + k];
						w->iv_hist[(size_t)d * HIST_NR + hp.idx] += hp.cnt;
					}
					w->iv_ios[d] += last.ios[d];
					w->iv_bytes[d] += last.bytes[d];
				}
				w->nhpool = last.hoff[0];
				push_point(w, w->t_end - w->t_meas_start);
			} else if (w->nseries) {
				w->series[w->nseries - 1].t_ns = w->t_end - w->t_meas_start;
			}
			double u, s;
			uint64_t c, ma, mi;
			rusage_now(&u, &s, &c, &ma, &mi);
			w->usr_s += u;
			w->sys_s += s;
			if (j->ops->flags & ENGINE_F_KWORKER) {
				/* a worker that exited took its time along: never let the difference wrap */
				uint64_t end = kworker_ns(w->tid);
				w->kworker_ns = end > w->kworker0 ? end - w->kworker0 : 0;
			}
			w->ctx_sw += c;
			w->majf += ma;
			w->minf += mi;
		}
		logs_worker_end(w); /* open log windows, buffers to disk */
	}
	/* exitall hears of this clone's end now, before the engine's teardown (libaio's io_destroy
	 * waits ~30 ms for the kernel), as fio's thread_main calls fio_terminate_threads before
	 * close_ioengine: the other jobs stop at their next I/O, not after that wait */
	atomic_store(&w->ended, 1);
	sem_post(&g_wake);
	pace_worker_exit(w);
	dedupe_worker_exit(w);
	if (w->ctx)
		j->ops->cleanup(w);
	publish(w);
	atomic_store(&w->finished, 1);
	sem_post(&g_wake);
	return NULL;
}
