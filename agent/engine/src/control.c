/* fio's control options that issue 24's job files use (README § Job options): ignore_error's
 * per-type errno lists, exit_what's choices, and the checks of allow_file_create, fill_device and
 * percentage offset_increment / offset_align. The parsers read outside text (job files, the
 * server's workloads): every value is bounded and a bad one exits 2 naming the option. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iowatt.h"
#include "optable.h"
#include "control.h"
#include "multifile.h"

/* fio 3.33's str2error(): these names only, each errno its position + 1 (Linux numbers 1..34);
 * any other name is fio's "Unknown error ..., please use number value" */
static const char *const errno_names[] = {
	"EPERM", "ENOENT", "ESRCH", "EINTR", "EIO", "ENXIO", "E2BIG", "ENOEXEC", "EBADF", "ECHILD", "EAGAIN",
	"ENOMEM", "EACCES", "EFAULT", "ENOTBLK", "EBUSY", "EEXIST", "EXDEV", "ENODEV", "ENOTDIR", "EISDIR",
	"EINVAL", "ENFILE", "EMFILE", "ENOTTY", "ETXTBSY", "EFBIG", "ENOSPC", "ESPIPE", "EROFS", "EMLINK", "EPIPE",
	"EDOM", "ERANGE",
};

/* one errno of a list: a name above, or a number (fio's atoi: leading digits, a sign made positive) */
static int one_errno(const char *name, const char *tok, const char *whole)
{
	if (tok[0] == 'E') {
		for (size_t i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++)
			if (!strcmp(errno_names[i], tok))
				return (int)i + 1;
		die_usage(name, "unknown error '%s' in '%s' (fio's names EPERM..ERANGE, or a number)", tok, whole);
	}
	const char *p = tok;
	if (*p == '-' || *p == '+')
		p++;
	if (*p < '0' || *p > '9')
		die_usage(name, "unknown error '%s' in '%s' (fio's names EPERM..ERANGE, or a number)", tok, whole);
	long v = 0;
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (*p - '0');
		if (v > 4095) /* errno values end at 4095 (MAX_ERRNO) */
			die_usage(name, "error number out of range in '%s'", whole);
	}
	if (*p) /* fio's atoi would stop here; a value with trailing text is a typo */
		die_usage(name, "invalid error number '%s' in '%s'", tok, whole);
	if (!v)
		die_usage(name, "unknown error '%s' in '%s' (0 is no error)", tok, whole);
	return (int)v;
}

/* ignore_error=READ_LIST[,WRITE_LIST[,VERIFY_LIST]], each list ERR[:ERR...]: the errors of that
 * type a job continues over, in place of fio's EIO and EILSEQ; a non-empty list also turns that
 * type of continue_on_error on (fio's ignore_error_type). An empty list leaves its type as it was. */
void ctl_parse_ignore_error(void *base, const struct opt_def *d, const char *name, const char *val)
{
	struct options *o = base;
	(void)d;
	char buf[512];
	opt_value_copy(name, val, buf, sizeof(buf));
	char *p = buf; /* blanks are part of the tokens, as fio 3.33 reads them (" EIO" is unknown) */
	for (int t = 0; p; t++) {
		char *comma = strchr(p, ',');
		if (comma)
			*comma++ = 0;
		if (t >= CTL_ERR_TYPES)
			die_usage(name, "more than %d lists in '%s' (read, write, verify)", CTL_ERR_TYPES, val);
		unsigned k = 0;
		for (char *save = NULL, *tok = p; tok; tok = save) {
			save = strchr(tok, ':');
			if (save)
				*save++ = 0;
			if (!*tok)
				break; /* fio: an empty entry ends the list */
			if (k == CTL_IGNORE_MAX)
				die_usage(name, "more than %d errors in one list of '%s'", CTL_IGNORE_MAX, val);
			o->ignore_err[t][k++] = one_errno(name, tok, val);
		}
		if (k) {
			o->nignore_err[t] = k;
			o->continue_on_error |= 1 << t; /* CE_READ, CE_WRITE, CE_VERIFY */
		}
		p = comma;
	}
}

void ctl_echo_ignore_error(struct jw *w, const struct options *o, const struct opt_def *d)
{
	jw_arr(w, d->key);
	for (int t = 0; t < CTL_ERR_TYPES; t++) {
		jw_arr(w, NULL);
		for (unsigned k = 0; k < o->nignore_err[t]; k++)
			jw_i64(w, NULL, o->ignore_err[t][k]);
		jw_arr_end(w);
	}
	jw_arr_end(w);
}

int ctl_error_ignored(const struct options *o, unsigned kind, int err)
{
	/* fio's td_error_type: EILSEQ is a verify error whatever the direction */
	int t = err == EILSEQ ? 2 : kind == CE_READ ? 0 : kind == CE_WRITE ? 1 : 2;
	if (!(o->continue_on_error & (1 << t)))
		return 0;
	if (!o->nignore_err[t])
		return err == EIO || err == EILSEQ; /* fio's non-fatal errors */
	for (unsigned k = 0; k < o->nignore_err[t]; k++)
		if (o->ignore_err[t][k] == err)
			return 1;
	return 0;
}

/* offset_increment=N% (fio's offset_increment_percent): N % of the file, aligned up (below) */
void ctl_parse_offset_increment(void *base, const struct opt_def *d, const char *name, const char *val)
{
	struct options *o = base;
	size_t n = strlen(val);
	o->oinc_pct = 0;
	o->offset_increment = 0;
	if (n && val[n - 1] == '%') {
		char buf[16];
		if (n - 1 >= sizeof(buf) || n == 1)
			die_usage(name, "invalid percentage '%s'", val);
		memcpy(buf, val, n - 1);
		buf[n - 1] = 0;
		uint64_t p;
		if (parse_u64(buf, &p) || p < 1 || p > 100)
			die_usage(name, "a percentage must be 1..100%%, got '%s'", val);
		o->oinc_pct = (unsigned)p;
		return;
	}
	uint64_t v;
	if (parse_size(val, &v, o->kb_base))
		die_usage(name, "invalid size '%s'", val);
	if (d->max && v > d->max)
		die_usage(name, "larger than %llu: '%s'", (unsigned long long)d->max, val);
	o->offset_increment = v;
}

void ctl_echo_offset_increment(struct jw *w, const struct options *o, const struct opt_def *d)
{
	jw_u64(w, d->key, o->offset_increment); /* bytes: a percentage is resolved against the target */
}

/* A percentage as fio 3.33 reads it: fio sets its clones up one after another, clone 0 first,
 * then the last down to clone 1, and each takes N % of the file's size as the clones before it
 * left it: the size before the run (0 for a file the run creates), grown to each earlier clone's
 * region end (with size, on a file: fio lays each clone's region out at its set-up). The whole
 * start is then aligned up to offset_align, or the smallest block size (fio's get_start_offset).
 * Calls back with each clone's increment and start in that order; stops when it returns 1. */
static void pct_walk(const struct options *o, int (*each)(void *arg, unsigned k, uint64_t inc, uint64_t start),
		     void *arg)
{
	uint64_t a = o->offset_align ? o->offset_align : opt_min_bs(o);
	uint64_t s = o->oinc_base;
	for (unsigned n = 0, k = 0; n < o->numjobs; n++, k = k ? k - 1 : o->numjobs - 1) {
		uint64_t inc = (uint64_t)((unsigned __int128)o->oinc_pct * s / 100);
		unsigned __int128 off = (unsigned __int128)o->offset + (unsigned __int128)k * inc;
		if (a > 1)
			off = (off + a - 1) / a * a;
		uint64_t start = off > UINT64_MAX / 2 ? UINT64_MAX / 2 : (uint64_t)off; /* target.c refuses it */
		if (each(arg, k, inc, start))
			return;
		if (o->oinc_grows && o->size_set && start + o->size > s)
			s = start + o->size;
	}
}

struct pct_find {
	unsigned k;
	uint64_t inc, start;
};

static int pct_find_one(void *arg, unsigned k, uint64_t inc, uint64_t start)
{
	struct pct_find *f = arg;
	if (k != f->k)
		return 0;
	f->inc = inc;
	f->start = start;
	return 1;
}

static int pct_furthest(void *arg, unsigned k, uint64_t inc, uint64_t start)
{
	(void)k, (void)inc;
	uint64_t *most = arg;
	*most = start > *most ? start : *most;
	return 0;
}

uint64_t ctl_clone_offset(const struct options *o, unsigned k)
{
	if (!o->oinc_pct)
		return o->offset + (uint64_t)k * o->offset_increment;
	struct pct_find f = { .k = k, .start = o->offset };
	pct_walk(o, pct_find_one, &f);
	return f.start;
}

uint64_t ctl_clone_span(const struct options *o)
{
	if (!o->oinc_pct)
		return o->numjobs ? (uint64_t)(o->numjobs - 1) * o->offset_increment : 0;
	uint64_t most = o->offset;
	pct_walk(o, pct_furthest, &most);
	return most - o->offset;
}

void ctl_resolve_offset_increment(struct options *o, uint64_t base, int grows)
{
	if (!o->oinc_pct)
		return;
	o->oinc_base = base;
	o->oinc_grows = grows;
	/* the echo: the increment of the last clone fio sets up (clone 1; the only one of 2 clones) */
	struct pct_find f = { .k = o->numjobs > 1 ? 1 : 0 };
	pct_walk(o, pct_find_one, &f);
	o->offset_increment = o->numjobs > 1 ? f.inc : (uint64_t)((unsigned __int128)o->oinc_pct * base / 100);
}

/* create_serialize=0 (fio: each job lays its own files out in its own thread, before its start
 * group is released): a single-file job's file is checked and laid out when its start group
 * starts (sched.c); a job of several files is refused */
void ctl_finalize(const struct options *o)
{
	if (!o->create_serialize && mf_wanted(o))
		die_usage("create_serialize", "0 is not implemented for jobs of several files (nrfiles, filename lists, "
					      "filesize, create_on_open, numjobs without filename)");
}

void ctl_dump_io_error(const struct options *o, const char *path, int err, int ddir, uint64_t off, uint32_t len)
{
	/* fio's line ("fio: io_u error on file F: ERR: DDIR offset=N, buflen=N"), one write so clones'
	 * lines never interleave */
	char line[PATH_MAX + 256];
	int n = snprintf(line, sizeof(line), "iowatt-engine: %s: io_u error on file %s: %s: %s offset=%llu, buflen=%u\n",
			 o->name, path, strerror(err), ddir == DDIR_READ ? "read" : ddir == DDIR_WRITE ? "write" : "trim",
			 (unsigned long long)off, len);
	if (n > 0)
		(void)!write(STDERR_FILENO, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}
