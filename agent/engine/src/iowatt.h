/* iowatt-engine: shared declarations. */
#ifndef IOWATT_H
#define IOWATT_H

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#define IOWATT_VERSION "0.1.0"
#define IOWATT_SCHEMA "iowatt-engine/1"

#define EXIT_OK 0
#define EXIT_FAIL 1
#define EXIT_USAGE 2
#define EXIT_UNSUPPORTED 77

#include "pace.h" /* pacing, QoS, steady state, priorities: struct pace_opts, struct pace_state */
#include "numa.h" /* numa_cpu_nodes, numa_mem_policy: struct numa_opts */
#include "cmdprio.h" /* cmdprio_*: struct cmdprio_opts */

/* ---- util.c ---- */
static inline uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
/* The engine's clock: CLOCK_MONOTONIC nanoseconds, read from the invariant TSC when the kernel
 * itself uses the TSC as its clocksource (synchronised, constant rate) -- about 20 ns cheaper
 * per stamp than the vDSO here, two stamps per psync I/O. Calibrated against CLOCK_MONOTONIC
 * at start (clock_init); rate error a few ppm, so deadlines handed to the kernel go through
 * mono_deadline(), which only uses differences. */
struct tscclock {
	int on;
	uint64_t c0, ns0, mult; /* ns = ns0 + ((tsc - c0) * mult) >> 32 */
	double ghz;
};
extern struct tscclock g_tsc;
void clock_init(int allow_tsc);
#if defined(__x86_64__)
/* The time-stamp counter through the compiler's builtin (GCC's and Clang's), not <x86intrin.h>:
 * that header's ~45,000 lines of vector intrinsics, parsed by every source for this one
 * instruction, were three quarters of the CPU of compiling the engine. */
static inline uint64_t tsc_read(void)
{
	return __builtin_ia32_rdtsc();
}
#endif
static inline uint64_t now_ns(void)
{
#if defined(__x86_64__)
	if (__builtin_expect(g_tsc.on, 1)) {
		uint64_t d = tsc_read() - g_tsc.c0;
		return g_tsc.ns0 + (uint64_t)(((unsigned __int128)d * g_tsc.mult) >> 32);
	}
#endif
	return mono_ns();
}
/* CLOCK_MONOTONIC timespec for an absolute now_ns() time (for clock_nanosleep / sem_clockwait) */
static inline struct timespec mono_deadline(uint64_t t)
{
	uint64_t now = now_ns(), m = mono_ns();
	uint64_t abs_ns = t > now ? m + (t - now) : m;
	struct timespec ts = { .tv_sec = (time_t)(abs_ns / 1000000000ull), .tv_nsec = (long)(abs_ns % 1000000000ull) };
	return ts;
}
void die_usage(const char *opt, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));
void die_code(int code, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));
/* die_usage's messages name FILE:LINE (line 0: FILE) until die_at(NULL, 0) (job files) */
void die_at(const char *file, int line);
void warnmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Run fn(arg) with die_usage/die_code returning here instead of exiting: 0, or the exit code
 * they were given (2 for bad input) with the message main would print (without the
 * "iowatt-engine: " prefix). For the fuzz targets and unit tests; main keeps the exits. */
struct parse_error {
	int code;
	char msg[512];
};
int parse_guarded(void (*fn)(void *), void *arg, struct parse_error *err);
/* inside parse_guarded: release(p) (NULL = free) if the parse fails; outside it a no-op */
void guard_own(void *p, void (*release)(void *));
void guard_disown(void *p); /* p was freed or handed on by the parser */
/* fio's sizes: k/m/g/t/p with optional B; kb_base 1024 (fio's default, "compatibility mode"):
 * 4k = 4KB = 4096 and 4KiB = 4000 (sic, as fio); kb_base 1000: 4k = 4KB = 4000, 4KiB = 4096.
 * Returns 0 or -EINVAL / -ERANGE. */
int parse_size(const char *s, uint64_t *out, unsigned kb_base);
int parse_time_ns(const char *s, uint64_t *out);    /* plain number = seconds */
int parse_u64(const char *s, uint64_t *out);
void str_copy(char *dst, size_t len, const char *src); /* always terminates, truncates */
/* an option's value into buf whole, or exit 2 naming the option: a value cut short is another value */
void opt_value_copy(const char *name, const char *val, char *buf, size_t len);
/* "LO-HI" in buf: cuts it at the dash and returns HI, or NULL when buf holds one value */
char *opt_range_split(char *buf);
int parse_bool(const char *s, int *out);
int read_sysfs_str(const char *path, char *buf, size_t len); /* trims newline; <0 on error */
long long read_sysfs_ll(const char *path, long long dflt);
extern volatile sig_atomic_t g_stop;

/* ---- json.c: strict parser + streaming writer ---- */
enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };
struct jval {
	enum jtype t;
	int b;
	char *s;            /* string value, or number text */
	size_t n;           /* items in array/object */
	struct jval **items;
	char **keys;        /* object keys */
};
struct jval *json_parse(const char *text, char *err, size_t errlen);
void json_free(struct jval *v);
const struct jval *json_get(const struct jval *obj, const char *key);

struct jw {
	FILE *f;
	int depth;
	int first[64];
};
void jw_init(struct jw *w, FILE *f);
void jw_obj(struct jw *w, const char *key);
void jw_obj_end(struct jw *w);
void jw_arr(struct jw *w, const char *key);
void jw_arr_end(struct jw *w);
void jw_str(struct jw *w, const char *key, const char *val);
void jw_u64(struct jw *w, const char *key, uint64_t v);
void jw_i64(struct jw *w, const char *key, int64_t v);
void jw_dbl(struct jw *w, const char *key, double v);
void jw_bool(struct jw *w, const char *key, int v);
void jw_null(struct jw *w, const char *key);
void jw_str_or_null(struct jw *w, const char *key, const char *val); /* null for NULL or "" */
void json_escape(FILE *f, const char *s);

/* ---- hist.c: fio-compatible log-linear latency histogram ---- */
#define HIST_BITS 6
#define HIST_VAL (1u << HIST_BITS)
#define HIST_GROUPS 29
#define HIST_NR (HIST_GROUPS * HIST_VAL) /* 1856 */

static inline unsigned hist_idx(uint64_t v)
{
	if (v < (HIST_VAL << 1))
		return (unsigned)v;
	unsigned msb = 63u - (unsigned)__builtin_clzll(v);
	unsigned err = msb - HIST_BITS;
	unsigned idx = ((err + 1) << HIST_BITS) + (unsigned)((v >> err) & (HIST_VAL - 1));
	return idx < HIST_NR - 1 ? idx : HIST_NR - 1;
}
uint64_t hist_val(unsigned idx);
#define NPCT 17
extern const double default_percentiles[NPCT];
/* Fill out[i] with the value (ns) at percentile pct[i] of hist; like fio's calc_clat_percentiles. */
void hist_percentiles(const uint64_t *hist, uint64_t total, const double *pct, int npct, uint64_t *out);

/* Running statistics of one latency type. */
struct lstat {
	uint64_t n, min, max, sum;
	double sumsq;
};
static inline void lstat_add(struct lstat *s, uint64_t v)
{
	s->n++;
	s->sum += v;
	s->sumsq += (double)v * (double)v;
	if (v < s->min)
		s->min = v;
	if (v > s->max)
		s->max = v;
}
void lstat_init(struct lstat *s);
void lstat_merge(struct lstat *dst, const struct lstat *src);
double lstat_mean(const struct lstat *s);
double lstat_stddev(const struct lstat *s);

/* ---- rand.c: generators and offset math ---- */
struct rng { uint64_t s[4]; };
void rng_seed(struct rng *r, uint64_t seed);
static inline uint64_t rotl64(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
static inline uint64_t rng_next(struct rng *r) /* xoshiro256** */
{
	uint64_t *s = r->s;
	uint64_t res = rotl64(s[1] * 5, 7) * 9, t = s[1] << 17;
	s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3];
	s[2] ^= t; s[3] = rotl64(s[3], 45);
	return res;
}
static inline uint64_t rng_below(struct rng *r, uint64_t n) /* uniform in [0,n) */
{
	return (uint64_t)(((unsigned __int128)rng_next(r) * n) >> 64);
}
static inline double rng_unit(struct rng *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }

/* Pseudo-random permutation of [0, n): each index exactly once per pass, O(1) memory. */
#define PERM_ROUNDS 4
struct perm { uint64_t n; uint64_t k[PERM_ROUNDS]; unsigned bits; };
void perm_init(struct perm *p, uint64_t n, uint64_t key);
uint64_t perm_at(const struct perm *p, uint64_t i);

enum dist { DIST_RANDOM, DIST_ZIPF, DIST_PARETO, DIST_NORMAL, DIST_ZONED, DIST_ZONED_ABS };
struct distgen {
	enum dist kind;
	uint64_t n;
	double param;
	/* zipf rejection-inversion constants */
	double hx0, hn, s;
};
int distgen_init(struct distgen *d, enum dist kind, double param, uint64_t n);
uint64_t distgen_next(struct distgen *d, struct rng *r);

/* ---- options.c ---- */
enum rw_mode {
	RW_READ, RW_WRITE, RW_RANDREAD, RW_RANDWRITE, RW_RW, RW_RANDRW,
	RW_TRIM, RW_RANDTRIM, RW_TRIMWRITE, RW_RANDTRIMWRITE, /* BLKDISCARD: a file's fail (src/patterns.c) */
};
enum fadv { FADV_NONE, FADV_AUTO, FADV_SEQ, FADV_RAND, FADV_NORMAL };
#define MAX_BSSPLIT 32
#define MAX_BS (1ull << 30) /* bs and each bssplit entry: at most 1 GiB */
#define MAX_GIVEN 96
#define MAX_ZONES 256 /* zoned / zoned_abs entries (fio's limit) */
struct bsent { uint64_t bs; unsigned pct; };
/* verify family (src/verify.c): fio's verify_pattern as bytes, with the places of its %o */
#define VERIFY_PATTERN_MAX 512
#define VERIFY_PATTERN_OFFS 8
struct vpattern {
	unsigned char b[VERIFY_PATTERN_MAX];
	uint16_t len;                   /* 0 = no pattern */
	uint8_t noff;
	uint16_t off_at[VERIFY_PATTERN_OFFS]; /* %o: the block's offset, 8 bytes little-endian, here */
};
struct options {
	char name[128];
	char filename[PATH_MAX];
	enum rw_mode rw;
	unsigned rwmixread;
	uint64_t bs[2];                 /* per direction: 0 read, 1 write */
	struct bsent bssplit[2][MAX_BSSPLIT];
	int nbssplit[2];
	uint64_t size, offset;
	int size_set;
	/* fio's offset_increment: clone k starts at offset + k x it; oinc_span (target.c) = (numjobs-1) x it
	 * when size is set (the layout ends there), else 0 (the clones run to the target's end) */
	uint64_t offset_increment, oinc_span;
	int direct;
	unsigned numjobs;
	uint64_t runtime_ns;
	int time_based;
	uint64_t ramp_ns;
	char ioengine[16];
	unsigned iodepth;
	int stonewall;
	uint64_t loops;
	uint64_t fsync_n, fdatasync_n;
	int end_fsync;
	int fsync_on_close;             /* fio's: fsync a written file as it is closed, and at the job's end */
	int create_fsync;               /* fio's (default 1): fsync a file after its layout wrote data */
	int overwrite;                  /* fio's: a write job's layout writes the file's data first */
	int pre_read;                   /* fio's: the region read into the page cache before the job */
	int sync_mode;                  /* fio's sync: 0 none, 1 sync (O_SYNC), 2 dsync (O_DSYNC) */
	int invalidate;
	enum fadv fadvise;
	enum dist dist;
	double dist_param;
	int norandommap;
	uint64_t randseed;
	int randseed_set;
	int randrepeat;                 /* fio's: 1 = the fixed default seed, 0 = a new one per run */
	int zero_buffers;
	int refill_buffers;             /* 1 (default): fresh content per write; 0: stamp only */
	int scramble_buffers;           /* fio's (default 1): with refill_buffers=0, the stamp; 0: none */
	int clock_gettime;              /* clocksource=clock_gettime: never read the TSC (process-wide) */
	unsigned iodepth_batch;         /* submit once this many are prepared (fio's iodepth_batch_submit) */
	/* fio's iodepth_batch_complete_min/_max: a full queue waits for at least min completions and
	 * takes at most max of them (fio's default 1 and 1: one completion, then one new I/O) */
	unsigned reap_min, reap_max;
	uint64_t io_size;               /* bytes per pass instead of size (fio's io_size), 0 = size */
	unsigned kb_base;               /* 1024 (fio's default) or 1000: meaning of size suffixes */
	unsigned force_async;           /* io_uring: every Nth SQE with IOSQE_ASYNC, 0 = never (fio's) */
	unsigned compress_pct;
	struct pace_opts pace;          /* thinktime, rate*, flow, latency_target, ss, prio, disable_* (pace.h) */
	int destructive;
	/* file safety (ADR 0009 §5): set by the agent from the host's policy */
	char beneath[PATH_MAX];         /* "" = not confined */
	int create_new;                 /* the file must not exist; this run creates it (O_EXCL, 0600) */
	int unlink_file;                /* fio's unlink: remove, at the end, a file this run created */
	int keep_existing;              /* never extend / fill / write-by-layout a file not created here */
	int readonly;                   /* fio's readonly: a job that writes exits 2 */
	/* verify family (src/verify.c, README § Verification) */
	int verify;                     /* fio's verify type numbers (verify.h VT_*), 0 = none */
	int verify_set;
	int do_verify;                  /* fio's default 1 */
	uint64_t verify_interval;       /* 0 = the smallest write block size */
	uint64_t verify_offset;
	int verify_fatal, verify_dump, verify_only;
	uint64_t verify_backlog, verify_backlog_batch;
	int verify_state_save, verify_state_load;
	unsigned verify_async;
	char verify_pattern_text[256];
	struct vpattern verify_pattern;
	/* multi-file jobs (src/multifile.c) */
	char directory[PATH_MAX];       /* fio's directory: a ':' list, one per clone */
	char filename_format[256];      /* "" = $jobname.$jobnum.$filenum */
	unsigned nrfiles, openfiles;    /* files per clone; open at once (0 = nrfiles) */
	uint64_t filesize_lo, filesize_hi; /* fio's filesize LOW[-HIGH]; 0 = size / nrfiles */
	int fst;                        /* file_service_type (enum fst, multifile.h) */
	unsigned fst_nr;                /* random/roundrobin/sequential: I/Os before switching file */
	double fst_param;               /* zipf theta, pareto h, normal deviation % */
	int fallocate;                  /* enum falloc (multifile.h) */
	int create_on_open, create_only, file_append, unlink_each_loop, lockfile;
	/* reporting (src/logs.c, src/output.c): fio's log files and percentile options */
	char bw_log[1024], iops_log[1024], lat_log[1024], hist_log[1024]; /* write_*_log prefixes */
	unsigned log_avg_msec, log_hist_msec, log_hist_coarseness, log_alternate_epoch_clock_id;
	int log_max_value, log_offset, per_job_logs, log_unix_epoch, log_alternate_epoch;
	unsigned log_entries;           /* per-I/O logs: records kept per clone (0 = the job's budget) */
	double pct_list[20];            /* percentile_list, sorted; npct 0 = fio's default list */
	int npct;
	int clat_pct, lat_pct, slat_pct; /* clat_percentiles (1), lat_percentiles, slat_percentiles */
	int lat_pct_set;                /* lat_percentiles given (else lat_ns keeps its percentiles) */
	/* scheduling and control (fio's meaning; src/sched.c): groups, start, stop, errors */
	int new_group;                  /* a new reporting group (groupid) without waiting */
	int exitall;                    /* a job of the group finishing stops the group */
	int exitall_on_error;           /* a job finishing in error stops the run */
	int group_reporting;            /* one JSON entry per reporting group, fio's sums */
	int continue_on_error;          /* CE_* bits: EIO/EILSEQ of these kinds are counted, not fatal */
	char wait_for[128];             /* start when every job of this name (defined before) ended */
	uint64_t startdelay_ns, startdelay_hi_ns; /* hi > 0: each clone draws from [lo, hi] */
	/* ---- patterns family (src/patterns.c) ---- */
	int64_t rw_seq_add;             /* rw=read:-8k: bytes added to each sequential offset (fio's ddir_seq_add) */
	unsigned rw_seq_nr;             /* rw=randread:8: a new random offset every N I/Os (fio's ddir_seq_nr) */
	int rw_seq_identical;           /* rw_sequencer=identical */
	uint64_t bsrange[2][2];         /* bsrange per direction: {min, max}; {0, 0} = not given */
	int bs_unaligned;               /* bsrange sizes need not be multiples of the minimum */
	uint64_t blockalign[2];         /* random offsets aligned to this per direction; 0 = the block size */
	struct zone_split { unsigned access; uint64_t size; } zones[MAX_ZONES]; /* zoned: size %, zoned_abs: bytes */
	int nzones;
	int random_generator;           /* 0 tausworthe, 1 lfsr, 2 tausworthe64 */
	unsigned pct_random[2];         /* percentage_random per direction (100: every offset random) */
	uint64_t number_ios;            /* at most this many I/Os per pass (0 = no limit) */
	/* options as given, for "job options" */
	int ngiven;
	char given_name[MAX_GIVEN][40];
	char given_val[MAX_GIVEN][256];
	unsigned char given_own[MAX_GIVEN]; /* set in the job's own section (fio's "job options") */
	int own_section;                /* options being applied now belong to the job's section */
	/* job files (src/jobfile.c) */
	char description[256];          /* fio's description (its JSON "desc"), cut to 255 bytes as fio */
	/* ---- buffers, NUMA, log priorities (s10 submit-dedupe: src/dedupe.c, src/numa.c, logs.c) ---- */
	unsigned dedupe_pct;            /* dedupe_percentage: % of write buffers that repeat one */
	int dedupe_mode;                /* 0 repeat, 1 working_set */
	unsigned dedupe_ws_pct;         /* dedupe_working_set_percentage (fio's 5) */
	int dedupe_global;              /* working sets shared by the run's threads */
	struct numa_opts numa;
	int log_prio;                   /* logs: the I/O's priority value (0x%04x) instead of "is realtime" */
	/* ---- control options of issue 24's job files (s10 verify-logs; src/control.c) ---- */
#define CTL_ERR_TYPES 3                 /* fio's error types: read, write, verify */
#define CTL_IGNORE_MAX 32               /* errors per ignore_error list */
	int ignore_err[CTL_ERR_TYPES][CTL_IGNORE_MAX]; /* ignore_error: errnos continued over, per type */
	unsigned nignore_err[CTL_ERR_TYPES];           /* 0: fio's EIO and EILSEQ */
	int exit_what;                  /* exitall stops: 1 its group (fio's default), 2 running jobs, 3 all */
	int allow_file_create;          /* fio's default 1; 0: a missing file is refused */
	int fill_device;                /* fio's fill_device / fill_fs: write a file until ENOSPC */
	unsigned oinc_pct;              /* offset_increment=N%: resolved against the target (0 = bytes) */
	uint64_t oinc_base;             /* N%: the target's size before the run (0: the run creates it) */
	int oinc_grows;                 /* N%: a file, which each clone's layout may extend (control.c) */
	uint64_t offset_align;          /* a percentage offset_increment aligned up to this (0 = min bs) */
	/* ---- s11 engine: error_dump, create_serialize (src/control.c) ---- */
	int error_dump;                 /* fio's default 1: every I/O error on stderr, the non-fatal ones too */
	int create_serialize;           /* fio's default 1 (the only one here): files laid out one after another */
	/* ---- s13 engine: per-command priorities (src/cmdprio.c) ---- */
	struct cmdprio_opts cmdprio;
};
enum { CE_READ = 1, CE_WRITE = 2, CE_VERIFY = 4, CE_ALL = 0xffff }; /* fio's ERROR_TYPE_* bits */
struct runcfg {
	struct options *global;
	int jsonplus;
	int progress;
	struct options *jobs;
	int njobs;
	/* reporting (src/output.c): --output-format list, --terse-version, --output, --eta */
	unsigned formats;               /* OUT_* bits (output.h); 0 = json */
	int terse_version;              /* 3 (fio's default), 4 or 5 */
	const char *output_path;        /* --output=FILE or NULL */
	int output_fd;                  /* its fd once created (output_open), else -1 */
	int eta;                        /* 0 auto, 1 always, 2 never */
	uint64_t eta_newline_ns, eta_last_newline, eta_start;
	int eta_printed;
};
void options_defaults(struct options *o);
/* Apply one option; returns 0, or exits 2 with a message naming it. */
void option_set(struct options *o, const char *name, const char *val);
int option_is_known(const char *name);
const char *option_bare_value(const char *name); /* "1" when the option may be given alone, else NULL */
void options_echo(struct jw *w, const struct options *o); /* "options": the resolved values */
void options_help(FILE *f);                               /* --help, from the same table */
void options_limits(struct jw *w); /* --limits' "options": every row's type, default, range, choices */
/* --limits: the engine's limits, defaults and choices as one JSON document (src/limits.c) */
void engine_limits(FILE *f);
void options_finalize(struct options *o);
void parse_cmdline(int argc, char **argv, struct runcfg *cfg);
/* A JSON job file's text into cfg, as parse_cmdline does for a job file without other flags
 * (label names the file in messages). */
void parse_jobtext(struct runcfg *cfg, const char *text, const char *label);
#define MAX_JOBS 256 /* jobs on one command line or in one job file */
/* The flags of the file modes (--postmark=FILE, --vdbench=FILE), parsed in one place by the
 * option-table mechanism (optable.h): the common ones into the struct, the mode's own through its
 * table `own` into `own_base`; anything else exits 2 ("option 'bs' does not apply to --postmark
 * (it takes ...)"). Set the defaults (allow_tsc) before the call. */
struct opt_def;
struct mode_args {
	const char *mode;               /* "postmark": the flag --postmark=FILE, and the error's name */
	const char *file_what;          /* "a command file" */
	const struct opt_def *own;      /* the mode's own flags (an option table, optable.h), or NULL */
	size_t nown;
	void *own_base;                 /* the struct their rows' offsets are in */
	const char *file, *dir, *beneath;
	int keep, jsonplus, normal, progress, allow_tsc, parse_only;
};
void mode_args_parse(struct mode_args *a, int argc, char **argv);
int mode_requested(int argc, char **argv, const char *mode); /* a --<mode>[=FILE] flag */
static inline int rw_is_random(enum rw_mode rw)
{
	return rw == RW_RANDREAD || rw == RW_RANDWRITE || rw == RW_RANDRW || rw == RW_RANDTRIM || rw == RW_RANDTRIMWRITE;
}
static inline int rw_reads(enum rw_mode rw) { return rw == RW_READ || rw == RW_RANDREAD || rw == RW_RW || rw == RW_RANDRW; }
static inline int rw_trims(enum rw_mode rw) { return rw >= RW_TRIM; }
static inline int rw_trimwrite(enum rw_mode rw) { return rw == RW_TRIMWRITE || rw == RW_RANDTRIMWRITE; }
/* trims change the data too: they need destructive=1 on a device, readonly refuses them */
static inline int rw_writes(enum rw_mode rw)
{
	return rw == RW_WRITE || rw == RW_RANDWRITE || rw == RW_RW || rw == RW_RANDRW || rw_trims(rw);
}
const char *rw_name(enum rw_mode rw);
uint64_t opt_min_bs(const struct options *o);
uint64_t opt_bssplit_min(const struct options *o, int d);
uint64_t opt_max_bs(const struct options *o);

/* ---- confine.c ---- */
/* Normalise a relative path (drop "" and "." components); -EXDEV for "..", -EINVAL if absolute
 * or empty. */
int confine_split(const char *path, char *out, size_t len);
/* Open rel beneath dirfd, no symbolic link in any component (-ELOOP), never above dirfd (-EXDEV).
 * Returns an fd (O_CLOEXEC) or -errno. */
int confined_open(int dirfd, const char *rel, int flags, mode_t mode);
const char *confine_resolver(void); /* "openat2" or "openat-walk" (ENOSYS fallback / test build) */
/* beneath=ROOT, the one rule for every mode: PATH relative to ROOT (an absolute PATH must start
 * with ROOT, compared component by component; a relative one is relative to ROOT), normalised
 * into rel. 0 or a CONFINE_* code; confine_die() exits 2 naming it ("filename '%s' is not
 * beneath '%s'"). */
enum {
	CONFINE_ROOT_DOTDOT = -1,       /* ROOT contains ".." */
	CONFINE_ROOT_RELATIVE = -2,     /* ROOT relative, PATH absolute */
	CONFINE_NOT_BENEATH = -3,
	CONFINE_DOTDOT = -4,            /* PATH climbs out with ".." */
	CONFINE_ROOT_ITSELF = -5,       /* PATH names ROOT itself (rel = "") */
	CONFINE_TOO_LONG = -6,
};
int confine_relative(const char *root, const char *path, char *rel, size_t len);
void confine_die(int rc, const char *what, const char *path, const char *root) __attribute__((noreturn));
/* The directory of a file mode (--directory=DIR, --beneath=ROOT): opened as given, or beneath ROOT
 * through confined_open (no link, no ".."). An O_RDONLY | O_DIRECTORY fd; exits 2 naming the flag
 * (mode: "postmark", "vdbench", ... for the message when DIR is missing). */
int open_confined_dir(const char *dir, const char *beneath, const char *mode);
/* The parent directory of rel (a normalised path below dirfd) opened beneath dirfd, for an *at()
 * call on its last component (*leaf, inside rel): dirfd itself for a top-level name. An fd to give
 * back with confined_parent_close(), or -errno (rel is left as it was). */
int confined_parent(int dirfd, char *rel, const char **leaf);
void confined_parent_close(int dirfd, int fd);

/* ---- target.c ---- */
/* One file or device of the run; the jobs naming the same filename share it. Every open of it
 * goes through tfile_open(): beneath DIR when confined, and checked against the identity
 * (st_dev, st_ino) of its first open or its creation, so a swapped file is never used. */
struct tfile {
	char path[PATH_MAX];            /* filename as given */
	int dirfd;                      /* beneath: the confined directory (O_PATH), else -1 */
	char dir[PATH_MAX];             /* beneath: DIR as given */
	char rel[PATH_MAX];             /* beneath: filename relative to DIR, normalised */
	int create_new, unlink_file, keep_existing; /* the same in every job that names it */
	int probed, existed;            /* existed: found at the first probe */
	int created;                    /* this run created it */
	int removed;                    /* unlink done (or refused) */
	int have_id;
	uint64_t dev, ino;
	struct tfile *next;
};
struct target {
	struct tfile *f;
	char path[PATH_MAX];
	int is_blk;
	int exists;
	uint64_t dev_size;      /* block device size or file size */
	unsigned lbs;           /* O_DIRECT alignment */
	unsigned dev_major, dev_minor; /* backing block device, 0:0 if none */
	char devname[64];       /* e.g. vda, "" if none */
	char diskname[64];      /* whole disk for partitions */
};
int target_probe(struct target *t, const struct options *o);
void target_validate(const struct options *o, struct target *t);
/* create / fill; 0 or -errno with a message in err */
int target_prepare(const struct options *o, struct target *t, char *err, size_t errlen);
/* the job's fd; -errno with a message in err */
int target_open(const struct options *o, const struct target *t, char *err, size_t errlen);
/* guarded targets: is the path still the file the job used? 0 or -errno with a message */
int target_verify(const struct target *t, char *err, size_t errlen);
/* unlink=1: remove the files this run created (verified); 0, or -1 after a message on stderr */
int target_cleanup(void);
int target_claim(const struct target *t, int trims);
int blkdev_in_use(const struct target *t, char *why, size_t whylen);
void target_facts(struct jw *w, const struct target *t);
/* the block device under an open file's or directory's file system ("" if none, e.g. tmpfs) */
void fd_blockdev(int fd, char *name, size_t len);

/* ---- sysinfo.c ---- */
struct cpustat { uint64_t v[10]; int ok; };
void cpustat_read(struct cpustat *c);
void cpustat_emit(struct jw *w, const char *key, const struct cpustat *a, const struct cpustat *b);
struct diskstat { char name[64]; uint64_t f[17]; int ok; };
void diskstat_read(const char *name, struct diskstat *d);
void host_facts(struct jw *w);

/* ---- engines ---- */
enum { DDIR_READ = 0, DDIR_WRITE = 1, DDIR_TRIM = 2 };
struct io_req {
	void *buf;
	uint64_t off;
	uint32_t len;
	uint8_t ddir;
	uint8_t inflight;
	uint16_t idx;
	uint64_t t_prep;       /* when prepared (or intended start under rate_iops) */
	uint64_t t_sub;        /* when submitted */
	uint64_t t_intended;   /* rate_iops: scheduled start */
	int64_t res;           /* bytes done or -errno */
	uint8_t vcheck;        /* verify family: check this read on completion (src/verify.c) */
	uint8_t prio_idx;      /* cmdprio: the priority's index in its direction's statistics */
	uint16_t ioprio;       /* cmdprio: the priority value sent with the I/O (0 = the thread's) */
	uint32_t done_before;  /* async: bytes of this block done by earlier issues (a short I/O's rest) */
	uint64_t vseq;         /* verify family: the write's number in its worker */
	int fd;                /* the file's descriptor (the worker's, or its current file's: multifile.c) */
	uint32_t fidx;         /* multi-file jobs: the worker's file index */
};
struct worker;
/* what an engine is, for the code around it (never compare ops pointers) */
#define ENGINE_F_SYNC 1u       /* queue() completes the I/O inline: iodepth is 1 */
#define ENGINE_F_KWORKER 2u    /* I/O also runs in kernel worker threads (io_uring's io-wq): count their CPU */
#define ENGINE_F_ABSENT 4u     /* not built in (its development headers were missing): exit 77 */
struct engine_ops {
	const char *name;
	unsigned flags;                                    /* ENGINE_F_* */
	int (*init)(struct worker *w);                     /* 0, -errno; -ENOSYS = not available */
	int (*queue)(struct worker *w, struct io_req *r);  /* sync: perform; async: stage */
	/* async: submit what queue() staged; returns the number staged or -errno. last=1: the worker
	 * waits for completions right after, so the engine may fold the submission into that wait */
	int (*commit)(struct worker *w, int last);
	int (*getevents)(struct worker *w, unsigned min, uint64_t timeout_ns); /* async: reap >= min, <= w->reap_max (timeout 0 = none); fills w->done[], returns count */
	void (*cleanup)(struct worker *w);
	int (*probe)(void);                                /* 0 if usable on this kernel, else -errno */
};
const struct engine_ops *engine_find(const char *name);
void engine_trim(const struct worker *w, struct io_req *r); /* one BLKDISCARD (every engine's trims: engine.c) */
const struct engine_ops *offload_engine(void); /* io_submit_mode=offload around the job's ioengine (offload.c) */
#define OFFLOAD_MAX_THREADS 4096 /* offload: iodepth x numjobs submission threads of one job (--limits) */
#define OFFLOAD_MAX_ASYNC_THREADS 256 /* the same with libaio/io_uring: each has a private worker (~130 KiB) */
int engine_built_in(const char *name);
const char *engine_name_at(size_t i); /* the i-th ioengine name the option takes, NULL past the last */

/* ---- worker.c ---- */
struct series_pt {
	uint64_t t_ns;                  /* end of the interval since the measured start */
	uint64_t ios[2], bytes[2];
	uint32_t hoff[2], hn[2];        /* sparse interval histogram: range in the worker's pool */
};
struct hpair { uint32_t idx; uint32_t cnt; };
struct dstat {
	uint64_t ios, bytes, short_ios;
	struct lstat slat, clat, lat;
	uint64_t hist[HIST_NR];         /* clat */
	uint64_t shist[HIST_NR];        /* slat (async engines) */
	uint64_t lhist[HIST_NR];        /* lat (async engines; = hist for sync ones) */
};
struct job;
#define CACHELINE 128 /* two 64-byte lines: adjacent-line prefetch pairs them on x86 */
struct worker {
	_Alignas(CACHELINE) struct job *job; /* each worker starts on its own lines (no false sharing) */
	unsigned id;
	int fd;
	void *ctx;                      /* engine private */
	struct io_req *reqs;
	struct io_req **freelist;
	unsigned nfree;
	struct io_req **done;           /* filled by getevents */
	unsigned depth, inflight;
	unsigned reap_max;              /* async engines: completions taken per getevents, at most */
	struct rng rng;
	struct perm perm, scatter;
	uint64_t perm_i, perm_key;
	uint64_t seq_pos[2];
	uint64_t nblocks, minbs;
	struct distgen dg;
	uint64_t budget, issued;        /* bytes to issue (size x loops) and issued so far */
	uint64_t ramp_done;             /* bytes completed during ramp_time */
	uint64_t *map;                  /* random map for mixed block sizes: 1 bit per smallest block */
	uint64_t dunit[2];              /* fio's per-direction map unit when the directions' smallest sizes differ, else 0 */
	uint64_t roff, rsize;           /* the region of the current file: offset, size */
	struct mfworker *mfw;           /* multi-file jobs: the worker's files (multifile.c), else NULL */
	struct pace_state pace;         /* pacing, QoS (pace.c) */
	struct patgen *pat;             /* src/patterns.c: set when the job uses a pattern it handles */
	uint64_t nios;                  /* I/Os generated in the measured time (number_ios) */
	/* accounting (private, merged after the run) */
	struct dstat d[3];              /* read, write, trim */
	uint64_t *schedhist;            /* rate_iops: latency from the intended start */
	struct lstat sched;
	struct lstat synclat;
	uint64_t nsync;
	uint64_t late_starts;
	uint64_t depth_hist[7], submit_hist[7], complete_hist[7];
	uint64_t iv_ios[2], iv_bytes[2];
	uint64_t *iv_hist;              /* [2][HIST_NR] */
	struct series_pt *series;
	size_t nseries, capseries;
	struct hpair *hpool;
	size_t nhpool, caphpool;
	uint64_t next_tick;
	int measuring;
	uint64_t t_meas_start, t_end;
	/* published for the progress reporter */
	_Alignas(CACHELINE) _Atomic uint64_t pub_ios[2], pub_bytes[2]; /* read by the main thread */
	_Atomic int finished;
	_Atomic int ended;              /* its I/O is over (before the engine's teardown): exitall reacts */
	double usr_s, sys_s;
	pid_t tid;
	uint64_t kworker_ns;            /* CPU of this thread's io_uring kernel workers (iou-wrk/iou-sqp) */
	uint64_t kworker0;              /* their CPU when measuring started */
	uint64_t ctx_sw, majf, minf;
	/* io_uring facts, for the report */
	int uring_nowait, uring_ring_fd_registered;
	uint64_t uring_polls, uring_poll_hits, uring_poll_ns; /* the bounded wait (engine_io_uring.c) */
	int err;                        /* negative errno */
	char errmsg[256];
	int filled;                     /* fill_device: a write found the file system full (control.c) */
	uint64_t writes_since_sync;
	uint64_t deadline;              /* of the running phase: the job's, or none for the verify phase */
	struct vworker *vw;             /* verify family (src/verify.c), NULL without verify */
	struct dedupe_w *dedupe;        /* dedupe_percentage (src/dedupe.c), NULL without it */
	struct wlogs *logs;             /* write_*_log state (src/logs.c), NULL without logs */
	struct cmdprio_w *cp;           /* cmdprio_* (src/cmdprio.c), NULL without them */
	/* this clone's own clock (startdelay may move its start) and continue_on_error counts */
	uint64_t t_start, t_ramp_end;
	uint64_t delay_ns;              /* startdelay this clone waited (drawn from a range) */
	uint64_t total_err;
	int first_error;                /* errno of the first error continued over (fio's) */
	pthread_t thread;
};
struct mfset;
struct mfworker;
struct job {
	struct options *o;
	int index, groupid;
	int sched_group;                /* jobs between stonewalls (src/sched.c) */
	_Atomic int stop;               /* exitall / exitall_on_error: the workers end */
	int launched;                   /* sched.c: job_start was called (or the job was skipped) */
	int deferred;                   /* create_serialize=0: checked and laid out when its start group starts */
	const struct engine_ops *ops;
	struct target tgt;
	struct mfset *mf;               /* multi-file jobs (multifile.c), else NULL */
	int fd;
	int excl_fd;                    /* the run's exclusive claim on the job's written device (main.c), else -1 */
	uint64_t max_bs;
	unsigned char *pool;            /* random data that write buffers are refreshed from */
	uint64_t pool_len;
	struct worker *workers;
	pthread_barrier_t ready, go;
	uint64_t t_start, t_ramp_end, t_deadline;
	uint64_t t_meas_end;
	int err;
	char errmsg[256];
	int unsupported;
	struct cpustat cpu0, cpu1;
	struct diskstat disk0, disk1;
	uint64_t wall0_ns, wall1_ns;
	struct joblogs *logs;           /* write_*_log files (src/logs.c), NULL without logs */
	/* progress */
	uint64_t last_ios[2], last_bytes[2], last_tick;
	int started, finished;
	struct vjob *vj;                /* verify family (src/verify.c), NULL without verify */
	/* pacing family (pace.h): steady state's window */
	struct steady *ss;              /* attained: sets stop (above) */
};
void *worker_main(void *arg);
/* latency_target's final run: forget what was measured so far and measure from now */
void worker_reset_stats(struct worker *w, uint64_t now);
int worker_setup_offsets(struct worker *w);
int worker_next_io(struct worker *w, struct io_req *r); /* 1 when the byte budget is used up */
int worker_gen_raw(struct worker *w, struct io_req *r); /* the workload's generator, without verify's phases */
/* pre_read: [off, off + len) of fd read into the page cache before the job; 0 or -errno (w->errmsg) */
int worker_pre_read(struct worker *w, int fd, uint64_t off, uint64_t len);
/* Waits that a stop (SIGINT/SIGTERM, exitall, exit_what) ends within STOP_SLICE_NS; 1 when stopped */
#define STOP_SLICE_NS 50000000ull
int worker_sleep_until(struct worker *w, uint64_t t);
int worker_spin_until(struct worker *w, uint64_t t);
/* continue_on_error: 1 if this error of this kind (CE_*) is counted and the clone goes on */
int worker_error_continues(struct worker *w, unsigned kind, int err);
int job_layout(struct job *j);  /* the job's file created / filled (before any job of the run starts) */
int job_start(struct job *j);   /* threads made and ready, waiting for job_go */
void job_go(struct job *j, uint64_t t0); /* the jobs of one start, at the same instant t0 */
/* ---- sched.c: fio's job scheduling ---- */
void sched_assign_groups(struct job *jobs, int njobs); /* groupid, sched_group; checks wait_for */
void sched_run(struct job *jobs, int njobs, struct runcfg *cfg);
void job_wait(struct job *j);
void job_free(struct job *j);
void job_progress(struct job *j, uint64_t now);
int job_all_finished(struct job *j);

/* ---- report.c ---- */
/* every job's entries, as fio: one per clone, or per reporting group with group_reporting */
void report_jobs(struct jw *w, struct job *jobs, int njobs, int jsonplus);
void emit_empty_dir(struct jw *w, const char *key);
/* The pieces of the JSON document every mode writes (block jobs, --postmark, --vdbench): */
/* {min, max, mean, stddev, N} and, with hist and samples, fio's "percentile" (+ "bins" if bins) */
void emit_lstat(struct jw *w, const char *key, const struct lstat *s, const uint64_t *hist, int bins);
/* the same with a percentile list (at most 20: fio's percentile_list) */
void emit_lstat_pct(struct jw *w, const char *key, const struct lstat *s, const uint64_t *hist, int bins,
		    const double *pct, int npct);
/* a fio "read"/"write" object from totals; lat (NULL = none measured) is clat and lat, hist its percentiles */
void emit_dir_totals(struct jw *w, const char *key, uint64_t bytes, uint64_t ios, uint64_t ns,
		     const struct lstat *lat, const uint64_t *hist);
struct timeval;
void emit_preamble(struct jw *w, const struct timeval *tv); /* "fio version", "timestamp[_ms]", "time" */
/* one "disk_util" entry (nothing unless both reads worked) over wall_ns */
void emit_disk_util(struct jw *w, const struct diskstat *d0, const struct diskstat *d1, uint64_t wall_ns);
/* the top-level "iowatt" object's common head: version, schema, mode (NULL: block jobs), interrupted,
 * signal, host facts, clock */
void emit_iowatt_head(struct jw *w, const char *mode, int interrupted, int sig);
/* a file mode's jobs[0].iowatt: {ioengine, runtime_ns, error_message (NULL: null)} */
void emit_job_iowatt(struct jw *w, const char *ioengine, uint64_t runtime_ns, const char *error);

/* --parse-only of the file modes: what a run of these parameters can do at most, known before
 * anything is touched (computed where the parameters live: postmark.c, fileset.c; README §
 * Parse-only facts says what each field counts) */
struct file_bounds {
	const char *mode;               /* "postmark" | "vdbench" */
	uint64_t threads;               /* running at once */
	uint64_t max_block_bytes;       /* largest read/write transfer */
	int written_bounded;            /* 0: bytes_written_max is null (time-based writes) */
	uint64_t bytes_written_max;     /* B, the whole run incl. format/creation */
	int runtime_bounded;            /* 0: runtime_s_max is null (size-bound) */
	double runtime_s_max;
	uint64_t dataset_bytes, files, directories; /* the file set as laid out */
};
void emit_bounds(struct jw *w, const struct file_bounds *b); /* "bounds": {...} */

#endif
