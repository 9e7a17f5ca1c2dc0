/* fio's I/O patterns beyond plain sequential and random offsets (patterns.h; README § Patterns).
 * The rules are fio 3.33's, measured beside Debian's fio on the same jobs (offsets from strace:
 * tests/engine/test_patterns.py), with one deliberate difference: an I/O never runs past
 * offset+size (fio issues a last sequential I/O that straddles the region's end when the region
 * is smaller than the file; here the pass ends before it). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "multifile.h"
#include "patterns.h"
#include "verify.h"

enum { RG_TAUSWORTHE, RG_LFSR, RG_TAUSWORTHE64 };

/* ---- options ---- */

/* rw=X:N. Sequential modes: N is a size added to the offset after every I/O (holes; negative:
 * backwards). Random modes: a new random offset every N I/Os, the ones between follow
 * rw_sequencer. As fio reads it: the mode decides which. */
void pat_rw_modifier(struct options *o, const char *name, const char *val, const char *mod)
{
	o->rw_seq_add = 0;
	o->rw_seq_nr = 0;
	if (!mod)
		return;
	if (rw_is_random(o->rw)) {
		uint64_t n;
		if (parse_u64(mod, &n) || n == 0 || n > UINT32_MAX)
			die_usage(name, "'%s': a random mode takes ':N', a new random offset every N I/Os (N >= 1)", val);
		o->rw_seq_nr = (unsigned)n;
		return;
	}
	int neg = *mod == '-';
	uint64_t v;
	if (parse_size(mod + neg, &v, o->kb_base) || v > (uint64_t)INT64_MAX)
		die_usage(name, "'%s': a sequential mode takes ':SIZE', bytes skipped after each I/O (negative: backwards)",
			  val);
	o->rw_seq_add = neg ? -(int64_t)v : (int64_t)v;
}

void pat_echo_rw_modifier(struct jw *w, const struct options *o)
{
	if (o->rw_seq_add)
		jw_i64(w, "rw_skip_bytes", o->rw_seq_add);
	else
		jw_null(w, "rw_skip_bytes");
	if (o->rw_seq_nr)
		jw_u64(w, "rw_random_every", o->rw_seq_nr);
	else
		jw_null(w, "rw_random_every");
}

/* "READ[,WRITE]" per direction, as fio's bs: one value applies to both; an empty field keeps the
 * default. Calls one(d, text) for each direction given. */
static void per_direction(const char *name, const char *val, void (*one)(void *, int, const char *, const char *),
			  void *arg)
{
	char buf[256];
	opt_value_copy(name, val, buf, sizeof(buf));
	char *comma = strchr(buf, ',');
	if (comma) {
		*comma = 0;
		if (strchr(comma + 1, ','))
			die_usage(name, "'%s': a third (trim) value is not taken: trims take the write value", val);
	}
	if (!comma) {
		one(arg, 0, name, buf);
		one(arg, 1, name, buf);
		return;
	}
	if (buf[0])
		one(arg, 0, name, buf);
	if (comma[1])
		one(arg, 1, name, comma + 1);
}

static uint64_t size_in(struct options *o, const char *name, const char *text, uint64_t min)
{
	uint64_t v;
	if (parse_size(text, &v, o->kb_base))
		die_usage(name, "invalid size '%s'", text);
	if (v < min || v > MAX_BS)
		die_usage(name, "'%s' must be %llu..1 GiB", text, (unsigned long long)min);
	return v;
}

static void bsrange_one(void *arg, int d, const char *name, const char *text)
{
	struct options *o = arg;
	char buf[256];
	str_copy(buf, sizeof(buf), text);
	char *sep = strpbrk(buf, "-:");
	if (!sep)
		die_usage(name, "'%s': a range is MIN-MAX", text);
	*sep = 0;
	uint64_t lo = size_in(o, name, buf, 1), hi = size_in(o, name, sep + 1, 1);
	if (lo > hi)
		die_usage(name, "'%s': minimum larger than maximum", text);
	/* MIN-MIN draws nothing: every I/O is MIN bytes, as bs=MIN (fio's examples/tiobench-example:
	 * bsrange=4k-4k, then allowed wherever bs is) */
	o->bsrange[d][0] = lo < hi ? lo : 0;
	o->bsrange[d][1] = lo < hi ? hi : 0;
	o->bs[d] = lo; /* the smallest size: offsets, alignment and the random map use it */
	o->nbssplit[d] = 0;
}

/* bsrange=MIN-MAX[,MIN-MAX]: like bs, the later of bs, bsrange and bssplit wins */
void pat_parse_bsrange(void *base, const struct opt_def *d, const char *name, const char *val)
{
	(void)d;
	per_direction(name, val, bsrange_one, base);
}

void pat_echo_bsrange(struct jw *w, const struct options *o, const struct opt_def *d)
{
	jw_arr(w, d->key);
	for (int k = 0; k < 2; k++)
		if (o->bsrange[k][1]) {
			jw_obj(w, NULL);
			jw_str(w, "ddir", k ? "write" : "read");
			jw_u64(w, "min_bytes", o->bsrange[k][0]);
			jw_u64(w, "max_bytes", o->bsrange[k][1]);
			jw_obj_end(w);
		}
	jw_arr_end(w);
}

static void blockalign_one(void *arg, int d, const char *name, const char *text)
{
	struct options *o = arg;
	o->blockalign[d] = size_in(o, name, text, 1);
}

void pat_parse_blockalign(void *base, const struct opt_def *d, const char *name, const char *val)
{
	(void)d;
	per_direction(name, val, blockalign_one, base);
}

static void echo_pair(struct jw *w, const char *key, const uint64_t v[2], int null_zero)
{
	jw_arr(w, key);
	for (int k = 0; k < 2; k++)
		if (null_zero && !v[k])
			jw_null(w, NULL);
		else
			jw_u64(w, NULL, v[k]);
	jw_arr_end(w);
}

void pat_echo_blockalign(struct jw *w, const struct options *o, const struct opt_def *d)
{
	echo_pair(w, d->key, o->blockalign, 1);
}

static void pct_one(void *arg, int d, const char *name, const char *text)
{
	struct options *o = arg;
	uint64_t v;
	if (parse_u64(text, &v) || v > 100)
		die_usage(name, "must be 0..100, got '%s'", text);
	o->pct_random[d] = (unsigned)v;
}

void pat_parse_pct_random(void *base, const struct opt_def *d, const char *name, const char *val)
{
	(void)d;
	per_direction(name, val, pct_one, base);
}

void pat_echo_pct_random(struct jw *w, const struct options *o, const struct opt_def *d)
{
	const uint64_t v[2] = { o->pct_random[0], o->pct_random[1] };
	echo_pair(w, d->key, v, 0);
}

/* zoned:ACCESS/SIZE%:... or zoned_abs:ACCESS/SIZE:... -- the access percentages add up to 100,
 * zoned's size percentages to at most 100 (fio 3.33's checks); zones follow each other from the
 * start of the region, the rest of it is never touched. As fio 3.33: a zoned size left out
 * ("20/" or "20") or 0 shares what the given ones leave, (100 - given) / missing each, and an
 * empty entry ends the list. fio 3.33 refuses per-direction lists (','), so does this. */
void pat_parse_zoned(struct options *o, const char *name, const char *val, const char *list, int abs)
{
	char buf[4096];
	if (strlen(list) >= sizeof(buf))
		die_usage(name, "value too long: '%.80s...'", val);
	if (strchr(list, ','))
		die_usage(name, "'%s': per-direction zone lists are not taken (fio 3.33 refuses them too)", val);
	strcpy(buf, list);
	int n = 0, missing = 0;
	unsigned acc = 0;
	uint64_t sz = 0;
	for (char *tok = buf, *next; tok && *tok; tok = next) {
		next = strchr(tok, ':');
		if (next)
			*next++ = 0;
		if (!*tok)
			break; /* an empty entry ends the list, as fio's */
		if (n >= MAX_ZONES)
			die_usage(name, "more than %d zones in '%.80s'", MAX_ZONES, val);
		char *slash = strchr(tok, '/');
		uint64_t a, s = 0;
		if (slash)
			*slash = 0;
		if (parse_u64(tok, &a) || a > 100 || (abs && !slash))
			die_usage(name, "'%s': each zone is ACCESS%%/%s", val, abs ? "SIZE" : "SIZE%");
		if (abs ? parse_size(slash + 1, &s, o->kb_base) || !s
			: slash && slash[1] && (parse_u64(slash + 1, &s) || s > 100))
			die_usage(name, "'%s': invalid zone size '%s'", val, slash + 1);
		acc += (unsigned)a;
		if (acc > 100)
			die_usage(name, "'%s': access percentages add up to more than 100", val);
		if (s > UINT64_MAX - sz)
			die_usage(name, "'%s': zone sizes overflow", val);
		sz += s;
		if (!abs && sz > 100)
			die_usage(name, "'%s': zone size percentages add up to more than 100", val);
		missing += !abs && !s;
		o->zones[n].access = (unsigned)a;
		o->zones[n].size = s;
		n++;
	}
	if (n == 0)
		die_usage(name, "'%s': no zones", val);
	if (acc != 100)
		die_usage(name, "'%s': access percentages add up to %u, not 100", val, acc);
	for (int i = 0; missing && i < n; i++)
		if (!o->zones[i].size)
			o->zones[i].size = (100 - sz) / (uint64_t)missing;
	o->nzones = n;
	o->dist = abs ? DIST_ZONED_ABS : DIST_ZONED;
	o->dist_param = 0;
}

void pat_echo_zones(struct jw *w, const struct options *o)
{
	if (o->dist != DIST_ZONED && o->dist != DIST_ZONED_ABS) {
		jw_null(w, "random_distribution_zones");
		return;
	}
	jw_arr(w, "random_distribution_zones");
	for (int i = 0; i < o->nzones; i++) {
		jw_obj(w, NULL);
		jw_u64(w, "access_percent", o->zones[i].access);
		jw_u64(w, o->dist == DIST_ZONED ? "size_percent" : "size_bytes", o->zones[i].size);
		jw_obj_end(w);
	}
	jw_arr_end(w);
}

static int is_mixed(const struct options *o);
static int trims_only(const struct options *o);

/* the option that makes a job use the pattern generator */
static const char *pat_option(const struct options *o)
{
	if (o->rw_seq_add || o->rw_seq_nr || rw_trims(o->rw))
		return "rw";
	if (o->bsrange[0][1] || o->bsrange[1][1])
		return "bsrange";
	if (o->blockalign[0] || o->blockalign[1])
		return "blockalign";
	if (o->dist == DIST_ZONED || o->dist == DIST_ZONED_ABS)
		return "random_distribution";
	if (o->pct_random[0] < 100 || o->pct_random[1] < 100)
		return "percentage_random";
	return "random_generator";
}

/* Options of other families that count or pace per direction and know only reads and writes:
 * with trims fio would apply them to the trims too, so they are refused (README § Patterns) */
static void trims_refuse(const struct options *o)
{
	const struct pace_opts *p = &o->pace;
	static const char *const rate_names[4] = { "rate", "rate_min", "rate_iops", "rate_iops_min" };
	const uint64_t *rates[4] = { p->rate, p->rate_min, p->rate_iops, p->rate_iops_min };
	const char *name = NULL;
	for (int k = 0; k < 4 && !name; k++)
		if (rates[k][0] || rates[k][1] || rates[k][2])
			name = rate_names[k];
	if (!name && (p->max_lat_ns[0] || p->max_lat_ns[1]))
		name = "max_latency";
	if (!name && p->lat_target_ns)
		name = "latency_target";
	if (!name && p->ss_dur_ns)
		name = "steadystate";
	if (name)
		die_usage(name, "not implemented for trims (rw=%s): fio would count the trims too", rw_name(o->rw));
}

void pat_finalize(struct options *o)
{
	/* libaio and io_uring trim as fio's (FIO_ASYNCIO_SYNC_TRIM): one synchronous BLKDISCARD after
	 * the staged I/Os are submitted (worker.c's run_async) */
	if (rw_trims(o->rw) && o->pace.offload && !(engine_find(o->ioengine)->flags & ENGINE_F_SYNC))
		die_usage("io_submit_mode", "offload with %s in a job that trims (rw=%s) is not implemented (psync's is)",
			  o->ioengine, rw_name(o->rw));
	if (rw_trims(o->rw))
		trims_refuse(o);
	if (pat_active(o) && !o->filename[0])
		mf_name_single(o); /* fio's one generated file (examples/rand-zones.fio) */
	if (pat_active(o) && mf_wanted(o) && !trims_only(o))
		die_usage(pat_option(o), "not implemented for jobs of several files (nrfiles, filename lists, filesize, "
					 "numjobs without filename)%s",
			  rw_trims(o->rw) ? ": trims there only as rw=trim, randtrim, trimwrite or randtrimwrite, with none of the pattern options" : "");
	/* verify reads back every write: refuse patterns where a later write may cut into an earlier
	 * block (it would then fail to verify; fio only warns "verify limited") */
	if (o->verify && rw_writes(o->rw)) {
		const char *why = NULL;
		uint64_t bs = opt_min_bs(o);
		if (o->rw == RW_TRIM || o->rw == RW_RANDTRIM)
			why = "a trim job writes nothing to read back";
		else if (rw_is_random(o->rw) && (o->blockalign[1] % bs || (o->blockalign[1] && is_mixed(o))))
			why = "blockalign lets random writes overlap";
		else if (o->rw_seq_add % (int64_t)bs ||
			 (o->rw_seq_add < 0 && o->rw_seq_add > -2 * (int64_t)bs && !verify_latest_only(o)) ||
			 (o->rw_seq_add && is_mixed(o)))
			why = "this rw skip lets sequential writes overlap";
		else if (o->random_generator == RG_LFSR && is_mixed(o) && rw_is_random(o->rw))
			why = "lfsr with several block sizes lets random writes overlap";
		if (why)
			die_usage("verify", "%s: a block partly overwritten later would fail to verify", why);
	}
	if (o->bs_unaligned && o->direct)
		die_usage("bs_unaligned", "sizes that are not multiples of the sector size cannot be used with direct=1");
	if (o->dist == DIST_ZONED_ABS && o->size_set) {
		uint64_t sum = 0;
		for (int i = 0; i < o->nzones; i++)
			sum += o->zones[i].size;
		if (sum > o->size)
			die_usage("random_distribution", "zoned_abs sizes add up to %llu bytes, more than size %llu",
				  (unsigned long long)sum, (unsigned long long)o->size);
	}
}

/* ---- the generator ---- */

enum { SEQ_OK, SEQ_FILE_END, SEQ_REGION_END };

struct zone_range { uint64_t lo, hi; };

struct patgen {
	uint64_t file_end;              /* end of the file or device (fio's real_file_size) */
	uint64_t last_pos[3];           /* absolute end of the last I/O per direction (fio's last_pos) */
	uint64_t last_start[3];         /* absolute start of the last I/O per direction, UINT64_MAX = none */
	uint64_t trim_len;              /* trimwrite: the trim the next write follows (0 = none) */
	uint64_t count;                 /* I/Os issued, for rw=X:N */
	uint64_t passes;                /* passes started */
	uint64_t pass_ios;              /* I/Os issued in this pass */
	uint64_t pass_writes, prev_writes; /* trimwrite: writes of this pass, of the passes before it */
	uint64_t write_bytes;           /* trimwrite: bytes of its writes, all passes (io_size with verify) */
	int pass_end;                   /* verify: the pass ended, its read-back comes first (pat_pass_ended) */
	unsigned char slot[100];        /* zoned: access percent -> zone */
	struct zone_range zr[MAX_ZONES];/* zoned: byte range of each zone, relative to offset */
};

static int is_mixed(const struct options *o)
{
	return opt_max_bs(o) > opt_min_bs(o);
}

/* pat_active() for the job as if its direction were rw */
static int pat_active_rw(const struct options *o, enum rw_mode rw)
{
	int rnd = rw_is_random(rw);
	return rw_trims(rw) || o->rw_seq_add || o->rw_seq_nr || o->bsrange[0][1] || o->bsrange[1][1] ||
	       (rnd && (o->blockalign[0] || o->blockalign[1] || o->dist == DIST_ZONED || o->dist == DIST_ZONED_ABS ||
			o->pct_random[0] < 100 || o->pct_random[1] < 100 ||
			(o->random_generator == RG_LFSR && (o->norandommap || is_mixed(o)))));
}

int pat_active(const struct options *o)
{
	return pat_active_rw(o, o->rw);
}

/* rw=trim, randtrim, trimwrite or randtrimwrite and nothing else of the generator's: a multi-file
 * job takes it through the plain generator (worker.c), whose offsets are the writes' (fio's trims
 * take the writes' values); trimwrite's writes follow each file's trims (multifile.c) */
int pat_trims_only(const struct options *o)
{
	return trims_only(o);
}

static int trims_only(const struct options *o)
{
	int rnd = rw_is_random(o->rw);
	return rw_trims(o->rw) && !pat_active_rw(o, rnd ? RW_RANDWRITE : RW_WRITE);
}

static void start_pass(struct worker *w, struct patgen *p)
{
	p->pass_end = 0;
	p->pass_ios = 0;
	p->passes++;
	p->prev_writes += p->pass_writes;
	p->pass_writes = 0;
	p->trim_len = 0;
	for (int d = 0; d < 3; d++) {
		p->last_pos[d] = w->roff;
		p->last_start[d] = UINT64_MAX;
	}
	w->perm_i = w->nblocks; /* as fio's random map, each pass starts afresh */
}

int pat_setup(struct worker *w)
{
	const struct options *o = w->job->o;
	if (!pat_active(o))
		return 0;
	struct patgen *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	uint64_t end = w->roff + w->rsize;
	p->file_end = w->job->tgt.dev_size > end ? w->job->tgt.dev_size : end;
	if (o->dist == DIST_ZONED || o->dist == DIST_ZONED_ABS) {
		uint64_t at = 0;
		unsigned acc = 0;
		for (int i = 0; i < o->nzones; i++) {
			uint64_t len = o->dist == DIST_ZONED
					       ? (uint64_t)((unsigned __int128)o->size * o->zones[i].size / 100)
					       : o->zones[i].size;
			if (o->dist == DIST_ZONED && i == o->nzones - 1 && o->zones[i].size && at + len > o->size)
				len = o->size - at;
			if (len > o->size - at) {
				snprintf(w->errmsg, sizeof(w->errmsg),
					 "random_distribution: zoned_abs sizes exceed the region (size %llu)",
					 (unsigned long long)o->size);
				free(p);
				return -EINVAL;
			}
			p->zr[i].lo = at;
			p->zr[i].hi = at + len;
			at += len;
			for (unsigned k = 0; k < o->zones[i].access; k++)
				p->slot[acc + k] = (unsigned char)i;
			acc += o->zones[i].access;
		}
	}
	w->pat = p;
	start_pass(w, p);
	if (o->rw == RW_TRIMWRITE || o->rw == RW_RANDTRIMWRITE)
		w->budget *= 2; /* fio: each block is trimmed, then written: size (or io_size) bytes of each */
	return 0;
}

struct patgen *pat_clone(const struct patgen *p)
{
	struct patgen *c = malloc(sizeof(*c));
	if (c)
		memcpy(c, p, sizeof(*c));
	return c;
}

void pat_free(struct worker *w)
{
	free(w->pat);
	w->pat = NULL;
}

/* Size of the next I/O, as fio draws it from bsrange: MIN + a uniform fraction of MAX, rounded
 * down to a multiple of MIN (so each multiple up to MAX is equally likely), capped at MAX; with
 * bs_unaligned not rounded, so a quarter of 1k-4k's draws are capped at 4k. */
uint64_t pat_bsrange_draw(struct worker *w, int d)
{
	const struct options *o = w->job->o;
	uint64_t lo = o->bsrange[d][0], hi = o->bsrange[d][1];
	uint64_t v = lo + (uint64_t)((double)hi * rng_unit(&w->rng));
	if (!o->bs_unaligned) {
		v = v / lo * lo;
		hi = hi / lo * lo;
	}
	return v < hi ? v : hi;
}

static uint64_t pick_size(struct worker *w, int d)
{
	const struct options *o = w->job->o;
	d = d == DDIR_TRIM ? DDIR_WRITE : d; /* fio: a bs or bsrange without a trim value applies to trims */
	return o->bsrange[d][1] ? pat_bsrange_draw(w, d) : worker_pick_bs(w, d); /* else bs / bssplit */
}

/* fio's sequential offset with its offset modifier (ddir_seq_add), in fio's own arithmetic:
 * positions are unsigned, a negative step wraps to the end of the region (min(size, file)),
 * a positive one past the end of the file back to the start; the first I/O of a pass is at
 * the start of the region, except backwards with an offset, where fio rewinds first. A region
 * end ends the pass; so does an I/O that would not fit before it (bsrange: cut to fit). */
static int seq_next(struct worker *w, struct patgen *p, int d, uint64_t *len, uint64_t *rel)
{
	const struct options *o = w->job->o;
	const uint64_t foff = w->roff, io = w->rsize, real = p->file_end, add = (uint64_t)o->rw_seq_add;
	const uint64_t tail = io < real ? io : real;
	const int od = d == DDIR_TRIM ? DDIR_WRITE : d; /* the trims' option values are the writes' */
	uint64_t last = p->last_pos[d];
	if (o->time_based && last >= io + foff)
		last = foff;
	if (last >= real)
		return SEQ_FILE_END;
	if (last == foff && foff && o->rw_seq_add < 0)
		last = tail;
	uint64_t pos = last - foff;
	if (pos && add) {
		pos += add;
		if (pos >= real)
			pos = o->rw_seq_add > 0 ? foff : tail + add;
	}
	if (pos >= io)
		return SEQ_REGION_END;
	if (*len > io - pos) {
		uint64_t room = io - pos, lo = o->bsrange[od][0];
		if (!o->bsrange[od][1] || room < lo)
			return SEQ_REGION_END;
		*len = o->bs_unaligned ? room : room / lo * lo;
	}
	*rel = pos;
	return SEQ_OK;
}

/* A random offset (relative) for len bytes: a zone then a uniform aligned start inside it;
 * blockalign (no random map, as fio); lfsr without a map (each block once per pass, no bitmap);
 * else the plain generator (random map, distributions, norandommap). */
static uint64_t rand_off(struct worker *w, struct patgen *p, int d, uint64_t *len)
{
	const struct options *o = w->job->o;
	d = d == DDIR_TRIM ? DDIR_WRITE : d;
	const uint64_t size = w->rsize, a = o->blockalign[d] ? o->blockalign[d] : w->minbs, last = size - *len;
	if (o->dist == DIST_ZONED || o->dist == DIST_ZONED_ABS) {
		/* the whole I/O inside its zone (as fio), and inside the region */
		const struct zone_range *z = &p->zr[p->slot[rng_below(&w->rng, 100)]];
		uint64_t lo = (z->lo + a - 1) / a * a, top = z->hi >= *len ? z->hi - *len : 0;
		if (top > last)
			top = last;
		if (lo > top)
			return (lo < last ? lo : last) / a * a;
		return lo + rng_below(&w->rng, (top - lo) / a + 1) * a;
	}
	if (o->blockalign[d])
		return rng_below(&w->rng, last / a + 1) * a;
	if (o->random_generator == RG_LFSR && (o->norandommap || is_mixed(o))) {
		if (w->perm_i >= w->nblocks) {
			w->perm_i = 0;
			perm_init(&w->perm, w->nblocks, rng_next(&w->rng));
		}
		uint64_t off = perm_at(&w->perm, w->perm_i++) * w->minbs;
		return off > last ? last / w->minbs * w->minbs : off;
	}
	return worker_rand_off(w, len, d);
}

static int next_off(struct worker *w, struct patgen *p, int d, uint64_t *len, uint64_t *rel)
{
	const struct options *o = w->job->o;
	if (!rw_is_random(o->rw))
		return seq_next(w, p, d, len, rel) != SEQ_OK;
	int sequential = 0;
	if (o->rw_seq_nr && p->count % o->rw_seq_nr) {
		if (o->rw_seq_identical) {
			uint64_t s = p->last_start[d] == UINT64_MAX ? 0 : p->last_start[d] - w->roff;
			if (s + *len > w->rsize)
				return 1;
			*rel = s;
			return 0;
		}
		sequential = 1;
	} else if (o->pct_random[d == DDIR_TRIM ? DDIR_WRITE : d] < 100) {
		sequential = rng_below(&w->rng, 100) >= o->pct_random[d == DDIR_TRIM ? DDIR_WRITE : d];
	}
	if (sequential) {
		int rc = seq_next(w, p, d, len, rel);
		if (rc == SEQ_OK)
			return 0;
		if (rc == SEQ_REGION_END)
			return 1;
		/* at the end of the file fio falls back to a random offset */
	}
	*rel = rand_off(w, p, d, len);
	return *rel == OFF_PASS_END; /* the map's pass is over where fio's is (map_claim_units) */
}

/* A pass ended early (a hole pattern reached the end, number_ios): another one while fio's
 * loop would run one -- loops passes, then io_size's remaining bytes; time_based always. */
static int new_pass(struct worker *w, struct patgen *p)
{
	const struct options *o = w->job->o;
	int more;
	if (!p->pass_ios)
		more = 0; /* a pass without any I/O: the pattern cannot go on */
	else if (o->time_based || !w->measuring)
		more = 1;
	else if (p->passes < o->loops)
		more = 1;
	else if (rw_trimwrite(o->rw)) { /* fio's keep_running: the trims' bytes count, io_size once */
		/* and with verify the read-back's (fio's io_bytes has every direction): fio reads each
		 * pass back before keep_running asks (thread_main's do_verify), the engine at the end */
		uint64_t done = w->issued;
		if (w->vw && o->do_verify && !o->verify_only)
			done += p->write_bytes;
		more = o->io_size > done && o->io_size - done >= opt_max_bs(o);
	} else
		more = o->io_size && w->budget > w->issued && w->budget - w->issued >= opt_max_bs(o);
	if (more)
		start_pass(w, p);
	return more;
}

/* trimwrite with number_ios, fio 3.33's rule: each pass (fio's do_io) doubles number_ios as it
 * starts (a trim and its write count as two) and ends when the job's I/Os, trims and writes of all
 * passes so far, reach number_ios x loops; the next pass starts again at the region's start. So
 * 6 x loops 2 is 12 pairs, then 12 more (24), loops 3 is 18, 18 and 36 (72) where the region holds
 * them; a pass that reaches the region's end first ends there, as any pass. fio counts verify's
 * reads among them, so with verify a pass may end between a trim and its write (which is then
 * never written). */
static int trimwrite_count_reached(const struct worker *w, const struct patgen *p)
{
	const struct options *o = w->job->o;
	if (!o->number_ios || o->time_based || !w->measuring)
		return 0;
	unsigned __int128 limit = (unsigned __int128)o->number_ios * o->loops;
	for (uint64_t i = 0; i < p->passes && limit <= UINT64_MAX; i++)
		limit <<= 1;
	/* fio reads each pass back before the next (verify, no backlog) and counts those reads: as
	 * many as the pass wrote. The engine reads the passes back at the end; the count is the same */
	uint64_t n = w->nios;
	if (w->vw && o->do_verify && !o->verify_backlog && !o->verify_only)
		n += p->prev_writes;
	return n >= limit;
}

/* randtrimwrite: the random map's pass is over (each block trimmed and written once), where
 * fio's pass ends (the map full) and its keep_running decides on another (new_pass) */
static int rand_pass_done(const struct worker *w, const struct patgen *p)
{
	const struct options *o = w->job->o;
	return rw_is_random(o->rw) && !o->norandommap && !w->map && o->dist == DIST_RANDOM && !o->blockalign[DDIR_WRITE] &&
	       p->pass_ios && w->perm_i >= w->nblocks;
}

int pat_next(struct worker *w, struct io_req *r)
{
	struct patgen *p = w->pat;
	const struct options *o = w->job->o;
	int d;
	switch (o->rw) {
	case RW_READ: case RW_RANDREAD: d = DDIR_READ; break;
	case RW_WRITE: case RW_RANDWRITE: d = DDIR_WRITE; break;
	case RW_TRIM: case RW_RANDTRIM: d = DDIR_TRIM; break;
	case RW_TRIMWRITE: case RW_RANDTRIMWRITE:
		if (trimwrite_count_reached(w, p)) { /* the pass ends; after loops passes, the job */
			if (p->passes >= o->loops)
				return 1;
			if (w->vw && verify_pass_ends_phase(w)) {
				p->pass_end = 1; /* read back first, as after a pass that reached the end */
				return 1;
			}
			start_pass(w, p); /* a trim not yet written stays so, as fio's */
		}
		if (p->trim_len) { /* fio: the block just trimmed is written next, whole */
			r->ddir = DDIR_WRITE;
			r->len = (uint32_t)p->trim_len;
			r->off = p->last_start[DDIR_TRIM];
			p->last_start[DDIR_WRITE] = r->off;
			p->last_pos[DDIR_WRITE] = r->off + r->len;
			p->trim_len = 0;
			p->pass_writes++;
			p->write_bytes += r->len;
			w->nios += w->measuring;
			p->count++;
			p->pass_ios++;
			w->issued += r->len;
			return 0;
		}
		if (rand_pass_done(w, p) && !new_pass(w, p))
			return 1;
		d = DDIR_TRIM;
		break;
	default:
		d = rng_below(&w->rng, 100) < o->rwmixread ? DDIR_READ : DDIR_WRITE;
		if (w->pace.on) /* rates: the other direction when this one is ahead of its rate (pace.c) */
			d = pace_ddir(w, d);
		break;
	}
	const uint64_t bs = pick_size(w, d);
	for (int tries = 0; tries < 2; tries++) {
		uint64_t len = bs, rel = 0;
		if (!next_off(w, p, d, &len, &rel)) {
			w->nios += w->measuring;
			r->ddir = (uint8_t)d;
			r->len = (uint32_t)len;
			r->off = w->roff + rel;
			if (d == DDIR_TRIM && (o->rw == RW_TRIMWRITE || o->rw == RW_RANDTRIMWRITE))
				p->trim_len = len;
			p->last_start[d] = r->off;
			p->last_pos[d] = r->off + len;
			p->count++;
			p->pass_ios++;
			w->issued += len;
			return 0;
		}
		if (w->vw && verify_pass_ends_phase(w)) {
			p->pass_end = 1; /* fio's job loop: this pass is read back before the next (verify.c) */
			return 1;
		}
		if (!new_pass(w, p))
			return 1;
	}
	return 1;
}

int pat_pass_ended(const struct patgen *p, uint64_t *passes)
{
	*passes = p->passes;
	return p->pass_end && p->pass_ios;
}

void pat_restart(struct worker *w)
{
	start_pass(w, w->pat);
}

void pat_copy(struct patgen *dst, const struct patgen *src)
{
	*dst = *src;
}
