/* fio's per-command priorities, as fio 3.33's engines/cmdprio.c means them (its io_uring and libaio
 * options):
 *  - cmdprio_percentage=R[,W]: that % of a direction's I/Os carry the priority cmdprio_class
 *    (default 1, realtime) / cmdprio (default 0); the others the job's own (prio, prioclass);
 *  - cmdprio_bssplit=BS/PCT[/CLASS/LEVEL]:...[,...]: per block size, entries take PCT % of that
 *    size's I/Os (cumulative, in the order given for one size), each with its own priority or
 *    cmdprio_class/cmdprio's; entries without a percentage are dropped, an empty entry ends the
 *    list, one list applies to both directions; mutually exclusive with cmdprio_percentage.
 * Each I/O draws a number below 100 from the clone's own generator (fio's prio_state) and carries
 * the chosen value in its SQE's ioprio (io_uring) or aio_reqprio with IOCB_FLAG_IOPRIO (libaio).
 * Statistics: per direction, the job's priority first, then each value in the order the options
 * name it (fio's clat_prio[]), a latency summary and histogram each (clat, or lat with
 * lat_percentiles=1); reported as fio's "prios" list when two or more have samples. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iowatt.h"
#include "optable.h"
#include "output.h"

#define CP_PERC 1u
#define CP_CLASS 2u
#define CP_LEVEL 4u
#define CP_BSSPLIT 8u

struct cp_stat {
	struct lstat s;
	uint64_t hist[HIST_NR];
};

struct cmdprio_w {
	struct rng rng;
	struct cp_stat *st[2];          /* nprios[d] each */
};

struct cmdprio_merged {
	unsigned n[2];
	uint16_t ioprio[2][CMDPRIO_ALL];
	struct cp_stat st[2][CMDPRIO_ALL];
};

static struct cmdprio_opts *cpo(void *base)
{
	return &((struct options *)base)->cmdprio;
}

static unsigned given_bit(const char *name)
{
	return !strcmp(name, "cmdprio_percentage") ? CP_PERC
	       : !strcmp(name, "cmdprio_class")    ? CP_CLASS
	       : !strcmp(name, "cmdprio")          ? CP_LEVEL
						   : CP_BSSPLIT;
}

/* a plain decimal number in [lo, hi] (fio's int options), whole string */
static int parse_uint(const char *s, size_t len, unsigned lo, unsigned hi, unsigned *out)
{
	unsigned long v = 0;
	if (!len || len > 9)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v < lo || v > hi)
		return -1;
	*out = (unsigned)v;
	return 0;
}

/* cmdprio_percentage (0..100), cmdprio_class (1..3), cmdprio (0..7): one value for both
 * directions, or READ,WRITE (fio's off1/off2) */
void cmdprio_parse_rw(void *base, const struct opt_def *d, const char *name, const char *val)
{
	struct cmdprio_opts *c = cpo(base);
	unsigned bit = given_bit(d->name);
	unsigned *f = bit == CP_PERC ? c->perc : bit == CP_CLASS ? c->cls : c->lvl;
	unsigned lo = (unsigned)d->min, hi = (unsigned)d->max, v[2];
	const char *comma = strchr(val, ',');
	size_t n0 = comma ? (size_t)(comma - val) : strlen(val);
	if (parse_uint(val, n0, lo, hi, &v[0]) ||
	    (comma && parse_uint(comma + 1, strlen(comma + 1), lo, hi, &v[1])))
		die_usage(name, "must be a number from %u to %u, or READ,WRITE, got '%s'", lo, hi, val);
	if (!comma)
		v[1] = v[0];
	f[0] = v[0];
	f[1] = v[1];
	c->given |= bit;
}

/* one entry BS/ | BS/PCT | BS/PCT/CLASS/LEVEL (fio's formats; fio caps PCT at 100, CLASS at 3 and
 * LEVEL at 7, which here are refused instead, as are its leftovers after a number) */
static void parse_entry(const char *name, char *e, unsigned kb_base, struct cmdprio_entry *out)
{
	char *f[5];
	int n = 0;
	for (char *p = e; n < 5;) {
		f[n++] = p;
		char *sl = strchr(p, '/');
		if (!sl)
			break;
		*sl = 0;
		p = sl + 1;
	}
	if (n == 5 || n == 3)
		die_usage(name, "entry '%s...' must be BS/PERCENT or BS/PERCENT/CLASS/LEVEL%s", f[0],
			  n == 5 ? " (priority hints, a fifth field, are newer than fio 3.33)" : "");
	uint64_t bs;
	if (parse_size(f[0], &bs, kb_base) || bs == 0 || bs > (1ull << 30))
		die_usage(name, "bad block size '%s' (1 byte to 1 GiB)", f[0]);
	out->bs = bs;
	out->perc = 0;
	out->prio = -1;
	if (n >= 2 && *f[1] && parse_uint(f[1], strlen(f[1]), 0, 100, &out->perc))
		die_usage(name, "bad percentage '%s' for %s (0 to 100)", f[1], f[0]);
	if (n == 4) {
		unsigned cls, lvl;
		if (parse_uint(f[2], strlen(f[2]), 0, 3, &cls))
			die_usage(name, "bad priority class '%s' for %s (0 to 3)", f[2], f[0]);
		if (parse_uint(f[3], strlen(f[3]), 0, 7, &lvl))
			die_usage(name, "bad priority level '%s' for %s (0 to 7)", f[3], f[0]);
		out->prio = (int)(cls << 13 | lvl);
	}
}

static void parse_list(const char *name, char *list, unsigned kb_base, struct cmdprio_entry *ent, unsigned *nent)
{
	unsigned n = 0;
	for (char *p = list; p;) {
		char *colon = strchr(p, ':');
		if (colon)
			*colon = 0;
		if (!*p)
			break; /* fio: an empty entry ends the list */
		if (n == CMDPRIO_MAX_ENTRIES)
			die_usage(name, "more than %u entries in one direction", CMDPRIO_MAX_ENTRIES);
		parse_entry(name, p, kb_base, &ent[n]);
		if (ent[n].perc) /* fio drops the entries without a percentage */
			n++;
		p = colon ? colon + 1 : NULL;
	}
	/* stable sort by block size: a size's entries keep the order given (fio's draw is cumulative
	 * over them in that order) */
	for (unsigned i = 1; i < n; i++) {
		struct cmdprio_entry t = ent[i];
		unsigned k = i;
		for (; k > 0 && ent[k - 1].bs > t.bs; k--)
			ent[k] = ent[k - 1];
		ent[k] = t;
	}
	for (unsigned i = 0; i < n;) {
		unsigned tot = 0, k = i;
		for (; k < n && ent[k].bs == ent[i].bs; k++)
			tot += ent[k].perc;
		if (tot > 100)
			die_usage(name, "the percentages of block size %llu add up to %u, more than 100",
				  (unsigned long long)ent[i].bs, tot);
		i = k;
	}
	*nent = n;
}

void cmdprio_parse_bssplit(void *base, const struct opt_def *d, const char *name, const char *val)
{
	(void)d;
	struct options *o = base;
	struct cmdprio_opts *c = &o->cmdprio;
	size_t len = strlen(val);
	if (len > 4096)
		die_usage(name, "longer than 4096 bytes");
	char buf[4097];
	memcpy(buf, val, len + 1);
	/* READ[,WRITE[,TRIM]]: trims are ignored, as fio; one list is both directions' */
	char *lists[3] = { buf, NULL, NULL };
	for (int i = 0; i < 2 && lists[i]; i++) {
		char *comma = strchr(lists[i], ',');
		if (comma) {
			*comma = 0;
			lists[i + 1] = comma + 1;
		}
	}
	if (lists[2] && strchr(lists[2], ','))
		die_usage(name, "at most three lists (read, write, trim), got '%s'", val);
	memset(c->ent, 0, sizeof(c->ent));
	parse_list(name, lists[0], o->kb_base, c->ent[0], &c->nent[0]);
	if (lists[1]) {
		parse_list(name, lists[1], o->kb_base, c->ent[1], &c->nent[1]);
	} else {
		memcpy(c->ent[1], c->ent[0], sizeof(c->ent[0]));
		c->nent[1] = c->nent[0];
	}
	c->given |= CP_BSSPLIT;
	if (!c->nent[0] && !c->nent[1])
		c->given &= ~CP_BSSPLIT; /* nothing with a percentage: fio's mode stays "none" */
}

void cmdprio_echo(struct jw *w, const struct options *o, const struct opt_def *d)
{
	const struct cmdprio_opts *c = &o->cmdprio;
	unsigned bit = given_bit(d->name);
	const unsigned *f = bit == CP_PERC ? c->perc : bit == CP_CLASS ? c->cls : c->lvl;
	jw_arr(w, d->key);
	for (int i = 0; i < 2; i++)
		jw_u64(w, NULL, bit == CP_CLASS && !f[i] ? 1 : f[i]); /* an unset class is realtime */
	jw_arr_end(w);
}

void cmdprio_echo_bssplit(struct jw *w, const struct options *o, const struct opt_def *d)
{
	const struct cmdprio_opts *c = &o->cmdprio;
	if (!(c->given & CP_BSSPLIT)) {
		jw_null(w, d->key);
		return;
	}
	jw_arr(w, d->key);
	for (int dd = 0; dd < 2; dd++)
		for (unsigned i = 0; i < c->nent[dd]; i++) {
			const struct cmdprio_entry *e = &c->ent[dd][i];
			unsigned p = e->prio >= 0 ? (unsigned)e->prio : (c->cls[dd] ? c->cls[dd] : 1) << 13 | c->lvl[dd];
			jw_obj(w, NULL);
			jw_str(w, "ddir", dd ? "write" : "read");
			jw_u64(w, "bs_bytes", e->bs);
			jw_u64(w, "percent", e->perc);
			jw_u64(w, "prioclass", p >> 13);
			jw_u64(w, "prio", p & 7);
			jw_obj_end(w);
		}
	jw_arr_end(w);
}

static const char *first_given(const struct cmdprio_opts *c)
{
	return c->given & CP_PERC      ? "cmdprio_percentage"
	       : c->given & CP_BSSPLIT ? "cmdprio_bssplit"
	       : c->given & CP_CLASS   ? "cmdprio_class"
				       : "cmdprio";
}

/* the index of value v among direction d's priorities, appended when new (fio's
 * assign_clat_prio_index) */
static uint8_t prio_index(struct cmdprio_opts *c, int d, unsigned v)
{
	for (unsigned i = 0; i < c->nprios[d]; i++)
		if (c->prios[d][i] == v)
			return (uint8_t)i;
	if (c->nprios[d] == CMDPRIO_MAX_PRIOS)
		die_usage("cmdprio_bssplit", "more than %u distinct priorities in one direction (the job's own included)",
			  CMDPRIO_MAX_PRIOS);
	c->prios[d][c->nprios[d]] = (uint16_t)v;
	return (uint8_t)c->nprios[d]++;
}

void cmdprio_finalize(struct options *o)
{
	struct cmdprio_opts *c = &o->cmdprio;
	c->on = 0;
	if (!c->given)
		return;
	const char *eng = engine_find(o->ioengine)->name, *opt = first_given(c);
	if (strcmp(eng, "io_uring") && strcmp(eng, "libaio"))
		die_usage(opt, "an option of the io_uring and libaio engines (as fio's), not of ioengine=%s", eng);
	if (o->pace.offload)
		die_usage(opt, "per-command priorities with io_submit_mode=offload are not implemented");
	int perc = c->perc[0] || c->perc[1], bss = (c->given & CP_BSSPLIT) != 0;
	if (perc && bss)
		die_usage("cmdprio_bssplit", "cmdprio_percentage and cmdprio_bssplit are mutually exclusive (as fio)");
	if (!perc && !bss)
		return; /* class or level alone: fio uses them only with one of the two */
	unsigned job = log_ioprio(o);
	for (int d = 0; d < 2; d++) {
		c->nprios[d] = 0;
		if (!(d ? rw_writes(o->rw) : rw_reads(o->rw)))
			continue; /* fio: no statistics for a direction the job does not do */
		if (perc ? !c->perc[d] : !c->nent[d])
			continue;
		unsigned implicit = (c->cls[d] ? c->cls[d] : 1) << 13 | c->lvl[d];
		c->prios[d][0] = (uint16_t)job;
		c->nprios[d] = 1;
		if (perc)
			c->perc_idx[d] = prio_index(c, d, implicit);
		else
			for (unsigned i = 0; i < c->nent[d]; i++)
				c->ent_idx[d][i] = prio_index(c, d, c->ent[d][i].prio >= 0 ? (unsigned)c->ent[d][i].prio : implicit);
		c->on = 1;
	}
}

int cmdprio_worker_init(struct worker *w)
{
	const struct options *o = w->job->o;
	const struct cmdprio_opts *c = &o->cmdprio;
	w->cp = NULL;
	if (!c->on)
		return 0;
	struct cmdprio_w *cw = calloc(1, sizeof(*cw));
	if (!cw)
		return -ENOMEM;
	rng_seed(&cw->rng, o->randseed ^ 0xc3d9a1e5ull ^ ((uint64_t)w->job->index << 24) ^ w->id);
	for (int d = 0; d < 2; d++) {
		if (!c->nprios[d])
			continue;
		cw->st[d] = calloc(c->nprios[d], sizeof(*cw->st[d]));
		if (!cw->st[d]) {
			free(cw->st[0]);
			free(cw);
			return -ENOMEM;
		}
		for (unsigned i = 0; i < c->nprios[d]; i++)
			lstat_init(&cw->st[d][i].s);
	}
	w->cp = cw;
	return 0;
}

void cmdprio_worker_free(struct worker *w)
{
	if (!w->cp)
		return;
	free(w->cp->st[0]);
	free(w->cp->st[1]);
	free(w->cp);
	w->cp = NULL;
}

void cmdprio_worker_reset(struct worker *w)
{
	const struct cmdprio_opts *c = &w->job->o->cmdprio;
	for (int d = 0; w->cp && d < 2; d++)
		for (unsigned i = 0; i < c->nprios[d]; i++) {
			lstat_init(&w->cp->st[d][i].s);
			memset(w->cp->st[d][i].hist, 0, sizeof(w->cp->st[d][i].hist));
		}
}

void cmdprio_pick(struct worker *w, struct io_req *r)
{
	const struct cmdprio_opts *c = &w->job->o->cmdprio;
	int d = r->ddir;
	r->prio_idx = 0;
	r->ioprio = 0;
	if (d > 1 || !c->nprios[d])
		return;
	r->ioprio = c->prios[d][0];
	if (c->nent[d] && (c->given & CP_BSSPLIT)) {
		unsigned i = 0;
		while (i < c->nent[d] && c->ent[d][i].bs != r->len)
			i++;
		if (i == c->nent[d])
			return; /* no entry for this size: the job's priority */
		unsigned tot = 0;
		for (unsigned k = i; k < c->nent[d] && c->ent[d][k].bs == r->len; k++)
			tot += c->ent[d][k].perc;
		unsigned x = (unsigned)rng_below(&w->cp->rng, 100), acc = 0;
		if (x >= tot)
			return;
		for (unsigned k = i; k < c->nent[d] && c->ent[d][k].bs == r->len; k++) {
			acc += c->ent[d][k].perc;
			if (x < acc) {
				r->prio_idx = c->ent_idx[d][k];
				r->ioprio = c->prios[d][r->prio_idx];
				return;
			}
		}
		return;
	}
	if (rng_below(&w->cp->rng, 100) < c->perc[d]) {
		r->prio_idx = c->perc_idx[d];
		r->ioprio = c->prios[d][r->prio_idx];
	}
}

void cmdprio_account(struct worker *w, const struct io_req *r, uint64_t clat, uint64_t lat)
{
	const struct options *o = w->job->o;
	if (r->ddir > 1 || !w->cp->st[r->ddir])
		return;
	uint64_t v = o->lat_pct_set && o->lat_pct ? lat : clat; /* fio: lat_percentiles=1 reports lat */
	struct cp_stat *s = &w->cp->st[r->ddir][r->prio_idx];
	lstat_add(&s->s, v);
	s->hist[hist_idx(v)]++;
}

static struct cp_stat *merged_slot(struct cmdprio_merged *m, int d, unsigned ioprio)
{
	for (unsigned i = 0; i < m->n[d]; i++)
		if (m->ioprio[d][i] == ioprio)
			return &m->st[d][i];
	if (m->n[d] == CMDPRIO_ALL) /* cannot happen: there are 32 values */
		return NULL;
	m->ioprio[d][m->n[d]] = (uint16_t)ioprio;
	lstat_init(&m->st[d][m->n[d]].s);
	return &m->st[d][m->n[d]++];
}

struct cmdprio_merged *cmdprio_merge(struct worker *const *ws, const struct options *const *os, const int *sync,
				     unsigned n)
{
	unsigned any = 0;
	for (unsigned i = 0; i < n; i++)
		any |= ws[i]->cp != NULL;
	if (!any)
		return NULL;
	struct cmdprio_merged *m = calloc(1, sizeof(*m));
	if (!m)
		die_code(EXIT_FAIL, "out of memory");
	for (unsigned i = 0; i < n; i++) {
		const struct worker *w = ws[i];
		const struct options *o = os[i];
		int lat = o->lat_pct_set && o->lat_pct;
		for (int d = 0; d < 2; d++) {
			if (w->cp && w->cp->st[d]) {
				for (unsigned k = 0; k < o->cmdprio.nprios[d]; k++) {
					struct cp_stat *dst = merged_slot(m, d, o->cmdprio.prios[d][k]), *src = &w->cp->st[d][k];
					if (!dst)
						continue;
					lstat_merge(&dst->s, &src->s);
					for (unsigned b = 0; b < HIST_NR; b++)
						dst->hist[b] += src->hist[b];
				}
			} else if (w->d[d].clat.n) {
				/* a member without per-command priorities: all its I/Os at its job's priority
				 * (fio's sum_clat_prio_stats_src_single_prio) */
				struct cp_stat *dst = merged_slot(m, d, log_ioprio(o));
				if (!dst)
					continue;
				int use_lat = lat && !sync[i];
				lstat_merge(&dst->s, use_lat ? &w->d[d].lat : &w->d[d].clat);
				const uint64_t *h = use_lat ? w->d[d].lhist : w->d[d].hist;
				for (unsigned b = 0; b < HIST_NR; b++)
					dst->hist[b] += h[b];
			}
		}
	}
	return m;
}

void cmdprio_emit(struct jw *w, const struct cmdprio_merged *m, int ddir, const struct options *o, int jsonplus)
{
	if (!m || ddir > 1)
		return;
	unsigned with = 0;
	for (unsigned i = 0; i < m->n[ddir]; i++)
		with += m->st[ddir][i].s.n > 0;
	if (with < 2)
		return; /* fio 3.33: only when two priorities or more have samples */
	int lat = o && o->lat_pct_set && o->lat_pct;
	int pct = !o || o->clat_pct || lat;
	int npct;
	const double *pl = job_percentiles(o, &npct);
	jw_arr(w, "prios");
	for (unsigned i = 0; i < m->n[ddir]; i++) {
		const struct cp_stat *s = &m->st[ddir][i];
		if (!s->s.n)
			continue;
		jw_obj(w, NULL);
		jw_u64(w, "prioclass", m->ioprio[ddir][i] >> 13);
		jw_u64(w, "prio", m->ioprio[ddir][i] & 7);
		emit_lstat_pct(w, lat ? "lat_ns" : "clat_ns", &s->s, pct ? s->hist : NULL, jsonplus, pl, npct);
		jw_obj_end(w);
	}
	jw_arr_end(w);
}

void cmdprio_merged_free(struct cmdprio_merged *m)
{
	free(m);
}
