/* Multi-file jobs (fio's directory, filename=a:b, nrfiles, filesize, openfiles,
 * file_service_type, filename_format, create_on_open, fallocate, file_append): src/multifile.c.
 * A job whose files are not one fixed filename gets a file set: one record per file, each a
 * target of src/target.c (so every safety rule holds for every file), and per worker the state
 * of each of its files (open descriptor, offset generator, done in this pass). */
#ifndef IOWATT_MULTIFILE_H
#define IOWATT_MULTIFILE_H

#include "iowatt.h"
#include "optable.h"

/* Files of one run (every job's nrfiles x numjobs, or its filename list, added up): each costs
 * a target record (~17 KiB) and, while open, a descriptor. --limits: block.max_files. */
#define MAX_RUN_FILES 4096

enum fst { FST_ROUNDROBIN, FST_RANDOM, FST_SEQUENTIAL, FST_ZIPF, FST_PARETO, FST_NORMAL };
enum falloc { FALLOC_NONE, FALLOC_NATIVE, FALLOC_POSIX, FALLOC_KEEP, FALLOC_TRUNCATE };

struct mfile {
	struct target tgt;
	uint64_t offset;                /* region start (offset, or the file's size with file_append) */
	uint64_t region;                /* bytes of the region */
	int laid_out;                   /* created / filled (or create_on_open: created by its first open) */
};

struct mfset {
	unsigned nfiles;                /* records in files[] */
	unsigned per_worker;            /* files each worker uses */
	int shared;                     /* 1: every worker uses all files; 0: worker w uses [w*per_worker, ...) */
	uint64_t budget_base;           /* bytes per pass of one worker (before loops) */
	struct mfile *files;
	pthread_mutex_t lock;           /* create_on_open: first opens from several workers */
};

/* per worker, per file */
struct mfstate {
	unsigned file;                  /* index in the job's files[] */
	int fd;                         /* -1 when closed */
	int done;                       /* its share of this pass is issued */
	unsigned inflight;
	uint64_t issued;                /* bytes issued in this pass */
	uint64_t pass_bytes;            /* its share: whole smallest blocks of the region */
	uint64_t ios[3], bytes[3];      /* completed, for iowatt.files: read, write, trim */
	/* the offset generator's state, swapped into the worker while the file is current */
	uint64_t roff, rsize, nblocks, perm_i, seq_pos[2];
	struct perm perm, scatter;
	struct distgen dg;
	uint64_t *map;
	uint64_t tw_off;                /* trimwrite: the block just trimmed, written next (tw_len 0: none) */
	uint32_t tw_len;
};

struct mfworker {
	struct mfstate *st;
	unsigned n, cur, nopen, svc_left, ndone;
	unsigned passes;                /* passes started (fio's do_io calls): trimwrite's number_ios */
	int have_cur;
	struct distgen fdg;             /* zipf / pareto / normal over the files */
	struct perm fscatter;
};

/* Does this job need a file set (no filename, a filename list, filesize, file_append,
 * create_on_open)? */
int mf_wanted(const struct options *o);
/* Before the first I/O: the job's file names (fio's), probed and validated like any target;
 * exits 2 naming the option. The first file's target is copied into j->tgt for the facts. */
void mf_job_setup(struct job *j);
/* A job without filename that has one file, one clone and none of the options above: fio's
 * generated name ($jobname.0.0, or filename_format's) becomes its filename, so it runs as a
 * single-file job (src/patterns.c, whose generator takes one file). 1 when it did. */
int mf_name_single(struct options *o);
/* Directory prefix for a job that keeps one filename (fio's directory= with filename=). */
void mf_apply_directory(struct options *o);
/* The layout of every file (unless create_on_open): 0 or -errno with a message in j->errmsg. */
int mf_prepare(struct job *j);
/* Worker side: its files' state, the first files opened; 0 or -errno (message in w->errmsg). */
int mf_worker_init(struct worker *w);
void mf_worker_free(struct worker *w);
/* Before each I/O: the file to serve next (its generator state swapped in). 0, or 1 when no file
 * can be served now (all open ones have I/O in flight and openfiles is reached). */
int mf_select(struct worker *w);
/* After the offset was drawn: the request's file, and the file's share of the pass. */
void mf_issued(struct worker *w, struct io_req *r, uint64_t bs);
/* trimwrite: the current file's block just trimmed, as its write (1), or nothing pending (0) */
/* trimwrite with number_ios in a job of several files: 1 when the job's count is reached (its
 * last pass); a pass that reached its count ends and the next starts from every file's start */
int mf_trimwrite_count_reached(struct worker *w);
int mf_trimwrite(struct worker *w, struct io_req *r);
/* On completion (counters per file; a finished file past openfiles is closed). */
void mf_completed(struct worker *w, const struct io_req *r);
/* pre_read: each of the worker's files' region read into the page cache (opened for it when
 * closed); 0 or -errno (message in w->errmsg) */
int mf_pre_read(struct worker *w);
/* verify with several files: the read-back of a logged write to the worker's file fidx (opened
 * again when openfiles closed it): r's descriptor and file; 0 or -errno (message in w->errmsg) */
int mf_verify_file(struct worker *w, struct io_req *r, unsigned fidx);
/* After the job: every file still the one the run used? 0 or -errno with a message. */
int mf_verify(struct job *j, char *err, size_t errlen);
/* iowatt.files: one entry per file (name, region, created, per-direction ios and bytes) */
/* "files" of a jobs[] entry: the I/O of clones [first, first + n) of job j (sched.c's entries) */
void mf_report(struct jw *w, const struct job *j, unsigned first, unsigned n);
void mf_job_free(struct job *j);
/* --limits */
void mf_limits(struct jw *w);
/* The layout's allocation of [from, to) of a file this run lays out (fallocate=MODE, fio's
 * calls); 0 or -errno (native and posix fall back to nothing, as fio) */
int mf_allocate(int fd, int mode, uint64_t from, uint64_t to);
/* option rows (options.c's opts[]) */
void mf_parse_directory(void *base, const struct opt_def *d, const char *name, const char *val);
void mf_echo_directory(struct jw *w, const struct options *o, const struct opt_def *d);
void mf_parse_filesize(void *base, const struct opt_def *d, const char *name, const char *val);
void mf_echo_filesize(struct jw *w, const struct options *o, const struct opt_def *d);
void mf_parse_fst(void *base, const struct opt_def *d, const char *name, const char *val);
void mf_echo_fst(struct jw *w, const struct options *o, const struct opt_def *d);
void mf_parse_refused(void *base, const struct opt_def *d, const char *name, const char *val);
extern const struct opt_choice mf_fallocate_choices[], mf_fst_choices[];
/* options_finalize's checks of these options */
void mf_finalize(struct options *o);

#endif
