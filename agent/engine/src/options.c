/* Options: fio names, from argv (--name=value) or a JSON job file. Every bad value exits 2
 * with one line naming the option. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "iowatt.h"
#include "verify.h"
#include "multifile.h"
#include "output.h"
#include "jobfile.h"
#include "patterns.h"
#include "dedupe.h"
#include "control.h"

/* ---- the options table ----
 * Each option is defined once, in opts[] below (as fio's options table): its name and alias,
 * its type and field (offset in struct options), its default, its limits, its help line and
 * its key in the JSON echo. That one row drives option_set() (parsing and validation),
 * options_defaults(), --help and options_echo() (iowatt.options in the output). */

#include "optable.h"

#define OFF(f) offsetof(struct options, f)

_Static_assert(sizeof(enum rw_mode) == sizeof(int), "OT_ENUM stores an int");
_Static_assert(sizeof(enum fadv) == sizeof(int), "OT_ENUM stores an int");

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

/* "4k/10:64k/50:32k" (an entry without a percentage, or with 0, shares the rest), optionally
 * "readlist,writelist". An entry left 0 % (4k/0:16k/100) is never drawn but, as in fio, still the
 * list's smallest size: offsets, the random map and verify_interval are in its units. */
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
			}
			if (!pct) /* as fio (options.c split_parse_ddir): "/0" is no percentage, it shares the rest */
				nopct++;
			o->bssplit[d][n].bs = bs;
			o->bssplit[d][n].pct = pct ? pct : UINT32_MAX;
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

static void parse_rwmixwrite(void *base, const struct opt_def *d, const char *name, const char *val)
{
	struct options *o = base;
	(void)d;
	uint64_t v = need_u64(name, val);
	if (v > 100)
		die_usage(name, "must be 0..100, got '%s'", val);
	o->rwmixread = 100 - (unsigned)v;
}

/* "4k" or "read,write" */
static void parse_bs(void *base, const struct opt_def *d, const char *name, const char *val)
{
	struct options *o = base;
	char buf[128];
	opt_value_copy(name, val, buf, sizeof(buf));
	char *comma = strchr(buf, ',');
	if (comma)
		*comma = 0;
	uint64_t r = need_size(o, name, buf), w = comma && comma[1] ? need_size(o, name, comma + 1) : r;
	if (r == 0 || w == 0)
		die_usage(name, "must be greater than 0, got '%s'", val);
	if (r > d->max || w > d->max)
		die_usage(name, "larger than 1 GiB: '%s'", val);
	o->bs[0] = r;
	o->bs[1] = w;
	o->nbssplit[0] = o->nbssplit[1] = 0;
	memset(o->bsrange, 0, sizeof(o->bsrange)); /* the later of bs and bsrange wins */
}

static void echo_bs(struct jw *w, const struct options *o, const struct opt_def *d)
{
	(void)d;
	/* one block size when the job has one (what consumers chart), else null */
	int ddir = rw_reads(o->rw) ? 0 : 1;
	if (o->nbssplit[ddir] || (rw_reads(o->rw) && rw_writes(o->rw) && o->bs[0] != o->bs[1]))
		jw_null(w, "bs_bytes");
	else
		jw_u64(w, "bs_bytes", o->bs[ddir]);
	jw_u64(w, "bs_read_bytes", o->bs[0]);
	jw_u64(w, "bs_write_bytes", o->bs[1]);
}

static void parse_bssplit_opt(void *base, const struct opt_def *d, const char *name, const char *val)
{
	struct options *o = base;
	parse_bssplit(o, val);
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < o->nbssplit[k]; i++)
			if (o->bssplit[k][i].bs > d->max)
				die_usage(name, "block size larger than 1 GiB in '%s'", val);
}

static void echo_bssplit(struct jw *w, const struct options *o, const struct opt_def *d)
{
	jw_arr(w, d->key);
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < o->nbssplit[k]; i++) {
			jw_obj(w, NULL);
			jw_str(w, "ddir", k ? "write" : "read");
			jw_u64(w, "bs_bytes", o->bssplit[k][i].bs);
			jw_u64(w, "percent", o->bssplit[k][i].pct);
			jw_obj_end(w);
		}
	jw_arr_end(w);
}

static void parse_ioengine(void *base, const struct opt_def *d, const char *name, const char *val)
{
	struct options *o = base;
	(void)d;
	if (!engine_find(val))
		die_usage(name, "unknown ioengine '%s' (psync, libaio, io_uring, null)", val);
	str_copy(o->ioengine, sizeof(o->ioengine), val);
}

static void echo_ioengine(struct jw *w, const struct options *o, const struct opt_def *d)
{
	jw_str(w, d->key, o->ioengine);
}

static void parse_distribution(void *base, const struct opt_def *d, const char *name, const char *val)
{
	struct options *o = base;
	(void)d;
	const char *colon = strchr(val, ':');
	size_t kl = colon ? (size_t)(colon - val) : strlen(val);
	double p = 0;
	if ((kl == 5 && !strncmp(val, "zoned", 5)) || (kl == 9 && !strncmp(val, "zoned_abs", 9))) {
		pat_parse_zoned(o, name, val, colon ? colon + 1 : "", kl == 9); /* src/patterns.c */
		return;
	}
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
		die_usage(name, "unknown distribution '%s' (random, zipf:T, pareto:H, normal[:DEV], zoned:A/S%%:..., "
			  "zoned_abs:A/SIZE:...)", val);
	}
	o->dist_param = p;
}

static void echo_distribution(struct jw *w, const struct options *o, const struct opt_def *d)
{
	const char *s = "?";
	for (const struct opt_choice *c = d->choices; c->name; c++)
		if (c->val == (int)o->dist)
			s = c->name;
	jw_str(w, d->key, s);
	if (o->dist == DIST_RANDOM || o->dist == DIST_ZONED || o->dist == DIST_ZONED_ABS)
		jw_null(w, "random_distribution_param");
	else
		jw_dbl(w, "random_distribution_param", o->dist_param);
	pat_echo_zones(w, o);
}

/* "read", or with fio's offset modifier "read:8k", "read:-8k", "randread:8" (src/patterns.c) */
static void parse_rw(void *base, const struct opt_def *d, const char *name, const char *val)
{
	struct options *o = base;
	const char *colon = strchr(val, ':');
	size_t n = colon ? (size_t)(colon - val) : strlen(val);
	for (const struct opt_choice *c = d->choices; c->name; c++)
		if (strlen(c->name) == n && !strncmp(c->name, val, n)) {
			o->rw = (enum rw_mode)c->val;
			pat_rw_modifier(o, name, val, colon ? colon + 1 : NULL);
			return;
		}
	die_usage(name, d->bad, val);
}

static void echo_rw(struct jw *w, const struct options *o, const struct opt_def *d)
{
	jw_str(w, d->key, rw_name(o->rw));
	pat_echo_rw_modifier(w, o);
}

/* fio's description: any text (empty: none), cut to fio's 255 bytes */
static void parse_description(void *base, const struct opt_def *d, const char *name, const char *val)
{
	(void)d, (void)name;
	str_copy(((struct options *)base)->description, sizeof(((struct options *)base)->description), val);
}

static const struct opt_choice rw_choices[] = {
	{ "read", RW_READ }, { "write", RW_WRITE }, { "randread", RW_RANDREAD }, { "randwrite", RW_RANDWRITE },
	{ "rw", RW_RW }, { "readwrite", RW_RW }, { "randrw", RW_RANDRW }, { "trim", RW_TRIM }, { "randtrim", RW_RANDTRIM },
	{ "trimwrite", RW_TRIMWRITE }, { "randtrimwrite", RW_RANDTRIMWRITE }, { NULL, 0 },
};
/* fio's: sync (= 1) opens O_SYNC, dsync O_DSYNC */
static const struct opt_choice sync_choices[] = {
	{ "none", 0 }, { "sync", 1 }, { "dsync", 2 }, { "1", 1 }, { "0", 0 }, { NULL, 0 },
};
static const struct opt_choice fadvise_choices[] = {
	{ "0", FADV_NONE }, { "1", FADV_AUTO }, { "sequential", FADV_SEQ }, { "random", FADV_RAND },
	{ "normal", FADV_NORMAL }, { NULL, 0 },
};
/* clock_gettime is always CLOCK_MONOTONIC, never the wall clock (gettimeofday is fio's name) */
static const struct opt_choice clock_choices[] = {
	{ "cpu", 0 }, { "clock_gettime", 1 }, { "gettimeofday", 1 }, { NULL, 0 },
};
/* random_distribution's kinds (zipf and pareto take :PARAM, normal may) */
static const struct opt_choice dist_choices[] = {
	{ "random", DIST_RANDOM }, { "zipf", DIST_ZIPF }, { "pareto", DIST_PARETO }, { "normal", DIST_NORMAL },
	{ "zoned", DIST_ZONED }, { "zoned_abs", DIST_ZONED_ABS }, { NULL, 0 },
};
static const struct opt_choice rw_seq_choices[] = { { "sequential", 0 }, { "identical", 1 }, { NULL, 0 } };
static const struct opt_choice randgen_choices[] = {
	{ "tausworthe", 0 }, { "lfsr", 1 }, { "tausworthe64", 2 }, { NULL, 0 },
};
/* ---- scheduling and control (fio's meaning; src/sched.c) ---- */
/* startdelay=irange(time): "T" or "LO-HI" (each clone draws from the range) */
static void parse_startdelay(void *base, const struct opt_def *d, const char *name, const char *val)
{
	struct options *o = base;
	(void)d;
	char buf[128];
	opt_value_copy(name, val, buf, sizeof(buf));
	char *dash = opt_range_split(buf);
	o->startdelay_ns = need_time(name, buf);
	o->startdelay_hi_ns = dash ? need_time(name, dash) : 0;
	if (dash && o->startdelay_hi_ns < o->startdelay_ns)
		die_usage(name, "range '%s' ends before it starts", val);
	if (o->startdelay_ns > 86400000000000ull || o->startdelay_hi_ns > 86400000000000ull)
		die_usage(name, "more than a day: '%s'", val);
}

static void echo_startdelay(struct jw *w, const struct options *o, const struct opt_def *d)
{
	jw_u64(w, d->key, o->startdelay_ns);
	if (o->startdelay_hi_ns)
		jw_u64(w, "startdelay_high_ns", o->startdelay_hi_ns);
	else
		jw_null(w, "startdelay_high_ns");
}

/* fio's continue_on_error names and its old numbers 0 and 1 */
static const struct opt_choice coe_choices[] = {
	{ "none", 0 }, { "read", CE_READ }, { "write", CE_WRITE }, { "io", CE_READ | CE_WRITE },
	{ "verify", CE_VERIFY }, { "all", CE_ALL }, { "0", 0 }, { "1", CE_ALL }, { NULL, 0 },
};

/* exitall's reach (fio's exit_what: TERMINATE_GROUP, _STONEWALL, _ALL) */
static const struct opt_choice exit_what_choices[] = { { "group", 1 }, { "stonewall", 2 }, { "all", 3 }, { NULL, 0 } };

/* pacing family (pace.c) */
static const struct opt_choice rate_process_choices[] = { { "linear", 0 }, { "poisson", 1 }, { NULL, 0 } };
static const struct opt_choice think_type_choices[] = { { "complete", 0 }, { "issue", 1 }, { NULL, 0 } };
static const struct opt_choice submit_mode_choices[] = { { "inline", 0 }, { "offload", 1 }, { NULL, 0 } };
#define NS 1000000000ull
static const struct opt_choice kb_base_choices[] = { { "1024", 1024 }, { "1000", 1000 }, { NULL, 0 } };

/* verify family (src/verify.c): fio's type names and header numbers; pattern without a header is
 * what verify=pattern means (verify_pattern alone adds the header: VT_PATTERN, set in finalize) */
static const struct opt_choice verify_choices[] = {
	{ "0", VT_NONE }, { "md5", VT_MD5 }, { "crc32c", VT_CRC32C }, { "crc32c-intel", VT_CRC32C },
	{ "sha256", VT_SHA256 }, { "meta", VT_META }, { "pattern", VT_PATTERN_NOHDR }, { "null", VT_NULL },
	{ "crc64", VT_CRC64 }, { "crc32", VT_CRC32 }, { "crc16", VT_CRC16 }, { "crc7", VT_CRC7 }, { "sha1", VT_SHA1 },
	{ "sha512", VT_SHA512 }, { "sha3-224", VT_SHA3_224 }, { "sha3-256", VT_SHA3_256 }, { "sha3-384", VT_SHA3_384 },
	{ "sha3-512", VT_SHA3_512 }, { "xxhash", VT_XXHASH },
	{ NULL, 0 },
};

static void echo_verify(struct jw *w, const struct options *o, const struct opt_def *d)
{
	jw_str(w, d->key, verify_type_name(o->verify));
}

static void parse_verify_pattern(void *base, const struct opt_def *d, const char *name, const char *val)
{
	(void)d;
	verify_parse_pattern(base, name, val);
}

static void echo_verify_pattern(struct jw *w, const struct options *o, const struct opt_def *d)
{
	jw_str_or_null(w, d->key, o->verify_pattern_text);
}

/* Table order is the echo's key order (iowatt.options, a stable interface) and --help's. */
static const struct opt_def opts[] = {
	{ .name = "name", .type = OT_STR, .off = OFF(name), .len = sizeof(((struct options *)0)->name),
	  .bad = "invalid job name '%s'", .def = "job", .key = "name", .flags = OPT_F_UNRECORDED,
	  .help = "job name; starts a new job on the command line" },
	{ .name = "description", .type = OT_FUNC, .parse = parse_description,
	  .help = "text describing the job (fio's JSON \"desc\"; cut to 255 bytes)" },
	{ .name = "filename", .type = OT_STR, .off = OFF(filename), .len = PATH_MAX, .bad = "invalid path '%s'",
	  .key = "filename", .help = "file or block device (required)" },
	{ .name = "rw", .alias = "readwrite", .type = OT_FUNC, .parse = parse_rw, .echo = echo_rw, .choices = rw_choices,
	  .bad = "unknown mode '%s' (read, write, randread, randwrite, rw, randrw, trim, randtrim, trimwrite, randtrimwrite)",
	  .def = "read", .key = "rw",
	  .help = "I/O pattern, with fio's offset modifier MODE:N (src/patterns.c)" },
	{ .name = "rwmixread", .type = OT_UINT, .off = OFF(rwmixread), .max = 100, .def = "50", .key = "rwmixread",
	  .help = "percent of mixed I/O that reads" },
	{ .name = "rwmixwrite", .type = OT_FUNC, .parse = parse_rwmixwrite, .help = "percent of mixed I/O that writes" },
	{ .name = "bs", .alias = "blocksize", .type = OT_FUNC, .parse = parse_bs, .echo = echo_bs, .max = MAX_BS, .def = "4096",
	  .key = "bs_bytes", .help = "block size, or READ,WRITE (at most 1 GiB)" },
	{ .name = "bssplit", .type = OT_FUNC, .parse = parse_bssplit_opt, .echo = echo_bssplit, .max = MAX_BS, .key = "bssplit",
	  .help = "block size mix: BS/PCT:BS/PCT[,WRITE LIST]" },
	{ .name = "size", .type = OT_SIZE, .off = OFF(size), .min = 1, .set_off = OFF(size_set), .key = "size_bytes",
	  .help = "bytes of the target to use (default: all of it)" },
	{ .name = "offset", .type = OT_SIZE, .off = OFF(offset), .key = "offset_bytes", .help = "start offset in the target" },
	{ .name = "offset_increment", .type = OT_FUNC, .parse = ctl_parse_offset_increment,
	  .echo = ctl_echo_offset_increment, .key = "offset_increment",
	  .help = "numjobs: clone k's region starts at offset + k x this (a size, or N% of the file: src/control.c)" },
	{ .name = "direct", .type = OT_BOOL, .off = OFF(direct), .key = "direct", .help = "O_DIRECT" },
	{ .name = "buffered", .type = OT_BOOL, .off = OFF(direct), .flags = OPT_F_INVERT, .help = "the opposite of direct" },
	{ .name = "numjobs", .type = OT_UINT, .off = OFF(numjobs), .min = 1, .max = 4096, .def = "1", .key = "numjobs",
	  .help = "clones of the job (threads)" },
	{ .name = "runtime", .alias = "timeout", .type = OT_TIME, .off = OFF(runtime_ns), .key = "runtime_ns",
	  .help = "measured time limit (plain number = seconds)" },
	{ .name = "time_based", .type = OT_BOOL, .off = OFF(time_based), .key = "time_based",
	  .help = "run for runtime, looping over the region" },
	{ .name = "ramp_time", .type = OT_TIME, .off = OFF(ramp_ns), .key = "ramp_time_ns", .help = "unmeasured warm-up time" },
	{ .name = "ioengine", .type = OT_FUNC, .parse = parse_ioengine, .echo = echo_ioengine, .def = "psync",
	  .key = "ioengine", .help = "psync (sync, pvsync), libaio, io_uring or null" },
	{ .name = "iodepth", .type = OT_UINT, .off = OFF(iodepth), .min = 1, .max = 4096, .def = "1", .key = "iodepth",
	  .help = "I/Os in flight per thread (async engines)" },
	{ .name = "stonewall", .alias = "wait_for_previous", .type = OT_BOOL, .off = OFF(stonewall), .key = "stonewall",
	  .help = "wait for the jobs before this one" },
	{ .name = "loops", .type = OT_U64, .off = OFF(loops), .min = 1, .def = "1", .key = "loops",
	  .help = "passes over the region" },
	{ .name = "fsync", .type = OT_U64, .off = OFF(fsync_n), .key = "fsync", .help = "fsync every N writes" },
	{ .name = "fdatasync", .type = OT_U64, .off = OFF(fdatasync_n), .key = "fdatasync", .help = "fdatasync every N writes" },
	{ .name = "end_fsync", .type = OT_BOOL, .off = OFF(end_fsync), .key = "end_fsync", .help = "fsync when the job ends" },
	{ .name = "fsync_on_close", .type = OT_BOOL, .off = OFF(fsync_on_close),
	  .help = "fsync a written file when it is closed (and at the job's end, as end_fsync)" },
	{ .name = "create_fsync", .type = OT_BOOL, .off = OFF(create_fsync), .def = "1",
	  .help = "fsync a file after its layout wrote data" },
	{ .name = "overwrite", .type = OT_BOOL, .off = OFF(overwrite),
	  .help = "a write job lays out the data of the file's missing part first (as a read job)" },
	{ .name = "pre_read", .type = OT_BOOL, .off = OFF(pre_read),
	  .help = "read the region into the page cache before the job starts (invalidate off)" },
	{ .name = "sync", .type = OT_ENUM, .off = OFF(sync_mode), .choices = sync_choices,
	  .bad = "unknown mode '%s' (none, sync, dsync, 0, 1)", .key = "sync",
	  .help = "synchronous writes: none, sync (O_SYNC) or dsync (O_DSYNC)" },
	{ .name = "invalidate", .type = OT_BOOL, .off = OFF(invalidate), .def = "1", .key = "invalidate",
	  .help = "drop the target's page cache before the job" },
	{ .name = "fadvise_hint", .type = OT_ENUM, .off = OFF(fadvise), .choices = fadvise_choices,
	  .bad = "unknown hint '%s' (0, 1, sequential, random, normal)", .def = "1", .key = "fadvise_hint",
	  .help = "posix_fadvise: 0, 1 (from rw), sequential, random, normal" },
	{ .name = "random_distribution", .type = OT_FUNC, .parse = parse_distribution, .echo = echo_distribution,
	  .choices = dist_choices, .def = "random", .key = "random_distribution",
	  .help = "random, zipf:T, pareto:H, normal[:DEV], zoned:A/S%:... or zoned_abs:A/SIZE:..." },
	{ .name = "norandommap", .type = OT_BOOL, .off = OFF(norandommap), .key = "norandommap",
	  .help = "random offsets may repeat within a pass" },
	{ .name = "randseed", .type = OT_U64, .off = OFF(randseed), .set_off = OFF(randseed_set), .key = "randseed",
	  .help = "seed of the offset generators (echoed: the seed used)" },
	{ .name = "randrepeat", .type = OT_BOOL, .off = OFF(randrepeat), .def = "1", .key = "randrepeat",
	  .help = "1: a fixed seed (runs repeat); 0: a new seed per run, unless randseed is given" },
	{ .name = "zero_buffers", .type = OT_BOOL, .off = OFF(zero_buffers), .key = "zero_buffers",
	  .help = "write zeroes" },
	{ .name = "refill_buffers", .type = OT_BOOL, .off = OFF(refill_buffers), .def = "1", .key = "refill_buffers",
	  .help = "fresh content for every write" },
	{ .name = "scramble_buffers", .type = OT_BOOL, .off = OFF(scramble_buffers), .def = "1",
	  .help = "with refill_buffers=0: a fresh stamp in every 512-byte sector of a write (0: the buffer as it is)" },
	{ .name = "clocksource", .type = OT_ENUM, .off = OFF(clock_gettime), .choices = clock_choices,
	  .bad = "must be cpu or clock_gettime, got '%s'", .key = "clocksource",
	  .help = "cpu (TSC when the kernel trusts it) or clock_gettime" },
	{ .name = "iodepth_batch_submit", .alias = "iodepth_batch", .type = OT_UINT, .off = OFF(iodepth_batch),
	  .max = 65536, .def = "1", .key = "iodepth_batch_submit",
	  .help = "submit once this many are prepared (0 = the whole free depth)" },
	{ .name = "iodepth_batch_complete_min", .alias = "iodepth_batch_complete", .type = OT_UINT, .off = OFF(reap_min),
	  .min = 1, .max = 65536, .def = "1", .key = "iodepth_batch_complete_min",
	  .help = "a full queue waits for at least this many completions (0, check before queuing, is not implemented)" },
	{ .name = "iodepth_batch_complete_max", .type = OT_UINT, .off = OFF(reap_max), .max = 65536,
	  .key = "iodepth_batch_complete_max",
	  .help = "completions taken per wait, at most (default and below the minimum: the minimum, as fio)" },
	{ .name = "force_async", .type = OT_UINT, .off = OFF(force_async), .max = 65536, .key = "force_async",
	  .help = "io_uring: every Nth SQE with IOSQE_ASYNC (0 = never)" },
	{ .name = "io_size", .alias = "io_limit", .type = OT_SIZE, .off = OFF(io_size), .min = 1, .key = "io_size_bytes",
	  .flags = OPT_F_NULL_ZERO, .help = "bytes per pass instead of size" },
	{ .name = "buffer_compress_percentage", .type = OT_UINT, .off = OFF(compress_pct), .max = 100,
	  .key = "buffer_compress_percentage", .help = "how compressible written data is" },
	/* ---- pacing, QoS, steady state, priorities (pace.c, steady.c; README "Pacing") ---- */
	{ .name = "rate_iops", .type = OT_FUNC, .off = OFF(pace.rate_iops), .parse = pace_parse_rate, .echo = pace_echo_rate,
	  .max = 100000000000ull, .key = "rate_iops", .help = "open load: at most this many I/Os per second, R[,W] (0 = no cap)" },
	{ .name = "rate", .type = OT_FUNC, .off = OFF(pace.rate), .parse = pace_parse_rate, .echo = pace_echo_rate,
	  .max = 1ull << 50, .key = "rate_bytes_per_s", .help = "open load: at most this many bytes per second, R[,W]" },
	{ .name = "rate_min", .alias = "ratemin", .type = OT_FUNC, .off = OFF(pace.rate_min), .parse = pace_parse_rate, .echo = pace_echo_rate,
	  .max = 1ull << 50, .key = "rate_min_bytes_per_s",
	  .help = "fail (EIO) when a rate_cycle after a 2 s settle falls below this many bytes/s, R[,W]" },
	{ .name = "rate_iops_min", .type = OT_FUNC, .off = OFF(pace.rate_iops_min), .parse = pace_parse_rate,
	  .echo = pace_echo_rate, .max = 100000000000ull, .key = "rate_iops_min",
	  .help = "fail (EIO) when a rate_cycle after a 2 s settle falls below this many I/Os per second, R[,W]" },
	{ .name = "rate_process", .type = OT_ENUM, .off = OFF(pace.poisson), .choices = rate_process_choices,
	  .bad = "must be linear or poisson, got '%s'", .def = "linear", .key = "rate_process",
	  .help = "rated I/O at fixed gaps, or as a Poisson process of the same rate" },
	{ .name = "rate_cycle", .alias = "ratecycle", .type = OT_UINT, .off = OFF(pace.rate_cycle_ms), .min = 1,
	  .max = 3600000, .def = "1000", .key = "rate_cycle_ms", .help = "rate_min's averaging window in ms" },
	{ .name = "thinktime", .type = OT_FUNC, .off = OFF(pace.think_ns), .parse = pace_parse_usec, .echo = pace_echo_u64, .max = 3600 * NS,
	  .key = "thinktime_ns", .help = "stall after thinktime_blocks I/Os (plain number = microseconds)" },
	{ .name = "thinktime_spin", .type = OT_FUNC, .off = OFF(pace.think_spin_ns), .parse = pace_parse_usec, .echo = pace_echo_u64,
	  .max = 3600 * NS, .key = "thinktime_spin_ns", .help = "spend this much of thinktime busy on the CPU (microseconds)" },
	{ .name = "thinktime_blocks", .type = OT_UINT, .off = OFF(pace.think_blocks), .min = 1, .max = 1u << 30,
	  .set_off = OFF(pace.think_blocks_set), .def = "1", .key = "thinktime_blocks", .help = "I/Os between stalls" },
	{ .name = "thinktime_blocks_type", .type = OT_ENUM, .off = OFF(pace.think_issue), .choices = think_type_choices,
	  .bad = "must be complete or issue, got '%s'", .def = "complete", .key = "thinktime_blocks_type",
	  .help = "count thinktime_blocks at completion or at issue" },
	{ .name = "thinktime_iotime", .type = OT_FUNC, .off = OFF(pace.think_iotime_ns), .parse = pace_parse_sec, .echo = pace_echo_u64,
	  .max = 86400 * NS, .key = "thinktime_iotime_ns", .help = "also stall after this much I/O time (plain number = seconds)" },
	{ .name = "io_submit_mode", .type = OT_ENUM, .off = OFF(pace.offload), .choices = submit_mode_choices,
	  .bad = "must be inline or offload, got '%s'",
	  .def = "inline", .key = "io_submit_mode",
	  .help = "inline: each job thread submits and reaps its own I/O; offload: a pool of iodepth threads does (src/offload.c)" },
	{ .name = "flow", .type = OT_UINT, .off = OFF(pace.flow), .max = 1000, .key = "flow",
	  .help = "weight in the flow_id group: jobs run in the ratio of their weights (0 = no flow control)" },
	{ .name = "flow_id", .type = OT_UINT, .off = OFF(pace.flow_id), .key = "flow_id", .help = "flow group of the job" },
	{ .name = "flow_sleep", .type = OT_U64, .off = OFF(pace.flow_sleep_us), .max = 3600000000ull, .key = "flow_sleep_us",
	  .help = "microseconds to sleep when held back by the flow (0 = retry at once)" },
	{ .name = "latency_target", .type = OT_FUNC, .off = OFF(pace.lat_target_ns), .parse = pace_parse_usec, .echo = pace_echo_u64,
	  .max = 3600 * NS, .key = "latency_target_ns",
	  .help = "find the highest queue depth whose latency meets this (plain number = microseconds)" },
	{ .name = "latency_window", .type = OT_FUNC, .off = OFF(pace.lat_window_ns), .parse = pace_parse_usec, .echo = pace_echo_u64,
	  .max = 3600 * NS, .key = "latency_window_ns", .help = "time each queue depth is tried (microseconds)" },
	{ .name = "latency_percentile", .type = OT_FUNC, .off = OFF(pace.lat_pct), .parse = pace_parse_pct,
	  .echo = pace_echo_pct, .def = "100", .key = "latency_percentile",
	  .help = "percent of I/Os that must meet latency_target" },
	{ .name = "max_latency", .type = OT_FUNC, .off = OFF(pace.max_lat_ns), .parse = pace_parse_max_latency,
	  .echo = pace_echo_max_latency, .max = 3600 * NS, .key = "max_latency_ns",
	  .help = "fail the job (ETIMEDOUT) when an I/O takes longer, R[,W] (microseconds)" },
	{ .name = "steadystate", .alias = "ss", .type = OT_FUNC, .parse = pace_parse_ss, .echo = pace_echo_ss,
	  .def = "iops_slope:0.01%", .key = "steadystate", .help = "KIND:LIMIT[%] with KIND iops, iops_slope, bw, bw_slope" },
	{ .name = "steadystate_duration", .alias = "ss_dur", .type = OT_FUNC, .off = OFF(pace.ss_dur_ns),
	  .parse = pace_parse_sec, .echo = pace_echo_u64, .max = PACE_MAX_SS_SECONDS * NS, .key = "steadystate_duration_ns",
	  .help = "window of one-second samples judged for steady state (0 = off; plain number = seconds)" },
	{ .name = "steadystate_ramp_time", .alias = "ss_ramp", .type = OT_FUNC, .off = OFF(pace.ss_ramp_ns),
	  .parse = pace_parse_sec, .echo = pace_echo_u64, .max = 86400 * NS, .key = "steadystate_ramp_time_ns",
	  .help = "run this long before the first steady-state sample (seconds)" },
	{ .name = "prio", .type = OT_UINT, .off = OFF(pace.prio), .max = 7, .set_off = OFF(pace.prio_set), .key = "prio",
	  .help = "the job's I/O priority 0 (highest)..7 (ioprio_set; class best-effort unless prioclass)" },
	{ .name = "prioclass", .type = OT_UINT, .off = OFF(pace.prioclass), .max = 3, .set_off = OFF(pace.prioclass_set),
	  .key = "prioclass", .help = "the job's I/O priority class: 1 realtime, 2 best-effort, 3 idle (0 none)" },
	{ .name = "nice", .type = OT_FUNC, .parse = pace_parse_nice, .echo = pace_echo_nice, .def = "0", .key = "nice",
	  .help = "the job threads' nice value -20..19" },
	{ .name = "gtod_reduce", .type = OT_BOOL, .off = OFF(pace.gtod_reduce), .key = "gtod_reduce",
	  .help = "disable_lat, disable_clat, disable_slat and disable_bw_measurement together" },
	{ .name = "disable_lat", .type = OT_BOOL, .off = OFF(pace.disable_lat), .key = "disable_lat",
	  .help = "report no total latency (lat_ns zero, as fio)" },
	{ .name = "disable_clat", .type = OT_BOOL, .off = OFF(pace.disable_clat), .key = "disable_clat",
	  .help = "report no completion latency (clat_ns and the latency buckets zero, as fio)" },
	{ .name = "disable_slat", .type = OT_BOOL, .off = OFF(pace.disable_slat), .key = "disable_slat",
	  .help = "report no submission latency (slat_ns zero, as fio)" },
	{ .name = "disable_bw_measurement", .alias = "disable_bw", .type = OT_BOOL, .off = OFF(pace.disable_bw),
	  .key = "disable_bw_measurement", .help = "accepted: fio 3.33 still reports its bandwidth samples, and so does the engine" },
	/* per-command priorities: io_uring and libaio (src/cmdprio.c) */
	{ .name = "cmdprio_percentage", .type = OT_FUNC, .parse = cmdprio_parse_rw, .echo = cmdprio_echo, .max = 100,
	  .key = "cmdprio_percentage",
	  .help = "io_uring, libaio: % of the I/Os sent with cmdprio_class/cmdprio's priority, R[,W]" },
	{ .name = "cmdprio_class", .type = OT_FUNC, .parse = cmdprio_parse_rw, .echo = cmdprio_echo, .min = 1, .max = 3,
	  .key = "cmdprio_class",
	  .help = "io_uring, libaio: the class of cmdprio_percentage's (and bssplit's) I/Os: 1 realtime (default), 2, 3, R[,W]" },
	{ .name = "cmdprio", .type = OT_FUNC, .parse = cmdprio_parse_rw, .echo = cmdprio_echo, .max = 7, .key = "cmdprio",
	  .help = "io_uring, libaio: the level 0 (highest)..7 of those I/Os' priority, R[,W]" },
	{ .name = "cmdprio_bssplit", .type = OT_FUNC, .parse = cmdprio_parse_bssplit, .echo = cmdprio_echo_bssplit,
	  .key = "cmdprio_bssplit",
	  .help = "io_uring, libaio: BS/PCT[/CLASS/LEVEL]:...[,WRITES]: % of each block size's I/Os with a priority" },
	{ .name = "destructive", .type = OT_BOOL, .flags = OPT_F_HOST, .off = OFF(destructive), .key = "destructive",
	  .help = "allow writing a block device" },
	{ .name = "beneath", .type = OT_STR, .off = OFF(beneath), .len = PATH_MAX, .bad = "invalid directory '%s'",
	  .key = "beneath", .flags = OPT_F_NULL_ZERO | OPT_F_HOST, .help = "the file must resolve inside this directory" },
	{ .name = "create_new", .type = OT_BOOL, .flags = OPT_F_HOST, .off = OFF(create_new), .key = "create_new",
	  .help = "the file must not exist; this run creates it" },
	{ .name = "unlink", .type = OT_BOOL, .flags = OPT_F_HOST, .off = OFF(unlink_file), .key = "unlink",
	  .help = "remove, at the end, a file this run created" },
	{ .name = "keep_existing", .type = OT_BOOL, .flags = OPT_F_HOST, .off = OFF(keep_existing), .key = "keep_existing",
	  .help = "never extend, fill or write-by-layout an existing file" },
	{ .name = "readonly", .type = OT_BOOL, .flags = OPT_F_HOST, .off = OFF(readonly), .key = "readonly",
	  .help = "refuse a job that writes" },
	/* verify family (src/verify.c, README § Verification) */
	{ .name = "verify", .type = OT_ENUM, .off = OFF(verify), .choices = verify_choices, .set_off = OFF(verify_set),
	  .bad = "unknown type '%s' (0, md5, crc64, crc32, crc32c, crc32c-intel, crc16, crc7, sha1, sha256, sha512, "
		 "sha3-224, sha3-256, sha3-384, sha3-512, xxhash, meta, pattern, null)",
	  .key = "verify", .echo = echo_verify,
	  .help = "write blocks with fio's verify header and checksum, read them back and check them" },
	{ .name = "verify_pattern", .type = OT_FUNC, .parse = parse_verify_pattern, .echo = echo_verify_pattern,
	  .key = "verify_pattern", .help = "fill (and check) with this pattern: 0xHEX, a number, \"text\", %o (offset); 512 bytes at most" },
	{ .name = "do_verify", .type = OT_BOOL, .off = OFF(do_verify), .def = "1", .key = "do_verify",
	  .help = "read back and check after the writes" },
	{ .name = "verify_interval", .type = OT_SIZE, .off = OFF(verify_interval), .min = 1, .max = UINT32_MAX,
	  .key = "verify_interval_bytes", .flags = OPT_F_NULL_ZERO, .help = "a header every N bytes (default: the block size)" },
	{ .name = "verify_offset", .type = OT_SIZE, .off = OFF(verify_offset), .max = UINT32_MAX,
	  .key = "verify_offset_bytes", .help = "swap the header with the data at this offset of each interval" },
	{ .name = "verify_fatal", .type = OT_BOOL, .off = OFF(verify_fatal), .key = "verify_fatal",
	  .help = "stop the job at the first bad interval" },
	{ .name = "verify_dump", .type = OT_BOOL, .flags = OPT_F_FILES, .off = OFF(verify_dump), .key = "verify_dump",
	  .help = "write bad intervals (received, expected) beside the target, 16 files at most" },
	{ .name = "verify_only", .type = OT_BOOL, .off = OFF(verify_only), .key = "verify_only",
	  .help = "write nothing: read back and check what an earlier run of this job wrote" },
	{ .name = "verify_backlog", .type = OT_U64, .off = OFF(verify_backlog), .max = VERIFY_BACKLOG_MAX,
	  .key = "verify_backlog", .help = "read back after every N writes (0 = after all of them); needs no memory" },
	{ .name = "verify_backlog_batch", .type = OT_U64, .off = OFF(verify_backlog_batch), .max = VERIFY_BACKLOG_MAX,
	  .key = "verify_backlog_batch", .help = "blocks read back per backlog batch (default: verify_backlog)" },
	{ .name = "verify_state_save", .type = OT_BOOL, .off = OFF(verify_state_save),
	  .help = "refused when 1: verify state files are not implemented" },
	{ .name = "verify_state_load", .type = OT_BOOL, .off = OFF(verify_state_load),
	  .help = "refused when 1: verify state files are not implemented" },
	{ .name = "verify_async", .type = OT_UINT, .off = OFF(verify_async), .max = 65536,
	  .help = "fio's N verify threads; here the job's own threads verify (the same reads, checks and counts)" },
	/* multi-file jobs (src/multifile.c) */
	{ .name = "directory", .type = OT_FUNC, .parse = mf_parse_directory, .echo = mf_echo_directory,
	  .key = "directory",
	  .help = "prefix of the file names; a ':' list is spread over the clones" },
	{ .name = "nrfiles", .alias = "nr_files", .type = OT_UINT, .off = OFF(nrfiles), .min = 1, .max = MAX_RUN_FILES,
	  .def = "1", .key = "nrfiles", .help = "files per clone (named by filename_format) when filename is not given" },
	{ .name = "filesize", .type = OT_FUNC, .parse = mf_parse_filesize, .echo = mf_echo_filesize,
	  .key = "filesize_low_bytes", .help = "size of each file, or LOW-HIGH (random per file); default size / files" },
	{ .name = "openfiles", .type = OT_UINT, .off = OFF(openfiles), .min = 1, .max = MAX_RUN_FILES, .key = "openfiles",
	  .flags = OPT_F_NULL_ZERO, .help = "files kept open at once per clone (default: all)" },
	{ .name = "file_service_type", .type = OT_FUNC, .parse = mf_parse_fst, .echo = mf_echo_fst,
	  .choices = mf_fst_choices, .def = "roundrobin", .key = "file_service_type",
	  .help = "next file: roundrobin[:N], random[:N], sequential, zipf[:T], pareto[:H], normal[:DEV]" },
	{ .name = "filename_format", .type = OT_STR, .off = OFF(filename_format), .len = 256,
	  .bad = "invalid format '%s'", .key = "filename_format", .flags = OPT_F_NULL_ZERO,
	  .help = "generated names: $jobname, $jobnum, $filenum, $clientuid (default $jobname.$jobnum.$filenum)" },
	{ .name = "create_on_open", .type = OT_BOOL, .off = OFF(create_on_open), .key = "create_on_open",
	  .help = "no layout: a write job's open creates each file" },
	{ .name = "create_only", .type = OT_BOOL, .off = OFF(create_only), .key = "create_only",
	  .help = "lay the files out, then no I/O" },
	{ .name = "file_append", .type = OT_BOOL, .off = OFF(file_append), .key = "file_append",
	  .help = "I/O after the end of each file (offset = its size)" },
	{ .name = "fallocate", .type = OT_ENUM, .off = OFF(fallocate), .choices = mf_fallocate_choices,
	  .bad = "unknown mode '%s' (none, native, posix, keep, truncate, 0, 1)", .def = "native", .key = "fallocate",
	  .help = "allocation when laying out a file" },
	{ .name = "unlink_each_loop", .type = OT_BOOL, .off = OFF(unlink_each_loop),
	  .help = "0 only (removing the files after each loop is not implemented)" },
	{ .name = "lockfile", .type = OT_FUNC, .parse = mf_parse_refused,
	  .help = "none only (locking is not implemented)" },
	{ .name = "kb_base", .type = OT_ENUM, .off = OFF(kb_base), .choices = kb_base_choices,
	  .bad = "must be 1024 or 1000, got '%s'", .def = "1024", .help = "meaning of size suffixes: 1024 or 1000" },
	/* reporting (s8/reporting; src/logs.c, src/output.c): fio's logs and percentiles */
	{ .name = "write_bw_log", .type = OT_STR, .off = OFF(bw_log), .len = sizeof(((struct options *)0)->bw_log),
	  .bad = "invalid log prefix '%s'", .key = "write_bw_log", .flags = OPT_F_NULL_ZERO,
	  .help = "bandwidth log PREFIX_bw.N.log" },
	{ .name = "write_lat_log", .type = OT_STR, .off = OFF(lat_log), .len = sizeof(((struct options *)0)->lat_log),
	  .bad = "invalid log prefix '%s'", .key = "write_lat_log", .flags = OPT_F_NULL_ZERO,
	  .help = "latency logs PREFIX_slat.N.log, _clat, _lat" },
	{ .name = "write_iops_log", .type = OT_STR, .off = OFF(iops_log), .len = sizeof(((struct options *)0)->iops_log),
	  .bad = "invalid log prefix '%s'", .key = "write_iops_log", .flags = OPT_F_NULL_ZERO,
	  .help = "IOPS log PREFIX_iops.N.log" },
	{ .name = "write_hist_log", .type = OT_STR, .off = OFF(hist_log), .len = sizeof(((struct options *)0)->hist_log),
	  .bad = "invalid log prefix '%s'", .key = "write_hist_log", .flags = OPT_F_NULL_ZERO,
	  .help = "clat histogram log PREFIX_clat_hist.N.log (needs log_hist_msec)" },
	{ .name = "log_avg_msec", .type = OT_UINT, .off = OFF(log_avg_msec), .max = 86400000, .key = "log_avg_msec",
	  .help = "log the mean over windows of this many ms (0 = every I/O)" },
	{ .name = "log_hist_msec", .type = OT_UINT, .off = OFF(log_hist_msec), .max = 86400000, .key = "log_hist_msec",
	  .help = "histogram log interval in ms (0 = no histogram log)" },
	{ .name = "log_hist_coarseness", .type = OT_UINT, .off = OFF(log_hist_coarseness), .max = 6,
	  .key = "log_hist_coarseness", .help = "histogram log: 2^N bins added together" },
	{ .name = "log_max_value", .type = OT_BOOL, .off = OFF(log_max_value), .key = "log_max_value",
	  .help = "log_avg_msec windows log their largest value" },
	{ .name = "log_offset", .type = OT_BOOL, .off = OFF(log_offset), .key = "log_offset",
	  .help = "logs carry each I/O's offset" },
	{ .name = "per_job_logs", .type = OT_BOOL, .off = OFF(per_job_logs), .def = "1", .key = "per_job_logs",
	  .help = "one log file per clone (.N); 0 = one shared file" },
	{ .name = "log_unix_epoch", .type = OT_BOOL, .off = OFF(log_unix_epoch), .key = "log_unix_epoch",
	  .help = "log times in Unix ms" },
	{ .name = "log_alternate_epoch", .type = OT_BOOL, .off = OFF(log_alternate_epoch), .key = "log_alternate_epoch",
	  .help = "log times in ms of log_alternate_epoch_clock_id's clock" },
	{ .name = "log_alternate_epoch_clock_id", .type = OT_UINT, .off = OFF(log_alternate_epoch_clock_id), .max = 11,
	  .key = "log_alternate_epoch_clock_id", .help = "clock_gettime clock id of log_alternate_epoch" },
	{ .name = "log_entries", .type = OT_UINT, .off = OFF(log_entries), .min = 1, .max = 16777216,
	  .help = "per-I/O logs: completions kept per clone before their lines are written (default and most: "
		  "64 MiB of records per job)" },
	{ .name = "log_compression", .type = OT_FUNC, .parse = parse_log_refused, .help = "refused unless 0" },
	{ .name = "log_store_compressed", .type = OT_FUNC, .parse = parse_log_refused, .help = "refused unless 0" },
	{ .name = "percentile_list", .type = OT_FUNC, .parse = parse_percentile_list,
	  .echo = echo_percentile_list, .max = 20, .key = "percentile_list",
	  .help = "percentiles reported, P:P:... (0 < P <= 100, at most 20)" },
	{ .name = "clat_percentiles", .type = OT_BOOL, .off = OFF(clat_pct), .def = "1", .key = "clat_percentiles",
	  .help = "completion latency percentiles" },
	{ .name = "lat_percentiles", .type = OT_BOOL, .off = OFF(lat_pct), .set_off = OFF(lat_pct_set),
	  .key = "lat_percentiles", .help = "total latency percentiles (terse and normal print these)" },
	{ .name = "slat_percentiles", .type = OT_BOOL, .off = OFF(slat_pct), .key = "slat_percentiles",
	  .help = "submission latency percentiles (async engines)" },
	/* ---- patterns family (src/patterns.c) ---- */
	{ .name = "rw_sequencer", .type = OT_ENUM, .off = OFF(rw_seq_identical), .choices = rw_seq_choices,
	  .bad = "must be sequential or identical, got '%s'", .def = "sequential", .key = "rw_sequencer",
	  .help = "rw=randX:N: the I/Os between random offsets go on sequentially or repeat the offset" },
	{ .name = "bsrange", .alias = "blocksize_range", .type = OT_FUNC, .parse = pat_parse_bsrange,
	  .echo = pat_echo_bsrange, .max = MAX_BS, .key = "bsrange",
	  .help = "block sizes drawn from MIN-MAX[,MIN-MAX] (multiples of MIN)" },
	{ .name = "bs_unaligned", .alias = "blocksize_unaligned", .type = OT_BOOL, .off = OFF(bs_unaligned),
	  .key = "bs_unaligned", .help = "bsrange: any byte count, not only multiples of MIN" },
	{ .name = "blockalign", .alias = "ba", .type = OT_FUNC, .parse = pat_parse_blockalign,
	  .echo = pat_echo_blockalign, .max = MAX_BS, .key = "blockalign_bytes",
	  .help = "align random offsets to this[,WRITE] (turns the random map off)" },
	{ .name = "random_generator", .type = OT_ENUM, .off = OFF(random_generator), .choices = randgen_choices,
	  .bad = "must be tausworthe, lfsr or tausworthe64, got '%s'", .def = "tausworthe", .key = "random_generator",
	  .help = "lfsr: each block once per pass without a random map" },
	{ .name = "percentage_random", .type = OT_FUNC, .parse = pat_parse_pct_random, .echo = pat_echo_pct_random,
	  .def = "100", .key = "percentage_random", .help = "random jobs: % of offsets drawn at random[,WRITE]" },
	{ .name = "number_ios", .type = OT_U64, .off = OFF(number_ios), .key = "number_ios", .flags = OPT_F_NULL_ZERO,
	  .help = "at most number_ios x loops I/Os per thread (not with time_based)" },
	{ .name = "thread", .type = OT_BOOL, .flags = OPT_F_UNSTORED, .help = "accepted (threads are always used)" },
	{ .name = "write_barrier", .type = OT_UINT, .max = 4294967295u, .flags = OPT_F_UNSTORED,
	  .help = "accepted: fio 3.33 flags every Nth write as a barrier, which none of its file engines reads" },
	{ .name = "threads", .type = OT_UINT, .max = 4294967295u, .flags = OPT_F_UNSTORED,
	  .help = "fio's tiobench-profile option: no effect without profile=tiobench (as in fio 3.33)" },
	/* scheduling and control (fio's meaning; src/sched.c) */
	{ .name = "group_reporting", .type = OT_BOOL, .off = OFF(group_reporting), .key = "group_reporting",
	  .help = "one entry per reporting group (fio's sums and per-thread averages)" },
	{ .name = "new_group", .type = OT_BOOL, .off = OFF(new_group), .key = "new_group",
	  .help = "start a new reporting group (without waiting, unlike stonewall)" },
	{ .name = "wait_for", .type = OT_STR, .off = OFF(wait_for), .len = sizeof(((struct options *)0)->wait_for),
	  .bad = "invalid job name '%s'", .key = "wait_for", .flags = OPT_F_NULL_ZERO,
	  .help = "start when every job of this name (defined before this one) has ended" },
	{ .name = "exitall", .type = OT_BOOL, .off = OFF(exitall), .key = "exitall",
	  .help = "when this job ends, stop every job of its reporting group" },
	{ .name = "exitall_on_error", .type = OT_BOOL, .off = OFF(exitall_on_error), .key = "exitall_on_error",
	  .help = "when this job ends in error, stop the run" },
	{ .name = "startdelay", .type = OT_FUNC, .parse = parse_startdelay, .echo = echo_startdelay,
	  .key = "startdelay_ns", .help = "delay the job's start: TIME or LO-HI (each clone draws; at most a day)" },
	{ .name = "continue_on_error", .type = OT_ENUM, .off = OFF(continue_on_error), .choices = coe_choices,
	  .bad = "unknown value '%s' (none, read, write, io, verify, all, 0, 1)", .def = "none",
	  .key = "continue_on_error", .help = "go on after EIO/EILSEQ of these kinds, counting them (total_err)" },
	/* ---- buffers, NUMA, log priorities (s10 submit-dedupe: src/dedupe.c, src/numa.c, src/logs.c) ---- */
	{ .name = "dedupe_percentage", .type = OT_UINT, .off = OFF(dedupe_pct), .max = 100, .key = "dedupe_percentage",
	  .help = "percent of write buffers that repeat an earlier (or the working set's) buffer" },
	{ .name = "dedupe_mode", .type = OT_ENUM, .off = OFF(dedupe_mode), .choices = dedupe_mode_choices,
	  .bad = "must be repeat or working_set, got '%s'", .def = "repeat", .key = "dedupe_mode",
	  .help = "repeat: duplicates repeat the last unique buffer; working_set: one of the first unique ones" },
	{ .name = "dedupe_working_set_percentage", .type = OT_UINT, .off = OFF(dedupe_ws_pct), .max = 100, .def = "5",
	  .key = "dedupe_working_set_percentage", .help = "working_set: percent of size the duplicates are drawn from" },
	{ .name = "dedupe_global", .type = OT_BOOL, .off = OFF(dedupe_global), .key = "dedupe_global",
	  .help = "working sets spread over every thread of the run (jobs duplicate each other's blocks)" },
	{ .name = "numa_cpu_nodes", .type = OT_FUNC, .parse = numa_parse_cpu_nodes, .echo = numa_echo_cpu_nodes,
	  .key = "numa_cpu_nodes", .help = "run the job's threads on these NUMA nodes' CPUs: N,A-B,... or all" },
	{ .name = "numa_mem_policy", .type = OT_FUNC, .parse = numa_parse_mem_policy, .echo = numa_echo_mem_policy,
	  .key = "numa_mem_policy", .help = "the job threads' memory policy: default, local, prefer:N, bind:LIST, interleave:LIST" },
	{ .name = "log_prio", .type = OT_BOOL, .off = OFF(log_prio), .key = "log_prio",
	  .help = "logs: each I/O's priority value (0x%04x, class << 13 | level) instead of 1 for realtime" },
	/* ---- control options of issue 24's job files (s10 verify-logs; src/control.c) ---- */
	{ .name = "ignore_error", .type = OT_FUNC, .parse = ctl_parse_ignore_error, .echo = ctl_echo_ignore_error,
	  .key = "ignore_error",
	  .help = "errors continued over per type: READ_LIST,WRITE_LIST,VERIFY_LIST, each ERR:ERR (EIO, ENOSPC, ... or numbers)" },
	{ .name = "exit_what", .type = OT_ENUM, .off = OFF(exit_what), .choices = exit_what_choices,
	  .bad = "unknown value '%s' (group, stonewall, all)", .def = "group", .key = "exit_what",
	  .help = "what exitall stops when this job ends: its group, every running job, or all jobs" },
	{ .name = "allow_file_create", .type = OT_BOOL, .off = OFF(allow_file_create), .def = "1",
	  .key = "allow_file_create", .help = "0: a file that does not exist is refused instead of created" },
	/* fills the target's file system: the host's disk space, never a server's to ask (ADR 0030 "path") */
	{ .name = "fill_device", .alias = "fill_fs", .type = OT_BOOL, .flags = OPT_F_FILES, .off = OFF(fill_device),
	  .key = "fill_device",
	  .help = "write a file until its file system is full (ENOSPC ends the job without an error)" },
	{ .name = "offset_align", .type = OT_SIZE, .off = OFF(offset_align), .max = 1ull << 40,
	  .key = "offset_align_bytes", .flags = OPT_F_NULL_ZERO,
	  .help = "a percentage offset_increment is aligned up to this (default: the smallest block size)" },
	/* s11 engine: error_dump, create_serialize (src/control.c) */
	{ .name = "error_dump", .type = OT_BOOL, .off = OFF(error_dump), .def = "1", .key = "error_dump",
	  .help = "print every I/O error on stderr as it happens, the non-fatal ones too (0: only the fatal one)" },
	{ .name = "create_serialize", .type = OT_BOOL, .off = OFF(create_serialize), .def = "1", .key = "create_serialize",
	  .help = "lay the jobs' files out one after another before any job starts (fio's default; 0 is refused)" },
};
#define NOPTS (sizeof(opts) / sizeof(opts[0]))

static const struct opt_def *opt_lookup(const struct opt_def *tbl, size_t n, const char *name);

static const struct opt_def *opt_find(const char *name)
{
	return opt_lookup(opts, NOPTS, name);
}

int option_is_known(const char *name)
{
	return opt_find(name) != NULL;
}

const char *option_bare_value(const char *name)
{
	const struct opt_def *d = opt_find(name);
	return d && (d->type == OT_BOOL || (d->flags & OPT_F_BARE)) ? "1" : NULL;
}

static void check_range(const struct opt_def *d, const char *name, const char *val, uint64_t v)
{
	if (d->max && (v < d->min || v > d->max))
		die_usage(name, "must be %llu..%llu, got '%s'", (unsigned long long)d->min,
			  (unsigned long long)d->max, val);
	if (v < d->min) /* min is 0 or 1 where there is no upper limit */
		die_usage(name, "must be greater than 0");
}

/* a number or a boolean the row refuses: its own message when it has one */
static void refuse(const struct opt_def *d, const char *name, const char *val)
{
	if (d->bad)
		die_usage(name, d->bad, val);
}

void opt_apply(void *base, const struct opt_def *d, const char *name, const char *val)
{
	uint64_t v;
	int b;
	switch (d->type) {
	case OT_STR:
		if (!*val || strlen(val) >= d->len)
			die_usage(name, d->bad, val);
		strcpy(FLD(base, d, char), val);
		break;
	case OT_ARG:
		if (!*val)
			die_usage(name, d->bad, val);
		*FLD(base, d, const char *) = val;
		break;
	case OT_BOOL:
		if (parse_bool(val, &b))
			refuse(d, name, val);
		b = need_bool(name, val);
		if (!(d->flags & OPT_F_UNSTORED))
			*FLD(base, d, int) = d->flags & OPT_F_INVERT ? !b : b;
		break;
	case OT_UINT:
	case OT_U64:
		if (parse_u64(val, &v) || v < d->min || (d->max && v > d->max))
			refuse(d, name, val);
		v = need_u64(name, val);
		check_range(d, name, val, v);
		if (d->flags & OPT_F_UNSTORED)
			break; /* no field (threads, write_barrier): offset 0 is the job's name */
		if (d->type == OT_UINT)
			*FLD(base, d, unsigned) = (unsigned)v;
		else
			*FLD(base, d, uint64_t) = v;
		break;
	case OT_SIZE:
		v = need_size(base, name, val); /* sizes: block options only (kb_base) */
		check_range(d, name, val, v);
		*FLD(base, d, uint64_t) = v;
		break;
	case OT_TIME:
		*FLD(base, d, uint64_t) = need_time(name, val);
		break;
	case OT_ENUM:
		for (const struct opt_choice *c = d->choices; c->name; c++)
			if (!strcmp(c->name, val)) {
				*FLD(base, d, int) = c->val;
				goto given;
			}
		die_usage(name, d->bad, val);
	case OT_FUNC:
		d->parse(base, d, name, val);
		break;
	}
given:
	if (d->set_off)
		*(int *)(void *)((char *)base + d->set_off) = 1;
}

static const struct opt_def *opt_lookup(const struct opt_def *tbl, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(tbl[i].name, name) || (tbl[i].alias && !strcmp(tbl[i].alias, name)))
			return &tbl[i];
	return NULL;
}

void opts_parse_tables(const struct opt_table *t, size_t nt, const char *mode, int argc, char **argv)
{
	for (int k = 1; k < argc; k++) {
		const char *a = argv[k];
		if (strncmp(a, "--", 2))
			die_usage(mode, "unexpected argument '%s' (a job file cannot be combined with --%s)", a, mode);
		const char *eq = strchr(a, '=');
		size_t nl = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
		const char *val = eq ? eq + 1 : NULL;
		char name[64];
		const struct opt_def *d = NULL;
		void *base = NULL;
		if (nl < sizeof(name)) {
			snprintf(name, sizeof(name), "%.*s", (int)nl, a + 2);
			for (size_t i = 0; i < nt && !d; i++)
				if ((d = opt_lookup(t[i].rows, t[i].n, name)))
					base = t[i].base;
		}
		if (!d) {
			char takes[1024];
			size_t used = 0;
			takes[0] = 0;
			for (size_t i = 0; i < nt; i++)
				for (size_t j = 0; j < t[i].n; j++)
					if (!(t[i].rows[j].flags & OPT_F_UNLISTED) && used < sizeof(takes))
						used += (size_t)snprintf(takes + used, sizeof(takes) - used, "%s--%s",
									 used ? ", " : "", t[i].rows[j].name);
			die_usage(mode, "option '%.*s' does not apply to --%s (it takes %s)", (int)nl, a + 2, mode, takes);
		}
		if (!val)
			val = d->type == OT_BOOL || (d->flags & OPT_F_BARE) ? "1" : "";
		opt_apply(base, d, name, val);
	}
}

void opts_parse_argv(void *base, const struct opt_def *tbl, size_t n, const char *mode, int argc, char **argv)
{
	const struct opt_table t = { tbl, n, base };
	opts_parse_tables(&t, 1, mode, argc, argv);
}

void options_defaults(struct options *o)
{
	memset(o, 0, sizeof(*o));
	o->kb_base = 1024; /* the sizes among the defaults below are read with it */
	for (size_t i = 0; i < NOPTS; i++)
		if (opts[i].def)
			opt_apply(o, &opts[i], opts[i].name, opts[i].def);
	o->size_set = o->randseed_set = 0; /* a default is not "given" */
	o->pace.think_blocks_set = 0;
}

const char *rw_name(enum rw_mode rw)
{
	for (const struct opt_choice *c = rw_choices; c->name; c++)
		if (c->val == (int)rw)
			return c->name;
	return "?";
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
	const struct opt_def *d = opt_find(name);
	if (!d)
		die_usage(name, "unknown option");
	if (!val)
		die_usage(name, "missing value");
	if (!(d->flags & OPT_F_UNRECORDED))
		remember(o, name, val);
	opt_apply(o, d, name, val);
}

void opts_echo_rows(struct jw *w, const struct opt_def *tbl, size_t n, const void *base)
{
	for (size_t i = 0; i < n; i++) {
		const struct opt_def *d = &tbl[i];
		if (!d->key)
			continue;
		if (d->echo) {
			d->echo(w, base, d);
			continue;
		}
		switch (d->type) {
		case OT_STR:
			if ((d->flags & OPT_F_NULL_ZERO) && !CFLD(base, d, char)[0])
				jw_null(w, d->key);
			else
				jw_str(w, d->key, CFLD(base, d, char));
			break;
		case OT_BOOL:
			jw_bool(w, d->key, *CFLD(base, d, int));
			break;
		case OT_UINT:
			jw_u64(w, d->key, *CFLD(base, d, unsigned));
			break;
		case OT_U64:
		case OT_SIZE:
		case OT_TIME:
			if ((d->flags & OPT_F_NULL_ZERO) && !*CFLD(base, d, uint64_t))
				jw_null(w, d->key);
			else
				jw_u64(w, d->key, *CFLD(base, d, uint64_t));
			break;
		case OT_ENUM: {
			const char *s = "?";
			for (const struct opt_choice *c = d->choices; c->name; c++)
				if (c->val == *CFLD(base, d, int)) {
					s = c->name;
					break;
				}
			jw_str(w, d->key, s);
			break;
		}
		case OT_ARG: {
			const char *arg = *(const char *const *)(const void *)((const char *)base + d->off);
			if (arg)
				jw_str(w, d->key, arg);
			else
				jw_null(w, d->key);
			break;
		}
		case OT_FUNC:
			break;
		}
	}
}

void opts_echo_given(struct jw *w, const struct opt_def *tbl, size_t n, const void *base)
{
	for (size_t i = 0; i < n; i++) {
		const struct opt_def *d = &tbl[i];
		if (!d->key || !d->set_off || !*(const int *)(const void *)((const char *)base + d->set_off))
			continue;
		char buf[32];
		const char *text = NULL;
		switch (d->type) {
		case OT_BOOL:
			text = *CFLD(base, d, int) ? "1" : "0";
			break;
		case OT_UINT:
			snprintf(buf, sizeof(buf), "%u", *CFLD(base, d, unsigned));
			text = buf;
			break;
		case OT_U64:
		case OT_SIZE:
		case OT_TIME:
			snprintf(buf, sizeof(buf), "%llu", (unsigned long long)*CFLD(base, d, uint64_t));
			text = buf;
			break;
		case OT_STR:
			text = CFLD(base, d, char);
			break;
		case OT_ARG:
			text = *(const char *const *)(const void *)((const char *)base + d->off);
			break;
		case OT_FUNC:
			text = d->text_off ? *(const char *const *)(const void *)((const char *)base + d->text_off) : NULL;
			break;
		case OT_ENUM:
			break;
		}
		if (text)
			jw_str(w, d->name, text);
	}
}

/* The resolved options of a job (iowatt.options): every row with a key, in table order. */
void options_echo(struct jw *w, const struct options *o)
{
	jw_obj(w, "options");
	opts_echo_rows(w, opts, NOPTS, o);
	jw_obj_end(w);
}

void options_help(FILE *f)
{
	static const char *const tn[] = { "STR", "BOOL", "INT", "INT", "SIZE", "TIME", "CHOICE", "VALUE", "PATH" };
	fprintf(f, "usage: iowatt-engine [--output-format=json|json+|terse|normal[,...]] [--minimal] [--terse-version=3|4|5] "
		   "[--output=FILE] [--eta=auto|always|never] [--eta-newline=TIME] [--progress=jsonl|none] "
		   "[--untrusted] [--opt=value ...] [--name=JOB --opt=value ...] [JOBFILE.fio|JOBFILE.json]\n"
		   "       iowatt-engine --parse-only|--showcmd JOBFILE; iowatt-engine --showjob [--opt=value ...]\n"
		   "options (fio's names; a boolean alone means 1):\n");
	for (size_t i = 0; i < NOPTS; i++) {
		const struct opt_def *d = &opts[i];
		char head[64];
		snprintf(head, sizeof(head), "--%s=%s", d->name, tn[d->type]);
		fprintf(f, "  %-30s %s", head, d->help);
		if (d->alias)
			fprintf(f, " (alias: %s)", d->alias);
		if (d->choices) {
			fprintf(f, " [");
			for (const struct opt_choice *c = d->choices; c->name; c++)
				fprintf(f, "%s%s", c == d->choices ? "" : ", ", c->name);
			fprintf(f, "]");
		}
		if (d->def)
			fprintf(f, " (default %s)", d->def);
		fputc('\n', f);
	}
	fprintf(f, "see agent/engine/README.md for what each option does\n");
}

/* --limits' "options": what each row accepts, from the row itself (min/max null: no limit; default
 * null: unset, i.e. zero or the option's own meaning; "names" lists every accepted name of a
 * choice option, "choices" the names the echo writes, one per value). */
void options_limits(struct jw *w)
{
	static const char *const tn[] = { "str", "bool", "uint", "u64", "size", "time", "choice", "value", "arg" };
	jw_obj(w, "options");
	for (size_t i = 0; i < NOPTS; i++) {
		const struct opt_def *d = &opts[i];
		jw_obj(w, d->name);
		jw_str(w, "type", tn[d->type]);
		jw_str_or_null(w, "alias", d->alias);
		jw_str_or_null(w, "default", d->def);
		switch (d->type) {
		case OT_STR:
			jw_u64(w, "max_length", d->len - 1);
			break;
		case OT_UINT:
		case OT_U64:
		case OT_SIZE:
		case OT_FUNC:
			if (d->type != OT_FUNC || d->max) {
				jw_u64(w, "min", d->min);
				if (d->max)
					jw_u64(w, "max", d->max);
				else
					jw_null(w, "max");
			}
			break;
		default:
			break;
		}
		if (d->choices) {
			jw_arr(w, "choices");
			for (const struct opt_choice *c = d->choices; c->name; c++) {
				const struct opt_choice *first = d->choices;
				while (first->val != c->val)
					first++;
				if (first == c)
					jw_str(w, NULL, c->name);
			}
			jw_arr_end(w);
			jw_arr(w, "names");
			for (const struct opt_choice *c = d->choices; c->name; c++)
				jw_str(w, NULL, c->name);
			jw_arr_end(w);
		} else if (d->parse == parse_ioengine) {
			jw_arr(w, "choices"); /* one name per engine: the name its results carry */
			for (size_t k = 0; engine_name_at(k); k++)
				if (!strcmp(engine_find(engine_name_at(k))->name, engine_name_at(k)))
					jw_str(w, NULL, engine_name_at(k));
			jw_arr_end(w);
			jw_arr(w, "names");
			for (size_t k = 0; engine_name_at(k); k++)
				jw_str(w, NULL, engine_name_at(k));
			jw_arr_end(w);
		}
		/* who may send it (ADR 0030): "host" (the agent alone), "path" (names or makes files on the
		 * host: never from a server), "allowed" (a server's job may; the host's rules judge it) */
		jw_str(w, "server", (d->flags & OPT_F_HOST) ? "host"
				    : (d->flags & OPT_F_FILES) || jf_is_path_option(d->name) ? "path" : "allowed");
		jw_str_or_null(w, "help", d->help);
		jw_obj_end(w);
	}
	jw_obj_end(w);
}

/* fio's min_bs[d] of a bssplit list: every entry's size, 0 % ones too (fio 3.33 bssplit_ddir) */
uint64_t opt_bssplit_min(const struct options *o, int d)
{
	uint64_t m = UINT64_MAX;
	for (int i = 0; i < o->nbssplit[d]; i++)
		if (o->bssplit[d][i].bs < m)
			m = o->bssplit[d][i].bs;
	return m;
}

uint64_t opt_min_bs(const struct options *o)
{
	uint64_t m = UINT64_MAX;
	for (int d = 0; d < 2; d++) {
		uint64_t b = o->nbssplit[d] ? opt_bssplit_min(o, d) : o->bs[d];
		if (b < m)
			m = b;
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
		if (o->bsrange[d][1] > m)
			m = o->bsrange[d][1];
	}
	return m;
}

/* Checks that need no target. */
void options_finalize(struct options *o)
{
	mf_finalize(o); /* no filename: fio's generated names (multifile.c) */
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
	/* fio's pre_read clears invalidate (init.c fixup_options): the cache it filled stays */
	if (o->pre_read) {
		if (o->direct)
			die_usage("pre_read", "with direct=1 is refused: fio 3.33 fails the job with EIO (its read of the file "
				  "through the O_DIRECT descriptor is not aligned)");
		o->invalidate = 0;
	}
	if (o->reap_max < o->reap_min) /* as fio: the maximum defaults to (and is at least) the minimum */
		o->reap_max = o->reap_min;
	/* every in-flight I/O has its own buffer: refuse what cannot fit in memory */
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	unsigned depth = (engine_find(o->ioengine)->flags & ENGINE_F_SYNC) && !o->pace.offload ? 1 : o->iodepth;
	/* io_submit_mode=offload: one submission thread per unit of depth and clone (src/offload.c) */
	if (o->pace.offload && !strcmp(engine_find(o->ioengine)->name, "io_uring"))
		die_usage("io_submit_mode", "offload is not possible with io_uring (fio 3.33 refuses it too: "
			  "use a sync engine or libaio)");
	unsigned offload_max = engine_find(o->ioengine)->flags & ENGINE_F_SYNC ? OFFLOAD_MAX_THREADS
									      : OFFLOAD_MAX_ASYNC_THREADS;
	if (o->pace.offload && (uint64_t)o->iodepth * o->numjobs > offload_max)
		die_usage("io_submit_mode", "offload runs iodepth x numjobs = %llu submission threads, more than %u (%s)",
			  (unsigned long long)o->iodepth * o->numjobs, offload_max, o->ioengine);
	double need = (double)((opt_max_bs(o) + 4095) & ~4095ull) * (double)depth * (double)o->numjobs;
	if (pages > 0 && psz > 0 && need > 0.5 * (double)pages * (double)psz)
		die_usage("iodepth", "bs x iodepth x numjobs needs %.0f MiB of buffers, more than half of the RAM",
			  need / 1048576.0);
	pat_finalize(o);
	/* as fio: a given randseed always decides; without one, randrepeat=1 (the default) takes a
	 * fixed seed and randrepeat=0 a new one from the system's generator (echoed as randseed) */
	if (!o->randseed_set) {
		o->randseed = 0x10da5eedull;
		if (!o->randrepeat && getrandom(&o->randseed, sizeof(o->randseed), 0) != sizeof(o->randseed))
			die_code(EXIT_FAIL, "randrepeat: getrandom: %s", strerror(errno));
	}
	/* as fio: a compression target below 100 % turns refill_buffers on, or neighbouring blocks
	 * with the same content would compress together far better than asked */
	if (o->compress_pct && o->compress_pct < 100)
		o->refill_buffers = 1;
	dedupe_finalize(o); /* dedupe_percentage (src/dedupe.c) */
	verify_finalize(o); /* verify family: src/verify.c */
	pace_finalize(o);
	ctl_finalize(o); /* create_serialize (src/control.c) */
	cmdprio_finalize(o); /* cmdprio_* (src/cmdprio.c) */
}

void output_format_arg(const char *val, int allow_normal, int *jsonplus, int *normal)
{
	if (!val || (strcmp(val, "json") && strcmp(val, "json+") && (!allow_normal || strcmp(val, "normal"))))
		die_usage("output-format", "must be json%s, got '%s'", allow_normal ? ", json+ or normal" : " or json+",
			  val ? val : "");
	*jsonplus = !strcmp(val, "json+");
	if (normal)
		*normal = !strcmp(val, "normal");
}

int progress_arg(const char *val)
{
	if (!val || (strcmp(val, "jsonl") && strcmp(val, "none")))
		die_usage("progress", "must be jsonl or none, got '%s'", val ? val : "");
	return !strcmp(val, "jsonl");
}

int mode_requested(int argc, char **argv, const char *mode)
{
	size_t n = strlen(mode);
	for (int k = 1; k < argc; k++)
		if (!strncmp(argv[k], "--", 2) && !strncmp(argv[k] + 2, mode, n) && (argv[k][2 + n] == '=' || !argv[k][2 + n]))
			return 1;
	return 0;
}

static void parse_mode_format(void *base, const struct opt_def *d, const char *name, const char *val)
{
	(void)d, (void)name;
	struct mode_args *a = base;
	output_format_arg(val, 1, &a->jsonplus, &a->normal);
}

static void parse_mode_progress(void *base, const struct opt_def *d, const char *name, const char *val)
{
	(void)d, (void)name;
	((struct mode_args *)base)->progress = progress_arg(val);
}

static const struct opt_choice tsc_choices[] = { { "clock_gettime", 0 }, { "cpu", 1 }, { NULL, 0 } };
#define MA(f) offsetof(struct mode_args, f)
#define MA_BOOL(n, f) { .name = n, .type = OT_BOOL, .off = MA(f), .bad = "must be 0 or 1, got '%s'" }
/* the file modes' common flags: these first, then the mode's own, then the rest */
static const struct opt_def mode_head[] = {
	{ .name = "directory", .type = OT_ARG, .off = MA(dir), .bad = "--directory=DIR needs a directory" },
	{ .name = "beneath", .type = OT_ARG, .off = MA(beneath), .bad = "--beneath=DIR needs a directory" },
	MA_BOOL("keep", keep),
};
static const struct opt_def mode_tail[] = {
	{ .name = "output-format", .type = OT_FUNC, .parse = parse_mode_format },
	{ .name = "progress", .type = OT_FUNC, .parse = parse_mode_progress },
	{ .name = "clocksource", .type = OT_ENUM, .off = MA(allow_tsc), .choices = tsc_choices,
	  .bad = "must be clock_gettime or cpu, got '%s'" },
	MA_BOOL("parse-only", parse_only),
};

void mode_args_parse(struct mode_args *a, int argc, char **argv)
{
	const char *m = a->mode;
	char file_bad[128]; /* no '%' in a mode's name or its file's description */
	snprintf(file_bad, sizeof(file_bad), "--%s=FILE needs %s", m, a->file_what);
	const struct opt_def file_row = { .name = m, .type = OT_ARG, .off = MA(file), .bad = file_bad,
					  .flags = OPT_F_UNLISTED };
	const struct opt_table t[] = {
		{ &file_row, 1, a },
		{ mode_head, sizeof(mode_head) / sizeof(mode_head[0]), a },
		{ a->own, a->nown, a->own_base },
		{ mode_tail, sizeof(mode_tail) / sizeof(mode_tail[0]), a },
	};
	opts_parse_tables(t, sizeof(t) / sizeof(t[0]), m, argc, argv);
	if (!a->file)
		die_usage(m, "--%s=FILE needs %s", m, a->file_what);
}

/* keep the global section for the output */
static void keep_global(struct runcfg *cfg, const struct options *global)
{
	struct options *gcopy = malloc(sizeof(*gcopy));
	if (!gcopy)
		die_code(EXIT_FAIL, "out of memory");
	*gcopy = *global;
	cfg->global = gcopy;
}

/* The block mode's command line: process flags (--output-format, --progress, --parse-only,
 * --showcmd, --showjob, --untrusted), job options (before the first --name global, each --name
 * a job) and at most one job file (INI or JSON: src/jobfile.c) whose jobs the command line's
 * options then override. Everything becomes one document of sections (jf_doc) and the jobs are
 * made from it; --parse-only, --showcmd and --showjob print and exit here. */
void parse_cmdline(int argc, char **argv, struct runcfg *cfg)
{
	struct options global;
	options_defaults(&global);
	const char *jobfile = NULL;
	struct jf_proc proc = { 0 };
	int nargs = 0, named = 0;
	char **args = malloc(sizeof(*args) * (size_t)(argc > 0 ? argc : 1));
	if (!args)
		die_code(EXIT_FAIL, "out of memory");
	guard_own(args, NULL);
	for (int i = 1; i < argc; i++) {
		char *a = argv[i];
		if (strncmp(a, "--", 2)) {
			if (jobfile)
				die_usage("jobfile", "only one job file may be given ('%s')", a);
			jobfile = a;
			continue;
		}
		const char *name = a + 2, *eq = strchr(name, '=');
		size_t nl = eq ? (size_t)(eq - name) : strlen(name);
		const char *val = eq ? eq + 1 : NULL;
#define IS(s) (nl == sizeof(s) - 1 && !strncmp(name, s, nl))
		if (IS("help")) {
			options_help(stdout);
			exit(0);
		}
		if (IS("limits")) {
			engine_limits(stdout);
			exit(0);
		}
		if (IS("version")) {
			printf("iowatt-engine-%s\n", IOWATT_VERSION);
			exit(0);
		}
		char nm[64]; /* the name alone (argv stays as given) */
		snprintf(nm, sizeof(nm), "%.*s", (int)(nl < 63 ? nl : 63), name);
		if (nl < 63 && output_cli_arg(cfg, nm, val)) /* --output-format, --output, --minimal, --eta, ... (output.c) */
			continue;
		if (IS("progress")) {
			cfg->progress = progress_arg(val);
			continue;
		}
		if (IS("parse-only") || IS("showcmd") || IS("showjob") || IS("untrusted")) {
			int *flag = IS("parse-only") ? &proc.parse_only : IS("showcmd") ? &proc.showcmd
						      : IS("showjob") ? &proc.showjob : &proc.untrusted;
			if (val && !IS("untrusted")) { /* --showcmd=FILE as well as --showcmd FILE */
				if (jobfile)
					die_usage("jobfile", "only one job file may be given ('%s')", val);
				jobfile = val;
			} else if (val && strcmp(val, "1")) {
				die_usage("untrusted", "takes no value");
			}
			*flag = 1;
			continue;
		}
#undef IS
		if (nl >= 63 || !option_is_known(nm))
			die_usage(nl >= 63 ? "option" : nm, "unknown option");
		if (!val && !option_bare_value(nm))
			die_usage(nm, "missing value (use --%s=VALUE)", nm);
		named |= !strcmp(nm, "name");
		args[nargs++] = a;
	}
	if (proc.parse_only + proc.showcmd + proc.showjob > 1)
		die_usage("parse-only", "--parse-only, --showcmd and --showjob exclude each other");
	if (proc.showcmd && !jobfile)
		die_usage("showcmd", "needs a job file (--showcmd FILE)");
	unsigned flags = proc.untrusted ? JF_UNTRUSTED : 0;

	static struct jf_doc cmd, file; /* static: jf_doc_release on a failed (guarded) parse */
	memset(&cmd, 0, sizeof(cmd));
	memset(&file, 0, sizeof(file));
	guard_own(&cmd, jf_doc_release);
	jf_parse_argv(&cmd, nargs, args);
	guard_disown(args);
	free(args);
	const struct jf_doc *doc = &cmd, *cli = NULL;
	if (jobfile) {
		if (named)
			die_usage("name", "--name cannot be combined with a job file");
		guard_own(&file, jf_doc_release);
		jf_parse_file(&file, jobfile, flags);
		doc = &file;
		cli = &cmd;
	}
	if (proc.showcmd || proc.showjob) {
		if (proc.showcmd)
			jf_print_cmdline(doc, cli);
		else
			jf_print_ini(doc, cli);
		exit(0);
	}
	jf_jobs(cfg, &global, doc, cli, flags);
	for (int i = 0; i < cfg->njobs; i++) {
		struct options *o = &cfg->jobs[i];
		jf_where_job(i);
		/* --parse-only: no target yet (the agent sets it), the rest is checked as for a run */
		int placeholder = proc.parse_only && !o->filename[0];
		if (placeholder)
			str_copy(o->filename, sizeof(o->filename), "parse-only");
		options_finalize(o);
		if (placeholder)
			o->filename[0] = 0;
	}
	die_at(NULL, 0);
	if (proc.parse_only) {
		jf_print_parse_only(doc, cli, cfg);
		exit(0);
	}
	guard_disown(&cmd);
	guard_disown(&file);
	jf_doc_free(&cmd);
	jf_doc_free(&file);
	keep_global(cfg, &global);
}

void parse_jobtext(struct runcfg *cfg, const char *text, const char *label)
{
	struct options global;
	options_defaults(&global);
	static struct jf_doc doc;
	memset(&doc, 0, sizeof(doc));
	guard_own(&doc, jf_doc_release);
	jf_parse_text(&doc, text, label, JF_NO_INCLUDE);
	jf_jobs(cfg, &global, &doc, NULL, 0);
	for (int i = 0; i < cfg->njobs; i++) {
		jf_where_job(i);
		options_finalize(&cfg->jobs[i]);
	}
	die_at(NULL, 0);
	guard_disown(&doc);
	jf_doc_free(&doc);
	keep_global(cfg, &global);
}
