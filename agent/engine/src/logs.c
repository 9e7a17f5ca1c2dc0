/* fio's per-job logs: write_bw_log, write_iops_log, write_lat_log (slat, clat, lat),
 * write_hist_log, in fio 3.33's text format and file names, so fio's tools (fiologparser.py,
 * fiologparser_hist.py, fio-plot) read them:
 *
 *   PREFIX_bw.N.log, PREFIX_iops.N.log, PREFIX_slat.N.log, PREFIX_clat.N.log, PREFIX_lat.N.log,
 *   PREFIX_clat_hist.N.log   (N = the clone, 1..numjobs; no ".N" with per_job_logs=0)
 *
 * Each line "time, value, data direction, block size, offset, priority" (offset only with
 * log_offset=1): time in ms since the measured start (log_unix_epoch: Unix ms; log_alternate_epoch:
 * ms of log_alternate_epoch_clock_id's clock), value in ns for latencies, 1 per I/O for iops,
 * bytes * 10^6 / clat_ns per I/O for bw (fio's per-I/O rate), direction 0 read / 1 write / 2 trim,
 * priority 1 when the I/O's class is realtime, else 0 (log_prio=1: its priority value, 0x%04x).
 * log_avg_msec=M: one entry per direction and window of at least M ms, closed by the completion
 * that ends it (its time) and at the job's end: the mean of the window's latencies (log_max_value:
 * the largest), KiB/s and I/Os per second over the window for bw and iops; block size and offset 0.
 * write_hist_log with log_hist_msec=M: "time, direction, block size, bins..." every M ms: the
 * completions of the interval per histogram bin (fio's 1856 bins; log_hist_coarseness=C adds
 * 2^C neighbours together).
 *
 * Per-I/O logs (log_avg_msec=0) cost the I/O path one 32-byte record per completion (fio's
 * stores an entry per log per I/O): the lines are formatted from the records (a digit-pair
 * formatter, not printf) when the record buffer is full and at the job's end, after its time and
 * CPU were taken, as fio formats its logs when the job is done. Memory is bounded: records up to
 * LOG_REC_BUDGET per job (shared by its clones), and each log's text goes through a fixed buffer
 * written out when full (never the run in memory); the files are created before the first I/O,
 * new files only (O_CREAT|O_EXCL|O_NOFOLLOW, 0600; fio would truncate an existing one),
 * beneath=DIR when set. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "iowatt.h"
#include "output.h"

enum { LOG_BW, LOG_IOPS, LOG_SLAT, LOG_CLAT, LOG_LAT, LOG_HIST, LOG_NTYPES };
static const char *const log_suffix[LOG_NTYPES] = { "bw", "iops", "slat", "clat", "lat", "clat_hist" };
static const char *const log_opt[LOG_NTYPES] = { "write_bw_log", "write_iops_log", "write_lat_log",
						 "write_lat_log", "write_lat_log", "write_hist_log" };

struct logfile {                        /* one file; clones share it with per_job_logs=0 */
	int fd;
	pthread_mutex_t mu;
	int err;
};

struct wlog {
	int type;
	struct logfile *f;
	char *buf;
	size_t n, cap;
	uint64_t last_ms[3];            /* start of the open window (log_avg_msec / log_hist_msec) */
	uint64_t cnt[3], max[3], bytes[3]; /* per direction: read, write, trim */
	double sum[3];
	uint64_t *snap;                 /* hist: the clat histogram when the last entry was written */
	char prio[16];                  /* the lines' last column (log_prio_text) */
};

/* one completion of a per-I/O log (log_avg_msec=0): every line of every per-I/O log comes from it
 * (lat = slat + clat: both count from the I/O's preparation) */
struct lrec {
	uint32_t ms;                    /* since the measured start (the epoch is added when formatted) */
	uint32_t len;                   /* block size (at most 1 GiB) */
	uint64_t off_dir;               /* offset (< 2^62) | direction << 62 */
	uint64_t slat : 48;             /* ns (capped: 78 hours) */
	uint64_t prio : 16;             /* cmdprio_*: the I/O's priority value, LREC_PRIO_JOB the job's */
	uint64_t clat;
};
_Static_assert(sizeof(struct lrec) == 32, "a per-I/O log record is 32 bytes");
#define LOG_REC_BUDGET (64u << 20)     /* bytes of records per job, shared by its clones */
#define LOG_REC_MIN 1024u              /* records per clone at least */

struct wlogs {
	struct wlog l[LOG_NTYPES];
	int n;
	uint64_t t0;                    /* now_ns() of the measured start */
	uint64_t epoch_ms;              /* added to every time (0, or the epoch's ms at t0) */
	struct lrec *recs;              /* per-I/O logs: completions not yet formatted, else NULL */
	size_t nrec, caprec;
	int has_slat;                   /* async engine: the slat log has lines */
	int hist;                       /* index of the histogram log in l[], -1 none */
};

struct joblogs {
	struct logfile *files[LOG_NTYPES]; /* per_job_logs=0: one each; else numjobs each */
	unsigned nfiles;
};

static int log_wanted(const struct options *o, int t)
{
	switch (t) {
	case LOG_BW: return o->bw_log[0] != 0;
	case LOG_IOPS: return o->iops_log[0] != 0;
	case LOG_SLAT: case LOG_CLAT: case LOG_LAT: return o->lat_log[0] != 0;
	default: return o->hist_log[0] != 0 && o->log_hist_msec;
	}
}

static const char *log_prefix(const struct options *o, int t)
{
	switch (t) {
	case LOG_BW: return o->bw_log;
	case LOG_IOPS: return o->iops_log;
	case LOG_HIST: return o->hist_log;
	default: return o->lat_log;
	}
}

/* names of the files job j writes, the same rule for every check */
static void log_name(char *out, size_t len, const struct options *o, int t, unsigned clone, int per_job)
{
	if (per_job)
		snprintf(out, len, "%s_%s.%u.log", log_prefix(o, t), log_suffix[t], clone + 1);
	else
		snprintf(out, len, "%s_%s.log", log_prefix(o, t), log_suffix[t]);
}

void logs_create(struct job *jobs, int njobs)
{
	for (int i = 0; i < njobs; i++) {
		struct job *j = &jobs[i];
		const struct options *o = j->o;
		int any = 0;
		for (int t = 0; t < LOG_NTYPES; t++)
			any |= log_wanted(o, t);
		if (!any)
			continue;
		struct joblogs *jl = calloc(1, sizeof(*jl));
		if (!jl)
			die_code(EXIT_FAIL, "out of memory");
		jl->nfiles = o->per_job_logs ? o->numjobs : 1;
		for (int t = 0; t < LOG_NTYPES; t++) {
			if (!log_wanted(o, t))
				continue;
			jl->files[t] = calloc(jl->nfiles, sizeof(struct logfile));
			if (!jl->files[t])
				die_code(EXIT_FAIL, "out of memory");
			for (unsigned c = 0; c < jl->nfiles; c++) {
				char name[PATH_MAX + 64];
				log_name(name, sizeof(name), o, t, c, o->per_job_logs);
				if (strlen(name) >= PATH_MAX)
					die_usage(log_opt[t], "log file name too long");
				/* per_job_logs=0: jobs of the same name share the file, as in fio */
				struct logfile *shared = NULL;
				for (int k = 0; k < i && !o->per_job_logs; k++) {
					struct joblogs *kl = jobs[k].logs;
					if (kl && kl->files[t] && !jobs[k].o->per_job_logs &&
					    !strcmp(log_prefix(jobs[k].o, t), log_prefix(o, t)))
						shared = &kl->files[t][0];
				}
				if (shared) {
					jl->files[t][c].fd = -1; /* use the other job's */
					jl->files[t][c].err = 0;
					continue;
				}
				jl->files[t][c].fd = output_create(log_opt[t], name, o->beneath);
				pthread_mutex_init(&jl->files[t][c].mu, NULL);
			}
		}
		j->logs = jl;
	}
	/* second pass: shared files point at the first job's */
	for (int i = 0; i < njobs; i++) {
		struct joblogs *jl = jobs[i].logs;
		if (!jl || jobs[i].o->per_job_logs)
			continue;
		for (int t = 0; t < LOG_NTYPES; t++)
			if (jl->files[t] && jl->files[t][0].fd == -1)
				for (int k = 0; k < i; k++) {
					struct joblogs *kl = jobs[k].logs;
					if (kl && kl->files[t] && kl->files[t][0].fd >= 0 && !jobs[k].o->per_job_logs &&
					    !strcmp(log_prefix(jobs[k].o, t), log_prefix(jobs[i].o, t))) {
						free(jl->files[t]);
						jl->files[t] = kl->files[t];
						jl->nfiles = 1;
						break;
					}
				}
	}
}

static void wlog_flush(struct wlog *l)
{
	if (!l->n)
		return;
	struct logfile *f = l->f;
	pthread_mutex_lock(&f->mu);
	size_t off = 0;
	while (off < l->n && !f->err) {
		ssize_t r = write(f->fd, l->buf + off, l->n - off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			f->err = r < 0 ? errno : EIO;
			break;
		}
		off += (size_t)r;
	}
	pthread_mutex_unlock(&f->mu);
	l->n = 0;
}

/* room for one line of at most need bytes */
#define HIST_LINE_MAX (64 + (size_t)HIST_NR * 22)

static inline char *wlog_room(struct wlog *l, size_t need)
{
	if (l->cap - l->n < need)
		wlog_flush(l);
	return l->buf + l->n;
}

/* the job's I/O priority value as fio's ioprio_value(): no class given = best effort */
unsigned log_ioprio(const struct options *o)
{
	if (!o->pace.prio_set && !o->pace.prioclass_set)
		return 0;
	unsigned cls = o->pace.prioclass_set && o->pace.prioclass ? o->pace.prioclass : 2;
	return (cls << 13) | o->pace.prio;
}

static const char digit_pairs[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
					"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
					"8081828384858687888990919293949596979899";

/* v in decimal at p (as printf's %llu); returns the end */
static inline char *put_u64(char *p, uint64_t v)
{
	char tmp[20], *e = tmp + sizeof(tmp), *q = e;
	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);
		v /= 100;
		q -= 2;
		memcpy(q, digit_pairs + 2 * r, 2);
	}
	if (v >= 10) {
		q -= 2;
		memcpy(q, digit_pairs + 2 * v, 2);
	} else {
		*--q = (char)('0' + v);
	}
	memcpy(p, q, (size_t)(e - q));
	return p + (e - q);
}

/* fio 3.33's line: "time, value, direction, block size[, offset], priority", as its printf
 * formats it (prio: the last column's text, at most 15 bytes); at most LOG_LINE_MAX bytes at p,
 * returns the length */
size_t logs_fmt_line(char *p0, uint64_t ms, uint64_t val, int ddir, uint64_t bs, int with_off, uint64_t off,
		     const char *prio)
{
	char *p = put_u64(p0, ms);
	memcpy(p, ", ", 2);
	p = put_u64(p + 2, val);
	memcpy(p, ", ", 2);
	p[2] = (char)('0' + ddir);
	memcpy(p + 3, ", ", 2);
	p = put_u64(p + 5, bs);
	if (with_off) {
		memcpy(p, ", ", 2);
		p = put_u64(p + 2, off);
	}
	size_t n = strlen(prio);
	memcpy(p, ", ", 2);
	memcpy(p + 2, prio, n);
	p[2 + n] = '\n';
	return (size_t)(p + 3 + n - p0);
}

/* the last column of every line of this job's logs (fio 3.33): log_prio=1 the I/O's priority
 * value (class << 13 | level, 0 when the job sets none) as 0x%04x, else 1 when its class is
 * realtime */
static void log_prio_text(const struct options *o, char *buf, size_t len)
{
	unsigned prio = log_ioprio(o);
	if (o->log_prio)
		snprintf(buf, len, "0x%04x", prio);
	else
		snprintf(buf, len, "%u", (prio >> 13) == 1);
}

static inline void put_entry(struct wlog *l, const struct options *o, uint64_t ms, uint64_t val, int ddir,
			     uint64_t bs, uint64_t off, const char *prio)
{
	char *p = wlog_room(l, LOG_LINE_MAX);
	l->n += logs_fmt_line(p, ms, val, ddir, bs, o->log_offset, off, prio);
}

/* cmdprio_*: an I/O's own priority (LREC_PRIO_JOB: the job's) as the lines' last column */
#define LREC_PRIO_JOB 0xffffu
static const char *io_prio_text(const struct wlog *l, const struct options *o, unsigned ioprio, char *buf)
{
	if (ioprio == LREC_PRIO_JOB)
		return l->prio;
	if (o->log_prio)
		snprintf(buf, 16, "0x%04x", ioprio & 0xffffu);
	else
		snprintf(buf, 16, "%u", (ioprio >> 13) == 1);
	return buf;
}

/* the records so far as lines of every per-I/O log (into each log's buffer, written when full) */
static void recs_flush(struct wlogs *ls, const struct options *o)
{
	for (int i = 0; i < ls->n; i++) {
		struct wlog *l = &ls->l[i];
		if (l->type == LOG_HIST || (l->type == LOG_SLAT && !ls->has_slat))
			continue;
		for (size_t k = 0; k < ls->nrec; k++) {
			const struct lrec *r = &ls->recs[k];
			uint64_t len = r->len, v;
			int ddir = (int)(r->off_dir >> 62);
			switch (l->type) {
			case LOG_BW: v = r->clat ? len * 1000000 / r->clat : 0; break;
			case LOG_IOPS: v = 1; break;
			case LOG_SLAT: v = r->slat; break;
			case LOG_CLAT: v = r->clat; break;
			default: v = (uint64_t)r->slat + r->clat; break; /* LOG_LAT */
			}
			char pb[16];
			put_entry(l, o, r->ms + ls->epoch_ms, v, ddir, len, r->off_dir & ((1ull << 62) - 1),
				  io_prio_text(l, o, r->prio, pb));
		}
	}
	ls->nrec = 0;
}

int logs_worker_init(struct worker *w)
{
	struct job *j = w->job;
	const struct options *o = j->o;
	struct joblogs *jl = j->logs;
	struct wlogs *ls = calloc(1, sizeof(*ls));
	if (!ls)
		return -ENOMEM;
	int nlogs = 0;
	for (int t = 0; t < LOG_NTYPES; t++)
		nlogs += jl->files[t] != NULL;
	/* bounded: 64 KiB per log, less when many clones log (about 16 MiB for the job), never under
	 * 16 KiB (and a histogram log's buffer holds one line of its 1856 bins) */
	size_t cap = (16u << 20) / ((size_t)o->numjobs * (size_t)(nlogs ? nlogs : 1));
	cap = cap > (64u << 10) ? (64u << 10) : cap < (16u << 10) ? (16u << 10) : cap;
	ls->hist = -1;
	ls->has_slat = !(j->ops->flags & ENGINE_F_SYNC);
	if (!o->log_avg_msec && (jl->files[LOG_BW] || jl->files[LOG_IOPS] || jl->files[LOG_CLAT])) {
		size_t n = LOG_REC_BUDGET / sizeof(struct lrec) / o->numjobs;
		ls->caprec = n < LOG_REC_MIN ? LOG_REC_MIN : n;
		if (o->log_entries && o->log_entries < ls->caprec) /* fio's log_entries: entries kept in memory */
			ls->caprec = o->log_entries;
		ls->recs = malloc(ls->caprec * sizeof(struct lrec)); /* pages are touched as records fill them */
		if (!ls->recs) {
			free(ls);
			return -ENOMEM;
		}
	}
	w->logs = ls; /* from here logs_worker_free releases what is allocated */
	for (int t = 0; t < LOG_NTYPES; t++) {
		if (!jl->files[t])
			continue;
		if (t == LOG_HIST)
			ls->hist = ls->n;
		struct wlog *l = &ls->l[ls->n++];
		l->type = t;
		log_prio_text(o, l->prio, sizeof(l->prio));
		l->f = &jl->files[t][jl->nfiles > 1 ? w->id : 0];
		/* a histogram line is up to ~41 KB (1856 bins of 20 digits): its buffer holds one at least */
		l->cap = t == LOG_HIST && cap < HIST_LINE_MAX ? HIST_LINE_MAX : cap;
		l->buf = malloc(l->cap);
		if (!l->buf)
			return -ENOMEM;
		if (t == LOG_HIST && !(l->snap = calloc(3 * HIST_NR, sizeof(uint64_t))))
			return -ENOMEM;
	}
	return 0;
}

/* the measured start: times count from here (or from the chosen epoch) */
void logs_worker_start(struct worker *w)
{
	struct wlogs *ls = w->logs;
	const struct options *o = w->job->o;
	if (ls->nrec) /* a restart (latency_target's final window): the records so far keep their clock */
		recs_flush(ls, o);
	ls->t0 = w->t_meas_start;
	if (o->log_unix_epoch || o->log_alternate_epoch) {
		struct timespec ts;
		clockid_t id = (clockid_t)o->log_alternate_epoch_clock_id; /* fio: for both (0 = CLOCK_REALTIME) */
		uint64_t now = now_ns();
		if (clock_gettime(id, &ts) == 0) {
			uint64_t e = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
			uint64_t back = now > ls->t0 ? now - ls->t0 : 0;
			ls->epoch_ms = (e > back ? e - back : 0) / 1000000;
		}
	}
}

static void close_window(struct wlog *l, const struct options *o, uint64_t ms, uint64_t win_ms)
{
	for (int d = 0; d < 3; d++) {
		if (!l->cnt[d])
			continue;
		uint64_t v;
		if (l->type == LOG_BW)
			v = win_ms ? l->bytes[d] * 1000 / win_ms / 1024 : 0;
		else if (l->type == LOG_IOPS)
			v = win_ms ? l->cnt[d] * 1000 / win_ms : 0;
		else
			v = o->log_max_value ? l->max[d] : (uint64_t)(l->sum[d] / (double)l->cnt[d]);
		put_entry(l, o, ms, v, d, 0, 0, o->log_prio ? "0x0000" : "0"); /* fio 3.33: a window's priority is 0 */
		l->cnt[d] = l->max[d] = l->bytes[d] = 0;
		l->sum[d] = 0;
	}
}

static void hist_entry(struct wlog *l, struct worker *w, uint64_t ms, int d, uint64_t bs)
{
	const struct options *o = w->job->o;
	const uint64_t *h = w->d[d].hist;
	uint64_t *s = l->snap + (size_t)d * HIST_NR;
	unsigned group = 1u << o->log_hist_coarseness;
	char *p = wlog_room(l, HIST_LINE_MAX);
	size_t k = (size_t)snprintf(p, 64, "%llu, %d, %llu", (unsigned long long)ms, d, (unsigned long long)bs);
	for (unsigned i = 0; i < HIST_NR; i += group) {
		uint64_t sum = 0;
		for (unsigned g = 0; g < group && i + g < HIST_NR; g++) {
			sum += h[i + g] - s[i + g];
			s[i + g] = h[i + g];
		}
		k += (size_t)snprintf(p + k, 24, ", %llu", (unsigned long long)sum);
	}
	p[k++] = '\n';
	l->n += k;
}

void logs_io(struct worker *w, uint64_t t_done, int ddir, uint64_t len, uint64_t off, uint64_t slat, uint64_t clat,
	     uint64_t lat, int has_slat, unsigned ioprio)
{
	struct wlogs *ls = w->logs;
	const struct options *o = w->job->o;
	uint64_t elapsed = t_done > ls->t0 ? (t_done - ls->t0) / 1000000 : 0;
	(void)lat; /* lat = slat + clat */
	if (ls->recs) { /* per-I/O logs: a record now, the lines later (recs_flush) */
		if (__builtin_expect(ls->nrec == ls->caprec, 0))
			recs_flush(ls, o);
		struct lrec *r = &ls->recs[ls->nrec++];
		r->ms = elapsed < UINT32_MAX ? (uint32_t)elapsed : UINT32_MAX;
		r->len = (uint32_t)len;
		r->off_dir = off | (uint64_t)ddir << 62;
		r->slat = has_slat ? (slat < (1ull << 48) ? slat : (1ull << 48) - 1) : 0;
		r->prio = ioprio;
		r->clat = clat;
		if (ls->hist < 0)
			return;
	}
	uint64_t ms = elapsed + ls->epoch_ms;
	for (int i = ls->recs ? ls->hist : 0; i < (ls->recs ? ls->hist + 1 : ls->n); i++) {
		struct wlog *l = &ls->l[i];
		uint64_t v;
		switch (l->type) {
		case LOG_BW: v = clat ? len * 1000000 / clat : 0; break;
		case LOG_IOPS: v = 1; break;
		case LOG_SLAT: if (!has_slat) continue; v = slat; break;
		case LOG_CLAT: v = clat; break;
		case LOG_LAT: v = slat + clat; break;
		default:
			/* histogram: an entry once log_hist_msec passed since the last one */
			if (elapsed - l->last_ms[ddir] >= o->log_hist_msec) {
				hist_entry(l, w, ms, ddir, len);
				l->last_ms[ddir] = elapsed;
			}
			continue;
		}
		if (!o->log_avg_msec) {
			char pb[16];
			put_entry(l, o, ms, v, ddir, len, off, io_prio_text(l, o, ioprio, pb));
			continue;
		}
		l->cnt[ddir]++;
		l->sum[ddir] += (double)v;
		l->bytes[ddir] += len;
		if (v > l->max[ddir])
			l->max[ddir] = v;
		if (elapsed - l->last_ms[ddir] >= o->log_avg_msec) {
			close_window(l, o, ms, elapsed - l->last_ms[ddir]);
			l->last_ms[ddir] = elapsed - elapsed % o->log_avg_msec;
		}
	}
}

/* the job's end: the open windows, then everything to disk */
void logs_worker_end(struct worker *w)
{
	struct wlogs *ls = w->logs;
	const struct options *o = w->job->o;
	if (!ls)
		return;
	uint64_t end = w->t_end > ls->t0 ? (w->t_end - ls->t0) / 1000000 : 0;
	if (ls->recs)
		recs_flush(ls, o);
	for (int i = 0; i < ls->n; i++) {
		struct wlog *l = &ls->l[i];
		if (l->type == LOG_HIST) /* the completions since the last entry */
			for (int d = 0; d < 3; d++)
				if (w->d[d].ios && memcmp(w->d[d].hist, l->snap + (size_t)d * HIST_NR, sizeof(w->d[d].hist)))
					hist_entry(l, w, end + ls->epoch_ms, d, 0);
		if (o->log_avg_msec && l->type != LOG_HIST) {
			uint64_t first = l->last_ms[0] < l->last_ms[1] ? l->last_ms[0] : l->last_ms[1];
			if (rw_trims(o->rw) && l->last_ms[2] < first)
				first = l->last_ms[2];
			close_window(l, o, end + ls->epoch_ms, end - first);
		}
		wlog_flush(l);
	}
}

int logs_error(struct job *j, char *msg, size_t len)
{
	struct joblogs *jl = j->logs;
	if (!jl)
		return 0;
	for (int t = 0; t < LOG_NTYPES; t++)
		for (unsigned c = 0; jl->files[t] && c < jl->nfiles; c++)
			if (jl->files[t][c].err) {
				snprintf(msg, len, "%s: writing the log failed: %s", log_opt[t], strerror(jl->files[t][c].err));
				return -jl->files[t][c].err;
			}
	return 0;
}

void logs_worker_free(struct worker *w)
{
	struct wlogs *ls = w->logs;
	if (!ls)
		return;
	for (int i = 0; i < LOG_NTYPES; i++) {
		free(ls->l[i].buf);
		free(ls->l[i].snap);
	}
	free(ls->recs);
	free(ls);
	w->logs = NULL;
}

/* after every job: close the files (a shared file once) */
void logs_close_all(struct job *jobs, int njobs)
{
	for (int i = 0; i < njobs; i++) {
		struct joblogs *jl = jobs[i].logs;
		if (!jl)
			continue;
		for (int t = 0; t < LOG_NTYPES; t++) {
			if (!jl->files[t])
				continue;
			int owner = 1;
			for (int k = 0; k < i; k++)
				if (jobs[k].logs && jobs[k].logs->files[t] == jl->files[t])
					owner = 0;
			if (!owner)
				continue;
			for (unsigned c = 0; c < jl->nfiles; c++)
				if (jl->files[t][c].fd >= 0) {
					close(jl->files[t][c].fd);
					pthread_mutex_destroy(&jl->files[t][c].mu);
				}
		}
	}
	for (int i = 0; i < njobs; i++) {
		struct joblogs *jl = jobs[i].logs;
		if (!jl)
			continue;
		for (int t = 0; t < LOG_NTYPES; t++) {
			int owner = 1;
			for (int k = 0; k < i; k++)
				if (jobs[k].logs && jobs[k].logs->files[t] == jl->files[t])
					owner = 0;
			if (owner)
				free(jl->files[t]);
		}
	}
	for (int i = 0; i < njobs; i++) {
		free(jobs[i].logs);
		jobs[i].logs = NULL;
	}
}
