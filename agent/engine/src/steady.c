/* Steady-state detection, fio's steadystate / ss, steadystate_duration / ss_dur,
 * steadystate_ramp_time / ss_ramp (HOWTO "Steady state"; checked against fio 3.33 in
 * tests/engine/test_pacing.py).
 *
 * The main thread calls steady_tick() for each running job once a second. After ss_ramp each
 * tick takes one sample: the job's IOPS and bandwidth (bytes/s) since the previous tick, over
 * all its threads, reads and writes together. The last ss_dur samples form the window; once
 * it is full, every tick judges it:
 *   iops, bw:             criterion = max |sample - mean| (a percentage of the mean with %)
 *   iops_slope, bw_slope: criterion = |least-squares slope| in units per second (per sample)
 *                         (a percentage of the mean with %)
 * and when the criterion is at or below the limit the job has attained steady state: its
 * threads stop (runtime and size still end it earlier). The report is fio's "steadystate"
 * object: ss (the criterion as fio prints it), duration (s), attained (0/1), criterion (text,
 * with % when relative; 0 until the window is full), max_deviation, slope, and data {bw_mean
 * (bytes/s), iops_mean, iops[], bw[] (bytes/s)}: the window's samples oldest first, padded with
 * zeros when the job ended before it filled; the means divide by ss_dur as fio's do.
 *
 * The procurement reports (SNIA PTS steady state, issue 29) are to build on this module. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "iowatt.h"

#define NS_PER_S 1000000000ull

struct steady {
	unsigned dur;           /* samples in the window */
	unsigned n;             /* samples taken (the window holds the last min(n, dur)) */
	uint64_t *iops, *bw;    /* ring of dur samples; slot n % dur is the next */
	int sampling;           /* ss_ramp is over */
	uint64_t prev_t, prev_ios, prev_bytes;
	int attained;
	double criterion, max_dev, slope;
};

static void job_totals(const struct job *j, uint64_t *ios, uint64_t *bytes)
{
	*ios = *bytes = 0;
	for (unsigned i = 0; i < j->o->numjobs; i++)
		for (int d = 0; d < 2; d++) {
			*ios += atomic_load_explicit(&j->workers[i].pub_ios[d], memory_order_relaxed);
			*bytes += atomic_load_explicit(&j->workers[i].pub_bytes[d], memory_order_relaxed);
		}
}

/* the window in time order into out (dur entries, zeros where no sample was taken) */
static void window(const struct steady *s, const uint64_t *ring, uint64_t *out)
{
	if (s->n < s->dur) {
		memcpy(out, ring, s->dur * sizeof(*out));
		return;
	}
	for (unsigned i = 0; i < s->dur; i++)
		out[i] = ring[(s->n + i) % s->dur];
}

static uint64_t mean_u64(const uint64_t *v, unsigned n)
{
	uint64_t sum = 0;
	for (unsigned i = 0; i < n; i++)
		sum += v[i];
	return sum / n;
}

static void judge(struct steady *s, const struct pace_opts *p)
{
	uint64_t *y = malloc(s->dur * sizeof(*y));
	if (!y)
		return;
	int iops = p->ss_kind == SS_IOPS || p->ss_kind == SS_IOPS_SLOPE;
	window(s, iops ? s->iops : s->bw, y);
	double n = s->dur, mean = 0;
	for (unsigned i = 0; i < s->dur; i++)
		mean += (double)y[i];
	mean /= n;
	double crit;
	if (p->ss_kind == SS_IOPS_SLOPE || p->ss_kind == SS_BW_SLOPE) {
		double sx = 0, sy = 0, sxy = 0, sxx = 0;
		for (unsigned i = 0; i < s->dur; i++) {
			sx += i;
			sy += (double)y[i];
			sxy += (double)i * (double)y[i];
			sxx += (double)i * i;
		}
		s->slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
		crit = fabs(s->slope);
	} else {
		double m = 0;
		for (unsigned i = 0; i < s->dur; i++)
			m = fmax(m, fabs((double)y[i] - mean));
		s->max_dev = m;
		crit = m;
	}
	if (p->ss_pct)
		crit = mean > 0 ? 100.0 * crit / mean : INFINITY;
	s->criterion = crit;
	s->attained = crit <= p->ss_limit;
	free(y);
}

void steady_tick(struct job *j, uint64_t now)
{
	const struct pace_opts *p = &j->o->pace;
	if (!p->ss_dur_ns || !j->workers || j->finished)
		return;
	struct steady *s = j->ss;
	if (!s) {
		s = calloc(1, sizeof(*s));
		unsigned dur = (unsigned)(p->ss_dur_ns / NS_PER_S);
		if (!s || !(s->iops = calloc(dur, sizeof(uint64_t))) || !(s->bw = calloc(dur, sizeof(uint64_t)))) {
			if (s) {
				free(s->iops);
				free(s);
			}
			return; /* no memory: no detection (the job runs to its end) */
		}
		s->dur = dur;
		s->prev_t = j->t_start;
		j->ss = s;
	}
	if (s->attained)
		return;
	uint64_t ios, bytes;
	job_totals(j, &ios, &bytes);
	if (!s->sampling && p->ss_ramp_ns) {
		/* during ss_ramp, and at the tick that ends it, only the baseline moves */
		s->sampling = now - j->t_start >= p->ss_ramp_ns;
		s->prev_t = now;
		s->prev_ios = ios;
		s->prev_bytes = bytes;
		return;
	}
	s->sampling = 1; /* without ss_ramp the first sample counts from the job's start */
	uint64_t dt = now - s->prev_t;
	if (dt == 0)
		return;
	unsigned slot = s->n % s->dur;
	s->iops[slot] = (uint64_t)((double)(ios - s->prev_ios) * 1e9 / (double)dt);
	s->bw[slot] = (uint64_t)((double)(bytes - s->prev_bytes) * 1e9 / (double)dt);
	s->n++;
	s->prev_t = now;
	s->prev_ios = ios;
	s->prev_bytes = bytes;
	if (s->n >= s->dur) {
		judge(s, p);
		if (s->attained)
			atomic_store(&j->stop, 1);
	}
}

void steady_report(struct jw *w, const struct job *j)
{
	const struct pace_opts *p = &j->o->pace;
	if (!p->ss_dur_ns)
		return;
	const struct steady *s = j->ss;
	unsigned dur = (unsigned)(p->ss_dur_ns / NS_PER_S);
	static const char *const kinds[] = { "", "iops", "iops_slope", "bw", "bw_slope" };
	char buf[128];
	jw_obj(w, "steadystate");
	snprintf(buf, sizeof(buf), "%s:%f%s", kinds[p->ss_kind], p->ss_limit, p->ss_pct ? "%" : "");
	jw_str(w, "ss", buf);
	jw_u64(w, "duration", dur);
	jw_u64(w, "attained", s && s->attained);
	/* fio keeps the criterion in a float: print it through one so the digits agree */
	float crit = s && s->n >= s->dur ? (float)s->criterion : 0.0f;
	snprintf(buf, sizeof(buf), "%f%s", (double)crit, p->ss_pct ? "%" : "");
	jw_str(w, "criterion", buf);
	jw_dbl(w, "max_deviation", s ? s->max_dev : 0.0);
	jw_dbl(w, "slope", s ? s->slope : 0.0);
	jw_obj(w, "data");
	uint64_t *iops = calloc(dur, sizeof(uint64_t)), *bw = calloc(dur, sizeof(uint64_t));
	if (s && iops && bw) {
		window(s, s->iops, iops);
		window(s, s->bw, bw);
	}
	jw_u64(w, "bw_mean", bw ? mean_u64(bw, dur) : 0);
	jw_u64(w, "iops_mean", iops ? mean_u64(iops, dur) : 0);
	jw_arr(w, "iops");
	for (unsigned i = 0; iops && i < dur; i++)
		jw_u64(w, NULL, iops[i]);
	jw_arr_end(w);
	jw_arr(w, "bw");
	for (unsigned i = 0; bw && i < dur; i++)
		jw_u64(w, NULL, bw[i]);
	jw_arr_end(w);
	jw_obj_end(w);
	jw_obj_end(w);
	free(iops);
	free(bw);
}

void steady_free(struct job *j)
{
	if (!j->ss)
		return;
	free(j->ss->iops);
	free(j->ss->bw);
	free(j->ss);
	j->ss = NULL;
}
