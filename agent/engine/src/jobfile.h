/* Job files: fio's INI format (and the JSON one, and a command line) as one list of sections,
 * then jobs. agent/engine/README.md § Job files. */
#ifndef IOWATT_JOBFILE_H
#define IOWATT_JOBFILE_H

#include <stddef.h>

#include "iowatt.h"

/* Bounds of one job file (--limits' "jobfile"): a hostile file costs at most about
 * JF_MAX_TOTAL_BYTES of text plus the sections' and options' records. */
#define JF_MAX_FILE_BYTES (1u << 20)   /* one file (the job file or an include) */
#define JF_MAX_TOTAL_BYTES (4u << 20)  /* the job file and all its includes */
#define JF_MAX_LINE 8192               /* bytes of one line (fio's OPT_LEN_MAX) */
#define JF_MAX_VALUE 4096              /* bytes of one value after ${VAR} and keyword expansion */
#define JF_MAX_SECTIONS 512            /* [sections], [global] ones included (jobs: MAX_JOBS) */
#define JF_MAX_SECTION_OPTIONS 1024    /* option lines in one section, includes counted */
#define JF_MAX_OPTIONS 16384           /* option lines in the whole file */
#define JF_MAX_INCLUDE_DEPTH 8         /* include nesting */
#define JF_MAX_INCLUDES 64             /* include directives followed in one job file */
#define JF_MAX_NAME 127                /* bytes of a section name (a job's name) */

/* parse flags */
#define JF_NO_INCLUDE 1u  /* `include` exits 2 (--untrusted; the fuzz target) */
#define JF_NO_ENV 2u      /* ${VAR} exits 2 (--untrusted) */
#define JF_UNTRUSTED_PATHS 4u /* path options beneath beneath=DIR (when one is set) */
#define JF_UNTRUSTED (JF_NO_INCLUDE | JF_NO_ENV | JF_UNTRUSTED_PATHS) /* --untrusted */

struct jf_opt {
	const char *name;
	const char *val;  /* after ${VAR}, keywords and arithmetic; NULL = a bare flag */
	const char *file; /* where it was written (NULL: the command line) */
	int line;
};
struct jf_sec {
	const char *name;
	int global;
	const char *file;
	int line;
	int first, n; /* its options: opt[first .. first + n) */
};
struct jf_doc {
	struct jf_opt *opt;
	int nopt, capopt;
	struct jf_sec *sec;
	int nsec, capsec;
	void **blk; /* every string and buffer the document owns */
	int nblk, capblk;
	size_t text_bytes;
	int nincludes;
	unsigned flags;
	int from_argv; /* a command line: no [job] section means one job of the global options */
};

/* The process flags of the block mode that concern job files (parse_cmdline reads them). */
struct jf_proc {
	int parse_only, showcmd, showjob, untrusted;
};

/* FILE's text (fio INI unless the first non-blank byte is '{': JSON) into doc; exits 2 with
 * "FILE:LINE: OPTION: reason". doc starts zeroed; free it with jf_doc_free (inside
 * parse_guarded the caller hands it to guard_own with jf_doc_release). */
void jf_doc_release(void *doc);
void jf_parse_text(struct jf_doc *doc, const char *text, const char *path, unsigned flags);
void jf_parse_file(struct jf_doc *doc, const char *path, unsigned flags);
/* a command line's job options (argv without the program and process flags): before the first
 * --name a global section, each --name=X a section (global when X starts with "global", as in
 * fio) */
void jf_parse_argv(struct jf_doc *doc, int argc, char **argv);
void jf_doc_free(struct jf_doc *doc);
/* doc's jobs into cfg (global: the defaults on entry, the echoed global options on return);
 * cli: options that override every job (a job file's command line), may be NULL. Options are
 * applied and checked, each error naming FILE:LINE; --untrusted's path rule is applied. */
void jf_jobs(struct runcfg *cfg, struct options *global, const struct jf_doc *doc, const struct jf_doc *cli,
	     unsigned flags);
/* the where of job i's section, for errors after jf_jobs (options_finalize) */
void jf_where_job(int i);
/* --parse-only, --showcmd, --showjob: print doc (and the jobs made of it) on stdout */
void jf_print_parse_only(const struct jf_doc *doc, const struct jf_doc *cli, const struct runcfg *cfg);
void jf_print_cmdline(const struct jf_doc *doc, const struct jf_doc *cli);
void jf_print_ini(const struct jf_doc *doc, const struct jf_doc *cli);
/* --limits' "jobfile" */
void jf_limits(struct jw *w);
/* --untrusted's rule for an option naming a path (README § Job files: path options): nothing
 * when opt is not one or no beneath is set, else exits 2 unless val resolves beneath `beneath`
 * (lexically; the open itself is confined again at run time) */
void jf_check_path_option(const char *opt, const char *val, const char *beneath);
int jf_is_path_option(const char *opt);

#endif
