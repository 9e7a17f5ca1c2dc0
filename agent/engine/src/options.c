/* Options: fio names, from argv (--name=value) or a JSON job file. Every bad value exits 2
 * with one line naming the option. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "iowatt.h"

static const char *const known[] = {
	"name", "filename", "rw", "readwrite", "rwmixread", "rwmixwrite", "bs", "blocksize", "bssplit",
	"size", "offset", "direct", "buffered", "numjobs", "runtime", "time_based", "ramp_time",
	"ioengine", "iodepth", "stonewall", "wait_for_previous", "loops", "fsync", "fdatasync",
	"end_fsync", "sync", "invalidate", "fadvise_hint", "random_distribution", "norandommap",
	"randseed", "zero_buffers", "buffer_compress_percentage", "refill_buffers", "rate_iops",
	"destructive", "thread", "group_reporting", "randrepeat", "clocksource", "iodepth_batch_submit",
	"iodepth_batch", "force_async", "kb_base", "io_size", "io_limit", "beneath", "create_new", "unlink",
	"keep_existing", "readonly", NULL,
};

int option_is_known(const char *name)
{
	for (int i = 0; known[i]; i++)
		if (!strcmp(known[i], name))
			return 1;
	return 0;
}

void options_defaults(struct options *o)
{
	memset(o, 0, sizeof(*o));
	strcpy(o->name, "job");
	o->rw = RW_READ;
	o->rwmixread = 50;
	o->bs[0] = o->bs[1] = 4096;
	o->numjobs = 1;
	strcpy(o->ioengine, "psync");
	o->iodepth = 1;
	o->loops = 1;
	o->invalidate = 1;
	o->fadvise = FADV_AUTO;
	o->dist = DIST_RANDOM;
	o->refill_buffers = 1;
	o->iodepth_batch = 1;
	o->kb_base = 1024;
}

const char *rw_name(enum rw_mode rw)
{
	static const char *const n[] = { "read", "write", "randread", "randwrite", "rw", "randrw" };
	return n[rw];
}

static uint64_t need_size(const struct options *o, const char *name, const char *val)
{
	uint64_t v;
	if (parse_size(val, &v, o->kb_base))
		die_usage(name, "invalid size '%s'", val);
	return v;
}

static uint64_t need_u64(const char *name, const char *val)
{
	uint64_t v;
	if (parse_u64(val, &v))
		die_usage(name, "invalid number '%s'", val);
	return v;
}

static int need_bool(const char *name, const char *val)
{
	int v;
	if (parse_bool(val, &v))
		die_usage(name, "invalid boolean '%s' (use 0 or 1)", val);
	return v;
}

static uint64_t need_time(const char *name, const char *val)
{
	uint64_t v;
	if (parse_time_ns(val, &v))
		die_usage(name, "invalid time '%s'", val);
	return v;
}

/* "4k/10:64k/50:32k" (an entry without a percentage shares the rest), optionally
 * "readlist,writelist". */
static void parse_bssplit(struct options *o, const char *val)
{
	char buf[1024];
	if (strlen(val) >= sizeof(buf))
		die_usage("bssplit", "value too long");
	strcpy(buf, val);
	char *comma = strchr(buf, ',');
	char *lists[2] = { buf, comma ? comma + 1 : buf };
	if (comma)
		*comma = 0;
	for (int d = 0; d < 2; d++) {
		char tmp[1024];
		strcpy(tmp, lists[d]);
		int n = 0, nopct = 0;
		unsigned sum = 0;
		char *save = NULL;
		for (char *tok = strtok_r(tmp, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
			if (n >= MAX_BSSPLIT)
				die_usage("bssplit", "more than %d entries", MAX_BSSPLIT);
			char *slash = strchr(tok, '/');
			if (slash)
				*slash = 0;
			uint64_t bs;
			if (parse_size(tok, &bs, o->kb_base) || bs == 0)
				die_usage("bssplit", "invalid size '%s'", tok);
			unsigned pct = 0;
			if (slash) {
				uint64_t p;
				if (parse_u64(slash + 1, &p) || p > 100)
					die_usage("bssplit", "invalid percentage '%s'", slash + 1);
				pct = (unsigned)p;
			} else {
				nopct++;
			}
			o->bssplit[d][n].bs = bs;
			o->bssplit[d][n].pct = slash ? pct : UINT32_MAX;
			sum += pct;
			n++;
		}
		if (n == 0)
			die_usage("bssplit", "empty list '%s'", val);
		if (sum > 100 || (!nopct && sum != 100))
			die_usage("bssplit", "percentages must add up to 100 in '%s'", val);
		unsigned rest = 100 - sum;
		for (int i = 0, k = 0; i < n; i++)
			if (o->bssplit[d][i].pct == UINT32_MAX) {
				o->bssplit[d][i].pct = rest / (unsigned)nopct + ((unsigned)k < rest % (unsigned)nopct);
				k++;
			}
		o->nbssplit[d] = n;
	}
}

static void remember(struct options *o, const char *name, const char *val)
{
	for (int i = 0; i < o->ngiven; i++)
		if (!strcmp(o->given_name[i], name)) {
			str_copy(o->given_val[i], sizeof(o->given_val[i]), val);
			o->given_own[i] = (unsigned char)o->own_section;
			return;
		}
	if (o->ngiven >= MAX_GIVEN)
		die_usage(name, "too many options");
	str_copy(o->given_name[o->ngiven], sizeof(o->given_name[0]), name);
	str_copy(o->given_val[o->ngiven], sizeof(o->given_val[0]), val);
	o->given_own[o->ngiven] = (unsigned char)o->own_section;
	o->ngiven++;
}

void option_set(struct options *o, const char *name, const char *val)
{
	if (!option_is_known(name))
		die_usage(name, "unknown option");
	if (!val)
		die_usage(name, "missing value");
	if (strcmp(name, "name"))
		remember(o, name, val);
	if (!strcmp(name, "name")) {
		if (!*val || strlen(val) >= sizeof(o->name))
			die_usage(name, "invalid job name '%s'", val);
		strcpy(o->name, val);
	} else if (!strcmp(name, "filename")) {
		if (!*val || strlen(val) >= sizeof(o->filename))
			die_usage(name, "invalid path '%s'", val);
		strcpy(o->filename, val);
	} else if (!strcmp(name, "rw") || !strcmp(name, "readwrite")) {
		static const struct { const char *s; enum rw_mode m; } t[] = {
			{ "read", RW_READ }, { "write", RW_WRITE }, { "randread", RW_RANDREAD },
			{ "randwrite", RW_RANDWRITE }, { "rw", RW_RW }, { "readwrite", RW_RW },
			{ "randrw", RW_RANDRW },
		};
		for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
			if (!strcmp(t[i].s, val)) {
				o->rw = t[i].m;
				return;
			}
		die_usage(name, "unknown mode '%s' (read, write, randread, randwrite, rw, randrw)", val);
	} else if (!strcmp(name, "rwmixread") || !strcmp(name, "rwmixwrite")) {
		uint64_t v = need_u64(name, val);
		if (v > 100)
			die_usage(name, "must be 0..100, got '%s'", val);
		o->rwmixread = name[5] == 'r' ? (unsigned)v : 100 - (unsigned)v;
	} else if (!strcmp(name, "bs") || !strcmp(name, "blocksize")) {
		/* "4k" or "read,write" */
		char buf[128];
		str_copy(buf, sizeof(buf), val);
		char *comma = strchr(buf, ',');
		if (comma)
			*comma = 0;
		uint64_t r = need_size(o, name, buf), w = comma && comma[1] ? need_size(o, name, comma + 1) : r;
		if (r == 0 || w == 0)
			die_usage(name, "must be greater than 0, got '%s'", val);
		if (r > (1ull << 30) || w > (1ull << 30))
			die_usage(name, "larger than 1 GiB: '%s'", val);
		o->bs[0] = r;
		o->bs[1] = w;
		o->nbssplit[0] = o->nbssplit[1] = 0;
	} else if (!strcmp(name, "bssplit")) {
		parse_bssplit(o, val);
		for (int d = 0; d < 2; d++)
			for (int i = 0; i < o->nbssplit[d]; i++)
				if (o->bssplit[d][i].bs > (1ull << 30))
					die_usage(name, "block size larger than 1 GiB in '%s'", val);
	} else if (!strcmp(name, "size")) {
		o->size = need_size(o, name, val);
		if (o->size == 0)
			die_usage(name, "must be greater than 0");
		o->size_set = 1;
	} else if (!strcmp(name, "offset")) {
		o->offset = need_size(o, name, val);
	} else if (!strcmp(name, "direct")) {
		o->direct = need_bool(name, val);
	} else if (!strcmp(name, "buffered")) {
		o->direct = !need_bool(name, val);
	} else if (!strcmp(name, "numjobs")) {
		uint64_t v = need_u64(name, val);
		if (v < 1 || v > 4096)
			die_usage(name, "must be 1..4096, got '%s'", val);
		o->numjobs = (unsigned)v;
	} else if (!strcmp(name, "runtime")) {
		o->runtime_ns = need_time(name, val);
	} else if (!strcmp(name, "time_based")) {
		o->time_based = need_bool(name, val);
	} else if (!strcmp(name, "ramp_time")) {
		o->ramp_ns = need_time(name, val);
	} else if (!strcmp(name, "ioengine")) {
		if (!engine_find(val))
			die_usage(name, "unknown ioengine '%s' (psync, libaio, io_uring, null)", val);
		str_copy(o->ioengine, sizeof(o->ioengine), val);
	} else if (!strcmp(name, "iodepth")) {
		uint64_t v = need_u64(name, val);
		if (v < 1 || v > 4096)
			die_usage(name, "must be 1..4096, got '%s'", val);
		o->iodepth = (unsigned)v;
	} else if (!strcmp(name, "stonewall") || !strcmp(name, "wait_for_previous")) {
		o->stonewall = need_bool(name, val);
	} else if (!strcmp(name, "loops")) {
		o->loops = need_u64(name, val);
		if (o->loops == 0)
			die_usage(name, "must be at least 1");
	} else if (!strcmp(name, "fsync")) {
		o->fsync_n = need_u64(name, val);
	} else if (!strcmp(name, "fdatasync")) {
		o->fdatasync_n = need_u64(name, val);
	} else if (!strcmp(name, "end_fsync")) {
		o->end_fsync = need_bool(name, val);
	} else if (!strcmp(name, "sync")) {
		if (!strcmp(val, "dsync") || !strcmp(val, "1") || !strcmp(val, "sync"))
			o->sync_dsync = 1;
		else if (!strcmp(val, "none") || !strcmp(val, "0"))
			o->sync_dsync = 0;
		else
			die_usage(name, "unknown mode '%s' (none, dsync, sync)", val);
	} else if (!strcmp(name, "invalidate")) {
		o->invalidate = need_bool(name, val);
	} else if (!strcmp(name, "fadvise_hint")) {
		if (!strcmp(val, "0"))
			o->fadvise = FADV_NONE;
		else if (!strcmp(val, "1"))
			o->fadvise = FADV_AUTO;
		else if (!strcmp(val, "sequential"))
			o->fadvise = FADV_SEQ;
		else if (!strcmp(val, "random"))
			o->fadvise = FADV_RAND;
		else if (!strcmp(val, "normal"))
			o->fadvise = FADV_NORMAL;
		else
			die_usage(name, "unknown hint '%s' (0, 1, sequential, random, normal)", val);
	} else if (!strcmp(name, "random_distribution")) {
		const char *colon = strchr(val, ':');
		size_t kl = colon ? (size_t)(colon - val) : strlen(val);
		double p = 0;
		if (colon) {
			char *end;
			p = strtod(colon + 1, &end);
			if (end == colon + 1 || *end)
				die_usage(name, "invalid parameter in '%s'", val);
		}
		if (kl == 6 && !strncmp(val, "random", 6) && !colon) {
			o->dist = DIST_RANDOM;
		} else if (kl == 4 && !strncmp(val, "zipf", 4) && colon) {
			if (!(p > 0) || p == 1.0)
				die_usage(name, "zipf theta must be > 0 and != 1 in '%s'", val);
			o->dist = DIST_ZIPF;
		} else if (kl == 6 && !strncmp(val, "pareto", 6) && colon) {
			if (!(p > 0 && p < 1))
				die_usage(name, "pareto h must be in (0, 1) in '%s'", val);
			o->dist = DIST_PARETO;
		} else if (kl == 6 && !strncmp(val, "normal", 6)) {
			if (!colon)
				p = 10; /* stddev 10 % of the region */
			if (!(p > 0 && p <= 100))
				die_usage(name, "normal deviation must be in (0, 100] in '%s'", val);
			o->dist = DIST_NORMAL;
		} else {
			die_usage(name, "unknown distribution '%s' (random, zipf:T, pareto:H, normal[:DEV])", val);
		}
		o->dist_param = p;
	} else if (!strcmp(name, "norandommap")) {
		o->norandommap = need_bool(name, val);
	} else if (!strcmp(name, "randseed")) {
		o->randseed = need_u64(name, val);
		o->randseed_set = 1;
	} else if (!strcmp(name, "zero_buffers")) {
		o->zero_buffers = need_bool(name, val);
	} else if (!strcmp(name, "buffer_compress_percentage")) {
		uint64_t v = need_u64(name, val);
		if (v > 100)
			die_usage(name, "must be 0..100, got '%s'", val);
		o->compress_pct = (unsigned)v;
	} else if (!strcmp(name, "rate_iops")) {
		o->rate_iops = need_u64(name, val);
	} else if (!strcmp(name, "destructive")) {
		o->destructive = need_bool(name, val);
	} else if (!strcmp(name, "beneath")) {
		if (!*val || strlen(val) >= sizeof(o->beneath))
			die_usage(name, "invalid directory '%s'", val);
		strcpy(o->beneath, val);
	} else if (!strcmp(name, "create_new")) {
		o->create_new = need_bool(name, val);
	} else if (!strcmp(name, "unlink")) {
		o->unlink_file = need_bool(name, val);
	} else if (!strcmp(name, "keep_existing")) {
		o->keep_existing = need_bool(name, val);
	} else if (!strcmp(name, "readonly")) {
		o->readonly = need_bool(name, val);
	} else if (!strcmp(name, "iodepth_batch_submit") || !strcmp(name, "iodepth_batch")) {
		uint64_t v = need_u64(name, val);
		if (v > 65536)
			die_usage(name, "must be 0..65536, got '%s'", val);
		o->iodepth_batch = (unsigned)v; /* 0 = the whole free depth at once */
	} else if (!strcmp(name, "io_size") || !strcmp(name, "io_limit")) {
		o->io_size = need_size(o, name, val);
		if (!o->io_size)
			die_usage(name, "must be > 0");
	} else if (!strcmp(name, "kb_base")) {
		if (strcmp(val, "1024") && strcmp(val, "1000"))
			die_usage(name, "must be 1024 or 1000, got '%s'", val);
		o->kb_base = (unsigned)atoi(val);
	} else if (!strcmp(name, "force_async")) {
		uint64_t v = need_u64(name, val);
		if (v > 65536)
			die_usage(name, "must be 0..65536, got '%s'", val);
		o->force_async = (unsigned)v;
	} else if (!strcmp(name, "clocksource")) {
		if (!strcmp(val, "cpu"))
			o->clock_gettime = 0;
		else if (!strcmp(val, "clock_gettime") || !strcmp(val, "gettimeofday"))
			o->clock_gettime = 1; /* always CLOCK_MONOTONIC, never the wall clock */
		else
			die_usage(name, "must be cpu or clock_gettime, got '%s'", val);
	} else if (!strcmp(name, "refill_buffers")) {
		o->refill_buffers = need_bool(name, val);
	} else if (!strcmp(name, "thread") || !strcmp(name, "group_reporting") || !strcmp(name, "randrepeat")) {
		/* accepted for fio compatibility: threads and grouped reporting are always on */
		(void)need_bool(name, val);
	}
}

uint64_t opt_min_bs(const struct options *o)
{
	uint64_t m = UINT64_MAX;
	for (int d = 0; d < 2; d++) {
		if (o->nbssplit[d]) {
			for (int i = 0; i < o->nbssplit[d]; i++)
				if (o->bssplit[d][i].pct && o->bssplit[d][i].bs < m)
					m = o->bssplit[d][i].bs;
		} else if (o->bs[d] < m) {
			m = o->bs[d];
		}
	}
	return m;
}

uint64_t opt_max_bs(const struct options *o)
{
	uint64_t m = 0;
	for (int d = 0; d < 2; d++) {
		if (o->nbssplit[d]) {
			for (int i = 0; i < o->nbssplit[d]; i++)
				if (o->bssplit[d][i].bs > m)
					m = o->bssplit[d][i].bs;
		} else if (o->bs[d] > m) {
			m = o->bs[d];
		}
	}
	return m;
}

/* Checks that need no target. */
void options_finalize(struct options *o)
{
	if (!o->filename[0])
		die_usage("filename", "required (a file or a block device)");
	if (o->size_set && opt_max_bs(o) > o->size)
		die_usage("bs", "block size %llu is larger than size %llu", (unsigned long long)opt_max_bs(o),
			  (unsigned long long)o->size);
	if (o->io_size && opt_max_bs(o) > o->io_size)
		die_usage("io_size", "block size %llu is larger than io_size %llu", (unsigned long long)opt_max_bs(o),
			  (unsigned long long)o->io_size);
	if (o->readonly && rw_writes(o->rw))
		die_usage("readonly", "job '%s' writes (rw=%s): refused before any I/O", o->name, rw_name(o->rw));
	if (o->time_based && o->runtime_ns == 0)
		die_usage("time_based", "needs runtime > 0");
	/* every in-flight I/O has its own buffer: refuse what cannot fit in memory */
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	unsigned depth = engine_find(o->ioengine)->sync ? 1 : o->iodepth;
	double need = (double)((opt_max_bs(o) + 4095) & ~4095ull) * (double)depth * (double)o->numjobs;
	if (pages > 0 && psz > 0 && need > 0.5 * (double)pages * (double)psz)
		die_usage("iodepth", "bs x iodepth x numjobs needs %.0f MiB of buffers, more than half of the RAM",
			  need / 1048576.0);
	if (!o->randseed_set)
		o->randseed = 0x10da5eedull; /* fixed default like fio's randrepeat=1 */
	/* as fio: a compression target below 100 % turns refill_buffers on, or neighbouring blocks
	 * with the same content would compress together far better than asked */
	if (o->compress_pct && o->compress_pct < 100)
		o->refill_buffers = 1;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		die_usage("jobfile", "cannot open '%s': %s", path, strerror(errno));
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap);
	size_t r;
	while (buf && (r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += r;
		if (n + 1 >= cap) {
			if (cap > (64u << 20))
				die_usage("jobfile", "'%s' is larger than 64 MiB", path);
			cap *= 2;
			buf = realloc(buf, cap);
		}
	}
	fclose(f);
	if (!buf)
		die_code(EXIT_FAIL, "out of memory");
	buf[n] = 0;
	if (strlen(buf) != n)
		die_usage("jobfile", "'%s' contains a NUL byte", path);
	return buf;
}

static void jval_to_str(const char *name, const struct jval *v, char *out, size_t len)
{
	switch (v->t) {
	case J_STR:
	case J_NUM:
		if (strlen(v->s) >= len)
			die_usage(name, "value too long");
		strcpy(out, v->s);
		return;
	case J_BOOL:
		strcpy(out, v->b ? "1" : "0");
		return;
	default:
		die_usage(name, "value must be a string, number or boolean");
	}
}

static void apply_section(struct options *o, const struct jval *sec, const char *what)
{
	if (sec->t != J_OBJ)
		die_usage("jobfile", "%s must be an object", what);
	char val[4096];
	for (size_t i = 0; i < sec->n; i++) {
		if (!option_is_known(sec->keys[i]))
			die_usage(sec->keys[i], "unknown option");
		jval_to_str(sec->keys[i], sec->items[i], val, sizeof(val));
		option_set(o, sec->keys[i], val);
	}
}

struct kvlist {
	int n;
	char *name[256], *val[256];
};

static void apply_kv(struct options *o, const struct kvlist *kv)
{
	for (int i = 0; i < kv->n; i++)
		option_set(o, kv->name[i], kv->val[i]);
}

static struct options *add_job(struct runcfg *cfg)
{
	cfg->jobs = realloc(cfg->jobs, sizeof(*cfg->jobs) * (size_t)(cfg->njobs + 1));
	if (!cfg->jobs)
		die_code(EXIT_FAIL, "out of memory");
	return &cfg->jobs[cfg->njobs++];
}

static const char *const bool_flags[] = { "time_based", "stonewall", "direct", "end_fsync", "norandommap",
					   "zero_buffers", "thread", "group_reporting", "destructive",
					   "wait_for_previous", "refill_buffers", "buffered", "invalidate",
					   "create_new", "unlink", "keep_existing", "readonly", NULL };

void parse_cmdline(int argc, char **argv, struct runcfg *cfg)
{
	struct options global;
	options_defaults(&global);
	struct kvlist cli_global = { 0 };
	const char *jobfile = NULL;
	int in_job = 0;
	struct kvlist *cur_job_kv = NULL;
	static struct kvlist job_kvs[256];
	int njob_kv = 0;

	/* split at '=' in copies: argv stays as given (ps, pgrep -f); the options point into them */
	static char **args;
	args = calloc((size_t)argc, sizeof(*args));
	if (!args)
		die_code(EXIT_FAIL, "out of memory");
	for (int i = 1; i < argc; i++) {
		char *a = args[i] = strdup(argv[i]);
		if (!a)
			die_code(EXIT_FAIL, "out of memory");
		if (strncmp(a, "--", 2)) {
			if (jobfile)
				die_usage("jobfile", "only one job file may be given ('%s')", a);
			jobfile = a;
			continue;
		}
		char *name = a + 2, *eq = strchr(name, '=');
		char *val = NULL;
		if (eq) {
			*eq = 0;
			val = eq + 1;
		}
		if (!strcmp(name, "help")) {
			printf("usage: iowatt-engine [--output-format=json|json+] [--progress=jsonl] "
			       "[--opt=value ...] [--name=JOB --opt=value ...] [jobfile.json]\n"
			       "see agent/engine/README.md for every option\n");
			exit(0);
		}
		if (!strcmp(name, "version")) {
			printf("iowatt-engine-%s\n", IOWATT_VERSION);
			exit(0);
		}
		if (!strcmp(name, "output-format")) {
			if (!val || (strcmp(val, "json") && strcmp(val, "json+")))
				die_usage("output-format", "must be json or json+, got '%s'", val ? val : "");
			cfg->jsonplus = !strcmp(val, "json+");
			continue;
		}
		if (!strcmp(name, "progress")) {
			if (!val || (strcmp(val, "jsonl") && strcmp(val, "none")))
				die_usage("progress", "must be jsonl or none, got '%s'", val ? val : "");
			cfg->progress = !strcmp(val, "jsonl");
			continue;
		}
		if (!option_is_known(name))
			die_usage(name, "unknown option");
		if (!val) {
			int isbool = 0;
			for (int k = 0; bool_flags[k]; k++)
				if (!strcmp(bool_flags[k], name))
					isbool = 1;
			if (!isbool)
				die_usage(name, "missing value (use --%s=VALUE)", name);
			val = "1";
		}
		if (!strcmp(name, "name")) {
			if (njob_kv >= 256)
				die_usage("name", "too many jobs");
			cur_job_kv = &job_kvs[njob_kv++];
			in_job = 1;
		}
		struct kvlist *kv = in_job ? cur_job_kv : &cli_global;
		if (kv->n >= 256)
			die_usage(name, "too many options");
		kv->name[kv->n] = name;
		kv->val[kv->n] = val;
		kv->n++;
	}

	if (jobfile) {
		if (njob_kv)
			die_usage("name", "--name cannot be combined with a job file");
		char *text = slurp(jobfile);
		char err[256];
		struct jval *root = json_parse(text, err, sizeof(err));
		free(text);
		if (!root)
			die_usage("jobfile", "'%s' is not valid JSON: %s", jobfile, err);
		if (root->t != J_OBJ)
			die_usage("jobfile", "top level must be an object with \"jobs\"");
		for (size_t i = 0; i < root->n; i++)
			if (strcmp(root->keys[i], "global") && strcmp(root->keys[i], "jobs"))
				die_usage("jobfile", "unknown top-level key '%s'", root->keys[i]);
		const struct jval *g = json_get(root, "global"), *jobs = json_get(root, "jobs");
		if (g)
			apply_section(&global, g, "\"global\"");
		if (!jobs || jobs->t != J_ARR || jobs->n == 0)
			die_usage("jobfile", "\"jobs\" must be a non-empty array");
		for (size_t i = 0; i < jobs->n; i++) {
			struct options *o = add_job(cfg);
			*o = global;
			snprintf(o->name, sizeof(o->name), "job%zu", i);
			o->own_section = 1;
			apply_section(o, jobs->items[i], "each job");
			o->own_section = 0;
			apply_kv(o, &cli_global); /* command-line options override the file */
		}
		/* "global options" reflect the file's global section plus overrides */
		apply_kv(&global, &cli_global);
		json_free(root);
	} else {
		apply_kv(&global, &cli_global);
		if (njob_kv == 0) {
			struct options *o = add_job(cfg);
			*o = global;
		}
		for (int k = 0; k < njob_kv; k++) {
			struct options *o = add_job(cfg);
			*o = global;
			o->own_section = 1;
			apply_kv(o, &job_kvs[k]);
			o->own_section = 0;
		}
	}
	for (int i = 0; i < cfg->njobs; i++)
		options_finalize(&cfg->jobs[i]);
	/* keep the global section for the output */
	struct options *gcopy = malloc(sizeof(*gcopy));
	if (!gcopy)
		die_code(EXIT_FAIL, "out of memory");
	*gcopy = global;
	cfg->global = gcopy;
}
