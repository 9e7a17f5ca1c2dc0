/* Reporting (fio's output options): formats, --output, terse/normal formatters, ETA line, logs. */
#ifndef IOWATT_OUTPUT_H
#define IOWATT_OUTPUT_H

#include <stdint.h>
#include <stdio.h>

struct jval;
struct runcfg;
struct job;

/* --output-format bits (fio's list, printed in fio's order: terse, json, normal) */
#define OUT_TERSE 1u
#define OUT_JSON 2u
#define OUT_NORMAL 4u
#define OUT_JSONPLUS 8u

/* process options (src/output.c): 1 if name is one of them (applied to cfg), else 0 */
int output_cli_arg(struct runcfg *cfg, const char *name, const char *val);
/* --output=FILE: created now (O_EXCL|O_NOFOLLOW, 0600; beneath the jobs' beneath=DIR when set),
 * before the first I/O; exits 2 naming "output" */
void output_open(struct runcfg *cfg);
/* the JSON document is written into a memory stream; output_finish prints it in every format
 * asked for, to --output or stdout. 0, or -1 when the output could not be written */
FILE *output_doc_begin(struct runcfg *cfg, char **buf, size_t *len);
int output_finish(struct runcfg *cfg, FILE *doc, char **buf, size_t *len);
/* --eta / --eta-newline: the ETA line on stderr, called about once a second while jobs run */
void output_eta_tick(struct runcfg *cfg, struct job *jobs, int first, int last, uint64_t now);

/* Create a new output file (a log, --output): O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600, relative to
 * the working directory, or beneath ROOT (confined: no link, no "..") when ROOT is non-empty.
 * An fd, or exits 2 naming OPT. */
int output_create(const char *opt, const char *path, const char *root);

/* formatters of the JSON document (doc = the parsed document): src/terse.c, src/normal.c */
void terse_print(FILE *f, const struct jval *doc, int version);
void normal_print(FILE *f, const struct jval *doc);

/* JSON tree access for the formatters */
double jnum(const struct jval *obj, const char *key);    /* 0 when absent or not a number */
uint64_t ju64(const struct jval *obj, const char *key);
const char *jstr(const struct jval *obj, const char *key); /* "" when absent */
const struct jval *jpath(const struct jval *obj, const char *a, const char *b); /* obj.a.b */
/* fio's num2str: at most maxlen significant digits, k/M/G (base 1000) or Ki/Mi/Gi (1024) */
void num2str_fio(char *out, size_t len, uint64_t num, int maxlen, int pow2, const char *unit);

/* write_*_log (src/logs.c): files created before the first I/O (exits 2), a worker's state, the
 * hook of every measured completion, the job's end (flush), errors, release */
struct worker;
struct jw;
struct options;
struct opt_def;
void logs_create(struct job *jobs, int njobs);
int logs_worker_init(struct worker *w);
/* the job's own I/O priority value (prio, prioclass; 0 without them), as fio's td->ioprio */
unsigned log_ioprio(const struct options *o);
void logs_worker_start(struct worker *w);
/* ioprio: the I/O's own priority value with cmdprio_*, else 0xffff (the job's) */
void logs_io(struct worker *w, uint64_t t_done, int ddir, uint64_t len, uint64_t off, uint64_t slat, uint64_t clat,
	     uint64_t lat, int has_slat, unsigned ioprio);
void logs_worker_end(struct worker *w);
/* one line of a per-I/O log, byte for byte fio's printf (unit tests): its length at p */
#define LOG_LINE_MAX 128
size_t logs_fmt_line(char *p, uint64_t ms, uint64_t val, int ddir, uint64_t bs, int with_off, uint64_t off,
		     const char *prio);
int logs_error(struct job *j, char *msg, size_t len);
void logs_worker_free(struct worker *w);
void logs_close_all(struct job *jobs, int njobs);
/* option rows' functions (opts[] in options.c) */
void parse_percentile_list(void *base, const struct opt_def *d, const char *name, const char *val);
void echo_percentile_list(struct jw *w, const struct options *o, const struct opt_def *d);
void parse_log_refused(void *base, const struct opt_def *d, const char *name, const char *val);
/* the job's percentile list (its percentile_list, or fio's default) */
const double *job_percentiles(const struct options *o, int *n);

#endif
