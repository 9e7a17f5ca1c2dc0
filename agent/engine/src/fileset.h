/* iowatt-engine --vdbench=FILE: vdbench-style file sets (fsd / fwd / rd), run natively. */
#ifndef IOWATT_FILESET_H
#define IOWATT_FILESET_H

#include <limits.h>
#include <signal.h>
#include <stdint.h>

#define VDB_MAXDIST 16
#define VDB_MAXDEF 16
#define VDB_NAME 64

/* a fixed value (n = 1, pct 100) or vdbench's (v1,p1,v2,p2,...) distribution */
struct vdb_dist {
	int n;
	uint64_t v[VDB_MAXDIST];
	double pct[VDB_MAXDIST];
};

enum vdb_op {
	VOP_READ, VOP_WRITE, VOP_CREATE, VOP_DELETE, VOP_OPEN, VOP_CLOSE, VOP_GETATTR, VOP_SETATTR,
	VOP_MKDIR, VOP_RMDIR, VOP_COPY, VOP_MOVE, VOP_N
};
extern const char *const vdb_op_names[VOP_N];

enum { VDB_FORMAT_NO, VDB_FORMAT_YES, VDB_FORMAT_RESTART };

struct vdb_fsd {
	char name[VDB_NAME];
	char anchor[PATH_MAX];          /* as given (replaced by --directory) */
	unsigned depth, width;
	uint64_t files;                 /* per lowest-level directory, as given */
	struct vdb_dist size;           /* as given */
	int direct, osync, odsync;      /* openflags */
	int set_depth, set_width, set_files, set_size;
};

struct vdb_fwd {
	char name[VDB_NAME];
	char fsd[2][VDB_NAME];          /* copy / move: fsd=(source,target) */
	int nfsd;
	int op;                         /* enum vdb_op; -1 = not given (read, or read/write by rdpct) */
	int rdpct;                      /* -1 = not given */
	struct vdb_dist xfer;
	int fileselect_seq, fileio_seq, shared;
	unsigned threads;
	uint64_t stopafter;             /* random fileio: blocks per file before the next file */
	int set_xfer;
};

struct vdb_rd {
	char name[VDB_NAME];
	char fwd[VDB_MAXDEF][VDB_NAME];
	int nfwd;
	double fwdrate;                 /* 0 = max */
	int format;
	uint64_t elapsed_s, interval_s, warmup_s;
	uint64_t maxdata;               /* stop after this many bytes read + written (0 = no limit) */
};

struct vdb_cfg {
	struct vdb_fsd fsd[VDB_MAXDEF];
	int nfsd;
	struct vdb_fwd fwd[VDB_MAXDEF];
	int nfwd;
	struct vdb_rd rd;
	int nrd;
};

/* Parse a vdbench parameter file (vdbench_parse.c); exits 2 naming the parameter on bad input. */
void vdb_parse_file(struct vdb_cfg *c, const char *path);
void vdb_parse_text(struct vdb_cfg *c, char *text);
/* "128k", "5G", "(4k,50,8k,50)" into d; -EINVAL on bad input */
int vdb_parse_dist(const char *val, struct vdb_dist *d);

/* The text's parse and the resolution --parse-only makes (scale 1; a set's sizes drawn one by one
 * up to 4096 files, not 2^24), no output (exits 2 on bad input; parse_guarded turns that into a
 * return): the fuzz target's entry. */
void vdb_parse_check(char *text);

struct jw;
/* --limits' "vdbench": the flags' ranges and the parameter file's sizes (src/limits.c) */
void fileset_limits(struct jw *w);

/* 1 when argv asks for the file-set mode (a --vdbench=FILE flag). */
int fileset_requested(int argc, char **argv);
/* Parse the flags and the parameter file, run, print the report; returns the exit code. */
int fileset_main(int argc, char **argv, const volatile sig_atomic_t *signo);

#endif
