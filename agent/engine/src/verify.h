/* The verify family (fio's verify=, verify_pattern, do_verify, verify_only, ...): blocks written
 * with fio's verification header and checksum, read back and checked (README § Verification).
 * Hooks: options.c (rows, verify_finalize), main.c (verify_validate), job.c (verify_job_init),
 * worker.c (verify_gen, verify_done, the phase switch), report.c (verify_report). */
#ifndef IOWATT_VERIFY_H
#define IOWATT_VERIFY_H

#include "iowatt.h"

/* fio 3.33's numbers for the types (the header's verify_type field) */
enum vtype {
	VT_NONE = 0,
	VT_META = 1,          /* header only (fio: "meta", deprecated there, the header is always checked) */
	VT_MD5 = 2,
	VT_CRC64 = 3,
	VT_CRC32 = 4,
	VT_CRC32C = 5,        /* also crc32c-intel (fio stores 5 for both) */
	VT_CRC16 = 7,
	VT_CRC7 = 8,
	VT_SHA256 = 9,
	VT_SHA512 = 10,
	VT_SHA3_224 = 11,
	VT_SHA3_256 = 12,
	VT_SHA3_384 = 13,
	VT_SHA3_512 = 14,
	VT_XXHASH = 15,
	VT_SHA1 = 16,
	VT_PATTERN = 17,      /* verify_pattern without verify=: header + pattern */
	VT_PATTERN_NOHDR = 18, /* verify=pattern: the pattern only, no header */
	VT_NULL = 19,         /* pretend: reads are not checked */
};

#define VERIFY_HDR_BYTES 40     /* fio's struct verify_header */
#define VERIFY_MAGIC 0xacca
#define VERIFY_FAILS_KEPT 16    /* failures kept per thread for the JSON (all are counted) */
#define VERIFY_STDERR_LINES 8   /* failures printed per thread on stderr (then a count) */
#define VERIFY_DUMP_MAX 16      /* verify_dump files per job (received + expected count one each) */
#define VERIFY_BACKLOG_MAX (1ull << 32)

struct vfail {
	uint64_t offset;        /* of the failing verify interval */
	uint32_t length;
	uint64_t block_offset;  /* of the I/O that read it */
	uint32_t block_length;
	const char *what;       /* "magic", "len", "offset", "rand_seed", "numberio", "header_crc", "md5", ... */
	char expected[136], actual[136]; /* hex (checksums, fields) */
	int64_t first_bad;      /* file offset of the first differing data byte, -1 unknown */
	uint64_t bad_bytes;     /* differing data bytes in the interval (0 unknown) */
	int32_t file;           /* a job of several files: the file's index in the job's files (-1 one file) */
};

/* a job of several files per clone: one write of the write phase, read back from this log */
struct vlogent {
	uint64_t off, vseq;
	uint32_t len, fidx;     /* fidx: the worker's file index (io_req's) */
};

enum vmode { VM_WRITE, VM_VERIFY, VM_READ };
struct vworker {
	enum vmode mode;
	int fills;              /* writes are filled here (worker.c's refresh_buffer leaves them) */
	int check_seq;          /* verify phase: each block was written once, so numberio/rand_seed are known */
	uint64_t wcount;        /* writes generated in the write phase (UINT64_MAX: verify_only) */
	uint64_t replayed;
	/* backlog (verify_backlog): writes since the last batch, the batch being read */
	uint64_t since, batch_left;
	int backlog_state;      /* 0 writing, 1 draining before the batch, 2 batch, 3 draining after it */
	/* the replay cursor: the generator's state as the write phase began, advanced by each verify
	 * read (verify phase and backlog batches); swapped with the worker's own while it runs */
	struct rng rng;
	struct perm perm;
	uint64_t perm_i, seq_pos[2], issued, nios;
	uint64_t *map;          /* mixed block sizes: the cursor's own random map */
	struct patgen *pat;     /* src/patterns.c: the cursor's pattern state (rw=X:N, bsrange, ...), or NULL */
	/* results */
	uint64_t blocks, bytes, intervals, bad_intervals;
	struct vfail fails[VERIFY_FAILS_KEPT];
	unsigned nfails, printed;
	unsigned char *scratch; /* expected data of one block */
	/* fio times each phase on its own: the write phase ends here (after end_fsync), the read-back
	 * starts after the clones' barrier (its fsync and cache drop are part of it, as fio's) */
	uint64_t t_wend, t_vstart;  /* 0: not reached */
	/* hole patterns (rw=write:N): fio's job loop, a read-back after every pass (verify_next_pass) */
	unsigned phases;        /* read-backs started */
	uint64_t t_pass;        /* this pass's write phase began (0: the job's start) */
	uint64_t w_ns, v_ns;    /* the finished passes' write phases (after the first) and read-backs */
	uint64_t t_wend1;       /* the first pass's write phase ended (0: one pass) */
	/* io_size > size (write, randwrite; verify_io_passes): fio's job loop, passes of size bytes */
	uint64_t pass_bytes;    /* a pass's writes (0: one write phase) */
	uint64_t pass_until;    /* the writer's issued bytes at which this pass's writes end */
	unsigned passes;        /* passes started */
	/* verify_latest_only: the blocks written in this phase, read back once each (fio's rbtree) */
	uint64_t *wmap, wmap_i;
	int pace_on;            /* the job's pacing, off in read-backs */
	/* several files per clone: the writes' log (fio's io_hist: write order with a random map,
	 * else by file and offset, each block's latest write once), read back in that order */
	struct vlogent *log;
	uint64_t nlog, logcap, log_i;
	int logged;             /* 1: this worker logs its writes */
	int32_t cur_file;       /* the file of the block being checked (vfail.file) */
};

/* options.c: the rows' parsers and the checks that need no target */
void verify_parse_pattern(struct options *o, const char *name, const char *val);
int verify_pattern_parse(const char *s, struct vpattern *p, char *err, size_t errlen); /* 0 or -EINVAL */
void verify_finalize(struct options *o);
const char *verify_type_name(int t);
/* main.c: checks that need the target (verify_dump needs a directory) */
void verify_validate(const struct options *o, const struct target *t);
/* io_size larger than size on a plain write or randwrite job: fio's job loop of passes (each read
 * back before the next, the read-backs counted in io_size) */
int verify_io_passes(const struct options *o);
/* writes that may land on a block written before in the same phase, without a random map
 * (rw=randwrite with norandommap, backwards holes): fio reads back each block once, its latest
 * write (verify_latest_only) */
int verify_latest_only(const struct options *o);
/* job.c, at job start / job_free */
int verify_job_init(struct job *j);
void verify_job_free(struct job *j);
/* worker.c */
int verify_worker_init(struct worker *w);
void verify_worker_free(struct worker *w);
void verify_start(struct worker *w);              /* before the first phase: snapshot, verify_only */
int verify_gen(struct worker *w, struct io_req *r); /* gen_io with the phases of verify */
int verify_hold(struct worker *w);                /* async: 1 = submit nothing new (backlog drain) */
void verify_done(struct worker *w, struct io_req *r); /* a read with vcheck completed */
int verify_next_phase(struct worker *w);          /* after the write phase: 1 = run the verify phase */
int verify_pass_ends_phase(const struct worker *w); /* patterns.c: a pass end ends the write phase */
int verify_next_pass(struct worker *w);           /* after a read-back: 1 = run the next pass's writes */
void verify_finish(struct worker *w);             /* failures -> the worker's error (EILSEQ) */
/* report.c: the clone's measured time per direction (read, write, trim) as fio's update_runtime
 * counts it for a verify job (meas_ns: its whole measured time, from t0): writes the write
 * phase, reads the read-back (plus the write phase for a job that reads: rw, randrw); a job
 * without a write phase has meas_ns for every direction */
void verify_dir_ns(const struct worker *w, uint64_t t0, uint64_t meas_ns, uint64_t out[3]);
/* report.c: jobs[].iowatt.verify */
/* the "verify" object of a jobs[] entry: clones [first, first + n) of job j (sched.c's entries) */
void verify_report(struct jw *jw, const struct job *j, unsigned first, unsigned n);
/* unit tests */
void verify_fill_block(const struct job *j, unsigned thread, unsigned char *buf, uint32_t len, uint64_t off,
		       uint64_t seq, uint64_t seed);
uint64_t verify_block_seed(const struct job *j, unsigned thread, uint64_t seq);
int verify_check_block(struct worker *w, const unsigned char *buf, uint32_t len, uint64_t off, uint64_t seq,
		       int check_seq);

#endif
