/* C unit tests: histogram bucket math and percentiles, size/time parsing, JSON, the
 * random-map permutation and offset generation staying inside the region, beneath=DIR's
 * path checks, and the lexing of fio's INI job files. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileset.h"
#include "iowatt.h"
#include "verify.h"
#include "vhash.h"
#include "vsum.h"
#include "jobfile.h"
#include "output.h"

static int failures, checks;
#define CHECK(cond, ...)                                                                 \
	do {                                                                             \
		checks++;                                                                \
		if (!(cond)) {                                                           \
			failures++;                                                      \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);  \
			fprintf(stderr, __VA_ARGS__);                                    \
			fputc('\n', stderr);                                             \
		}                                                                        \
	} while (0)

sem_t g_wake; /* defined in main.c for the real binary */

static void test_hist(void)
{
	/* exact region */
	for (uint64_t v = 0; v < 128; v++)
		CHECK(hist_idx(v) == v && hist_val((unsigned)v) == v, "v=%llu", (unsigned long long)v);
	/* known fio values: 128 -> idx 128 (group 1, err 1, base 128), value 129 (midpoint) */
	CHECK(hist_idx(128) == 128, "%u", hist_idx(128));
	CHECK(hist_val(128) == 129, "%llu", (unsigned long long)hist_val(128));
	/* 1000: msb 9, 3 error bits, base (3+1)*64 = 256, sub-bucket (1000>>3)&63 = 61 */
	CHECK(hist_idx(1000) == 317 && hist_val(317) == 1004, "idx(1000)=%u", hist_idx(1000));
	CHECK(hist_idx(UINT64_MAX) == HIST_NR - 1, "clamped");
	CHECK(HIST_NR == 1856, "1856 buckets");
	/* every value maps to a bucket whose midpoint is within 1/128 of it, and idx is monotone */
	unsigned prev = 0;
	for (uint64_t v = 1; v < (1ull << 34); v = v * 1.013 + 1) {
		unsigned i = hist_idx(v);
		CHECK(i >= prev, "monotone at %llu", (unsigned long long)v);
		prev = i;
		double err = fabs((double)hist_val(i) - (double)v) / (double)v;
		CHECK(err <= 1.0 / 128 + 1e-12, "v=%llu val=%llu err=%f", (unsigned long long)v,
		      (unsigned long long)hist_val(i), err);
		CHECK(hist_idx(hist_val(i)) == i, "val maps back to its bucket for %llu", (unsigned long long)v);
	}
	/* percentiles: 100 samples 1..100 ns -> p50 = 50, p99 = 99, p1 = 1 */
	uint64_t *h = calloc(HIST_NR, sizeof(uint64_t));
	for (uint64_t v = 1; v <= 100; v++)
		h[hist_idx(v)]++;
	double pct[3] = { 1.0, 50.0, 99.0 };
	uint64_t out[3];
	hist_percentiles(h, 100, pct, 3, out);
	CHECK(out[0] == 1 && out[1] == 50 && out[2] == 99, "%llu %llu %llu", (unsigned long long)out[0],
	      (unsigned long long)out[1], (unsigned long long)out[2]);
	/* default list is monotone on a skewed histogram */
	memset(h, 0, HIST_NR * sizeof(uint64_t));
	struct rng r;
	rng_seed(&r, 1);
	for (int i = 0; i < 100000; i++)
		h[hist_idx(1000 + (uint64_t)(-log(rng_unit(&r) + 1e-12) * 50000))]++;
	uint64_t all[NPCT];
	hist_percentiles(h, 100000, default_percentiles, NPCT, all);
	for (int i = 1; i < NPCT; i++)
		CHECK(all[i] >= all[i - 1], "monotone percentile %d", i);
	free(h);
	struct lstat s;
	lstat_init(&s);
	lstat_add(&s, 2);
	lstat_add(&s, 4);
	lstat_add(&s, 6);
	CHECK(lstat_mean(&s) == 4.0 && fabs(lstat_stddev(&s) - 2.0) < 1e-9 && s.min == 2 && s.max == 6, "lstat");
}

static void test_parse(void)
{
	uint64_t v;
	CHECK(parse_size("4k", &v, 1024) == 0 && v == 4096, "4k");
	CHECK(parse_size("4KiB", &v, 1024) == 0 && v == 4000, "4KiB is 4000 with kb_base=1024, as in fio");
	CHECK(parse_size("1MiB", &v, 1024) == 0 && v == 1000000, "1MiB kb_base=1024");
	CHECK(parse_size("4KiB", &v, 1000) == 0 && v == 4096, "4KiB kb_base=1000");
	CHECK(parse_size("4k", &v, 1000) == 0 && v == 4000, "4k kb_base=1000");
	CHECK(parse_size("2Gi", &v, 1000) == 0 && v == 2147483648ull, "2Gi kb_base=1000");
	CHECK(parse_size("16p", &v, 1024) == 0 && v == (16ull << 50), "16p");
	CHECK(parse_size("99999999p", &v, 1024) < 0, "overflow");
	CHECK(parse_size("4kx", &v, 1024) < 0, "4kx");
	CHECK(parse_size("4KB", &v, 1024) == 0 && v == 4096, "4KB");
	CHECK(parse_size("1m", &v, 1024) == 0 && v == 1048576, "1m");
	CHECK(parse_size("2G", &v, 1024) == 0 && v == 2147483648ull, "2G");
	CHECK(parse_size("512", &v, 1024) == 0 && v == 512, "512");
	CHECK(parse_size("abc", &v, 1024) < 0, "abc");
	CHECK(parse_size("4q", &v, 1024) < 0, "4q");
	CHECK(parse_size("-4k", &v, 1024) < 0, "-4k");
	CHECK(parse_size("4kx", &v, 1024) < 0, "4kx");
	CHECK(parse_size("", &v, 1024) < 0, "empty");
	CHECK(parse_size("99999999999p", &v, 1024) < 0, "overflow");
	CHECK(parse_time_ns("5", &v) == 0 && v == 5000000000ull, "5");
	CHECK(parse_time_ns("500ms", &v) == 0 && v == 500000000ull, "500ms");
	CHECK(parse_time_ns("2m", &v) == 0 && v == 120000000000ull, "2m");
	CHECK(parse_time_ns("10us", &v) == 0 && v == 10000ull, "10us");
	CHECK(parse_time_ns("-1", &v) < 0, "-1");
	CHECK(parse_time_ns("5x", &v) < 0, "5x");
	int b;
	CHECK(parse_bool("true", &b) == 0 && b == 1, "true");
	CHECK(parse_bool("0", &b) == 0 && b == 0, "0");
	CHECK(parse_bool("maybe", &b) < 0, "maybe");
}

static void test_json(void)
{
	char err[128];
	struct jval *v = json_parse("{\"global\": {\"bs\": \"4k\", \"iodepth\": 32, \"x\": true},"
				    " \"jobs\": [{\"name\": \"a\\u00e9\\ud83d\\ude00\"}, {}]}",
				    err, sizeof(err));
	CHECK(v != NULL, "parse: %s", err);
	if (v) {
		const struct jval *g = json_get(v, "global");
		CHECK(g && g->n == 3 && !strcmp(json_get(g, "iodepth")->s, "32"), "global");
		const struct jval *j = json_get(v, "jobs");
		CHECK(j && j->t == J_ARR && j->n == 2, "jobs");
		CHECK(!strcmp(json_get(j->items[0], "name")->s, "a\xc3\xa9\xf0\x9f\x98\x80"), "utf8");
		json_free(v);
	}
	const char *bad[] = { "", "{", "{\"a\":1,}", "[1 2]", "{\"a\":1}x", "{'a':1}", "{\"a\":01}", "[1.]",
			      "{\"a\":1,\"a\":2}", "\"\\x\"", "[\"\\ud800\"]", "nul", NULL };
	for (int i = 0; bad[i]; i++) {
		struct jval *x = json_parse(bad[i], err, sizeof(err));
		CHECK(x == NULL, "should reject '%s'", bad[i]);
		json_free(x);
	}
}

/* Mutated documents must be rejected or accepted, never crash (ASan/UBSan watch this). */
static void test_json_fuzz(void)
{
	const char *seed = "{\"global\": {\"bs\": \"4k\", \"n\": -1.5e3, \"t\": [true, false, null]},"
			   " \"jobs\": [{\"name\": \"a\\u00e9\\n\"}, {}]}";
	size_t len = strlen(seed);
	char *buf = malloc(len + 2);
	struct rng r;
	rng_seed(&r, 3);
	const char alphabet[] = "{}[]\",:\\u0123456789abcdefeE+-. \ntfn";
	int parsed = 0;
	for (int i = 0; i < 20000; i++) {
		memcpy(buf, seed, len + 1);
		int muts = 1 + (int)rng_below(&r, 4);
		size_t l = len;
		for (int m = 0; m < muts; m++) {
			size_t pos = rng_below(&r, l);
			switch (rng_below(&r, 3)) {
			case 0: buf[pos] = alphabet[rng_below(&r, sizeof(alphabet) - 1)]; break;
			case 1: memmove(buf + pos, buf + pos + 1, l - pos); l--; break;
			default: l = pos; buf[l] = 0; break;
			}
			if (l == 0)
				break;
		}
		char err[128];
		struct jval *v = json_parse(buf, err, sizeof(err));
		parsed += v != NULL;
		json_free(v);
	}
	CHECK(parsed < 20000, "some mutations must be rejected (%d parsed)", parsed);
	free(buf);
}

static void test_perm(void)
{
	uint64_t sizes[] = { 1, 2, 3, 7, 64, 1000, 4097, 65536 };
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		uint64_t n = sizes[s];
		struct perm p;
		perm_init(&p, n, 12345 + n);
		unsigned char *seen = calloc(n, 1);
		int ok = 1;
		for (uint64_t i = 0; i < n; i++) {
			uint64_t x = perm_at(&p, i);
			if (x >= n || seen[x])
				ok = 0;
			else
				seen[x] = 1;
		}
		CHECK(ok, "permutation of %llu covers each index exactly once", (unsigned long long)n);
		free(seen);
	}
	/* the order looks random even on tiny regions: over 200 keys, how often the next block is
	 * the previous one + 1 (a random order: (n-1)/n times per permutation, i.e. < 1), where each
	 * block lands (every position about equally often), and, for 256 blocks, how often I/O i
	 * lands within 16 blocks of I/O i-2 (random: 33/256 = 13 %) */
	uint64_t tiny[] = { 16, 256 };
	for (size_t s = 0; s < 2; s++) {
		uint64_t n = tiny[s], succ = 0, near = 0, pairs = 0;
		unsigned pos[16][16] = { { 0 } };
		for (uint64_t key = 0; key < 200; key++) {
			struct perm p;
			perm_init(&p, n, key * 7919);
			uint64_t prev2 = 0, prev = perm_at(&p, 0);
			for (uint64_t i = 1; i < n; i++) {
				uint64_t x = perm_at(&p, i);
				succ += x == prev + 1;
				if (i >= 2) {
					near += (x > prev2 ? x - prev2 : prev2 - x) <= 16;
					pairs++;
				}
				if (n == 16)
					pos[i][x]++;
				prev2 = prev;
				prev = x;
			}
		}
		CHECK(succ < 200 * 2, "n=%llu: %llu sequential steps in 200 permutations (random: ~200)",
		      (unsigned long long)n, (unsigned long long)succ);
		if (n == 256)
			CHECK(near < pairs / 5, "n=256: %llu of %llu I/Os within 16 blocks of I/O i-2 (random: 13 %%)",
			      (unsigned long long)near, (unsigned long long)pairs);
		unsigned lo = ~0u, hi = 0;
		for (int i = 1; n == 16 && i < 16; i++)
			for (int x = 0; x < 16; x++) {
				lo = pos[i][x] < lo ? pos[i][x] : lo;
				hi = pos[i][x] > hi ? pos[i][x] : hi;
			}
		if (n == 16) /* 200 draws per cell would average 12.5: a fair shuffle stays within 2..30 */
			CHECK(lo >= 2 && hi <= 30, "n=16: position counts %u..%u (expect ~12.5 each)", lo, hi);
	}
}

static void test_dist(void)
{
	enum dist kinds[] = { DIST_RANDOM, DIST_ZIPF, DIST_PARETO, DIST_NORMAL };
	double params[] = { 0, 1.2, 0.9, 10 };
	uint64_t n = 1000;
	for (int k = 0; k < 4; k++) {
		struct distgen d;
		struct rng r;
		rng_seed(&r, 7);
		CHECK(distgen_init(&d, kinds[k], params[k], n) == 0, "init %d", k);
		uint64_t counts[10] = { 0 };
		int inrange = 1;
		for (int i = 0; i < 200000; i++) {
			uint64_t x = distgen_next(&d, &r);
			if (x >= n)
				inrange = 0;
			else
				counts[x * 10 / n]++;
		}
		CHECK(inrange, "dist %d in range", k);
		if (kinds[k] == DIST_ZIPF)
			CHECK(counts[0] > counts[9] * 3, "zipf skewed: %llu vs %llu", (unsigned long long)counts[0],
			      (unsigned long long)counts[9]);
		if (kinds[k] == DIST_RANDOM)
			CHECK(counts[0] > 18000 && counts[0] < 22000, "uniform decile %llu", (unsigned long long)counts[0]);
		if (kinds[k] == DIST_NORMAL)
			CHECK(counts[4] + counts[5] > counts[0] * 10, "normal centred");
	}
	struct distgen d;
	CHECK(distgen_init(&d, DIST_ZIPF, 1.0, 10) < 0, "zipf theta 1 rejected");
	CHECK(distgen_init(&d, DIST_PARETO, 1.5, 10) < 0, "pareto h >= 1 rejected");
}

/* The real offset generator (worker_next_io): every I/O stays inside [offset, offset+size),
 * is aligned to the minimum block size, and the random map covers each block once per pass. */
static void run_gen(const char *rw, const char *bs, const char *size, const char *offset, const char *extra_k,
		    const char *extra_v, int check_cover)
{
	struct options o;
	options_defaults(&o);
	option_set(&o, "filename", "/nonexistent");
	option_set(&o, "rw", rw);
	option_set(&o, bs[0] == 'S' ? "bssplit" : "bs", bs[0] == 'S' ? bs + 1 : bs);
	option_set(&o, "size", size);
	option_set(&o, "offset", offset);
	option_set(&o, "loops", "2");
	if (extra_k)
		option_set(&o, extra_k, extra_v);
	options_finalize(&o);
	struct job j;
	memset(&j, 0, sizeof(j));
	j.o = &o;
	struct worker *w = calloc(1, sizeof(*w));
	w->job = &j;
	rng_seed(&w->rng, 42);
	CHECK(worker_setup_offsets(w) == 0, "setup %s", rw);
	w->measuring = 1; /* no ramp_time: the byte budget counts from the first I/O */
	uint64_t lo = o.offset, hi = o.offset + o.size, minbs = opt_min_bs(&o), bytes = 0, n = 0;
	unsigned char *seen = calloc(w->nblocks + 1, 1);
	int inside = 1, aligned = 1, once = 1;
	struct io_req r;
	while (!worker_next_io(w, &r)) {
		if (r.off < lo || r.off + r.len > hi)
			inside = 0;
		if ((r.off - lo) % minbs)
			aligned = 0;
		if (check_cover && n < w->nblocks) {
			uint64_t b = (r.off - lo) / minbs;
			if (seen[b])
				once = 0;
			seen[b] = 1;
		}
		bytes += r.len;
		n++;
		if (n > 10000000)
			break;
	}
	CHECK(inside, "%s bs=%s size=%s offset=%s: all I/O inside the region", rw, bs, size, offset);
	CHECK(aligned, "%s bs=%s: offsets aligned to %llu", rw, bs, (unsigned long long)minbs);
	CHECK(bytes >= w->budget && bytes < w->budget + opt_max_bs(&o), "%s: issued %llu of budget %llu", rw,
	      (unsigned long long)bytes, (unsigned long long)w->budget);
	if (check_cover)
		CHECK(once, "%s: random map touches each block once per pass", rw);
	free(seen);
	free(w->map);
	free(w);
}

static void test_offsets(void)
{
	const char *rws[] = { "read", "write", "randread", "randwrite", "rw", "randrw" };
	for (int i = 0; i < 6; i++) {
		run_gen(rws[i], "4k", "1m", "0", NULL, NULL, i == 2 || i == 3);
		run_gen(rws[i], "4k", "1000000", "8192", NULL, NULL, 0);
		run_gen(rws[i], "S4k/50:64k/30:16k/20", "3m", "512", NULL, NULL, 0);
	}
	run_gen("randread", "4k", "4m", "4096", "random_distribution", "zipf:1.2", 0);
	run_gen("randread", "4k", "4m", "4096", "random_distribution", "pareto:0.9", 0);
	run_gen("randread", "8k", "4m", "4096", "random_distribution", "normal:20", 0);
	run_gen("randwrite", "4k", "4m", "4096", "norandommap", "1", 0);
}

/* ---- patterns (src/patterns.c) ---- */
#define PAT_MAX 100000
struct patrun {
	uint64_t off[PAT_MAX], len[PAT_MAX];
	int ddir[PAT_MAX];
	size_t n;
	struct options o;
	uint64_t budget;
};

/* Run the generator of a job given as "name=value" pairs (dev: the file's size, 0 = the region's
 * end) and check that every I/O lies inside [offset, offset+size). */
static void pat_run(struct patrun *pr, uint64_t dev, const char *const *kv)
{
	struct options *o = &pr->o;
	options_defaults(o);
	option_set(o, "filename", "/nonexistent");
	for (size_t i = 0; kv[i]; i += 2)
		option_set(o, kv[i], kv[i + 1]);
	options_finalize(o);
	struct job j;
	memset(&j, 0, sizeof(j));
	j.o = o;
	j.tgt.dev_size = dev;
	struct worker *w = calloc(1, sizeof(*w));
	w->job = &j;
	rng_seed(&w->rng, 7);
	CHECK(worker_setup_offsets(w) == 0, "setup %s", kv[1]);
	w->measuring = 1;
	pr->budget = w->budget;
	pr->n = 0;
	int inside = 1;
	struct io_req r;
	while (pr->n < PAT_MAX && !worker_next_io(w, &r)) {
		if (r.off < o->offset || r.off + r.len > o->offset + o->size || r.len == 0)
			inside = 0;
		pr->off[pr->n] = r.off;
		pr->len[pr->n] = r.len;
		pr->ddir[pr->n] = r.ddir;
		pr->n++;
	}
	CHECK(inside, "%s %s: every I/O inside [offset, offset+size)", kv[0], kv[1]);
	CHECK(pr->n < PAT_MAX, "%s %s: the generator ends", kv[0], kv[1]);
	free(w->map);
	free(w->pat);
	free(w);
}

/* the offsets (in units of u, from 0) are exactly want[0..nw) */
static int pat_is(const struct patrun *pr, uint64_t u, const unsigned *want, size_t nw)
{
	if (pr->n != nw)
		return 0;
	for (size_t i = 0; i < nw; i++)
		if (pr->off[i] != want[i] * u)
			return 0;
	return 1;
}

static void test_patterns(void)
{
	static struct patrun pr;
	/* sequences measured with Debian's fio 3.33 (psync, strace) on a 1 MiB file */
	{
		const char *kv[] = { "rw", "read:-8k", "bs", "4k", "size", "64k", NULL };
		const unsigned want[] = { 0, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0 };
		pat_run(&pr, 1 << 20, kv);
		CHECK(pat_is(&pr, 4096, want, 16), "read:-8k: backwards from the end after the first I/O (%zu)", pr.n);
	}
	{
		const char *kv[] = { "rw", "read:-8k", "bs", "4k", "size", "64k", "offset", "16k", NULL };
		const unsigned want[] = { 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 18, 17, 16, 15, 14 };
		pat_run(&pr, 1 << 20, kv);
		CHECK(pat_is(&pr, 4096, want, 16), "read:-8k offset=16k: fio's rewind (%zu)", pr.n);
	}
	{
		const char *kv[] = { "rw", "read:8k", "bs", "4k", "size", "64k", NULL };
		const unsigned want[] = { 0, 3, 6, 9, 12, 15 };
		pat_run(&pr, 1 << 20, kv);
		CHECK(pat_is(&pr, 4096, want, 6), "read:8k: holes, the pass ends at the region's end (%zu)", pr.n);
	}
	{
		const char *kv[] = { "rw", "read:8k", "bs", "4k", "size", "64k", "io_size", "128k", NULL };
		pat_run(&pr, 1 << 20, kv);
		CHECK(pr.n == 32 && pr.off[6] == 0 && pr.off[31] == 3 * 4096, "read:8k io_size=128k: passes (%zu)", pr.n);
	}
	{
		const char *kv[] = { "rw", "write:112k", "bs", "16k", "size", "1m", NULL };
		pat_run(&pr, 1 << 20, kv);
		int ok = pr.n == 64;
		for (size_t i = 0; ok && i < pr.n; i++)
			ok = pr.off[i] == (i % 8) * 131072 && pr.len[i] == 16384;
		CHECK(ok, "write:112k over the whole file wraps to the start (%zu)", pr.n);
	}
	{
		const char *kv[] = { "rw", "write:8k", "bs", "4k", "size", "1m", NULL };
		pat_run(&pr, 1 << 20, kv);
		CHECK(pr.n == 86 && pr.off[85] == 1044480, "write:8k: an I/O ending at the file's end ends the pass (%zu)",
		      pr.n);
	}
	{
		const char *kv[] = { "rw", "read:3k", "bs", "4k", "size", "64k", NULL };
		pat_run(&pr, 1 << 20, kv);
		CHECK(pr.n == 9 && pr.off[8] == 56 * 1024, "read:3k: no I/O straddles the region's end (%zu)", pr.n);
	}
	{
		const char *kv[] = { "rw", "read", "bs", "4k", "size", "64k", "number_ios", "7", "loops", "4", NULL };
		pat_run(&pr, 1 << 20, kv);
		CHECK(pr.n == 28 && pr.off[16] == 0 && pr.off[27] == 11 * 4096, "number_ios=7 loops=4: 28 I/Os (%zu)", pr.n);
	}
	{
		const char *kv[] = { "rw", "randread:4", "rw_sequencer", "identical", "bs", "4k", "size", "64k", NULL };
		pat_run(&pr, 1 << 20, kv);
		int ok = pr.n == 16;
		for (size_t i = 0; ok && i < pr.n; i++)
			ok = pr.off[i] == pr.off[i - i % 4];
		CHECK(ok, "randread:4 identical: each offset 4 times (%zu)", pr.n);
	}
	{
		const char *kv[] = { "rw", "randread:4", "bs", "4k", "size", "1m", "randseed", "3", NULL };
		pat_run(&pr, 1 << 20, kv);
		int ok = pr.n > 4 && pr.n <= 256;
		for (size_t i = 0; ok && i < pr.n; i++)
			ok = i % 4 == 0 || pr.off[i] == pr.off[i - 1] + 4096 || pr.off[i - 1] + 4096 == 1 << 20;
		CHECK(ok, "randread:4: sequential runs of 4 from random starts, random past the file's end (%zu)", pr.n);
	}
	{
		const char *kv[] = { "rw", "randread", "percentage_random", "0", "bs", "4k", "size", "64k", NULL };
		const unsigned want[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };
		pat_run(&pr, 1 << 20, kv);
		CHECK(pat_is(&pr, 4096, want, 16), "percentage_random=0: sequential (%zu)", pr.n);
	}
	{
		const char *kv[] = { "rw", "randread", "random_generator", "lfsr", "norandommap", "1", "bs", "4k",
				     "size", "256k", "offset", "8k", NULL };
		pat_run(&pr, 0, kv);
		static unsigned char seen[64];
		memset(seen, 0, sizeof(seen));
		int once = pr.n == 64;
		for (size_t i = 0; once && i < pr.n; i++)
			once = !seen[(pr.off[i] - 8192) / 4096]++;
		CHECK(once, "lfsr with norandommap: each block once (%zu)", pr.n);
	}
	{
		const char *kv[] = { "rw", "randwrite", "blockalign", "512", "bs", "4k", "size", "256k", NULL };
		pat_run(&pr, 0, kv);
		int al = pr.n == 64, odd = 0;
		for (size_t i = 0; al && i < pr.n; i++) {
			al = pr.off[i] % 512 == 0;
			odd += pr.off[i] % 4096 != 0;
		}
		CHECK(al && odd > 32, "blockalign=512: offsets on 512-byte boundaries (%d of %zu not on 4k)", odd, pr.n);
	}
	{
		const char *kv[] = { "rw", "rw", "bsrange", "4k-16k,1k-2k", "size", "1m", "loops", "3", NULL };
		pat_run(&pr, 0, kv);
		int ok = 1;
		uint64_t bytes = 0;
		for (size_t i = 0; i < pr.n; i++) {
			uint64_t lo = pr.ddir[i] ? 1024 : 4096, hi = pr.ddir[i] ? 2048 : 16384;
			ok &= pr.len[i] >= lo && pr.len[i] <= hi && pr.len[i] % lo == 0;
			bytes += pr.len[i];
		}
		CHECK(ok && bytes >= pr.budget && bytes < pr.budget + 16384, "bsrange R,W: sizes multiples of MIN in range, %llu of %llu bytes",
		      (unsigned long long)bytes, (unsigned long long)pr.budget);
	}
	{
		const char *kv[] = { "rw", "randread", "bsrange", "1k-4k", "bs_unaligned", "1", "size", "1m",
				     "norandommap", "1", NULL };
		pat_run(&pr, 0, kv);
		int ok = pr.n > 0, odd = 0;
		for (size_t i = 0; i < pr.n; i++) {
			ok &= pr.len[i] >= 1024 && pr.len[i] <= 4096;
			odd += pr.len[i] % 1024 != 0;
		}
		CHECK(ok && odd > (int)pr.n / 2, "bs_unaligned: any size in range (%d of %zu)", odd, pr.n);
	}
	const char *const zoned[][2] = {
		{ "zoned:90/10:10/90", "0" }, { "zoned:60/10:40/20", "0" }, { "zoned_abs:50/16k:50/48k", "0" },
		{ "zoned:100/100", "4096" }, { "zoned:50/1:50/1", "0" },
	};
	for (size_t k = 0; k < sizeof(zoned) / sizeof(zoned[0]); k++) {
		const char *kv[] = { "rw", "randrw", "random_distribution", zoned[k][0], "bsrange", "4k-16k",
				     "size", "1m", "offset", zoned[k][1], "loops", "4", NULL };
		pat_run(&pr, 0, kv);
		size_t first = 0, out = 0;
		uint64_t z1 = 0, z2 = 0, base = strtoull(zoned[k][1], NULL, 10);
		if (k == 0) z1 = 104857, z2 = 1 << 20;
		if (k == 1) z1 = 104857, z2 = 314572;
		if (k == 2) z1 = 16384, z2 = 65536;
		if (k == 4) z2 = 20971; /* zones smaller than the I/O: at the zone's start */
		for (size_t i = 0; i < pr.n; i++) {
			uint64_t rel = pr.off[i] - base;
			if (z1 && rel + pr.len[i] <= z1)
				first++;
			if (z2 && rel + pr.len[i] > z2 && !(k == 4 && rel < z2))
				out++;
		}
		if (z1)
			CHECK(first > pr.n * (k == 0 ? 85 : 45) / 100 && first < pr.n * (k == 0 ? 95 : 65) / 100,
			      "%s: %zu of %zu I/Os inside the first zone", zoned[k][0], first, pr.n);
		CHECK(out == 0, "%s: %zu I/Os past the last zone", zoned[k][0], out);
	}
}

/* beneath=DIR: path normalisation and the confined open (openat2 here, the walk in the
 * noopenat2 build, which the black-box tests run) */
static void test_confine(void)
{
	char out[64];
	CHECK(confine_split("a//./b/", out, sizeof(out)) == 0 && !strcmp(out, "a/b"), "a//./b/ -> %s", out);
	CHECK(confine_split("./x", out, sizeof(out)) == 0 && !strcmp(out, "x"), "./x");
	CHECK(confine_split("a/../b", out, sizeof(out)) == -EXDEV, "a/../b refused");
	CHECK(confine_split("..", out, sizeof(out)) == -EXDEV, ".. refused");
	CHECK(confine_split("a/..b", out, sizeof(out)) == 0 && !strcmp(out, "a/..b"), "..b is a name");
	CHECK(confine_split("/etc/passwd", out, sizeof(out)) == -EINVAL, "absolute refused");
	CHECK(confine_split("./", out, sizeof(out)) == -EINVAL, "empty refused");
	CHECK(confine_split("abcdefgh/abcdefgh", out, 10) == -ENAMETOOLONG, "too long");

	char tmpl[] = "/tmp/iowatt-unit-XXXXXX";
	char *dir = mkdtemp(tmpl);
	CHECK(dir != NULL, "mkdtemp");
	if (!dir)
		return;
	char p[256];
	snprintf(p, sizeof(p), "%s/sub", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/sub/f", dir);
	close(open(p, O_WRONLY | O_CREAT, 0600));
	snprintf(p, sizeof(p), "%s/link", dir);
	CHECK(symlink("sub/f", p) == 0, "symlink");
	snprintf(p, sizeof(p), "%s/dlink", dir);
	CHECK(symlink("sub", p) == 0, "symlink");
	int dfd = open(dir, O_PATH | O_DIRECTORY);
	int fd = confined_open(dfd, "sub/f", O_RDONLY, 0);
	CHECK(fd >= 0, "sub/f opens: %d", fd);
	if (fd >= 0)
		close(fd);
	CHECK(confined_open(dfd, "link", O_RDONLY, 0) == -ELOOP, "a link as the file");
	CHECK(confined_open(dfd, "link", O_PATH, 0) == -ELOOP, "a link as the file (O_PATH)");
	CHECK(confined_open(dfd, "dlink/f", O_RDONLY, 0) == -ELOOP, "a link as a directory");
	CHECK(confined_open(dfd, "sub/new", O_WRONLY | O_CREAT | O_EXCL, 0600) >= 0, "create");
	CHECK(confined_open(dfd, "sub/new", O_WRONLY | O_CREAT | O_EXCL, 0600) == -EEXIST, "O_EXCL");
	close(dfd);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0, "cleanup");
}

/* parse_guarded: a parser's exit 2 is a return with the message main would print, the memory
 * the parser held is freed (LeakSanitizer checks at exit), and the next parse starts clean */
static void vdb_run(void *text)
{
	vdb_parse_check(text);
}

static void test_parse_guarded(void)
{
	size_t cap = 64 * 16 + 1024;
	char *text = malloc(cap);
	int n = snprintf(text, cap, "fsd=a,anchor=/x,size=4k");
	for (int k = 0; k < 63; k++)
		n += snprintf(text + n, cap - (size_t)n, ",depth=1");
	text[n++] = ',';
	memset(text + n, 'x', 500);
	n += 500;
	snprintf(text + n, cap - (size_t)n, "\nfwd=w,fsd=a\nrd=r,fwd=w\n");
	struct parse_error e;
	CHECK(parse_guarded(vdb_run, text, &e) == EXIT_USAGE, "code %d", e.code);
	CHECK(strstr(e.msg, "vdbench: line 1: expected keyword=value") == e.msg, "msg '%s'", e.msg);
	char good[] = "fsd=a,anchor=/x,size=4k\nfwd=w,fsd=a\nrd=r,fwd=w,elapsed=5\n";
	CHECK(parse_guarded(vdb_run, good, &e) == 0 && !e.msg[0], "good: %d '%s'", e.code, e.msg);
	char escape[] = "fsd=..,anchor=/x,size=4k\nfwd=w,fsd=a\nrd=r,fwd=w\n";
	CHECK(parse_guarded(vdb_run, escape, &e) == EXIT_USAGE && strstr(e.msg, "plain directory name"), "'%s'",
	      e.msg);
	free(text);
}

/* the published test vectors: RFC 3720 B.4 (CRC-32C), RFC 1321 A.5 (MD5), FIPS 180-4 examples
 * (SHA-256 "abc", the two-block message, one million 'a') */
static void test_vhash(void)
{
	static const struct { const char *in; const char *md5; } m[] = {
		{ "", "d41d8cd98f00b204e9800998ecf8427e" },
		{ "a", "0cc175b9c0f1b6a831c399e269772661" },
		{ "abc", "900150983cd24fb0d6963f7d28e17f72" },
		{ "message digest", "f96b697d7cb7938d525a2f31aaf161d0" },
		{ "abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b" },
		{ "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", "d174ab98d277d9f5a5611c2c9f419d9f" },
		{ "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
		  "57edf4a22be3c955ac49da2e2107b67a" },
	};
	char hex[65];
	unsigned char out[32];
	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		struct md5_ctx c;
		md5_init(&c);
		/* in two pieces: the buffering between updates is part of what is tested */
		size_t n = strlen(m[i].in), h = n / 3;
		md5_update(&c, m[i].in, h);
		md5_update(&c, m[i].in + h, n - h);
		md5_final(&c, out);
		for (int k = 0; k < 16; k++)
			snprintf(hex + 2 * k, 3, "%02x", out[k]);
		CHECK(!strcmp(hex, m[i].md5), "md5('%s') = %s", m[i].in, hex);
	}
	static const struct { const char *in; const char *sha; } s[] = {
		{ "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
		{ "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
	};
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
		struct sha256_ctx c;
		sha256_init(&c);
		size_t n = strlen(s[i].in), h = n / 2;
		sha256_update(&c, s[i].in, h);
		sha256_update(&c, s[i].in + h, n - h);
		sha256_final(&c, out);
		for (int k = 0; k < 32; k++)
			snprintf(hex + 2 * k, 3, "%02x", out[k]);
		CHECK(!strcmp(hex, s[i].sha), "sha256('%s') = %s", s[i].in, hex);
	}
	struct sha256_ctx c;
	sha256_init(&c);
	char a[1000];
	memset(a, 'a', sizeof(a));
	for (int i = 0; i < 1000; i++)
		sha256_update(&c, a, sizeof(a));
	sha256_final(&c, out);
	for (int k = 0; k < 32; k++)
		snprintf(hex + 2 * k, 3, "%02x", out[k]);
	CHECK(!strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"), "sha256(1M a) = %s", hex);
	/* CRC-32C: RFC 3720 B.4 and the "123456789" check value; unaligned starts and lengths agree */
	CHECK(crc32c("123456789", 9) == 0xe3069283u, "%08x", crc32c("123456789", 9));
	unsigned char z[48] = { 0 }, f[48], inc[48], dec[48];
	memset(f, 0xff, sizeof(f));
	for (int i = 0; i < 32; i++) {
		inc[i] = (unsigned char)i;
		dec[i] = (unsigned char)(31 - i);
	}
	CHECK(crc32c(z, 32) == 0x8a9136aau, "zeros %08x", crc32c(z, 32));
	CHECK(crc32c(f, 32) == 0x62a8ab43u, "ones %08x", crc32c(f, 32));
	CHECK(crc32c(inc, 32) == 0x46dd794eu, "incrementing %08x", crc32c(inc, 32));
	CHECK(crc32c(dec, 32) == 0x113fdb5cu, "decrementing %08x", crc32c(dec, 32));
	unsigned char big[4099];
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (unsigned char)(i * 131 + 7);
	uint32_t whole = crc32c_update(~0u, big + 1, 4097);
	uint32_t parts = crc32c_update(crc32c_update(~0u, big + 1, 13), big + 14, 4084);
	CHECK(whole == parts, "split %08x %08x", whole, parts);
}

/* vsum.c against published check values (the CRC catalogue's "123456789": CRC-16/ARC bb3d,
 * CRC-7/MMC 75; FIPS 180-4 / 202 examples of "abc" and ""; xxHash's XXH32("abc", 0)) and, for the
 * two CRCs in fio's own parameters, a bit-at-a-time model of the same polynomial */
static void hexn(char *hex, const unsigned char *p, unsigned n)
{
	for (unsigned k = 0; k < n; k++)
		snprintf(hex + 2 * k, 3, "%02x", p[k]);
}

static void test_vsum(void)
{
	const char *nine = "123456789";
	CHECK(crc16_arc(nine, 9) == 0xbb3d, "crc16 %04x", crc16_arc(nine, 9));
	CHECK(crc7_msb(nine, 9) == 0x75, "crc7 %02x", crc7_msb(nine, 9));
	CHECK(crc64_jones(nine, 9) == 0xe9c6d914c4b8d9caull, "crc64 %016llx", (unsigned long long)crc64_jones(nine, 9));
	CHECK(crc32_msb(nine, 9) == 0x89a1897fu, "crc32 %08x", crc32_msb(nine, 9));
	CHECK(xxh32("abc", 3, 0) == 0x32d153ffu && xxh32(nine, 9, 1) == 0xf261918cu, "xxh32 %08x", xxh32("abc", 3, 0));
	unsigned char out[64];
	char hex[129];
	sha1_digest("abc", 3, out);
	hexn(hex, out, 20);
	CHECK(!strcmp(hex, "a9993e364706816aba3e25717850c26c9cd0d89d"), "sha1 %s", hex);
	sha512_digest("abc", 3, out);
	hexn(hex, out, 64);
	CHECK(!strcmp(hex, "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a8"
			   "36ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"), "sha512 %s", hex);
	sha3_digest("abc", 3, out, 28);
	hexn(hex, out, 28);
	CHECK(!strcmp(hex, "e642824c3f8cf24ad09234ee7d3c766fc9a3a5168d0c94ad73b46fdf"), "sha3-224 %s", hex);
	sha3_digest("", 0, out, 64);
	hexn(hex, out, 64);
	CHECK(!strcmp(hex, "a69f73cca23a9ac5c8b567dc185a756e97c982164fe25859e0d1dcc1475c80a615b2123af1f5f94c"
			   "11e3e9402c3ac558f500199d95b6d3e301758586281dcd26"), "sha3-512 %s", hex);
}

static void test_verify_pattern(void)
{
	struct vpattern p;
	char err[128];
	CHECK(verify_pattern_parse("0xdeadbeef", &p, err, sizeof(err)) == 0 && p.len == 4 && p.b[0] == 0xde && p.b[3] == 0xef,
	      "hex in written order");
	CHECK(verify_pattern_parse("0xabc", &p, err, sizeof(err)) == 0 && p.len == 2 && p.b[0] == 0x0a && p.b[1] == 0xbc,
	      "odd hex");
	CHECK(verify_pattern_parse("1234567", &p, err, sizeof(err)) == 0 && p.len == 3 && p.b[0] == 0x87 && p.b[2] == 0x12,
	      "decimal little-endian");
	CHECK(verify_pattern_parse("-12", &p, err, sizeof(err)) == 0 && p.len == 4 && p.b[0] == 0xf4 && p.b[3] == 0xff,
	      "negative: 4 bytes");
	CHECK(verify_pattern_parse("0xff%o\"ab\" 0", &p, err, sizeof(err)) == 0 && p.len == 12 && p.noff == 1 &&
		      p.off_at[0] == 1 && p.b[9] == 'a' && p.b[11] == 0,
	      "mixed");
	const char *bad[] = { "", "0x", "\"ab", "\"\"", "x", "-", "4294967296", "%o%o%o%o%o%o%o%o%o", "%d" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(verify_pattern_parse(bad[i], &p, err, sizeof(err)) == -EINVAL, "'%s' refused", bad[i]);
	char lng[1200] = "0x";
	memset(lng + 2, 'a', 1100);
	lng[1102] = 0;
	CHECK(verify_pattern_parse(lng, &p, err, sizeof(err)) == -EINVAL && strstr(err, "512"), "too long: %s", err);
}

/* a block written by another write at the same place: the header's seed and numberio tell */
static void test_verify_stale(void)
{
	struct options o;
	options_defaults(&o);
	o.verify = VT_CRC32C;
	o.size = 1 << 20;
	struct job j = { .o = &o, .max_bs = 4096 };
	struct worker w = { .job = &j };
	CHECK(verify_job_init(&j) == 0 && verify_worker_init(&w) == 0, "init");
	unsigned char *b = malloc(4096);
	verify_fill_block(&j, 1, b, 4096, 8192, 7, verify_block_seed(&j, 1, 7));
	CHECK(verify_check_block(&w, b, 4096, 8192, 7, 1) == 0, "the write itself passes");
	CHECK(verify_check_block(&w, b, 4096, 8192, 6, 0) == 0, "without numberio it passes");
	CHECK(verify_check_block(&w, b, 4096, 8192, 6, 1) == 1 && !strcmp(w.vw->fails[0].what, "rand_seed"),
	      "another write's block fails");
	CHECK(verify_check_block(&w, b, 4096, 4096, 7, 0) == 1 && !strcmp(w.vw->fails[1].what, "offset"),
	      "another place fails");
	verify_fill_block(&j, 1, b, 4096, 8192, 7 + 65536, verify_block_seed(&j, 1, 7));
	CHECK(verify_check_block(&w, b, 4096, 8192, 7, 1) == 0, "numberio is 16 bits, as fio's");
	b[4000] ^= 1;
	CHECK(verify_check_block(&w, b, 4096, 8192, 7, 1) == 1 && w.vw->fails[2].first_bad == 8192 + 4000 &&
		      w.vw->fails[2].bad_bytes == 1,
	      "the flipped byte is found");
	free(b);
	verify_worker_free(&w);
	verify_job_free(&j);
}

/* ---- fio INI job files (src/jobfile.c) ---- */
struct ini_arg {
	struct jf_doc doc;
	const char *text;
	unsigned flags;
};

static void ini_run(void *p)
{
	struct ini_arg *a = p;
	guard_own(&a->doc, jf_doc_release);
	jf_parse_text(&a->doc, a->text, "t.fio", a->flags);
	guard_disown(&a->doc);
}

/* parse text; 0 or the exit code, the message in e */
static int ini(struct ini_arg *a, const char *text, unsigned flags, struct parse_error *e)
{
	memset(a, 0, sizeof(*a));
	a->text = text;
	a->flags = flags;
	return parse_guarded(ini_run, a, e);
}

static const char *ini_val(const struct jf_doc *d, int sec, const char *name)
{
	const struct jf_sec *s = &d->sec[sec];
	const char *v = "(absent)";
	for (int i = 0; i < s->n; i++)
		if (!strcmp(d->opt[s->first + i].name, name))
			v = d->opt[s->first + i].val ? d->opt[s->first + i].val : "(bare)";
	return v;
}

static void test_ini(void)
{
	struct ini_arg a;
	struct parse_error e;
	/* comments: whole lines (';' '#', after blanks), and from the first ';' or '#' anywhere */
	CHECK(ini(&a, "; c\n  # c\n[global]\r\nbs = 4k ; x\nrw=read#y;z\n\t[ j 1 ]  \ntime_based\n"
		      "filename=/a;b\ndescription=  two  words  \n",
		  0, &e) == 0, "'%s'", e.msg);
	CHECK(a.doc.nsec == 2 && a.doc.sec[0].global && !a.doc.sec[1].global, "nsec %d", a.doc.nsec);
	CHECK(!strcmp(a.doc.sec[1].name, " j 1 "), "name '%s'", a.doc.sec[1].name);
	CHECK(!strcmp(ini_val(&a.doc, 0, "bs"), "4k") && !strcmp(ini_val(&a.doc, 0, "rw"), "read"), "%s %s",
	      ini_val(&a.doc, 0, "bs"), ini_val(&a.doc, 0, "rw"));
	CHECK(!strcmp(ini_val(&a.doc, 1, "time_based"), "(bare)"), "bare");
	CHECK(!strcmp(ini_val(&a.doc, 1, "filename"), "/a"), "%s", ini_val(&a.doc, 1, "filename"));
	CHECK(!strcmp(ini_val(&a.doc, 1, "description"), "two  words"), "'%s'", ini_val(&a.doc, 1, "description"));
	CHECK(a.doc.sec[1].line == 6 && a.doc.opt[a.doc.sec[1].first].line == 7, "lines %d", a.doc.sec[1].line);
	jf_doc_free(&a.doc);
	/* an empty line after a longer one: nothing of the longer one is read again */
	CHECK(ini(&a, "# a comment\n\n[j]\n\nbs=4k\n", 0, &e) == 0 && a.doc.nsec == 1 && a.doc.nopt == 1, "'%s'", e.msg);
	jf_doc_free(&a.doc);
	/* a name starting with "global" is global (fio compares 6 bytes) */
	CHECK(ini(&a, "[globalx]\nbs=8k\n[j]\n", 0, &e) == 0 && a.doc.sec[0].global, "globalx");
	jf_doc_free(&a.doc);
	/* keywords and bc arithmetic, only after a keyword */
	char want[64];
	snprintf(want, sizeof(want), "%ld", 2 * sysconf(_SC_PAGESIZE) + 1);
	CHECK(ini(&a, "[j]\nsize=2*$pagesize+1\nrw=read:-8k\nbs=(1+1)\n", 0, &e) == 0, "'%s'", e.msg);
	CHECK(!strcmp(ini_val(&a.doc, 0, "size"), want), "%s", ini_val(&a.doc, 0, "size"));
	CHECK(!strcmp(ini_val(&a.doc, 0, "rw"), "read:-8k") && !strcmp(ini_val(&a.doc, 0, "bs"), "(1+1)"), "untouched");
	jf_doc_free(&a.doc);
	CHECK(ini(&a, "[j]\nnumjobs=($ncpus-$ncpus)/2-7%4\nx=-2^2\n", 0, &e) == 0, "'%s'", e.msg);
	CHECK(!strcmp(ini_val(&a.doc, 0, "numjobs"), "-3"), "%s", ini_val(&a.doc, 0, "numjobs"));
	jf_doc_free(&a.doc);
	CHECK(ini(&a, "[j]\nsize=$mb_memory/0\n", 0, &e) == EXIT_USAGE && strstr(e.msg, "t.fio:2: size: cannot compute"),
	      "'%s'", e.msg);
	CHECK(ini(&a, "[j]\nsize=$mb_memory*99999999999999999999\n", 0, &e) == EXIT_USAGE, "overflow");
	/* ${VAR}: the environment, empty when unset; refused under --untrusted */
	setenv("IOWATT_UNIT_BS", "16k", 1);
	unsetenv("IOWATT_UNIT_NONE");
	CHECK(ini(&a, "[j]\nbs=${IOWATT_UNIT_BS}\nname=a${IOWATT_UNIT_NONE}b${}c\nx=${open\n", 0, &e) == 0, "'%s'", e.msg);
	CHECK(!strcmp(ini_val(&a.doc, 0, "bs"), "16k") && !strcmp(ini_val(&a.doc, 0, "name"), "abc") &&
	      !strcmp(ini_val(&a.doc, 0, "x"), "${open"), "env");
	jf_doc_free(&a.doc);
	CHECK(ini(&a, "[j]\nbs=${IOWATT_UNIT_BS}\n", JF_UNTRUSTED, &e) == EXIT_USAGE &&
	      strstr(e.msg, "t.fio:2: bs: ${IOWATT_UNIT_BS}: environment variables are refused"), "'%s'", e.msg);
	CHECK(ini(&a, "[j]\nsize=$ncpus*2\n", JF_UNTRUSTED, &e) == 0, "keywords stay under --untrusted: '%s'", e.msg);
	jf_doc_free(&a.doc);
	CHECK(ini(&a, "[j]\ninclude other.fio\n", JF_UNTRUSTED, &e) == EXIT_USAGE &&
	      strstr(e.msg, "t.fio:2: include: refused"), "'%s'", e.msg);
	/* errors name FILE:LINE and the option */
	CHECK(ini(&a, "bs=4k\n[j]\n", 0, &e) == EXIT_USAGE && !strncmp(e.msg, "t.fio:1: bs: outside of a [section]", 35),
	      "'%s'", e.msg);
	CHECK(ini(&a, "[j\n", 0, &e) == EXIT_USAGE && strstr(e.msg, "t.fio:1: jobfile: section header"), "'%s'", e.msg);
	CHECK(ini(&a, "[]\n", 0, &e) == EXIT_USAGE && strstr(e.msg, "empty section name"), "'%s'", e.msg);
	CHECK(ini(&a, "[j]\n=4k\n", 0, &e) == EXIT_USAGE && strstr(e.msg, "t.fio:2: jobfile: '=4k' has no option name"),
	      "'%s'", e.msg);
	CHECK(ini(&a, "; only comments\n", 0, &e) == EXIT_USAGE && strstr(e.msg, "no [section]"), "'%s'", e.msg);
	/* bounds: a line, the number of sections */
	size_t big = JF_MAX_LINE + 16;
	char *t = malloc(big + 16);
	memset(t, 'a', big);
	memcpy(t, "[j]\nx=", 6);
	t[big] = 0;
	CHECK(ini(&a, t, 0, &e) == EXIT_USAGE && strstr(e.msg, "t.fio:2: jobfile: line longer than"), "'%s'", e.msg);
	free(t);
	t = malloc((JF_MAX_SECTIONS + 2) * 8);
	t[0] = 0;
	for (int k = 0; k <= JF_MAX_SECTIONS; k++)
		strcat(t, "[s]\n");
	CHECK(ini(&a, t, 0, &e) == EXIT_USAGE && strstr(e.msg, "more than 512 sections"), "'%s'", e.msg);
	free(t);
}

/* numa_cpu_nodes / numa_mem_policy's node lists (src/numa.c), the same syntax as the kernel's cpulist */
static void test_numa_list(void)
{
	uint64_t m[NUMA_MASK_WORDS];
	memset(m, 0, sizeof(m));
	CHECK(numa_parse_list("0,2-3,63-64", m, NUMA_MAX_NODES) == 0, "numa list");
	CHECK(m[0] == (0xdull | (1ull << 63)) && m[1] == 1, "numa bits %llx %llx", (unsigned long long)m[0],
	      (unsigned long long)m[1]);
	memset(m, 0, sizeof(m));
	CHECK(numa_parse_list("1023", m, NUMA_MAX_NODES) == 0 && m[15] == 1ull << 63, "numa last node");
	CHECK(numa_parse_list("1024", m, NUMA_MAX_NODES) == -2, "numa past the last node");
	CHECK(numa_parse_list("99999999999999999999", m, NUMA_MAX_NODES) == -2, "numa overflow");
	const char *bad[] = { "", ",", "0,", ",0", "a", "1-", "-1", "3-1", "0 1", "0-1-2", "0,,1", NULL };
	for (int i = 0; bad[i]; i++)
		CHECK(numa_parse_list(bad[i], m, NUMA_MAX_NODES) == -1, "numa bad '%s'", bad[i]);
}

/* the per-I/O log lines (src/logs.c's digit-pair formatter) are byte for byte what fio's printf
 * writes, for the edge values and random ones */
static void test_log_lines(void)
{
	static const uint64_t edge[] = { 0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 4096, 65535, 1000000,
					 4294967295ull, 4294967296ull, 9999999999999999999ull, UINT64_MAX };
	const size_t ne = sizeof(edge) / sizeof(edge[0]);
	struct rng r;
	rng_seed(&r, 42);
	for (unsigned i = 0; i < 20000; i++) {
		uint64_t v[4];
		for (int k = 0; k < 4; k++) {
			uint64_t x = rng_next(&r);
			v[k] = i < ne * ne ? edge[(k & 1 ? i / ne : i) % ne] : x >> (x & 63);
		}
		int ddir = (int)(i % 3), off = (int)(i / 3) & 1;
		char want[160], got[LOG_LINE_MAX + 1];
		const char *pw = i & 4 ? "0x4003" : i & 8 ? "1" : "0";
		if (off)
			snprintf(want, sizeof(want), "%llu, %llu, %d, %llu, %llu, %s\n", (unsigned long long)v[0],
				 (unsigned long long)v[1], ddir, (unsigned long long)v[2], (unsigned long long)v[3], pw);
		else
			snprintf(want, sizeof(want), "%llu, %llu, %d, %llu, %s\n", (unsigned long long)v[0],
				 (unsigned long long)v[1], ddir, (unsigned long long)v[2], pw);
		const char *prio = i & 4 ? "0x4003" : i & 8 ? "1" : "0"; /* log_prio's and the realtime flag's forms */
		size_t n = logs_fmt_line(got, v[0], v[1], ddir, v[2], off, v[3], prio);
		got[n] = 0;
		CHECK(n <= LOG_LINE_MAX && !strcmp(want, got), "want %s got %s", want, got);
	}
}

int main(void)
{
	test_numa_list();
	test_log_lines();
	test_vhash();
	test_vsum();
	test_verify_pattern();
	test_verify_stale();
	test_hist();
	test_parse();
	test_json();
	test_json_fuzz();
	test_perm();
	test_dist();
	test_offsets();
	test_patterns();
	test_confine();
	test_parse_guarded();
	test_ini();
	printf("%d checks, %d failures\n", checks, failures);
	return failures ? 1 : 0;
}
