/* fio's pacing options (thinktime*, rate*, rate_process, flow*, io_submit_mode), QoS
 * (latency_target/window/percentile, max_latency), priorities (prio, prioclass, nice) and the
 * measurement switches (gtod_reduce, disable_*), with fio's meaning (its HOWTO; behaviour
 * checked against fio 3.33 in tests/engine/test_pacing.py). The worker loop calls
 * pace_gate() before each I/O and pace_complete() after each completion; nothing here runs
 * unless the job set one of these options (pace_state.on). */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "iowatt.h"
#include "optable.h"

#define NS_PER_S 1000000000ull
#define RATE_SETTLE_NS (2 * NS_PER_S) /* fio checks rate_min only after 2 s */
#define IOPRIO_CLASS_SHIFT 13

/* ---- option parsers ---- */

static char *split3(const char *name, const char *val, char *buf, size_t len, char *parts[3])
{
	opt_value_copy(name, val, buf, len);
	parts[0] = buf;
	parts[1] = parts[2] = NULL;
	char *c = strchr(buf, ',');
	if (c) {
		*c = 0;
		parts[1] = c + 1;
		c = strchr(parts[1], ',');
		if (c) {
			*c = 0;
			parts[2] = c + 1;
			if (strchr(parts[2], ','))
				die_usage(name, "at most three values READ,WRITE,TRIM in '%s'", val);
		}
	}
	return buf;
}

/* R[,W[,T]] as fio's rate options: one value applies to reads, writes and trims, "X," limits
 * reads only, ",Y" writes and trims, a value not ended by a comma applies to the directions after
 * it (fio's blocksize rule). The trim value (index 2) paces nothing: a job that trims refuses
 * every rate (patterns.c), and one that does not trim has nothing for it to pace, as in fio
 * (examples/exitwhat.fio: rate=300,300,300 on randrw jobs). */
void pace_parse_rate(void *base, const struct opt_def *d, const char *name, const char *val)
{
	struct options *o = base;
	uint64_t *dst = FLD(base, d, uint64_t);
	int iops = !strncmp(d->name, "rate_iops", 9);
	char buf[256], *p[3];
	split3(name, val, buf, sizeof(buf), p);
	uint64_t v[3] = { 0, 0, 0 };
	for (int k = 0; k < 3; k++) {
		const char *s = p[k];
		for (int i = k - 1; !s && i >= 0; i--)
			s = p[i]; /* the last value given, when not ended by a comma */
		if (!*s)
			continue;
		int bad = iops ? parse_u64(s, &v[k]) : parse_size(s, &v[k], o->kb_base);
		if (bad)
			die_usage(name, "invalid %s '%s'", iops ? "number" : "rate", s);
		if (d->max && v[k] > d->max)
			die_usage(name, "must be at most %llu, got '%s'", (unsigned long long)d->max, s);
	}
	for (int k = 0; k < 3; k++)
		dst[k] = v[k];
}

void pace_echo_rate(struct jw *w, const struct options *o, const struct opt_def *d)
{
	const uint64_t *v = CFLD(o, d, uint64_t);
	if (!strcmp(d->name, "rate_iops")) {
		/* "rate_iops" kept as one number (the value of both directions; null when they differ) */
		if (v[0] == v[1])
			jw_u64(w, d->key, v[0]);
		else
			jw_null(w, d->key);
		jw_u64(w, "rate_iops_read", v[0]);
		jw_u64(w, "rate_iops_write", v[1]);
		return;
	}
	jw_obj(w, d->key);
	jw_u64(w, "read", v[0]);
	jw_u64(w, "write", v[1]);
	jw_obj_end(w);
}

static int all_digits(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if ((*s < '0' || *s > '9') && *s != '.')
			return 0;
	return 1;
}

/* a time whose plain number is microseconds (fio's thinktime, latency_target, ...) */
static uint64_t time_usec_default(const char *name, const char *val, uint64_t max)
{
	uint64_t v;
	char buf[64];
	if (all_digits(val) && strlen(val) < sizeof(buf) - 3) {
		snprintf(buf, sizeof(buf), "%sus", val);
		val = buf;
	}
	if (parse_time_ns(val, &v))
		die_usage(name, "invalid time '%s'", val);
	if (max && v > max)
		die_usage(name, "must be at most %llu s, got '%s'", (unsigned long long)(max / NS_PER_S), val);
	return v;
}

void pace_parse_usec(void *base, const struct opt_def *d, const char *name, const char *val)
{
	*FLD(base, d, uint64_t) = time_usec_default(name, val, d->max);
}

void pace_echo_u64(struct jw *w, const struct options *o, const struct opt_def *d)
{
	jw_u64(w, d->key, *CFLD(o, d, uint64_t));
}

void pace_parse_sec(void *base, const struct opt_def *d, const char *name, const char *val)
{
	uint64_t v;
	if (parse_time_ns(val, &v))
		die_usage(name, "invalid time '%s'", val);
	if (d->max && v > d->max)
		die_usage(name, "must be at most %llu s, got '%s'", (unsigned long long)(d->max / NS_PER_S), val);
	*FLD(base, d, uint64_t) = v;
}

void pace_parse_max_latency(void *base, const struct opt_def *d, const char *name, const char *val)
{
	uint64_t *dst = FLD(base, d, uint64_t);
	char buf[256], *p[3];
	split3(name, val, buf, sizeof(buf), p);
	if (p[2] && *p[2] && strcmp(p[2], "0"))
		die_usage(name, "a trim latency is not supported (trims are not paced): '%s'", val);
	for (int k = 0; k < 2; k++) {
		const char *s = k == 0 || p[1] ? p[k] : p[0];
		dst[k] = *s ? time_usec_default(name, s, d->max) : 0;
	}
}

void pace_echo_max_latency(struct jw *w, const struct options *o, const struct opt_def *d)
{
	const uint64_t *v = CFLD(o, d, uint64_t);
	jw_obj(w, d->key);
	jw_u64(w, "read", v[0]);
	jw_u64(w, "write", v[1]);
	jw_obj_end(w);
}

void pace_parse_pct(void *base, const struct opt_def *d, const char *name, const char *val)
{
	char *end;
	double v = strtod(val, &end);
	if (end == val || *end || !(v >= 0 && v <= 100))
		die_usage(name, "must be a percentage 0..100, got '%s'", val);
	*FLD(base, d, double) = v;
}

void pace_echo_pct(struct jw *w, const struct options *o, const struct opt_def *d)
{
	jw_dbl(w, d->key, *CFLD(o, d, double));
}

static const struct opt_choice ss_kinds[] = {
	{ "iops", SS_IOPS }, { "iops_slope", SS_IOPS_SLOPE }, { "bw", SS_BW }, { "bw_slope", SS_BW_SLOPE }, { NULL, 0 },
};

/* KIND:LIMIT[%] (fio's steadystate / ss) */
void pace_parse_ss(void *base, const struct opt_def *d, const char *name, const char *val)
{
	(void)d;
	struct pace_opts *p = &((struct options *)base)->pace;
	const char *colon = strchr(val, ':');
	if (!colon)
		die_usage(name, "must be KIND:LIMIT[%%] (iops, iops_slope, bw, bw_slope), got '%s'", val);
	int kind = -1;
	for (const struct opt_choice *c = ss_kinds; c->name; c++)
		if (strlen(c->name) == (size_t)(colon - val) && !strncmp(c->name, val, strlen(c->name)))
			kind = c->val;
	if (kind < 0 && (!strncmp(val, "lat:", 4) || !strncmp(val, "lat_slope:", 10)))
		die_usage(name, "'%s': latency criteria are newer than fio 3.33 (this engine's reference, which has "
			  "iops, iops_slope, bw, bw_slope only): not implemented", val);
	if (kind < 0)
		die_usage(name, "unknown criterion in '%s' (iops, iops_slope, bw, bw_slope)", val);
	char *end;
	double lim = strtod(colon + 1, &end);
	int pct = *end == '%';
	if (end == colon + 1 || (pct ? end[1] : *end) || !(lim >= 0) || !isfinite(lim) || (pct && lim > 100))
		die_usage(name, "invalid limit in '%s' (a number, or a percentage of the mean with %%)", val);
	p->ss_kind = kind;
	p->ss_limit = lim;
	p->ss_pct = pct;
}

void pace_echo_ss(struct jw *w, const struct options *o, const struct opt_def *d)
{
	const struct pace_opts *p = &o->pace;
	char buf[96];
	snprintf(buf, sizeof(buf), "%s:%f%s", ss_kinds[p->ss_kind - 1].name, p->ss_limit, p->ss_pct ? "%" : "");
	jw_str(w, d->key, buf);
}

void pace_parse_nice(void *base, const struct opt_def *d, const char *name, const char *val)
{
	(void)d;
	char *end;
	long v = strtol(val, &end, 10);
	if (end == val || *end || v < -20 || v > 19)
		die_usage(name, "must be -20..19, got '%s'", val);
	((struct options *)base)->pace.nice = (int)v;
}

void pace_echo_nice(struct jw *w, const struct options *o, const struct opt_def *d)
{
	jw_i64(w, d->key, o->pace.nice);
}

void pace_parse_refused(void *base, const struct opt_def *d, const char *name, const char *val)
{
	(void)base, (void)val;
	die_usage(name, "%s", d->bad);
}

/* ---- flows: jobs sharing a flow_id run in the ratio of their weights ---- */

struct pace_flow {
	unsigned id;
	int used;
	_Atomic uint64_t count;   /* I/Os issued by every member */
	_Atomic uint64_t weight;  /* sum of the members' weights (every clone of every job naming it) */
};
static struct pace_flow g_flows[MAX_JOBS];
static pthread_mutex_t g_flow_lock = PTHREAD_MUTEX_INITIALIZER;

/* as fio, a flow's weights are summed when the jobs are set up (before any runs) and stay when
 * a job ends: a job that outlives the others of its flow is held at its share until it ends */
static struct pace_flow *flow_join(unsigned id, uint64_t weight)
{
	struct pace_flow *f = NULL;
	pthread_mutex_lock(&g_flow_lock);
	for (size_t i = 0; i < MAX_JOBS && !f; i++)
		if (g_flows[i].used && g_flows[i].id == id)
			f = &g_flows[i];
	for (size_t i = 0; i < MAX_JOBS && !f; i++)
		if (!g_flows[i].used) {
			f = &g_flows[i];
			f->used = 1;
			f->id = id;
		}
	if (f)
		atomic_fetch_add(&f->weight, weight);
	pthread_mutex_unlock(&g_flow_lock);
	return f;
}

int pace_rated(const struct options *o)
{
	const struct pace_opts *p = &o->pace;
	return p->rate[0] || p->rate[1] || p->rate_iops[0] || p->rate_iops[1];
}

void pace_finalize(struct options *o)
{
	struct pace_opts *p = &o->pace;
	for (int k = 0; k < 2; k++) {
		/* as fio: a minimum above the cap can never be met */
		if (p->rate_min[k] && p->rate[k] && p->rate_min[k] > p->rate[k])
			die_usage("rate_min", "minimum rate exceeds rate (%s)", k ? "write" : "read");
		if (p->rate_iops_min[k] && p->rate_iops[k] && p->rate_iops_min[k] > p->rate_iops[k])
			die_usage("rate_iops_min", "minimum rate exceeds rate_iops (%s)", k ? "write" : "read");
		if (p->rate[k] && p->rate_iops[k])
			die_usage("rate_iops", "rate and rate_iops are mutually exclusive (%s)", k ? "write" : "read");
	}
	if (p->ss_dur_ns && (p->ss_kind == SS_IOPS_SLOPE || p->ss_kind == SS_BW_SLOPE) && p->ss_dur_ns < 2 * NS_PER_S)
		die_usage("steadystate_duration", "a slope needs at least 2 s of samples (one a second)");
	if (p->ss_dur_ns && p->ss_dur_ns < NS_PER_S)
		die_usage("steadystate_duration", "at least 1 s (one sample a second)");
	if (p->flow && !flow_join(p->flow_id, (uint64_t)p->flow * o->numjobs))
		die_usage("flow_id", "more than %d flow ids", MAX_JOBS);
	if (p->gtod_reduce)
		p->disable_lat = p->disable_clat = p->disable_slat = p->disable_bw = 1;
}

/* ---- the worker's hooks ---- */

static uint64_t prng_next(uint64_t *s) /* splitmix64 */
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void fail(struct worker *w, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(struct worker *w, int err, const char *fmt, ...)
{
	if (w->err)
		return;
	w->err = -err;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(w->errmsg, sizeof(w->errmsg), fmt, ap);
	va_end(ap);
}

void pace_worker_init(struct worker *w)
{
	const struct options *o = w->job->o;
	const struct pace_opts *p = &o->pace;
	struct pace_state *s = &w->pace;
	memset(s, 0, sizeof(*s));
	for (int d = 0; d < 2; d++) {
		/* rate_iops as fio: a byte rate of rate_iops x the direction's (smallest) block size */
		uint64_t bs = o->nbssplit[d] ? opt_min_bs(o) : o->bs[d];
		s->bps[d] = p->rate[d] ? p->rate[d] : p->rate_iops[d] * bs;
	}
	s->prng = o->randseed ^ (0x9ace0000ull + w->id);
	s->qd = s->qd_high = w->depth;
	s->qd_low = 1;
	if (p->lat_target_ns)
		s->qd = 1; /* fio starts the search at depth 1 */
	s->on = s->bps[0] || s->bps[1] || p->think_ns || p->flow || p->lat_target_ns || p->max_lat_ns[0] ||
		p->max_lat_ns[1] || p->rate_min[0] || p->rate_min[1] || p->rate_iops_min[0] || p->rate_iops_min[1];
	if (p->flow)
		s->flow = flow_join(p->flow_id, 0); /* its weight was added by pace_finalize */
	/* the job's I/O priority and nice value, for this thread (fio sets them per job process) */
	if (p->prio_set || p->prioclass_set) {
		unsigned cls = p->prioclass_set ? p->prioclass : 2; /* fio: no class given = best effort */
		if (syscall(SYS_ioprio_set, 1 /* IOPRIO_WHO_PROCESS */, 0, (int)((cls << IOPRIO_CLASS_SHIFT) | p->prio)) < 0)
			fail(w, errno, "ioprio_set(class %u, prio %u): %s", cls, p->prio, strerror(errno));
	}
	/* fio calls nice(N): N is added to the thread's current value (under `nice -n 19`, 19 + 5 is
	 * asked and the kernel keeps 19), never an absolute value that would raise a niced run */
	if (p->nice) {
		errno = 0;
		int cur = getpriority(PRIO_PROCESS, 0); /* 0: this thread (Linux) */
		if ((cur == -1 && errno) || setpriority(PRIO_PROCESS, 0, cur + p->nice) < 0)
			fail(w, errno == EACCES ? EPERM : errno, "nice %d: %s", p->nice,
			     strerror(errno == EACCES ? EPERM : errno));
	}
}

void pace_worker_exit(struct worker *w)
{
	(void)w; /* a flow keeps an ended job's weight and count (fio) */
}

/* thinktime: due once thinktime_blocks I/Os completed (or were issued) since the last stall,
 * or thinktime_iotime passed (fio's handle_thinktime) */
static int think_due(const struct pace_opts *p, struct pace_state *s, uint64_t now)
{
	if (p->think_iotime_ns) {
		if (now - s->think_last_t >= p->think_iotime_ns)
			return 1;
		if (!p->think_blocks_set)
			return 0;
	}
	uint64_t b = p->think_issue ? s->issued : s->completed;
	return b >= s->think_last + (p->think_blocks ? p->think_blocks : 1);
}

static uint64_t due_at(const struct pace_state *s, int poisson, int d)
{
	if (!s->bps[d])
		return 0; /* no rate: always due */
	return poisson ? s->next[d] : s->t0 + (uint64_t)((unsigned __int128)s->sched_bytes[d] * NS_PER_S / s->bps[d]);
}

static void arm(struct pace_state *s, const struct worker *w, uint64_t now)
{
	if (s->t0)
		return;
	/* the first I/O: schedules start at the job's start, as fio's */
	s->t0 = w->t_start; /* the thread's start (after its startdelay) */
	s->next[0] = s->next[1] = w->t_start;
	s->think_last_t = w->t_start;
	s->lat_t = now;
}

int pace_ddir(struct worker *w, int ddir)
{
	const struct options *o = w->job->o;
	struct pace_state *s = &w->pace;
	if (!s->bps[0] && !s->bps[1])
		return ddir;
	uint64_t now = now_ns();
	arm(s, w, now);
	int odir = ddir ^ 1;
	uint64_t t = due_at(s, o->pace.poisson, ddir), ot = due_at(s, o->pace.poisson, odir);
	if (t <= now || (odir == DDIR_READ ? o->rwmixread : 100 - o->rwmixread) == 0)
		return ddir;
	return ot <= now || ot < t ? odir : ddir;
}

int pace_gate(struct worker *w, struct io_req *r, uint64_t now, uint64_t *until)
{
	const struct job *j = w->job;
	const struct pace_opts *p = &j->o->pace;
	struct pace_state *s = &w->pace;
	*until = 0;
	if (s->done)
		return PACE_STOP;
	arm(s, w, now);
	/* latency_target: a change of depth waits for what is in flight (fio's io_u_quiesce) */
	if (s->quiesce || s->reset_pending) {
		if (w->inflight)
			return PACE_WAIT;
		s->quiesce = 0;
		if (s->reset_pending) {
			s->reset_pending = 0;
			worker_reset_stats(w, now);
		}
	}
	if (p->lat_target_ns && w->inflight >= s->qd)
		return PACE_WAIT;
	if (p->think_ns) {
		if (s->think_until) {
			if (now < s->think_until) {
				*until = s->think_until;
				return PACE_WAIT;
			}
			s->think_until = 0;
		} else if (think_due(p, s, now)) {
			/* as fio: the next stall counts from where this one was decided, so the I/Os
			 * completed while draining count towards it (thinktime_blocks per stall on average) */
			if (!s->think_draining) {
				s->think_draining = 1;
				s->think_mark = p->think_issue ? s->issued : s->completed;
			}
			if (w->inflight)
				return PACE_WAIT; /* drain first */
			s->think_draining = 0;
			uint64_t end = now + p->think_ns, spin = now + p->think_spin_ns;
			if (end > w->deadline)
				end = w->deadline;
			if (p->think_spin_ns)
				worker_spin_until(w, spin < end ? spin : end);
			s->think_last = s->think_mark;
			s->think_last_t = end;
			now = now_ns();
			if (now < end) {
				s->think_until = end;
				*until = end;
				return PACE_WAIT;
			}
		}
	}
	int d = r->ddir;
	uint64_t t = now;
	if (d < 2 && s->bps[d]) { /* trims have no rate (refused with them: patterns.c) */
		t = due_at(s, p->poisson, d);
		if (now < t) {
			*until = t;
			return PACE_WAIT;
		}
	}
	if (s->flow) {
		/* fio's flow: hold back while this worker's share of the flow's I/Os is above its
		 * share of the flow's weight */
		uint64_t total = atomic_load_explicit(&s->flow->count, memory_order_relaxed);
		uint64_t wsum = atomic_load_explicit(&s->flow->weight, memory_order_relaxed);
		if (total && wsum && (double)s->flow_count / (double)total > (double)p->flow / (double)wsum) {
			if (p->flow_sleep_us) {
				if (w->inflight)
					return PACE_WAIT;
				*until = now + p->flow_sleep_us * 1000;
			} else {
				*until = now + 1; /* yield and retry */
			}
			return PACE_WAIT;
		}
		atomic_fetch_add_explicit(&s->flow->count, 1, memory_order_relaxed);
		s->flow_count++;
	}
	/* go */
	r->t_intended = t;
	if (d < 2 && s->bps[d]) {
		s->sched_bytes[d] += r->len;
		if (p->poisson) {
			/* exponential gaps of mean len / rate: a Poisson process of the same rate */
			double u = ((double)(prng_next(&s->prng) >> 11) + 0.5) * 0x1.0p-53;
			s->next[d] += (uint64_t)(-log(u) * (double)r->len * 1e9 / (double)s->bps[d]);
		}
	}
	s->issued++;
	return PACE_GO;
}

/* fio thinks after issuing every I/O, the last one too (handle_thinktime ends its do_io loop),
 * so a job whose I/O ran out stalls once more when a stall is due, inside its runtime */
void pace_final_stall(struct worker *w)
{
	const struct pace_opts *p = &w->job->o->pace;
	struct pace_state *s = &w->pace;
	if (!p->think_ns || !s->t0 || s->done || w->err || g_stop)
		return;
	uint64_t now = now_ns();
	if (now >= w->deadline || !think_due(p, s, now))
		return;
	uint64_t end = now + p->think_ns, spin = now + p->think_spin_ns;
	if (end > w->deadline)
		end = w->deadline;
	if (p->think_spin_ns)
		worker_spin_until(w, spin < end ? spin : end);
	s->think_last = p->think_issue ? s->issued : s->completed;
	s->think_last_t = end;
	(void)worker_sleep_until(w, end);
}

int pace_wait_sync(struct worker *w, struct io_req *r, uint64_t deadline)
{
	for (;;) {
		uint64_t until, now = now_ns();
		int g = pace_gate(w, r, now, &until);
		if (g == PACE_GO)
			return 0;
		if (g == PACE_STOP || g_stop || w->err || atomic_load_explicit(&w->job->stop, memory_order_relaxed))
			return 1;
		if (until >= deadline) {
			if (deadline != UINT64_MAX)
				(void)worker_sleep_until(w, deadline);
			return 1;
		}
		if (until > now + 1) {
			if (worker_sleep_until(w, until))
				return 1; /* told to stop */
		} else {
			sched_yield();
		}
	}
}

/* fio's latency-target search: start at depth 1, double while the window meets the target,
 * bisect between the last good and the first bad depth after a miss; when a success leaves
 * the depth unchanged, drain, reset the statistics and run one more window at that depth
 * (what the job reports); its success ends the job. */
static void lat_new_cycle(struct pace_state *s, uint64_t now)
{
	s->lat_t = now;
	s->lat_ios = s->lat_done_ios;
	s->lat_failed = 0;
}

static void lat_success(struct worker *w, uint64_t now)
{
	struct pace_state *s = &w->pace;
	unsigned qd = s->qd, max = w->depth;
	s->qd_low = s->qd;
	if (s->qd_high != max)
		s->qd = (s->qd + s->qd_high) / 2;
	else
		s->qd *= 2;
	if (s->qd > max)
		s->qd = max;
	if (s->qd == qd) {
		if (s->end_run) {
			s->done = 1;
		} else {
			s->end_run = 1;
			s->reset_pending = 1;
		}
	}
	lat_new_cycle(s, now);
}

/* 1 when the depth is already 1 (nothing left to try) */
static int lat_failed(struct worker *w, uint64_t now)
{
	struct pace_state *s = &w->pace;
	if (s->qd == 1)
		return 1;
	s->qd_high = s->qd;
	if (s->qd == s->qd_low)
		s->qd_low--;
	s->qd = (s->qd + s->qd_low) / 2;
	s->quiesce = 1;
	lat_new_cycle(s, now);
	return 0;
}

static void rate_min_check(struct worker *w, uint64_t now)
{
	const struct pace_opts *p = &w->job->o->pace;
	struct pace_state *s = &w->pace;
	if (!w->measuring || now - w->t_start < RATE_SETTLE_NS)
		return;
	if (s->min_t && now - s->min_t < (uint64_t)p->rate_cycle_ms * 1000000ull)
		return;
	if (s->min_t) {
		uint64_t spent = now - s->min_t;
		for (int d = 0; d < 2; d++) {
			if (!w->d[d].bytes) /* fio checks only the directions that did I/O */
				continue;
			uint64_t bytes = w->d[d].bytes - s->min_bytes[d], ios = w->d[d].ios - s->min_ios[d];
			uint64_t bps = (uint64_t)((double)bytes * 1e9 / (double)spent);
			uint64_t iops = (uint64_t)((double)ios * 1e9 / (double)spent);
			if (p->rate_min[d] && bps < p->rate_min[d]) {
				fail(w, EIO, "rate_min=%lluB/s not met, got %lluB/s", (unsigned long long)p->rate_min[d],
				     (unsigned long long)bps);
				return;
			}
			if (p->rate_iops_min[d] && iops < p->rate_iops_min[d]) {
				fail(w, EIO, "rate_iops_min=%llu not met, got %llu IOPS", (unsigned long long)p->rate_iops_min[d],
				     (unsigned long long)iops);
				return;
			}
		}
	}
	s->min_t = now;
	for (int d = 0; d < 2; d++) {
		s->min_bytes[d] = w->d[d].bytes;
		s->min_ios[d] = w->d[d].ios;
	}
}

void pace_complete(struct worker *w, const struct io_req *r, uint64_t t_done)
{
	const struct pace_opts *p = &w->job->o->pace;
	struct pace_state *s = &w->pace;
	uint64_t lat = t_done - r->t_prep;
	s->completed++;
	if (r->ddir < 2 && p->max_lat_ns[r->ddir] && lat > p->max_lat_ns[r->ddir]) {
		fail(w, ETIMEDOUT, "max latency exceeded: latency of %llu nsec exceeds specified max (%llu nsec)",
		     (unsigned long long)lat, (unsigned long long)p->max_lat_ns[r->ddir]);
		return;
	}
	if (p->lat_target_ns) {
		s->lat_done_ios++;
		if (lat > p->lat_target_ns) {
			if (p->lat_pct == 100.0) {
				if (lat_failed(w, t_done)) {
					fail(w, ETIMEDOUT, "latency_target: latency of %llu nsec exceeds the target (%llu nsec) at depth 1",
					     (unsigned long long)lat, (unsigned long long)p->lat_target_ns);
					return;
				}
			} else {
				s->lat_failed++;
			}
		}
		if (t_done - s->lat_t >= p->lat_window_ns) {
			uint64_t ios = s->lat_done_ios - s->lat_ios;
			if (ios) {
				double ok = 100.0 * (double)(ios - s->lat_failed) / (double)ios;
				if (ok >= p->lat_pct)
					lat_success(w, t_done);
				else
					(void)lat_failed(w, t_done); /* at depth 1 fio keeps running there */
			}
		}
	}
	/* as fio: a minimum holds with or without a rate or rate_iops cap */
	if (p->rate_min[0] || p->rate_min[1] || p->rate_iops_min[0] || p->rate_iops_min[1])
		rate_min_check(w, t_done);
}

/* ---- report ---- */

void pace_mask_stats(const struct options *o, struct dstat *d)
{
	const struct pace_opts *p = &o->pace;
	if (p->disable_slat)
		lstat_init(&d->slat);
	if (p->disable_clat) {
		lstat_init(&d->clat);
		memset(d->hist, 0, sizeof(d->hist));
	}
	if (p->disable_lat) {
		lstat_init(&d->lat);
		memset(d->lhist, 0, sizeof(d->lhist));
	}
}

void pace_report_latency(struct jw *w, const struct job *j, const struct worker *wk)
{
	const struct options *o = j->o;
	const struct pace_opts *p = &o->pace;
	unsigned depth = o->iodepth;
	if (p->lat_target_ns && wk)
		depth = wk->pace.qd;
	jw_u64(w, "latency_depth", depth);
	jw_u64(w, "latency_target", p->lat_target_ns);          /* ns, as fio */
	jw_dbl(w, "latency_percentile", p->lat_pct);
	jw_u64(w, "latency_window", p->lat_window_ns / 1000);   /* us, as fio */
}

void pace_report_load(struct jw *w, const struct options *o)
{
	const struct pace_opts *p = &o->pace;
	if (!pace_rated(o)) {
		jw_str(w, "load_model", "closed");
		return;
	}
	jw_str(w, "load_model", "open");
	jw_str(w, "rate_process", p->poisson ? "poisson" : "linear");
	uint64_t iops = p->rate_iops[0] > p->rate_iops[1] ? p->rate_iops[0] : p->rate_iops[1];
	if (iops)
		jw_u64(w, "target_rate_iops", iops);
	else
		jw_null(w, "target_rate_iops");
}
