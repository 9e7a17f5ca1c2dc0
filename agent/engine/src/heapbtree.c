/* iowatt-engine --heap-btree --directory=DIR --records=N: heap file vs B+tree (the P3608
 * report's § 1.4, docs/sources.md).
 *
 * For each cache fraction F and each structure (heap, btree): a new file in DIR, a buffer pool of
 * ceil(F x data pages) frames (CLOCK, bufpool.c; data pages = the pages the structure has after
 * the N inserts: exact for the heap, counted by a memory-only build of the same tree for the
 * B+tree, since the tree's shape does not depend on the pool), then
 *   1. insert: N records in random key order (the same records for every run of one seed);
 *   2. checkpoint: every dirty page written back and fdatasync (timed apart, not in ops/s);
 *   3. point_query: M lookups of random inserted keys (the pool as the inserts left it).
 *      B+tree: root-to-leaf descent. Heap: the report says the sequential array has "only
 *      sequential accesses", so a heap point query is a sequential scan from the first page until
 *      the key is found (no index); hence the separate, smaller --heap-queries;
 *   4. with --check, a full verification outside the measured phases (every key found; the
 *      B+tree's invariants by a full walk);
 * then the file is removed (unless --keep). Misses are preads of the file opened O_DIRECT, so
 * the device (not the page cache) serves them; a file system without O_DIRECT is used buffered
 * and the output says so ("direct": false).
 *
 * Safety as --postmark: DIR is opened once (--beneath=ROOT: confined, no link, no ".."), every
 * file is created O_CREAT|O_EXCL|O_NOFOLLOW 0600 relative to DIR's descriptor and removed at the
 * end only if it is still the file this run created; ENOSPC or another I/O error stops the sweep
 * (exit 1, the JSON is still printed), SIGINT/SIGTERM stop it (exit 0, "interrupted": true). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "btree.h"
#include "bufpool.h"
#include "heapbtree.h"
#include "iowatt.h"
#include "optable.h"

#define MAX_FRACTIONS 64
#define MAX_RECORDS 2000000000 /* page numbers are 32-bit; the pool needs the data in RAM at 100 % */
#define MAX_QUERIES 1000000000 /* --queries, --heap-queries */
#define DEFAULT_QUERIES 10000ull  /* --queries: min(N, this) */
#define DEFAULT_HEAP_QUERIES 100ull /* --heap-queries: min(queries, this) */
#define DEFAULT_FRACTIONS 10      /* --cache-fraction: 0.1, 0.2, ... 1.0 */
#define DEFAULT_SEED 1ull
static const char *const structure_names[] = { "heap", "btree", "both" };

enum { S_HEAP, S_BTREE, NSTRUCT };
static const char *const s_names[NSTRUCT] = { "heap", "btree" };
enum { OP_INSERT, OP_QUERY, NOP };
static const char *const op_names[NOP] = { "insert", "point_query" };

struct cfg {
	const char *dir, *beneath;
	uint64_t records, queries, heap_queries, seed;
	int records_set, queries_set, heap_queries_set, seed_set, fractions_set, structure_set;
	double fractions[MAX_FRACTIONS];
	int nfractions;
	int structures[NSTRUCT];
	int keep, check, jsonplus, normal, progress, parse_only;
	const char *fractions_given, *structure_given;
};

struct phase {
	uint64_t ops, elapsed_ns, found;
	struct bp_stats st;
	uint64_t rchar, wchar; /* /proc/self/io: bytes the read / write system calls moved */
	uint64_t cpu_ns;       /* user + system CPU time of the thread over the phase */
	struct lstat lat;
	uint64_t *hist;
};

struct hb_check {
	int done;
	int ok;                 /* every key found once with its record, and (btree) the invariants */
	uint64_t keys_checked, keys_found;
	struct bt_check bt;     /* btree only */
	char why[160];
};

struct result {
	int structure;
	double fraction;
	uint32_t cache_pages, data_pages;
	int ran;                /* 0: not reached (stopped before) */
	struct phase ph[NOP];
	uint64_t ckpt_writes, ckpt_ns;
	unsigned height;
	uint64_t splits;
	uint64_t file_bytes;
	struct hb_check chk;
};

struct hb_run {
	const struct cfg *c;
	int dirfd;
	int direct;             /* files opened O_DIRECT */
	int err;                /* negative errno of the first failure */
	char errmsg[256];
	uint64_t t0, next_tick;
	uint64_t done, total;   /* progress, in operations */
	const char *cur_s, *cur_op;
	double cur_f;
	uint64_t data_pages[NSTRUCT];
	unsigned height_sized;
};

/* ---- records ---- */

/* a bijection of 64-bit integers (the splitmix64 finaliser: xor-shifts and odd multipliers are
 * invertible): distinct insertion numbers give distinct keys, in random order */
static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

static inline uint64_t key_of(uint64_t seed, uint64_t seq)
{
	return mix64(seq + seed * 0x9e3779b97f4a7c15ull);
}

static void make_record(struct rng *r, uint64_t seed, uint64_t seq, struct hb_rec *out)
{
	memset(out, 0, sizeof(*out));
	out->key = key_of(seed, seq);
	out->seq = seq;
	out->amount = rng_unit(r) * 1e6;
	out->qty = (int32_t)rng_below(r, 1000);
	for (int k = 0; k < 11; k++)
		out->tag[k] = (char)('a' + rng_below(r, 26));
}

/* ---- heap ---- */

struct heap {
	struct bufpool *bp;
	uint32_t tail;          /* last page */
	unsigned tail_n;        /* its records (the free-space map of a DBMS, kept in memory) */
	uint64_t records;
};

struct heap_hdr {
	uint32_t n, magic;
	uint64_t rsv;
};
#define HEAP_MAGIC 0x50414548u /* "HEAP" */

static int heap_insert(struct heap *h, const struct hb_rec *r)
{
	struct bufpool *bp = h->bp;
	uint32_t fr;
	unsigned char *p;
	if (!bp->npages || h->tail_n == HB_HEAP_CAP) {
		p = bp_new(bp, &h->tail, &fr);
		if (!p)
			return bp->err;
		((struct heap_hdr *)(void *)p)->magic = HEAP_MAGIC;
		h->tail_n = 0;
	} else {
		p = bp_get(bp, h->tail, &fr);
		if (!p)
			return bp->err;
	}
	struct heap_hdr *hd = (struct heap_hdr *)(void *)p;
	memcpy(p + HB_HDR + (size_t)hd->n * HB_REC, r, HB_REC);
	hd->n++;
	h->tail_n = hd->n;
	h->records++;
	bp_unpin(bp, fr, 1);
	return 0;
}

/* sequential scan from page 0 until the key: 1 found, 0 not, negative errno */
static int heap_find(struct heap *h, uint64_t key, struct hb_rec *out)
{
	struct bufpool *bp = h->bp;
	for (uint32_t pg = 0; pg < bp->npages; pg++) {
		uint32_t fr;
		unsigned char *p = bp_get(bp, pg, &fr);
		if (!p)
			return bp->err;
		const struct heap_hdr *hd = (const struct heap_hdr *)(const void *)p;
		const struct hb_rec *r = (const struct hb_rec *)(const void *)(p + HB_HDR);
		unsigned n = hd->n <= HB_HEAP_CAP ? hd->n : HB_HEAP_CAP;
		for (unsigned i = 0; i < n; i++)
			if (r[i].key == key) {
				*out = r[i];
				bp_unpin(bp, fr, 0);
				return 1;
			}
		bp_unpin(bp, fr, 0);
	}
	return 0;
}

/* one scan of every page: each insertion number 0..N-1 exactly once, with its key */
static int heap_verify(struct heap *h, uint64_t seed, uint64_t nrec, struct hb_check *k)
{
	struct bufpool *bp = h->bp;
	unsigned char *seen = calloc((size_t)(nrec / 8 + 1), 1);
	if (!seen)
		return -ENOMEM;
	k->ok = 1;
	for (uint32_t pg = 0; pg < bp->npages; pg++) {
		uint32_t fr;
		unsigned char *p = bp_get(bp, pg, &fr);
		if (!p) {
			free(seen);
			return bp->err;
		}
		const struct heap_hdr *hd = (const struct heap_hdr *)(const void *)p;
		const struct hb_rec *r = (const struct hb_rec *)(const void *)(p + HB_HDR);
		if (hd->magic != HEAP_MAGIC || hd->n > HB_HEAP_CAP) {
			k->ok = 0;
			if (!k->why[0])
				snprintf(k->why, sizeof(k->why), "page %u is not a heap page", pg);
		}
		unsigned n = hd->n <= HB_HEAP_CAP ? hd->n : HB_HEAP_CAP;
		for (unsigned i = 0; i < n; i++) {
			uint64_t s = r[i].seq;
			if (s >= nrec || r[i].key != key_of(seed, s) || (seen[s / 8] >> (s % 8) & 1)) {
				k->ok = 0;
				if (!k->why[0])
					snprintf(k->why, sizeof(k->why), "page %u record %u: unknown or repeated record", pg,
						 i);
				continue;
			}
			seen[s / 8] |= (unsigned char)(1u << (s % 8));
			k->keys_found++;
		}
		bp_unpin(bp, fr, 0);
	}
	k->keys_checked = nrec;
	if (k->keys_found != nrec) {
		k->ok = 0;
		if (!k->why[0])
			snprintf(k->why, sizeof(k->why), "%llu of %llu records found",
				 (unsigned long long)k->keys_found, (unsigned long long)nrec);
	}
	free(seen);
	return 0;
}

/* ---- accounting ---- */

static void proc_io(uint64_t *rchar, uint64_t *wchar)
{
	*rchar = *wchar = 0;
	FILE *f = fopen("/proc/self/io", "r");
	if (!f)
		return;
	char line[128];
	unsigned long long v;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "rchar: %llu", &v) == 1)
			*rchar = v;
		else if (sscanf(line, "wchar: %llu", &v) == 1)
			*wchar = v;
	}
	fclose(f);
}

struct snap {
	struct bp_stats st;
	uint64_t rchar, wchar, cpu, t;
};

/* the thread's CPU time (the scheduler's precise runtime, not tick-sampled like getrusage) */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void snap_take(const struct bufpool *bp, struct snap *s)
{
	proc_io(&s->rchar, &s->wchar);
	s->st = bp->st;
	s->cpu = thread_cpu_ns();
	s->t = now_ns();
}

static void phase_close(struct phase *ph, const struct bufpool *bp, const struct snap *a, uint64_t t_end)
{
	struct snap b;
	b.cpu = thread_cpu_ns();
	b.st = bp->st;
	proc_io(&b.rchar, &b.wchar);
	ph->cpu_ns = b.cpu - a->cpu;
	ph->elapsed_ns = t_end - a->t;
	ph->st.hits = b.st.hits - a->st.hits;
	ph->st.misses = b.st.misses - a->st.misses;
	ph->st.reads = b.st.reads - a->st.reads;
	ph->st.writes = b.st.writes - a->st.writes;
	ph->st.allocated = b.st.allocated - a->st.allocated;
	ph->rchar = b.rchar - a->rchar;
	ph->wchar = b.wchar - a->wchar;
}

static void progress_tick(struct hb_run *r)
{
	uint64_t now = now_ns();
	if (now < r->next_tick)
		return;
	r->next_tick = now + 1000000000ull;
	double pct = r->total ? 100.0 * (double)r->done / (double)r->total : 0;
	fprintf(stderr,
		"{\"event\":\"progress\",\"mode\":\"heap-btree\",\"structure\":\"%s\",\"operation\":\"%s\","
		"\"cache_fraction\":%.4g,\"elapsed_ns\":%llu,\"done\":%llu,\"total\":%llu,\"percent\":%.1f}\n",
		r->cur_s, r->cur_op, r->cur_f, (unsigned long long)(now - r->t0), (unsigned long long)r->done,
		(unsigned long long)r->total, pct);
	fflush(stderr);
}

static void run_fail(struct hb_run *r, int e, const char *fmt, const char *a, const char *b)
{
	if (r->err)
		return;
	r->err = e < 0 ? e : -EIO;
	snprintf(r->errmsg, sizeof(r->errmsg), fmt, a, b);
}

/* ---- files ---- */

static int create_file(struct hb_run *r, const char *name)
{
	int fd = confined_open(r->dirfd, name, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return fd;
	if (r->direct) {
		int fl = fcntl(fd, F_GETFL);
		if (fl < 0 || fcntl(fd, F_SETFL, fl | O_DIRECT) < 0)
			r->direct = 0; /* this file system has no O_DIRECT: buffered, and the output says so */
	}
	return fd;
}

/* unlink name only if it is still the file fd refers to (never a file swapped in) */
static int remove_file(struct hb_run *r, int fd, const char *name)
{
	struct stat a, b;
	if (fstat(fd, &a) < 0)
		return -errno;
	if (fstatat(r->dirfd, name, &b, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (a.st_dev != b.st_dev || a.st_ino != b.st_ino)
		return -ESTALE;
	return unlinkat(r->dirfd, name, 0) < 0 ? -errno : 0;
}

/* ---- one structure at one fraction ---- */

static void run_one(struct hb_run *r, int s, double f, struct result *res)
{
	const struct cfg *c = r->c;
	memset(res, 0, sizeof(*res));
	res->structure = s;
	res->fraction = f;
	res->data_pages = (uint32_t)r->data_pages[s];
	double want = ceil(f * (double)r->data_pages[s] - 1e-9);
	res->cache_pages = want < 4 ? 4 : (uint32_t)want;
	for (int k = 0; k < NOP; k++) {
		lstat_init(&res->ph[k].lat);
		res->ph[k].hist = calloc(HIST_NR, sizeof(uint64_t));
		if (!res->ph[k].hist)
			die_code(EXIT_FAIL, "out of memory");
	}
	if (r->err || g_stop)
		return;
	res->ran = 1;
	char name[96];
	snprintf(name, sizeof(name), "iowatt-heapbtree-%d-%s-%03d.dat", (int)getpid(), s_names[s],
		 (int)lround(f * 1000));
	int fd = create_file(r, name);
	if (fd < 0) {
		run_fail(r, fd, "create '%s': %s", name, strerror(-fd));
		res->ran = 0;
		return;
	}
	struct bufpool bp;
	if (bp_init(&bp, fd, res->cache_pages) < 0)
		die_code(EXIT_FAIL, "out of memory");
	struct heap h = { .bp = &bp };
	struct btree t;
	memset(&t, 0, sizeof(t));
	r->cur_s = s_names[s];
	r->cur_f = f;
	struct rng rg;
	rng_seed(&rg, c->seed);
	struct snap a;
	struct hb_rec rec;
	int rc = 0;

	/* 1. inserts */
	r->cur_op = op_names[OP_INSERT];
	struct phase *ph = &res->ph[OP_INSERT];
	snap_take(&bp, &a); /* the empty tree's first leaf is part of the inserts */
	if (s == S_BTREE)
		rc = bt_create(&t, &bp);
	uint64_t tprev = a.t;
	for (uint64_t i = 0; i < c->records && rc >= 0 && !g_stop; i++) {
		make_record(&rg, c->seed, i, &rec);
		uint64_t t0 = now_ns();
		rc = s == S_HEAP ? heap_insert(&h, &rec) : bt_insert(&t, &rec);
		tprev = now_ns();
		uint64_t d = tprev - t0;
		lstat_add(&ph->lat, d);
		ph->hist[hist_idx(d)]++;
		ph->ops++;
		r->done++;
		if (c->progress && (i & 1023) == 0)
			progress_tick(r);
	}
	phase_close(ph, &bp, &a, tprev);
	if (rc == 1)
		rc = 0; /* a repeated key cannot happen (keys are a bijection); counted by the check */
	if (rc < 0)
		run_fail(r, rc, "%s insert: %s", s_names[s], bp.err ? bp.errmsg : strerror(-rc));

	/* 2. checkpoint */
	if (!r->err && !g_stop) {
		uint64_t w0 = bp.st.writes, t0 = now_ns();
		rc = bp_flush(&bp);
		res->ckpt_ns = now_ns() - t0;
		res->ckpt_writes = bp.st.writes - w0;
		if (rc < 0)
			run_fail(r, rc, "%s checkpoint: %s", s_names[s], bp.errmsg);
	}

	/* 3. point queries */
	uint64_t nq = s == S_HEAP ? c->heap_queries : c->queries;
	ph = &res->ph[OP_QUERY];
	r->cur_op = op_names[OP_QUERY];
	struct rng rq;
	rng_seed(&rq, c->seed ^ 0x5851f42d4c957f2dull);
	snap_take(&bp, &a);
	tprev = a.t;
	rc = 0;
	for (uint64_t q = 0; q < nq && !r->err && !g_stop; q++) {
		uint64_t seq = rng_below(&rq, c->records);
		uint64_t key = key_of(c->seed, seq);
		uint64_t t0 = now_ns();
		rc = s == S_HEAP ? heap_find(&h, key, &rec) : bt_find(&t, key, &rec);
		tprev = now_ns();
		if (rc < 0) {
			run_fail(r, rc, "%s point query: %s", s_names[s], bp.err ? bp.errmsg : strerror(-rc));
			break;
		}
		uint64_t d = tprev - t0;
		lstat_add(&ph->lat, d);
		ph->hist[hist_idx(d)]++;
		ph->ops++;
		ph->found += rc == 1 && rec.seq == seq;
		r->done++;
		if (c->progress && (s == S_HEAP || (q & 1023) == 0))
			progress_tick(r);
	}
	phase_close(ph, &bp, &a, tprev);

	/* 4. the check, outside the measured phases */
	if (c->check && !r->err && !g_stop && res->ph[OP_INSERT].ops == c->records) {
		struct hb_check *k = &res->chk;
		k->done = 1;
		if (s == S_HEAP) {
			rc = heap_verify(&h, c->seed, c->records, k);
		} else {
			rc = bt_check(&t, &k->bt);
			k->ok = rc == 0 && k->bt.ok;
			str_copy(k->why, sizeof(k->why), k->bt.why);
			for (uint64_t i = 0; i < c->records && rc >= 0; i++) {
				uint64_t key = key_of(c->seed, i);
				rc = bt_find(&t, key, &rec);
				if (rc == 1 && rec.seq == i && rec.key == key)
					k->keys_found++;
			}
			k->keys_checked = c->records;
			if (k->keys_found != c->records || k->bt.records != c->records) {
				k->ok = 0;
				if (!k->why[0])
					snprintf(k->why, sizeof(k->why), "%llu of %llu keys found, %llu records in the leaves",
						 (unsigned long long)k->keys_found, (unsigned long long)c->records,
						 (unsigned long long)k->bt.records);
			}
		}
		if (rc < 0)
			run_fail(r, rc, "%s check: %s", s_names[s], bp.err ? bp.errmsg : strerror(-rc));
	}
	res->height = s == S_BTREE ? t.height : 0;
	res->splits = t.splits;
	res->file_bytes = (uint64_t)bp.npages * BP_PAGE;
	bp_free(&bp);
	if (!c->keep) {
		int e = remove_file(r, fd, name);
		if (e < 0)
			run_fail(r, e, "remove '%s': %s", name, strerror(-e));
	}
	close(fd);
}

/* pages after N inserts, without I/O (the B+tree's shape does not depend on the pool) */
static int size_structures(struct hb_run *r)
{
	const struct cfg *c = r->c;
	r->data_pages[S_HEAP] = (c->records + HB_HEAP_CAP - 1) / HB_HEAP_CAP;
	if (!c->structures[S_BTREE])
		return 0;
	struct bufpool bp;
	if (bp_init(&bp, -1, 0) < 0)
		return -ENOMEM;
	struct btree t;
	int rc = bt_create(&t, &bp);
	struct rng rg;
	rng_seed(&rg, c->seed);
	struct hb_rec rec;
	for (uint64_t i = 0; i < c->records && rc >= 0 && !g_stop; i++) {
		make_record(&rg, c->seed, i, &rec);
		rc = bt_insert(&t, &rec);
		r->done++;
		if (c->progress && (i & 1023) == 0)
			progress_tick(r);
	}
	r->data_pages[S_BTREE] = bp.npages;
	r->height_sized = t.height;
	bp_free(&bp);
	return rc < 0 ? rc : 0;
}

/* ---- arguments ---- */

static int parse_fraction(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s)
		return -EINVAL;
	if (*end == '%') {
		v /= 100.0;
		end++;
	}
	if (*end || !(v > 0) || v > 1.0 + 1e-12)
		return -EINVAL;
	*out = v > 1.0 ? 1.0 : v;
	return 0;
}

static void parse_mode_flag(void *base, const struct opt_def *d, const char *name, const char *val)
{
	(void)base, (void)d, (void)name;
	int b = 1;
	if (parse_bool(val, &b) < 0 || !b)
		die_usage("heap-btree", "takes no value (or 1), got '%s'", val);
}

static void parse_fractions(void *base, const struct opt_def *d, const char *name, const char *val)
{
	(void)d, (void)name;
	struct cfg *c = base;
	if (!*val)
		die_usage("cache-fraction", "needs F[,F...] with 0 < F <= 1 (or N%%)");
	c->fractions_given = val;
	c->nfractions = 0;
	const char *p = val;
	for (;;) {
		size_t l = strcspn(p, ",");
		char one[32];
		double f;
		if (l == 0 || l >= sizeof(one))
			die_usage("cache-fraction", "must be F[,F...] with 0 < F <= 1 (or N%%), got '%s'", val);
		memcpy(one, p, l);
		one[l] = 0;
		if (parse_fraction(one, &f) < 0)
			die_usage("cache-fraction", "'%s' must be a fraction 0 < F <= 1 (or N%%), in '%s'", one, val);
		if (c->nfractions == MAX_FRACTIONS)
			die_usage("cache-fraction", "at most %d fractions", MAX_FRACTIONS);
		c->fractions[c->nfractions++] = f;
		if (!p[l])
			break;
		p += l + 1;
	}
}

static void parse_structure(void *base, const struct opt_def *d, const char *name, const char *val)
{
	(void)d, (void)name;
	struct cfg *c = base;
	if (strcmp(val, "heap") && strcmp(val, "btree") && strcmp(val, "both"))
		die_usage("structure", "must be heap, btree or both, got '%s'", val);
	c->structure_given = val;
	c->structures[S_HEAP] = strcmp(val, "btree") != 0;
	c->structures[S_BTREE] = strcmp(val, "heap") != 0;
}

static void parse_output_format(void *base, const struct opt_def *d, const char *name, const char *val)
{
	(void)d, (void)name;
	struct cfg *c = base;
	output_format_arg(val, 1, &c->jsonplus, &c->normal);
}

static void parse_progress(void *base, const struct opt_def *d, const char *name, const char *val)
{
	(void)d, (void)name;
	((struct cfg *)base)->progress = progress_arg(val);
}

/* the settings echo (heap_btree_run, --parse-only): the rows' own values */
static void echo_fractions(struct jw *w, const struct options *o, const struct opt_def *d)
{
	const struct cfg *c = (const void *)o;
	jw_arr(w, d->key);
	for (int k = 0; k < c->nfractions; k++)
		jw_dbl(w, NULL, c->fractions[k]);
	jw_arr_end(w);
}

static void echo_structures(struct jw *w, const struct options *o, const struct opt_def *d)
{
	const struct cfg *c = (const void *)o;
	jw_arr(w, d->key);
	for (int s = 0; s < NSTRUCT; s++)
		if (c->structures[s])
			jw_str(w, NULL, s_names[s]);
	jw_arr_end(w);
}

#define STR_(x) #x
#define STR(x) STR_(x)
#define HB(f) offsetof(struct cfg, f)
#define HB_BOOL(n, f) { .name = n, .type = OT_BOOL, .off = HB(f), .bad = "must be 0 or 1, got '%s'" }
/* the flags of --heap-btree, in the order "it takes ..." names them; a row with a key is a setting of
 * the sweep: echoed from here in heap_btree_run and --parse-only (opts_echo_rows) and, when given, in
 * the job's "job options" (opts_echo_given) */
static const struct opt_def hb_opts[] = {
	{ .name = "heap-btree", .type = OT_FUNC, .parse = parse_mode_flag, .flags = OPT_F_BARE | OPT_F_UNLISTED },
	{ .name = "directory", .type = OT_ARG, .off = HB(dir), .bad = "--directory=DIR needs a directory" },
	{ .name = "beneath", .type = OT_ARG, .off = HB(beneath), .bad = "--beneath=DIR needs a directory" },
	{ .name = "records", .type = OT_U64, .off = HB(records), .min = 1, .max = MAX_RECORDS, .key = "records",
	  .set_off = HB(records_set), .bad = "must be an integer from 1 to " STR(MAX_RECORDS) ", got '%s'" },
	{ .name = "cache-fraction", .type = OT_FUNC, .parse = parse_fractions, .echo = echo_fractions,
	  .key = "cache_fractions", .set_off = HB(fractions_set), .text_off = HB(fractions_given) },
	{ .name = "queries", .type = OT_U64, .off = HB(queries), .max = MAX_QUERIES, .set_off = HB(queries_set),
	  .key = "queries", .bad = "must be an integer from 0 to " STR(MAX_QUERIES) ", got '%s'" },
	{ .name = "heap-queries", .type = OT_U64, .off = HB(heap_queries), .max = MAX_QUERIES, .key = "heap_queries",
	  .set_off = HB(heap_queries_set), .bad = "must be an integer from 0 to " STR(MAX_QUERIES) ", got '%s'" },
	{ .name = "randseed", .type = OT_U64, .off = HB(seed), .key = "randseed", .set_off = HB(seed_set),
	  .bad = "must be a non-negative integer, got '%s'" },
	{ .name = "structure", .type = OT_FUNC, .parse = parse_structure, .echo = echo_structures,
	  .key = "structures", .set_off = HB(structure_set), .text_off = HB(structure_given) },
	HB_BOOL("check", check),
	HB_BOOL("keep", keep),
	{ .name = "output-format", .type = OT_FUNC, .parse = parse_output_format },
	{ .name = "progress", .type = OT_FUNC, .parse = parse_progress },
	HB_BOOL("parse-only", parse_only),
};
#define HB_NOPTS (sizeof(hb_opts) / sizeof(hb_opts[0]))

static void parse_args(int argc, char **argv, struct cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->seed = DEFAULT_SEED;
	c->structures[S_HEAP] = c->structures[S_BTREE] = 1;
	opts_parse_argv(c, hb_opts, HB_NOPTS, "heap-btree", argc, argv);
	if (!c->dir)
		die_usage("directory", "--directory=DIR is required with --heap-btree");
	if (!c->records_set)
		die_usage("records", "--records=N is required with --heap-btree");
	if (!c->nfractions) {
		for (int k = 1; k <= DEFAULT_FRACTIONS; k++)
			c->fractions[c->nfractions++] = (double)k / DEFAULT_FRACTIONS;
	}
	if (!c->queries_set)
		c->queries = c->records < DEFAULT_QUERIES ? c->records : DEFAULT_QUERIES;
	if (!c->heap_queries_set)
		c->heap_queries = c->queries < DEFAULT_HEAP_QUERIES ? c->queries : DEFAULT_HEAP_QUERIES;
	/* the pool holds every data page at fraction 1: refuse what this host cannot hold in RAM
	 * (a B+tree after random inserts is at least half full, so at most ~2x the heap's pages) */
	double maxf = 0;
	for (int k = 0; k < c->nfractions; k++)
		maxf = c->fractions[k] > maxf ? c->fractions[k] : maxf;
	double heap_pages = ceil((double)c->records / HB_HEAP_CAP);
	double need = (c->structures[S_BTREE] ? 2.1 * heap_pages : heap_pages * maxf) * BP_PAGE;
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	if (pages > 0 && psz > 0 && need > 0.8 * (double)pages * (double)psz)
		die_usage("records", "%llu records need about %.0f MiB of buffer pool, more than 80%% of this host's "
				     "memory (%.0f MiB)",
			  (unsigned long long)c->records, need / 1048576.0, (double)pages * (double)psz / 1048576.0);
}

/* ---- report ---- */

static double per_s(uint64_t n, uint64_t ns)
{
	return ns ? (double)n / ((double)ns / 1e9) : 0;
}

static void emit_entry(struct jw *w, const struct result *res, int op, int bins)
{
	const struct phase *ph = &res->ph[op];
	jw_obj(w, NULL);
	jw_str(w, "structure", s_names[res->structure]);
	jw_str(w, "operation", op_names[op]);
	jw_dbl(w, "cache_fraction", res->fraction);
	jw_u64(w, "cache_pages", res->cache_pages);
	jw_u64(w, "data_pages", res->data_pages);
	jw_u64(w, "ops", ph->ops);
	jw_dbl(w, "ops_per_s", per_s(ph->ops, ph->elapsed_ns));
	jw_u64(w, "elapsed_ns", ph->elapsed_ns);
	jw_u64(w, "cpu_ns", ph->cpu_ns);
	jw_u64(w, "device_reads", ph->st.reads);
	jw_u64(w, "device_writes", ph->st.writes);
	jw_u64(w, "device_read_bytes", ph->st.reads * BP_PAGE);
	jw_u64(w, "device_write_bytes", ph->st.writes * BP_PAGE);
	jw_u64(w, "hits", ph->st.hits);
	jw_u64(w, "misses", ph->st.misses);
	uint64_t acc = ph->st.hits + ph->st.misses;
	if (acc)
		jw_dbl(w, "hit_ratio", (double)ph->st.hits / (double)acc);
	else
		jw_null(w, "hit_ratio");
	jw_u64(w, "pages_allocated", ph->st.allocated);
	jw_u64(w, "syscall_read_bytes", ph->rchar);
	jw_u64(w, "syscall_write_bytes", ph->wchar);
	emit_lstat(w, "lat_ns", &ph->lat, ph->hist, bins);
	if (op == OP_INSERT) {
		jw_u64(w, "checkpoint_writes", res->ckpt_writes);
		jw_u64(w, "checkpoint_ns", res->ckpt_ns);
		jw_u64(w, "file_bytes", res->file_bytes);
		if (res->structure == S_BTREE) {
			jw_u64(w, "height", res->height);
			jw_u64(w, "splits", res->splits);
		}
		if (res->chk.done) {
			jw_bool(w, "invariants_ok", res->chk.ok);
			jw_obj(w, "check");
			jw_u64(w, "keys_checked", res->chk.keys_checked);
			jw_u64(w, "keys_found", res->chk.keys_found);
			if (res->structure == S_BTREE) {
				const struct bt_check *b = &res->chk.bt;
				jw_bool(w, "sorted", b->sorted);
				jw_bool(w, "bounded", b->bounded);
				jw_bool(w, "fill_ok", b->fill_ok);
				jw_bool(w, "depth_equal", b->depth_equal);
				jw_bool(w, "chain_ok", b->chain_ok);
				jw_u64(w, "records", b->records);
				jw_u64(w, "leaf_pages", b->leaf_pages);
				jw_u64(w, "internal_pages", b->internal_pages);
				jw_u64(w, "height", b->height);
				jw_dbl(w, "leaf_fill", b->leaf_fill);
			}
			if (res->chk.why[0])
				jw_str(w, "violation", res->chk.why);
			else
				jw_null(w, "violation");
			jw_obj_end(w);
		} else {
			jw_null(w, "invariants_ok");
			jw_null(w, "check");
		}
	} else {
		jw_u64(w, "found", ph->found);
	}
	jw_obj_end(w);
}

struct env {
	struct timeval tv;
	struct rusage ru0, ru1;
	struct cpustat cpu0, cpu1;
	struct diskstat d0, d1;
	uint64_t el;
	int interrupted, sig;
};

static void report_json(const struct hb_run *r, const struct result *res, int nres, const struct env *e)
{
	const struct cfg *c = r->c;
	double secs = (double)e->el / 1e9;
	uint64_t reads = 0, writes = 0;
	for (int i = 0; i < nres; i++) {
		for (int k = 0; k < NOP; k++) {
			reads += res[i].ph[k].st.reads;
			writes += res[i].ph[k].st.writes;
		}
		writes += res[i].ckpt_writes;
	}
	struct jw w;
	jw_init(&w, stdout);
	jw_obj(&w, NULL);
	emit_preamble(&w, &e->tv);
	jw_obj(&w, "global options");
	jw_str(&w, "heap-btree", "1");
	jw_str(&w, "directory", c->dir);
	jw_obj_end(&w);
	jw_arr(&w, "jobs");
	jw_obj(&w, NULL);
	jw_str(&w, "jobname", "heap-btree");
	jw_i64(&w, "groupid", 0);
	jw_i64(&w, "error", -r->err);
	jw_i64(&w, "eta", 0);
	jw_u64(&w, "elapsed", (e->el + 999999999ull) / 1000000000ull);
	jw_obj(&w, "job options");
	jw_str(&w, "name", "heap-btree");
	opts_echo_given(&w, hb_opts, HB_NOPTS, c);
	jw_obj_end(&w);
	emit_dir_totals(&w, "read", reads * BP_PAGE, reads, e->el, NULL, NULL);
	emit_dir_totals(&w, "write", writes * BP_PAGE, writes, e->el, NULL, NULL);
	emit_empty_dir(&w, "trim");
	const struct rusage *a = &e->ru0, *b = &e->ru1;
	double usr = (double)(b->ru_utime.tv_sec - a->ru_utime.tv_sec) +
		     (double)(b->ru_utime.tv_usec - a->ru_utime.tv_usec) / 1e6;
	double sys = (double)(b->ru_stime.tv_sec - a->ru_stime.tv_sec) +
		     (double)(b->ru_stime.tv_usec - a->ru_stime.tv_usec) / 1e6;
	jw_u64(&w, "job_runtime", (e->el + 500000) / 1000000);
	jw_dbl(&w, "usr_cpu", secs > 0 ? 100.0 * usr / secs : 0);
	jw_dbl(&w, "sys_cpu", secs > 0 ? 100.0 * sys / secs : 0);
	jw_u64(&w, "ctx", (uint64_t)((b->ru_nvcsw - a->ru_nvcsw) + (b->ru_nivcsw - a->ru_nivcsw)));
	jw_u64(&w, "majf", (uint64_t)(b->ru_majflt - a->ru_majflt));
	jw_u64(&w, "minf", (uint64_t)(b->ru_minflt - a->ru_minflt));
	emit_job_iowatt(&w, "heap-btree", e->el, r->err ? r->errmsg : NULL);
	jw_obj_end(&w);
	jw_arr_end(&w);
	jw_arr(&w, "disk_util");
	emit_disk_util(&w, &e->d0, &e->d1, e->el);
	jw_arr_end(&w);

	jw_arr(&w, "heap_btree");
	for (int i = 0; i < nres; i++) {
		if (!res[i].ran)
			continue;
		for (int k = 0; k < NOP; k++)
			emit_entry(&w, &res[i], k, c->jsonplus);
	}
	jw_arr_end(&w);

	jw_obj(&w, "heap_btree_run");
	jw_str(&w, "directory", c->dir);
	if (c->beneath)
		jw_str(&w, "beneath", c->beneath);
	else
		jw_null(&w, "beneath");
	jw_bool(&w, "kept", c->keep);
	jw_bool(&w, "direct", r->direct);
	opts_echo_rows(&w, hb_opts, HB_NOPTS, c);
	jw_u64(&w, "page_bytes", BP_PAGE);
	jw_u64(&w, "record_bytes", HB_REC);
	jw_str(&w, "record_layout", "key uint64, seq uint64, amount double, qty int32, tag char[12]");
	jw_u64(&w, "heap_records_per_page", HB_HEAP_CAP);
	jw_u64(&w, "btree_leaf_capacity", HB_LEAF_CAP);
	jw_u64(&w, "btree_internal_capacity", HB_INT_CAP);
	jw_str(&w, "replacement", "clock");
	jw_str(&w, "heap_point_query", "sequential scan from the first page until the key is found");
	jw_obj(&w, "data_pages");
	for (int s = 0; s < NSTRUCT; s++)
		if (c->structures[s])
			jw_u64(&w, s_names[s], r->data_pages[s]);
	jw_obj_end(&w);
	jw_bool(&w, "checked", c->check);
	if (r->err)
		jw_str(&w, "error", r->errmsg);
	else
		jw_null(&w, "error");
	jw_obj_end(&w);

	jw_obj(&w, "iowatt");
	emit_iowatt_head(&w, "heap-btree", e->interrupted, e->sig);
	cpustat_emit(&w, "system_cpu", &e->cpu0, &e->cpu1);
	jw_obj_end(&w);
	jw_obj_end(&w);
	fputc('\n', stdout);
	fflush(stdout);
}

static const struct result *find_res(const struct result *res, int nres, int s, double f)
{
	for (int i = 0; i < nres; i++)
		if (res[i].ran && res[i].structure == s && res[i].fraction == f)
			return &res[i];
	return NULL;
}

static void report_normal(const struct hb_run *r, const struct result *res, int nres)
{
	const struct cfg *c = r->c;
	printf("Heap vs B+tree (iowatt-engine %s): %llu records of %u bytes, 8 KiB pages, CLOCK buffer pool, %s\n",
	       IOWATT_VERSION, (unsigned long long)c->records, HB_REC, r->direct ? "O_DIRECT" : "buffered (no O_DIRECT)");
	printf("point queries: B+tree %llu, heap %llu (a heap point query scans from the first page)\n",
	       (unsigned long long)c->queries, (unsigned long long)c->heap_queries);
	printf("data pages: heap %llu, B+tree %llu\n\n", (unsigned long long)r->data_pages[S_HEAP],
	       (unsigned long long)r->data_pages[S_BTREE]);
	printf("%8s %14s %14s %14s %14s   (operations per second; hit ratio %%)\n", "cache", "heap insert",
	       "heap query", "btree insert", "btree query");
	for (int k = 0; k < c->nfractions; k++) {
		printf("%7.0f%%", c->fractions[k] * 100);
		for (int s = 0; s < NSTRUCT; s++) {
			const struct result *x = find_res(res, nres, s, c->fractions[k]);
			for (int op = 0; op < NOP; op++) {
				if (!x) {
					printf(" %14s", "-");
					continue;
				}
				const struct phase *ph = &x->ph[op];
				uint64_t acc = ph->st.hits + ph->st.misses;
				char cell[48];
				snprintf(cell, sizeof(cell), "%.0f (%.0f)", per_s(ph->ops, ph->elapsed_ns),
					 acc ? 100.0 * (double)ph->st.hits / (double)acc : 0.0);
				printf(" %14s", cell);
			}
		}
		printf("\n");
	}
	if (r->err)
		printf("\nerror: %s\n", r->errmsg);
}

/* ---- --parse-only: what the sweep can do at most, before anything is touched ---- */

/* B+tree pages after N inserts, at most, without building it: every node but the root is at
 * least half full (a leaf split leaves 102 + 103 records, an internal one 341 + 340 keys), so
 * leaves <= ceil(N / 102) and each internal level has at most ceil(below / 341) nodes. */
static uint64_t btree_pages_max(uint64_t n)
{
	uint64_t level = (n + HB_LEAF_CAP / 2 - 1) / (HB_LEAF_CAP / 2);
	uint64_t pages = level ? level : 1;
	while (level > 1) {
		level = (level + HB_INT_CAP / 2 - 1) / (HB_INT_CAP / 2);
		pages += level;
	}
	return pages + 1; /* a new root's page */
}

/* Bytes written at most (README § Heap and B-tree, --parse-only): a page is written back only
 * when dirty, so writes <= the times pages are dirtied. Heap: only the last page is ever dirtied
 * and a full page never again, so each page is written at most once (its eviction or the
 * checkpoint). B+tree: an insert dirties its leaf, a split at most 4 pages (the node, its new
 * sibling, the parent, a new root), and splits <= pages, so writes <= N + 4 x pages. Queries
 * write nothing. Per fraction, summed; one file at a time (removed before the next). */
static void hb_bounds(const struct cfg *c, struct file_bounds *b, uint64_t pages[NSTRUCT])
{
	uint64_t n = c->records;
	pages[S_HEAP] = (n + HB_HEAP_CAP - 1) / HB_HEAP_CAP;
	pages[S_BTREE] = btree_pages_max(n);
	uint64_t per_fraction = 0, largest = 0;
	if (c->structures[S_HEAP]) {
		per_fraction += pages[S_HEAP] + 1;
		largest = pages[S_HEAP];
	}
	if (c->structures[S_BTREE]) {
		per_fraction += n + 4 * pages[S_BTREE];
		largest = pages[S_BTREE] > largest ? pages[S_BTREE] : largest;
	}
	memset(b, 0, sizeof(*b));
	b->mode = "heap-btree";
	b->threads = 1;
	b->max_block_bytes = BP_PAGE;
	b->written_bounded = 1;
	b->bytes_written_max = (uint64_t)c->nfractions * per_fraction * BP_PAGE;
	b->runtime_bounded = 0; /* size-bound: capped by the agent's timeout */
	b->dataset_bytes = largest * BP_PAGE;
	b->files = 1;
	b->directories = 0;
}

static void parse_only_report(const struct cfg *c)
{
	struct file_bounds b;
	uint64_t pages[NSTRUCT];
	hb_bounds(c, &b, pages);
	struct jw w;
	jw_init(&w, stdout);
	jw_obj(&w, NULL);
	jw_obj(&w, "heap_btree");
	opts_echo_rows(&w, hb_opts, HB_NOPTS, c);
	jw_obj(&w, "data_pages_max");
	jw_u64(&w, "heap", pages[S_HEAP]);
	jw_u64(&w, "btree", pages[S_BTREE]);
	jw_obj_end(&w);
	jw_obj_end(&w);
	emit_bounds(&w, &b);
	jw_obj_end(&w);
	fputc('\n', stdout);
	fflush(stdout);
}

/* ---- entry ---- */

void heapbtree_limits(struct jw *w)
{
	jw_obj(w, "heap_btree");
	jw_obj(w, "records");
	jw_u64(w, "min", 1);
	jw_u64(w, "max", MAX_RECORDS);
	jw_obj_end(w);
	jw_obj(w, "queries"); /* default: min(records, default_cap) */
	jw_u64(w, "min", 0);
	jw_u64(w, "max", MAX_QUERIES);
	jw_u64(w, "default_cap", DEFAULT_QUERIES);
	jw_obj_end(w);
	jw_obj(w, "heap_queries"); /* default: min(queries, default_cap) */
	jw_u64(w, "min", 0);
	jw_u64(w, "max", MAX_QUERIES);
	jw_u64(w, "default_cap", DEFAULT_HEAP_QUERIES);
	jw_obj_end(w);
	jw_obj(w, "cache_fraction");
	jw_u64(w, "max_count", MAX_FRACTIONS);
	jw_arr(w, "default");
	for (int k = 1; k <= DEFAULT_FRACTIONS; k++)
		jw_dbl(w, NULL, (double)k / DEFAULT_FRACTIONS);
	jw_arr_end(w);
	jw_obj_end(w);
	jw_obj(w, "structure");
	jw_str(w, "default", "both");
	jw_arr(w, "choices");
	for (size_t k = 0; k < sizeof(structure_names) / sizeof(structure_names[0]); k++)
		jw_str(w, NULL, structure_names[k]);
	jw_arr_end(w);
	jw_obj_end(w);
	jw_obj(w, "randseed");
	jw_u64(w, "default", DEFAULT_SEED);
	jw_obj_end(w);
	jw_obj_end(w);
}

void heapbtree_parse_args(int argc, char **argv)
{
	struct cfg c;
	parse_args(argc, argv, &c);
}

int heapbtree_requested(int argc, char **argv)
{
	for (int k = 1; k < argc; k++)
		if (!strcmp(argv[k], "--heap-btree") || !strncmp(argv[k], "--heap-btree=", 13))
			return 1;
	return 0;
}

int heapbtree_main(int argc, char **argv, const volatile sig_atomic_t *signo)
{
	struct cfg c;
	parse_args(argc, argv, &c);
	if (c.parse_only) {
		/* the parsed sweep and its bounds; DIR is not opened (it need not exist) */
		parse_only_report(&c);
		return EXIT_OK;
	}
	struct hb_run r;
	memset(&r, 0, sizeof(r));
	r.c = &c;
	r.direct = 1;
	r.dirfd = open_confined_dir(c.dir, c.beneath, "heap-btree");
	/* the TSC: an in-memory insert takes tens of nanoseconds, two stamps each */
	clock_init(1);

	int nres = 0;
	struct result *res = calloc((size_t)c.nfractions * NSTRUCT, sizeof(*res));
	if (!res)
		die_code(EXIT_FAIL, "out of memory");
	struct env e;
	memset(&e, 0, sizeof(e));
	gettimeofday(&e.tv, NULL);
	char devname[64];
	fd_blockdev(r.dirfd, devname, sizeof(devname));
	if (devname[0])
		diskstat_read(devname, &e.d0);
	cpustat_read(&e.cpu0);
	getrusage(RUSAGE_SELF, &e.ru0);
	r.t0 = now_ns();
	r.next_tick = r.t0 + 1000000000ull;
	for (int s = 0; s < NSTRUCT; s++)
		if (c.structures[s])
			r.total += (uint64_t)c.nfractions * (c.records + (s == S_HEAP ? c.heap_queries : c.queries));
	if (c.structures[S_BTREE])
		r.total += c.records; /* the sizing pass */
	r.cur_s = "btree";
	r.cur_op = "sizing";
	int rc = size_structures(&r);
	if (rc < 0)
		run_fail(&r, rc, "sizing the B+tree: %s%s", strerror(-rc), "");
	for (int k = 0; k < c.nfractions && !r.err && !g_stop; k++)
		for (int s = 0; s < NSTRUCT && !r.err && !g_stop; s++)
			if (c.structures[s])
				run_one(&r, s, c.fractions[k], &res[nres++]);
	e.el = now_ns() - r.t0;
	getrusage(RUSAGE_SELF, &e.ru1);
	cpustat_read(&e.cpu1);
	if (devname[0])
		diskstat_read(devname, &e.d1);
	e.interrupted = g_stop != 0;
	e.sig = e.interrupted && signo ? (int)*signo : 0;
	if (c.normal)
		report_normal(&r, res, nres);
	else
		report_json(&r, res, nres, &e);
	int code = EXIT_OK;
	if (r.err) {
		warnmsg("heap-btree: %s (the sweep stopped%s)", r.errmsg,
			c.keep ? "; --keep left its files in place" : " and removed what it created");
		code = EXIT_FAIL;
	}
	for (int i = 0; i < nres; i++)
		for (int k = 0; k < NOP; k++)
			free(res[i].ph[k].hist);
	free(res);
	close(r.dirfd);
	return code;
}
