/* vdbench parameter files for --vdbench=FILE: fsd=, fwd= and rd= statements.
 *
 * The syntax as vdbench reads it: one statement per line, keyword=value pairs separated by
 * commas, a value list in parentheses; a line starting with '*', '#' or '/' is a comment, and
 * so is anything after a blank that follows a value (blanks next to a comma or parenthesis
 * are ignored); a statement ending with a comma, or a line starting with a comma, continues on
 * the next line. Keywords are case-insensitive. `fsd=default` / `fwd=default` give defaults to
 * the definitions after them. Sizes take k/m/g/t (1024-based), times s/m/h (plain = seconds).
 * Anything else vdbench knows but this engine does not run exits 2 naming the parameter. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fileset.h"
#include "iowatt.h"

const char *const vdb_op_names[VOP_N] = { "read",    "write",   "create", "delete", "open", "close",
					  "getattr", "setattr", "mkdir",  "rmdir",  "copy", "move" };

/* A statement is split in place: tokens and list items are pointers into the statement's own
 * buffer (no fixed-size copies, so no token is too long to hold); a list is split in a scratch
 * copy of the same size. Counts are checked before each store. */
#define MAXTOK 256  /* keyword=value pairs in one statement */
#define MAXITEMS 64 /* items in one (a,b,...) list: VDB_MAXDEF and 2 x VDB_MAXDIST fit */
#define SPLIT_UNBALANCED -1
#define SPLIT_TOOMANY -2

struct vdb_parser {
	char *scratch; /* as large as the whole text: any one value fits */
	int lineno;    /* the statement's first line, for messages */
};

/* split s in place at top-level commas into out[0..max-1]; the count, or SPLIT_* */
static int split_top(char *s, char **out, int max)
{
	int n = 0, depth = 0;
	char *start = s;
	for (char *p = s;; p++) {
		if (*p == '(') {
			depth++;
		} else if (*p == ')') {
			if (--depth < 0)
				return SPLIT_UNBALANCED;
		} else if (*p == 0 || (*p == ',' && depth == 0)) {
			if (n >= max)
				return SPLIT_TOOMANY;
			int last = *p == 0;
			*p = 0;
			out[n++] = start;
			if (last)
				break;
			start = p + 1;
		}
	}
	return depth ? SPLIT_UNBALANCED : n;
}

/* "(a,b)" -> items; "a" -> one item: split in the scratch copy, val stays intact for messages */
static int list_items(struct vdb_parser *ps, const char *val, char **out, int max)
{
	size_t l = strlen(val);
	char *inner = ps->scratch;
	if (l >= 2 && val[0] == '(' && val[l - 1] == ')') {
		memcpy(inner, val + 1, l - 2);
		inner[l - 2] = 0;
	} else {
		memcpy(inner, val, l + 1);
	}
	if (!inner[0])
		return SPLIT_UNBALANCED;
	return split_top(inner, out, max);
}

static int parse_dist(struct vdb_parser *ps, const char *val, struct vdb_dist *d)
{
	char *it[2 * VDB_MAXDIST];
	int n = list_items(ps, val, it, 2 * VDB_MAXDIST);
	memset(d, 0, sizeof(*d));
	if (n < 1)
		return -EINVAL;
	if (n == 1) {
		if (parse_size(it[0], &d->v[0], 1024) < 0 || !d->v[0])
			return -EINVAL;
		d->n = 1;
		d->pct[0] = 100;
		return 0;
	}
	if (n % 2)
		return -EINVAL;
	double sum = 0;
	for (int k = 0; k < n / 2; k++) {
		char *end;
		if (parse_size(it[2 * k], &d->v[k], 1024) < 0 || !d->v[k])
			return -EINVAL;
		d->pct[k] = strtod(it[2 * k + 1], &end);
		if (end == it[2 * k + 1] || *end || !(d->pct[k] > 0) || d->pct[k] > 100)
			return -EINVAL;
		sum += d->pct[k];
	}
	d->n = n / 2;
	return sum > 99.99 && sum < 100.01 ? 0 : -ERANGE;
}

int vdb_parse_dist(const char *val, struct vdb_dist *d)
{
	struct vdb_parser ps = { .scratch = malloc(strlen(val) + 1) };
	if (!ps.scratch)
		return -ENOMEM;
	int rc = parse_dist(&ps, val, d);
	free(ps.scratch);
	return rc;
}

/* a definition's name, or a reference to one: at most VDB_NAME - 1 bytes, never cut short (a
 * cut name could match another definition). An fsd's name is also a directory under --directory
 * when a file has several fsds: one plain component, never '/', '.' or '..'. */
static void check_name(const struct vdb_parser *ps, const char *kind, const char *name, int is_fsd)
{
	if (!*name)
		die_usage(kind, "line %d: %s= needs a name", ps->lineno, kind);
	if (strlen(name) >= VDB_NAME)
		die_usage(kind, "line %d: the name '%.80s' is longer than %d characters", ps->lineno, name, VDB_NAME - 1);
	if (is_fsd && (strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..")))
		die_usage(kind, "line %d: fsd=%s: a file system definition's name is a plain directory name (no '/', "
				"'.' or '..')",
			  ps->lineno, name);
}

static uint64_t get_u64(const char *stmt, const char *key, const char *val, uint64_t lo, uint64_t hi)
{
	uint64_t v;
	if (parse_u64(val, &v) < 0 || v < lo || v > hi)
		die_usage(key, "%s: must be a whole number from %llu to %llu, got '%s'", stmt, (unsigned long long)lo,
			  (unsigned long long)hi, val);
	return v;
}

/* seconds, with an optional s/m/h suffix */
static uint64_t get_secs(const char *stmt, const char *key, const char *val, uint64_t lo)
{
	char num[64];
	if (strlen(val) >= sizeof(num))
		die_usage(key, "%s: must be a time in seconds (suffix s, m or h allowed), got '%.80s'", stmt, val);
	str_copy(num, sizeof(num), val);
	size_t l = strlen(num);
	uint64_t mult = 1;
	if (l && strchr("smhSMH", num[l - 1])) {
		char u = (char)tolower((unsigned char)num[l - 1]);
		mult = u == 'h' ? 3600 : u == 'm' ? 60 : 1;
		num[l - 1] = 0;
	}
	uint64_t v;
	if (parse_u64(num, &v) < 0 || v < lo || v > 366ull * 24 * 3600 / mult)
		die_usage(key, "%s: must be a time in seconds (suffix s, m or h allowed), at least %llu, got '%s'", stmt,
			  (unsigned long long)lo, val);
	return v * mult;
}

static void fsd_set(struct vdb_parser *ps, struct vdb_fsd *f, const char *key, const char *val)
{
	if (!strcmp(key, "anchor")) {
		if (strlen(val) >= sizeof(f->anchor)) /* never cut: it is echoed as given */
			die_usage("anchor", "line %d: fsd: longer than %zu characters", ps->lineno, sizeof(f->anchor) - 1);
		str_copy(f->anchor, sizeof(f->anchor), val);
	} else if (!strcmp(key, "depth")) {
		f->depth = (unsigned)get_u64("fsd", key, val, 0, 16);
		f->set_depth = 1;
	} else if (!strcmp(key, "width")) {
		f->width = (unsigned)get_u64("fsd", key, val, 1, 1000000);
		f->set_width = 1;
	} else if (!strcmp(key, "files")) {
		f->files = get_u64("fsd", key, val, 1, 1000000000);
		f->set_files = 1;
	} else if (!strcmp(key, "size")) {
		int rc = parse_dist(ps, val, &f->size);
		if (rc == -ERANGE)
			die_usage("size", "fsd: the percentages of size=%s must add up to 100", val);
		if (rc < 0)
			die_usage("size", "fsd: must be a size (e.g. 16k, 5G) or (size,percent,...) pairs, got '%s'", val);
		f->set_size = 1;
	} else if (!strcmp(key, "openflags")) {
		char *it[8];
		int n = list_items(ps, val, it, 8);
		if (n < 1)
			die_usage("openflags", "fsd: bad value '%.80s'", val);
		for (int k = 0; k < n; k++) {
			for (char *p = it[k]; *p; p++)
				*p = (char)tolower((unsigned char)*p);
			if (!strcmp(it[k], "o_direct") || !strcmp(it[k], "directio"))
				f->direct = 1;
			else if (!strcmp(it[k], "o_sync"))
				f->osync = 1;
			else if (!strcmp(it[k], "o_dsync"))
				f->odsync = 1;
			else
				die_usage("openflags", "fsd: '%s' is not supported (o_direct, directio, o_sync, o_dsync)", it[k]);
		}
	} else {
		die_usage(key, "fsd: parameter '%s' is not supported by iowatt-engine (anchor, depth, width, files, size, "
			       "openflags)", key);
	}
}

static int op_from_name(const char *s)
{
	for (int k = 0; k < VOP_N; k++)
		if (!strcmp(s, vdb_op_names[k]))
			return k;
	return -1;
}

static void fwd_set(struct vdb_parser *ps, struct vdb_fwd *w, const char *key, const char *val)
{
	char *it[8];
	if (!strcmp(key, "fsd")) {
		int n = list_items(ps, val, it, 8);
		if (n < 1 || n > 2)
			die_usage("fsd", "fwd: fsd= names one file system definition (two for copy/move), got '%.80s'", val);
		for (int k = 0; k < n; k++) {
			check_name(ps, "fsd", it[k], 1);
			str_copy(w->fsd[k], sizeof(w->fsd[k]), it[k]);
		}
		w->nfsd = n;
	} else if (!strcmp(key, "operation")) {
		w->op = op_from_name(val);
		if (w->op < 0)
			die_usage("operation", "fwd: unknown operation '%s' (read, write, create, delete, open, close, getattr, "
					       "setattr, mkdir, rmdir, copy, move)", val);
	} else if (!strcmp(key, "rdpct")) {
		w->rdpct = (int)get_u64("fwd", key, val, 0, 100);
	} else if (!strcmp(key, "xfersize")) {
		int rc = parse_dist(ps, val, &w->xfer);
		if (rc == -ERANGE)
			die_usage("xfersize", "fwd: the percentages of xfersize=%s must add up to 100", val);
		if (rc < 0)
			die_usage("xfersize", "fwd: must be a size (e.g. 128k) or (size,percent,...) pairs, got '%s'", val);
		for (int k = 0; k < w->xfer.n; k++)
			if (w->xfer.v[k] > (64u << 20))
				die_usage("xfersize", "fwd: %s is above the 64m limit", val);
		w->set_xfer = 1;
	} else if (!strcmp(key, "fileselect")) {
		if (!strcmp(val, "random"))
			w->fileselect_seq = 0;
		else if (!strcmp(val, "sequential") || !strcmp(val, "seq"))
			w->fileselect_seq = 1;
		else
			die_usage("fileselect", "fwd: must be random or sequential, got '%s'", val);
	} else if (!strcmp(key, "fileio")) {
		int n = list_items(ps, val, it, 8);
		if (n < 1 || n > 2)
			die_usage("fileio", "fwd: must be random, sequential or (random,shared), got '%s'", val);
		w->shared = 0;
		for (int k = 0; k < n; k++) {
			if (!strcmp(it[k], "random"))
				w->fileio_seq = 0;
			else if (!strcmp(it[k], "sequential") || !strcmp(it[k], "seq"))
				w->fileio_seq = 1;
			else if (!strcmp(it[k], "shared") && k == 1)
				w->shared = 1;
			else
				die_usage("fileio", "fwd: must be random, sequential or (random,shared), got '%s'", val);
		}
	} else if (!strcmp(key, "threads")) {
		w->threads = (unsigned)get_u64("fwd", key, val, 1, 4096);
	} else if (!strcmp(key, "stopafter")) {
		w->stopafter = get_u64("fwd", key, val, 1, UINT32_MAX);
	} else {
		die_usage(key, "fwd: parameter '%s' is not supported by iowatt-engine (fsd, operation, rdpct, xfersize, "
			       "fileselect, fileio, threads, stopafter)", key);
	}
}

static void rd_set(struct vdb_parser *ps, struct vdb_rd *r, const char *key, const char *val)
{
	if (!strcmp(key, "fwd")) {
		char *it[VDB_MAXDEF];
		int n = list_items(ps, val, it, VDB_MAXDEF);
		if (n == SPLIT_TOOMANY)
			die_usage("fwd", "rd: fwd= names at most %d file workload definitions", VDB_MAXDEF);
		if (n < 1)
			die_usage("fwd", "rd: fwd= names the file workload definitions to run, got '%.80s'", val);
		for (int k = 0; k < n; k++) {
			check_name(ps, "fwd", it[k], 0);
			str_copy(r->fwd[k], sizeof(r->fwd[k]), it[k]);
		}
		r->nfwd = n;
	} else if (!strcmp(key, "fwdrate")) {
		if (!strcmp(val, "max")) {
			r->fwdrate = 0;
		} else {
			char *end;
			double v = strtod(val, &end);
			if (end == val || *end || !(v > 0) || v > 1e9)
				die_usage("fwdrate", "rd: must be max or a positive number of operations per second, got '%s'",
					  val);
			r->fwdrate = v;
		}
	} else if (!strcmp(key, "format")) {
		if (!strcmp(val, "yes"))
			r->format = VDB_FORMAT_YES;
		else if (!strcmp(val, "no"))
			r->format = VDB_FORMAT_NO;
		else if (!strcmp(val, "restart"))
			r->format = VDB_FORMAT_RESTART;
		else
			die_usage("format", "rd: must be yes, no or restart, got '%s'", val);
	} else if (!strcmp(key, "elapsed")) {
		r->elapsed_s = get_secs("rd", key, val, 1);
	} else if (!strcmp(key, "interval")) {
		r->interval_s = get_secs("rd", key, val, 1);
	} else if (!strcmp(key, "maxdata")) {
		if (parse_size(val, &r->maxdata, 1024) < 0 || !r->maxdata)
			die_usage("maxdata", "rd: must be a size in bytes (k/m/g/t suffixes), got '%s'", val);
	} else if (!strcmp(key, "warmup")) {
		r->warmup_s = get_secs("rd", key, val, 0);
	} else {
		die_usage(key, "rd: parameter '%s' is not supported by iowatt-engine (fwd, fwdrate, format, elapsed, "
			       "interval, warmup, maxdata)", key);
	}
}

static void lower(char *s)
{
	for (; *s; s++)
		*s = (char)tolower((unsigned char)*s);
}

static void fsd_defaults(struct vdb_fsd *f)
{
	memset(f, 0, sizeof(*f));
	f->depth = 0;
	f->width = 1;
	f->files = 1;
}

static void fwd_defaults(struct vdb_fwd *w)
{
	memset(w, 0, sizeof(*w));
	w->op = -1;
	w->rdpct = -1;
	w->xfer.n = 1;
	w->xfer.v[0] = 128 << 10; /* vdbench's file-system default since 5.03 */
	w->xfer.pct[0] = 100;
	w->fileio_seq = 1; /* vdbench: fileio=sequential unless given */
	w->threads = 1;
	w->stopafter = 100;
}

struct vdb_defaults {
	struct vdb_fsd fsd;
	struct vdb_fwd fwd;
};

static void statement(struct vdb_parser *ps, struct vdb_cfg *c, struct vdb_defaults *dfl, char *stmt, int lineno)
{
	char *tok[MAXTOK];
	char head[81]; /* the statement's start, for messages: the split below cuts stmt into tokens */
	str_copy(head, sizeof(head), stmt);
	ps->lineno = lineno;
	int n = split_top(stmt, tok, MAXTOK);
	if (n == SPLIT_TOOMANY)
		die_usage("vdbench", "line %d: more than %d parameters in one statement: '%s'", lineno, MAXTOK, head);
	if (n < 1)
		die_usage("vdbench", "line %d: unbalanced parentheses: '%s'", lineno, head);
	char *eq = strchr(tok[0], '=');
	if (!eq)
		die_usage("vdbench", "line %d: expected keyword=value, got '%.80s'", lineno, tok[0]);
	*eq = 0;
	char *kind = tok[0], *name = eq + 1;
	lower(kind);
	if (!*name)
		die_usage(kind, "line %d: %s= needs a name", lineno, kind);
	if (!strcmp(kind, "fsd") || !strcmp(kind, "fwd") || !strcmp(kind, "rd"))
		check_name(ps, kind, name, !strcmp(kind, "fsd"));
	int is_default = !strcmp(name, "default");
	struct vdb_fsd *f = NULL;
	struct vdb_fwd *w = NULL;
	struct vdb_rd *r = NULL;
	if (!strcmp(kind, "fsd")) {
		if (is_default) {
			f = &dfl->fsd;
		} else {
			if (c->nfsd >= VDB_MAXDEF)
				die_usage("fsd", "at most %d file system definitions", VDB_MAXDEF);
			for (int k = 0; k < c->nfsd; k++)
				if (!strcmp(c->fsd[k].name, name))
					die_usage("fsd", "line %d: fsd=%s is defined twice", lineno, name);
			f = &c->fsd[c->nfsd++];
			*f = dfl->fsd;
			str_copy(f->name, sizeof(f->name), name);
		}
	} else if (!strcmp(kind, "fwd")) {
		if (is_default) {
			w = &dfl->fwd;
		} else {
			if (c->nfwd >= VDB_MAXDEF)
				die_usage("fwd", "at most %d file workload definitions", VDB_MAXDEF);
			for (int k = 0; k < c->nfwd; k++)
				if (!strcmp(c->fwd[k].name, name))
					die_usage("fwd", "line %d: fwd=%s is defined twice", lineno, name);
			w = &c->fwd[c->nfwd++];
			*w = dfl->fwd;
			str_copy(w->name, sizeof(w->name), name);
		}
	} else if (!strcmp(kind, "rd")) {
		if (is_default)
			die_usage("rd", "line %d: rd=default is not supported", lineno);
		if (c->nrd++)
			die_usage("rd", "line %d: only one run definition per parameter file is supported (rd=%s follows rd=%s)",
				  lineno, name, c->rd.name);
		r = &c->rd;
		str_copy(r->name, sizeof(r->name), name);
	} else {
		die_usage(kind, "line %d: '%s=' is not supported by iowatt-engine (file sets take fsd=, fwd= and rd= "
				"lines)", lineno, kind);
	}
	for (int k = 1; k < n; k++) {
		char *e = strchr(tok[k], '=');
		if (!e || e == tok[k])
			die_usage("vdbench", "line %d: expected keyword=value, got '%.80s'", lineno, tok[k]);
		*e = 0;
		char *key = tok[k], *val = e + 1;
		lower(key);
		if (strcmp(key, "anchor"))
			lower(val);
		if (!*val)
			die_usage(key, "line %d: %s= needs a value", lineno, key);
		if (f)
			fsd_set(ps, f, key, val);
		else if (w)
			fwd_set(ps, w, key, val);
		else
			rd_set(ps, r, key, val);
	}
}

/* strip a comment and the blanks vdbench ignores; returns the cleaned line (in place) */
static char *clean_line(char *line)
{
	while (*line == ' ' || *line == '\t')
		line++;
	if (*line == '*' || *line == '#' || *line == '/')
		return line + strlen(line);
	char *o = line;
	for (char *p = line; *p; p++) {
		if (*p == '\r' || *p == '\n')
			break;
		if (*p == ' ' || *p == '\t') {
			/* a blank next to a separator is ignored; elsewhere it starts a comment */
			char *q = p;
			while (*q == ' ' || *q == '\t')
				q++;
			char prev = o > line ? o[-1] : ',';
			if (prev == ',' || prev == '(' || prev == '=' || *q == ',' || *q == ')') {
				p = q - 1;
				continue;
			}
			break;
		}
		*o++ = *p;
	}
	*o = 0;
	return line;
}

void vdb_parse_text(struct vdb_cfg *c, char *text)
{
	struct vdb_defaults dfl;
	fsd_defaults(&dfl.fsd);
	fwd_defaults(&dfl.fwd);
	memset(c, 0, sizeof(*c));
	c->rd.format = VDB_FORMAT_NO;
	c->rd.elapsed_s = 30;
	c->rd.interval_s = 1;
	size_t cap = strlen(text) + 2;
	char *stmt = malloc(2 * cap); /* the statement being joined, then the scratch for lists */
	if (!stmt)
		die_code(EXIT_FAIL, "out of memory");
	guard_own(stmt, NULL);
	struct vdb_parser ps = { .scratch = stmt + cap };
	stmt[0] = 0;
	int lineno = 0, stmt_line = 0;
	char *p = text;
	while (*p) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = 0;
		lineno++;
		char *line = clean_line(p);
		p = nl ? nl + 1 : p + strlen(p);
		if (!*line)
			continue;
		size_t sl = strlen(stmt);
		if (sl && stmt[sl - 1] != ',' && line[0] != ',') {
			statement(&ps, c, &dfl, stmt, stmt_line);
			stmt[0] = 0;
			sl = 0;
		}
		if (!sl)
			stmt_line = lineno;
		if (sl && stmt[sl - 1] == ',' && line[0] == ',')
			line++;
		memcpy(stmt + sl, line, strlen(line) + 1);
	}
	size_t sl = strlen(stmt);
	if (sl) {
		if (stmt[sl - 1] == ',')
			die_usage("vdbench", "line %d: the statement ends with a comma", stmt_line);
		statement(&ps, c, &dfl, stmt, stmt_line);
	}
	guard_disown(stmt);
	free(stmt);
	if (!c->nfsd)
		die_usage("fsd", "the parameter file has no fsd= line");
	if (!c->nfwd)
		die_usage("fwd", "the parameter file has no fwd= line");
	if (!c->nrd)
		die_usage("rd", "the parameter file has no rd= line");
	for (int k = 0; k < c->nfsd; k++) {
		if (!c->fsd[k].set_size)
			die_usage("size", "fsd=%s: size= is required", c->fsd[k].name);
		if (!c->fsd[k].anchor[0])
			die_usage("anchor", "fsd=%s: anchor= is required (it is replaced by --directory)", c->fsd[k].name);
	}
}

void vdb_parse_file(struct vdb_cfg *c, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		die_usage("vdbench", "cannot read parameter file '%s': %s", path, strerror(errno));
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	if (!buf)
		die_code(EXIT_FAIL, "out of memory");
	size_t got;
	while ((got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += got;
		if (cap - len < 2) {
			if (cap > (16u << 20))
				die_usage("vdbench", "parameter file '%s' is larger than 16 MiB", path);
			cap *= 2;
			char *nb = realloc(buf, cap);
			if (!nb)
				die_code(EXIT_FAIL, "out of memory");
			buf = nb;
		}
	}
	int bad = ferror(f);
	fclose(f);
	if (bad)
		die_usage("vdbench", "cannot read parameter file '%s'", path);
	buf[len] = 0;
	if (memchr(buf, 0, len))
		die_usage("vdbench", "parameter file '%s' is not text", path);
	vdb_parse_text(c, buf);
	free(buf);
}
