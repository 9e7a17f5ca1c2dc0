/* Output: merge the workers of a job and write it in fio's json / json+ shape plus the
 * "iowatt" extension object. */
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "iowatt.h"
#include "verify.h"
#include "multifile.h"
#include "output.h"

/* One entry of "jobs": a clone (a worker of a job), or with group_reporting the clones of a
 * reporting group. */
struct member {
	struct job *j;
	struct worker *w;
};

/* a clone's measured time (from the end of its ramp to its end), 0 if it never measured */
static uint64_t member_meas_ns(const struct member *mb)
{
	const struct worker *w = mb->w;
	/* from the ramp's end, or later where the thread restarted its statistics (latency_target's
	 * final window, pace.c) */
	uint64_t t0 = w->measuring && w->t_meas_start > w->t_ramp_end ? w->t_meas_start : w->t_ramp_end;
	return w->t_end > t0 ? w->t_end - t0 : 0;
}

struct merged {
	struct dstat d[3];              /* read, write, trim */
	struct lstat synclat, sched;
	uint64_t schedhist[HIST_NR];
	uint64_t depth[7], sub[7], comp[7];
	double usr, sys;
	uint64_t kworker_ns;
	uint64_t ctx, majf, minf, late;
	uint64_t meas_ns;               /* the longest member's measured time (fio: runtime is the max) */
	uint64_t dir_ns[3];             /* the same over the members that did I/O in that direction */
	uint64_t run_ns;                /* sum of the members' measured times (fio's job_runtime) */
	uint64_t total_err;
	int first_error;
	const struct options *o;        /* percentile options (NULL: fio's defaults) */
	struct cmdprio_merged *cp;      /* cmdprio_*: per-priority statistics (NULL without them) */
};

static void merge(const struct member *mb, size_t nmb, struct merged *m)
{
	memset(m, 0, sizeof(*m));
	for (int d = 0; d < 3; d++) {
		lstat_init(&m->d[d].slat);
		lstat_init(&m->d[d].clat);
		lstat_init(&m->d[d].lat);
	}
	lstat_init(&m->synclat);
	lstat_init(&m->sched);
	for (size_t i = 0; i < nmb; i++) {
		struct worker *w = mb[i].w;
		/* synchronous engines: lat == clat and slat is not measured, like fio */
		int sync = (mb[i].j->ops->flags & ENGINE_F_SYNC) != 0;
		uint64_t mns = member_meas_ns(&mb[i]), dns[3];
		if (mns > m->meas_ns)
			m->meas_ns = mns;
		m->run_ns += mns;
		/* fio times a verify job's phases apart: writes the write phase, reads the read-back */
		verify_dir_ns(w, mns ? w->t_end - mns : 0, mns, dns);
		for (int d = 0; d < 3; d++) {
			struct dstat *a = &m->d[d], *b = &w->d[d];
			if (b->ios && dns[d] > m->dir_ns[d])
				m->dir_ns[d] = dns[d];
			a->ios += b->ios;
			a->bytes += b->bytes;
			a->short_ios += b->short_ios;
			lstat_merge(&a->slat, &b->slat);
			lstat_merge(&a->clat, &b->clat);
			lstat_merge(&a->lat, sync ? &b->clat : &b->lat);
			const uint64_t *lh = sync ? b->hist : b->lhist;
			for (unsigned k = 0; k < HIST_NR; k++) {
				a->hist[k] += b->hist[k];
				a->lhist[k] += lh[k];
				a->shist[k] += b->shist[k];
			}
		}
		/* fio: total_err is summed, first_error is the last member's */
		m->total_err += w->total_err;
		m->first_error = w->first_error;
		lstat_merge(&m->synclat, &w->synclat);
		lstat_merge(&m->sched, &w->sched);
		if (w->schedhist)
			for (unsigned k = 0; k < HIST_NR; k++)
				m->schedhist[k] += w->schedhist[k];
		for (int k = 0; k < 7; k++) {
			m->depth[k] += w->depth_hist[k];
			m->sub[k] += w->submit_hist[k];
			m->comp[k] += w->complete_hist[k];
		}
		if (w->measuring) {
			m->usr += w->usr_s;
			m->sys += w->sys_s;
			m->kworker_ns += w->kworker_ns;
			m->ctx += w->ctx_sw;
			m->majf += w->majf;
			m->minf += w->minf;
		}
		m->late += w->late_starts;
	}
	m->o = mb[nmb - 1].j->o; /* the entry's options (fio: its last member's) */
	struct worker **ws = malloc(nmb * sizeof(*ws));
	const struct options **os = malloc(nmb * sizeof(*os));
	int *sy = malloc(nmb * sizeof(*sy));
	if (!ws || !os || !sy)
		die_code(EXIT_FAIL, "out of memory");
	for (size_t i = 0; i < nmb; i++) {
		ws[i] = mb[i].w;
		os[i] = mb[i].j->o;
		sy[i] = (mb[i].j->ops->flags & ENGINE_F_SYNC) != 0;
	}
	m->cp = cmdprio_merge(ws, os, sy, (unsigned)nmb); /* src/cmdprio.c */
	free(ws);
	free(os);
	free(sy);
	for (int d = 0; d < 3; d++)
		pace_mask_stats(m->o, &m->d[d]); /* disable_*lat, gtod_reduce: zero what fio does not measure */
}

void emit_lstat(struct jw *w, const char *key, const struct lstat *s, const uint64_t *hist, int bins)
{
	emit_lstat_pct(w, key, s, hist, bins, default_percentiles, NPCT);
}

void emit_lstat_pct(struct jw *w, const char *key, const struct lstat *s, const uint64_t *hist, int bins,
		    const double *pct, int npct)
{
	jw_obj(w, key);
	jw_u64(w, "min", s->n ? s->min : 0);
	jw_u64(w, "max", s->max);
	jw_dbl(w, "mean", lstat_mean(s));
	jw_dbl(w, "stddev", lstat_stddev(s));
	jw_u64(w, "N", s->n);
	if (hist && s->n) {
		uint64_t out[20];
		if (npct > 20)
			npct = 20;
		hist_percentiles(hist, s->n, pct, npct, out);
		jw_obj(w, "percentile");
		for (int i = 0; i < npct; i++) {
			char k[32];
			snprintf(k, sizeof(k), "%f", pct[i]);
			jw_u64(w, k, out[i]);
		}
		jw_obj_end(w);
		if (bins) {
			jw_obj(w, "bins");
			for (unsigned i = 0; i < HIST_NR; i++)
				if (hist[i]) {
					char k[32];
					snprintf(k, sizeof(k), "%llu", (unsigned long long)hist_val(i));
					jw_u64(w, k, hist[i]);
				}
			jw_obj_end(w);
		}
	}
	jw_obj_end(w);
}

struct mpoint { uint64_t t_ns, ios[2], bytes[2], p99[2]; int has[2]; };

static struct mpoint *merge_series(const struct member *mb, size_t nmb, size_t *np)
{
	size_t n = 0;
	for (size_t i = 0; i < nmb; i++)
		if (mb[i].w->nseries > n)
			n = mb[i].w->nseries;
	struct mpoint *pts = calloc(n ? n : 1, sizeof(*pts));
	uint64_t *h = calloc(HIST_NR, sizeof(uint64_t));
	if (!pts || !h)
		die_code(EXIT_FAIL, "out of memory");
	for (size_t k = 0; k < n; k++) {
		struct mpoint *p = &pts[k];
		for (int d = 0; d < 2; d++) {
			for (size_t i = 0; i < nmb; i++) {
				struct worker *w = mb[i].w;
				if (k >= w->nseries)
					continue;
				struct series_pt *s = &w->series[k];
				if (d == 0 && s->t_ns > p->t_ns)
					p->t_ns = s->t_ns;
				p->ios[d] += s->ios[d];
				p->bytes[d] += s->bytes[d];
				for (uint32_t q = 0; q < s->hn[d]; q++)
					h[w->hpool[s->hoff[d] + q].idx] += w->hpool[s->hoff[d] + q].cnt;
			}
			if (p->ios[d]) {
				double pct = 99.0;
				hist_percentiles(h, p->ios[d], &pct, 1, &p->p99[d]);
				p->has[d] = 1;
				memset(h, 0, HIST_NR * sizeof(uint64_t));
			}
		}
	}
	free(h);
	*np = n;
	return pts;
}

static void emit_samples(struct jw *w, const struct mpoint *pts, size_t n, int d)
{
	double bmin = 0, bmax = 0, bsum = 0, bsq = 0, imin = 0, imax = 0, isum = 0, isq = 0;
	uint64_t cnt = 0, prev = 0;
	for (size_t k = 0; k < n; k++) {
		uint64_t dt = pts[k].t_ns - prev;
		prev = pts[k].t_ns;
		if (dt < 500000000ull)
			continue; /* short tail: not a full sample */
		double bw = (double)pts[k].bytes[d] / ((double)dt / 1e9) / 1024.0;
		double io = (double)pts[k].ios[d] / ((double)dt / 1e9);
		if (!cnt || bw < bmin) bmin = bw;
		if (!cnt || bw > bmax) bmax = bw;
		if (!cnt || io < imin) imin = io;
		if (!cnt || io > imax) imax = io;
		bsum += bw; bsq += bw * bw; isum += io; isq += io * io;
		cnt++;
	}
	double bmean = cnt ? bsum / (double)cnt : 0, imean = cnt ? isum / (double)cnt : 0;
	double bdev = cnt > 1 ? sqrt(fmax(0, (bsq - (double)cnt * bmean * bmean) / (double)(cnt - 1))) : 0;
	double idev = cnt > 1 ? sqrt(fmax(0, (isq - (double)cnt * imean * imean) / (double)(cnt - 1))) : 0;
	jw_u64(w, "bw_min", (uint64_t)bmin);
	jw_u64(w, "bw_max", (uint64_t)bmax);
	jw_dbl(w, "bw_agg", cnt ? 100.0 : 0.0);
	jw_dbl(w, "bw_mean", bmean);
	jw_dbl(w, "bw_dev", bdev);
	jw_u64(w, "bw_samples", cnt);
	jw_u64(w, "iops_min", (uint64_t)imin);
	jw_u64(w, "iops_max", (uint64_t)imax);
	jw_dbl(w, "iops_mean", imean);
	jw_dbl(w, "iops_stddev", idev);
	jw_u64(w, "iops_samples", cnt);
}

static void emit_dir(struct jw *w, const char *key, const struct merged *m, int d, int jsonplus,
		     const struct mpoint *pts, size_t n)
{
	const struct dstat *s = &m->d[d];
	/* fio: a group's rates are over its longest member in this direction */
	double secs = (double)(m->dir_ns[d] ? m->dir_ns[d] : m->meas_ns) / 1e9;
	jw_obj(w, key);
	jw_u64(w, "io_bytes", s->bytes);
	jw_u64(w, "io_kbytes", s->bytes / 1024);
	jw_u64(w, "bw_bytes", secs > 0 ? (uint64_t)((double)s->bytes / secs) : 0);
	jw_u64(w, "bw", secs > 0 ? (uint64_t)((double)s->bytes / secs / 1024.0) : 0);
	jw_dbl(w, "iops", secs > 0 ? (double)s->ios / secs : 0);
	/* fio's update_runtime: whole microseconds rounded up to ms, so a direction that did I/O never
	 * reports 0 (normal output would leave it out) */
	jw_u64(w, "runtime", s->ios ? ((m->dir_ns[d] ? m->dir_ns[d] : m->meas_ns) / 1000 + 999) / 1000 : 0);
	jw_u64(w, "total_ios", s->ios);
	jw_u64(w, "short_ios", s->short_ios);
	jw_u64(w, "drop_ios", 0);
	/* fio's clat_percentiles (default 1), slat_percentiles, lat_percentiles; lat_ns keeps its
	 * percentiles unless lat_percentiles (or clat_percentiles) is set to 0 */
	const struct options *o = m->o;
	int npct;
	const double *pct = job_percentiles(o, &npct);
	int clat_p = !o || o->clat_pct, lat_p = o ? (o->lat_pct_set ? o->lat_pct : o->clat_pct) : 1;
	emit_lstat_pct(w, "slat_ns", &s->slat, o && o->slat_pct ? s->shist : NULL, 0, pct, npct);
	emit_lstat_pct(w, "clat_ns", &s->clat, clat_p ? s->hist : NULL, jsonplus, pct, npct);
	emit_lstat_pct(w, "lat_ns", &s->lat, lat_p ? s->lhist : NULL, 0, pct, npct);
	cmdprio_emit(w, m->cp, d, o, jsonplus); /* fio's "prios" (src/cmdprio.c) */
	emit_samples(w, pts, s->ios ? n : 0, d);
	jw_obj_end(w);
}

void emit_empty_dir(struct jw *w, const char *key)
{
	struct merged z;
	memset(&z, 0, sizeof(z));
	lstat_init(&z.d[0].slat);
	lstat_init(&z.d[0].clat);
	lstat_init(&z.d[0].lat);
	emit_dir(w, key, &z, 0, 0, NULL, 0);
}

static void emit_pct_map(struct jw *w, const char *key, const uint64_t *v, const char *const *names, int n,
			 uint64_t total)
{
	jw_obj(w, key);
	for (int i = 0; i < n; i++)
		jw_dbl(w, names[i], total ? 100.0 * (double)v[i] / (double)total : 0.0);
	jw_obj_end(w);
}

static void emit_latency_buckets(struct jw *w, const struct merged *m)
{
	static const uint64_t thr[10] = { 2, 4, 10, 20, 50, 100, 250, 500, 750, 1000 };
	static const char *const names[12] = { "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000",
					       "2000", ">=2000" };
	uint64_t ns[12] = { 0 }, us[12] = { 0 }, ms[12] = { 0 }, total = 0;
	for (int d = 0; d < 3; d++)
		for (unsigned i = 0; i < HIST_NR; i++) {
			uint64_t c = m->d[d].hist[i];
			if (!c)
				continue;
			total += c;
			uint64_t v = hist_val(i);
			uint64_t *arr = v < 1000 ? ns : v < 1000000 ? us : ms;
			uint64_t x = v < 1000 ? v : v < 1000000 ? v / 1000 : v / 1000000;
			int k = 0;
			while (k < 10 && x >= thr[k])
				k++;
			if (arr == ms && x >= 2000)
				k = 11;
			else if (arr == ms && x >= 1000)
				k = 10;
			else if (k > 9)
				k = 9;
			arr[k] += c;
		}
	emit_pct_map(w, "latency_ns", ns, names, 10, total);
	emit_pct_map(w, "latency_us", us, names, 10, total);
	emit_pct_map(w, "latency_ms", ms, names, 12, total);
}

/* One entry of "jobs" from its members, as fio's show_thread_status_json of a thread_stat that
 * sum_thread_stats filled: the name and groupid of the first member, the options of the last
 * (fio's "job options" come from the last job added), I/O counts, bytes, latencies, CPU, ctx and
 * faults summed; a direction's runtime (and so its bw and iops) the longest member's;
 * job_runtime the sum of the members' runtimes and usr_cpu / sys_cpu over that sum (a per-thread
 * average); error the first member's. */
static void report_entry(struct jw *w, const struct member *mb, size_t nmb, int jsonplus)
{
	const struct job *j = mb[0].j, *jl = mb[nmb - 1].j;
	const struct options *o = jl->o;
	struct merged *m = malloc(sizeof(*m));
	if (!m)
		die_code(EXIT_FAIL, "out of memory");
	merge(mb, nmb, m);
	size_t np;
	struct mpoint *pts = merge_series(mb, nmb, &np);
	int err = 0;
	const char *errmsg = NULL;
	uint64_t elapsed = 0;
	int coe = 0;
	for (size_t i = 0; i < nmb; i++) {
		const struct worker *wk = mb[i].w;
		if (!err && (wk->err || mb[i].j->err)) {
			err = wk->err ? wk->err : mb[i].j->err;
			errmsg = wk->err && wk->errmsg[0] ? wk->errmsg : mb[i].j->errmsg;
		}
		if (wk->t_end > wk->t_start && wk->t_end - wk->t_start > elapsed)
			elapsed = wk->t_end - wk->t_start;
		coe |= mb[i].j->o->continue_on_error != 0;
	}
	if (!err && coe && m->first_error)
		err = -m->first_error; /* fio: with continue_on_error the first error is the job's error */

	jw_obj(w, NULL);
	jw_str(w, "jobname", j->o->name);
	jw_i64(w, "groupid", j->groupid);
	jw_i64(w, "error", err < 0 ? -err : err);
	jw_i64(w, "eta", 0);
	/* fio: wall seconds since the job started, rounded up */
	jw_u64(w, "elapsed", (elapsed + 999999999) / 1000000000);
	/* like fio: the job's own section (its name first), the shared ones are "global options" */
	jw_obj(w, "job options");
	jw_str(w, "name", o->name);
	for (int i = 0; i < o->ngiven; i++)
		if (o->given_own[i] && strcmp(o->given_name[i], "name"))
			jw_str(w, o->given_name[i], o->given_val[i]);
	jw_obj_end(w);
	emit_dir(w, "read", m, 0, jsonplus, pts, np);
	emit_dir(w, "write", m, 1, jsonplus, pts, np);
	emit_dir(w, "trim", m, DDIR_TRIM, jsonplus, NULL, 0); /* no per-second series for trims */
	jw_obj(w, "sync");
	jw_u64(w, "total_ios", m->synclat.n);
	emit_lstat(w, "lat_ns", &m->synclat, NULL, 0);
	jw_obj_end(w);
	double secs = (double)m->meas_ns / 1e9, run_s = (double)m->run_ns / 1e9;
	jw_u64(w, "job_runtime", (m->run_ns + 500000) / 1000000);
	jw_dbl(w, "usr_cpu", run_s > 0 ? 100.0 * m->usr / run_s : 0);
	jw_dbl(w, "sys_cpu", run_s > 0 ? 100.0 * m->sys / run_s : 0);
	jw_u64(w, "ctx", m->ctx);
	jw_u64(w, "majf", m->majf);
	jw_u64(w, "minf", m->minf);
	static const char *const lvl[7] = { "1", "2", "4", "8", "16", "32", ">=64" };
	static const char *const bat[7] = { "0", "4", "8", "16", "32", "64", ">=64" };
	uint64_t t = 0, ts = 0, tc = 0;
	for (int k = 0; k < 7; k++) {
		t += m->depth[k];
		ts += m->sub[k];
		tc += m->comp[k];
	}
	emit_pct_map(w, "iodepth_level", m->depth, lvl, 7, t);
	emit_pct_map(w, "iodepth_submit", m->sub, bat, 7, ts);
	emit_pct_map(w, "iodepth_complete", m->comp, bat, 7, tc);
	emit_latency_buckets(w, m);
	if (coe) { /* fio's two more stats under continue_on_error */
		jw_u64(w, "total_err", m->total_err);
		jw_i64(w, "first_error", m->first_error);
	}
	pace_report_latency(w, mb[0].j, mb[0].w); /* latency_depth, _target (ns), _percentile, _window (us) */
	steady_report(w, mb[0].j);                 /* "steadystate", when ss_dur is set */
	if (o->description[0]) /* fio: "desc", the job's description, only when it has one */
		jw_str(w, "desc", o->description);

	jw_obj(w, "iowatt");
	jw_str(w, "ioengine", j->ops->name);
	jw_u64(w, "runtime_ns", m->meas_ns);
	jw_str_or_null(w, "error_message", errmsg);
	jw_u64(w, "members", nmb); /* clones in this entry: 1, or the group's with group_reporting */
	jw_u64(w, "startdelay_ns", mb[0].w->delay_ns); /* what the (first) clone waited */
	/* the entry's clones of its first job, for verify_report and mf_report */
	unsigned cl_first = (unsigned)(mb[0].w - j->workers), cl_n = 0;
	while (cl_n < nmb && mb[cl_n].j == j)
		cl_n++;
	verify_report(w, j, cl_first, cl_n); /* "verify": src/verify.c */
	jw_arr(w, "series");
	uint64_t prev = 0;
	for (size_t k = 0; k < np; k++) {
		double dt = (double)(pts[k].t_ns - prev) / 1e9;
		prev = pts[k].t_ns;
		if (dt <= 0)
			dt = 1e-9;
		jw_obj(w, NULL);
		jw_u64(w, "t_ns", pts[k].t_ns);
		jw_dbl(w, "read_iops", (double)pts[k].ios[0] / dt);
		jw_u64(w, "read_bw_bytes", (uint64_t)((double)pts[k].bytes[0] / dt));
		if (pts[k].has[0])
			jw_u64(w, "read_clat_p99_ns", pts[k].p99[0]);
		else
			jw_null(w, "read_clat_p99_ns");
		jw_dbl(w, "write_iops", (double)pts[k].ios[1] / dt);
		jw_u64(w, "write_bw_bytes", (uint64_t)((double)pts[k].bytes[1] / dt));
		if (pts[k].has[1])
			jw_u64(w, "write_clat_p99_ns", pts[k].p99[1]);
		else
			jw_null(w, "write_clat_p99_ns");
		jw_obj_end(w);
	}
	jw_arr_end(w);
	options_echo(w, o);
	if ((j->ops->flags & ENGINE_F_KWORKER) && j->workers) {
		/* what the engine decided per ring (the same for every clone of the job) */
		const struct worker *w0 = mb[0].w;
		jw_obj(w, "io_uring");
		jw_bool(w, "target_nowait", w0->uring_nowait);
		jw_u64(w, "force_async_every", o->force_async);
		jw_bool(w, "registered_ring_fd", w0->uring_ring_fd_registered);
		uint64_t polls = 0, hits = 0, poll_ns = 0; /* the bounded wait (ADR 0051), the clones' sums */
		for (size_t i = 0; i < nmb; i++) {
			polls += mb[i].w->uring_polls;
			hits += mb[i].w->uring_poll_hits;
			poll_ns += mb[i].w->uring_poll_ns;
		}
		jw_u64(w, "wait_polls", polls);
		jw_u64(w, "wait_poll_hits", hits);
		jw_u64(w, "wait_poll_cpu_ns", poll_ns);
		jw_u64(w, "kernel_worker_cpu_ns", m->kworker_ns);
		jw_dbl(w, "kernel_worker_cpu", secs > 0 ? 100.0 * (double)m->kworker_ns / 1e9 / secs : 0);
		jw_obj_end(w);
	}
	pace_report_load(w, o);
	if (pace_rated(o)) {
		jw_u64(w, "late_starts", m->late);
		emit_lstat(w, "sched_lat_ns", &m->sched, m->schedhist, jsonplus);
	}
	cpustat_emit(w, "system_cpu", &j->cpu0, &j->cpu1);
	target_facts(w, &j->tgt);
	if (j->mf)
		mf_report(w, j, cl_first, cl_n);
	if (jsonplus) {
		jw_arr(w, "threads");
		for (size_t i = 0; i < nmb; i++) {
			const struct worker *wk = mb[i].w;
			jw_obj(w, NULL);
			for (int d = 0; d < 2; d++) {
				jw_obj(w, d ? "write" : "read");
				jw_u64(w, "total_ios", wk->d[d].ios);
				jw_u64(w, "io_bytes", wk->d[d].bytes);
				jw_obj(w, "clat_bins");
				for (unsigned k = 0; k < HIST_NR; k++)
					if (wk->d[d].hist[k]) {
						char key[32];
						snprintf(key, sizeof(key), "%llu", (unsigned long long)hist_val(k));
						jw_u64(w, key, wk->d[d].hist[k]);
					}
				jw_obj_end(w);
				jw_obj_end(w);
			}
			jw_obj_end(w);
		}
		jw_arr_end(w);
	}
	jw_obj_end(w);
	jw_obj_end(w);
	free(pts);
	cmdprio_merged_free(m->cp);
	free(m);
}

/* A job that failed before its threads existed: its error only */
static void report_failed(struct jw *w, const struct job *j)
{
	jw_obj(w, NULL);
	jw_str(w, "jobname", j->o->name);
	jw_i64(w, "groupid", j->groupid);
	jw_i64(w, "error", -j->err);
	emit_empty_dir(w, "read");
	emit_empty_dir(w, "write");
	emit_empty_dir(w, "trim");
	jw_obj(w, "iowatt");
	jw_str(w, "error_message", j->errmsg);
	jw_obj_end(w);
	jw_obj_end(w);
}

/* fio's grouping of thread stats: every clone is a "thread"; a new entry starts at a clone
 * without group_reporting, or at one whose groupid differs from the clone before it. */
void report_jobs(struct jw *w, struct job *jobs, int njobs, int jsonplus)
{
	size_t cap = 0;
	for (int i = 0; i < njobs; i++)
		if (jobs[i].workers)
			cap += jobs[i].o->numjobs;
	struct member *mb = malloc(sizeof(*mb) * (cap ? cap : 1));
	if (!mb)
		die_code(EXIT_FAIL, "out of memory");
	size_t n = 0;
	int last_gid = -1;
	for (int i = 0; i < njobs; i++) {
		struct job *j = &jobs[i];
		if (!j->started && !j->err)
			continue;
		if (!j->workers) {
			if (n)
				report_entry(w, mb, n, jsonplus);
			n = 0;
			report_failed(w, j);
			last_gid = -1;
			continue;
		}
		for (unsigned k = 0; k < j->o->numjobs; k++) {
			if (n && (!j->o->group_reporting || last_gid != j->groupid)) {
				report_entry(w, mb, n, jsonplus);
				n = 0;
			}
			mb[n].j = j;
			mb[n].w = &j->workers[k];
			n++;
			last_gid = j->groupid;
		}
	}
	if (n)
		report_entry(w, mb, n, jsonplus);
	free(mb);
}

void emit_bounds(struct jw *w, const struct file_bounds *b)
{
	jw_obj(w, "bounds");
	jw_str(w, "mode", b->mode);
	jw_u64(w, "threads", b->threads);
	jw_u64(w, "max_block_bytes", b->max_block_bytes);
	if (b->written_bounded)
		jw_u64(w, "bytes_written_max", b->bytes_written_max);
	else
		jw_null(w, "bytes_written_max");
	if (b->runtime_bounded)
		jw_dbl(w, "runtime_s_max", b->runtime_s_max);
	else
		jw_null(w, "runtime_s_max");
	jw_u64(w, "dataset_bytes", b->dataset_bytes);
	jw_u64(w, "files", b->files);
	jw_u64(w, "directories", b->directories);
	jw_obj_end(w);
}

void emit_dir_totals(struct jw *w, const char *key, uint64_t bytes, uint64_t ios, uint64_t ns,
		     const struct lstat *lat, const uint64_t *hist)
{
	double secs = (double)ns / 1e9;
	struct lstat z;
	lstat_init(&z);
	if (!lat)
		lat = &z;
	jw_obj(w, key);
	jw_u64(w, "io_bytes", bytes);
	jw_u64(w, "io_kbytes", bytes / 1024);
	jw_u64(w, "bw_bytes", secs > 0 ? (uint64_t)((double)bytes / secs) : 0);
	jw_u64(w, "bw", secs > 0 ? (uint64_t)((double)bytes / secs / 1024.0) : 0);
	jw_dbl(w, "iops", secs > 0 ? (double)ios / secs : 0);
	jw_u64(w, "runtime", ios ? (ns + 500000) / 1000000 : 0);
	jw_u64(w, "total_ios", ios);
	jw_u64(w, "short_ios", 0);
	jw_u64(w, "drop_ios", 0);
	emit_lstat(w, "slat_ns", &z, NULL, 0);
	emit_lstat(w, "clat_ns", lat, hist, 0);
	emit_lstat(w, "lat_ns", lat, NULL, 0);
	jw_obj_end(w);
}

void emit_preamble(struct jw *w, const struct timeval *tv)
{
	jw_str(w, "fio version", "iowatt-engine-" IOWATT_VERSION);
	jw_i64(w, "timestamp", (int64_t)tv->tv_sec);
	jw_i64(w, "timestamp_ms", (int64_t)tv->tv_sec * 1000 + tv->tv_usec / 1000);
	char tbuf[64];
	time_t tt = tv->tv_sec;
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(tbuf, sizeof(tbuf), "%a %b %e %H:%M:%S %Y", &tm);
	jw_str(w, "time", tbuf);
}

void emit_disk_util(struct jw *w, const struct diskstat *d0, const struct diskstat *d1, uint64_t wall_ns)
{
	if (!d0->ok || !d1->ok)
		return;
	const uint64_t *a = d0->f, *b = d1->f;
	jw_obj(w, NULL);
	jw_str(w, "name", d0->name);
	jw_u64(w, "read_ios", b[0] - a[0]);
	jw_u64(w, "write_ios", b[4] - a[4]);
	jw_u64(w, "read_merges", b[1] - a[1]);
	jw_u64(w, "write_merges", b[5] - a[5]);
	jw_u64(w, "read_sectors", b[2] - a[2]);
	jw_u64(w, "write_sectors", b[6] - a[6]);
	jw_u64(w, "read_ticks", b[3] - a[3]);
	jw_u64(w, "write_ticks", b[7] - a[7]);
	jw_u64(w, "in_queue", b[10] - a[10]);
	double ms = (double)wall_ns / 1e6, util = ms > 0 ? 100.0 * (double)(b[9] - a[9]) / ms : 0;
	jw_dbl(w, "util", util > 100 ? 100 : util);
	jw_obj_end(w);
}

void emit_iowatt_head(struct jw *w, const char *mode, int interrupted, int sig)
{
	jw_str(w, "version", IOWATT_VERSION);
	jw_str(w, "schema", IOWATT_SCHEMA);
	if (mode)
		jw_str(w, "mode", mode);
	jw_bool(w, "interrupted", interrupted);
	if (sig)
		jw_str(w, "signal", sig == SIGINT ? "SIGINT" : "SIGTERM");
	else
		jw_null(w, "signal");
	host_facts(w);
	jw_obj(w, "clock");
	jw_str(w, "source", g_tsc.on ? "tsc" : "clock_gettime");
	if (g_tsc.on)
		jw_dbl(w, "tsc_ghz", g_tsc.ghz);
	else
		jw_null(w, "tsc_ghz");
	jw_obj_end(w);
}

void emit_job_iowatt(struct jw *w, const char *ioengine, uint64_t runtime_ns, const char *error)
{
	jw_obj(w, "iowatt");
	jw_str(w, "ioengine", ioengine);
	jw_u64(w, "runtime_ns", runtime_ns);
	jw_str_or_null(w, "error_message", error);
	jw_obj_end(w);
}
