/* Job files (README § Job files): fio's INI format, the JSON one and a command line, each read
 * into one document of sections and options (struct jf_doc), then into the job list. The INI
 * rules are fio's (init.c, parse.c, options.c of fio 3.33, read for the facts): a line whose
 * first non-blank character is ';' or '#' is a comment, and on any other line everything from
 * the first ';' and from the first '#' on is dropped; `[name]` starts a section, a name
 * starting with "global" is a global section that applies to the jobs after it; `key=value`
 * or a bare `key`; `include FILE` pulls FILE's lines into the current section; in a value,
 * ${VAR} is the environment variable (empty when unset) and $pagesize, $mb_memory, $ncpus are
 * the system's, after which a value with + - * / is computed as bc would (fio runs bc). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jobfile.h"

/* ---- the document: every string in one list of blocks, freed together ---- */

static void *keep(struct jf_doc *d, void *p)
{
	if (!p)
		die_code(EXIT_FAIL, "out of memory");
	if (d->nblk == d->capblk) {
		int cap = d->capblk ? d->capblk * 2 : 64;
		void **nb = realloc(d->blk, sizeof(*nb) * (size_t)cap);
		if (!nb) {
			free(p);
			die_code(EXIT_FAIL, "out of memory");
		}
		d->blk = nb;
		d->capblk = cap;
	}
	d->blk[d->nblk++] = p;
	return p;
}

static char *dupn(struct jf_doc *d, const char *s, size_t n)
{
	char *p = malloc(n + 1);
	if (p) {
		memcpy(p, s, n);
		p[n] = 0;
	}
	return keep(d, p);
}

static char *sdup(struct jf_doc *d, const char *s)
{
	return s ? dupn(d, s, strlen(s)) : NULL;
}

static void drop(struct jf_doc *d, void *p)
{
	for (int i = d->nblk - 1; i >= 0; i--)
		if (d->blk[i] == p) {
			free(p);
			d->blk[i] = d->blk[--d->nblk];
			return;
		}
}

void jf_doc_free(struct jf_doc *d)
{
	for (int i = 0; i < d->nblk; i++)
		free(d->blk[i]);
	free(d->blk);
	free(d->opt);
	free(d->sec);
	memset(d, 0, sizeof(*d));
}

void jf_doc_release(void *p)
{
	jf_doc_free(p);
}

/* errors name FILE:LINE (util.c prefixes them while a place is set) */
static void at(const char *file, int line)
{
	die_at(file, line);
}

static struct jf_sec *add_sec(struct jf_doc *d, const char *name, size_t nlen, const char *file, int line)
{
	if (d->nsec >= JF_MAX_SECTIONS) {
		at(file, line);
		die_usage("jobfile", "more than %d sections", JF_MAX_SECTIONS);
	}
	if (d->nsec == d->capsec) {
		int cap = d->capsec ? d->capsec * 2 : 16;
		struct jf_sec *ns = realloc(d->sec, sizeof(*ns) * (size_t)cap);
		if (!ns)
			die_code(EXIT_FAIL, "out of memory");
		d->sec = ns;
		d->capsec = cap;
	}
	struct jf_sec *s = &d->sec[d->nsec++];
	s->name = dupn(d, name, nlen);
	s->global = !strncmp(s->name, "global", 6); /* fio: any name starting with "global" */
	s->file = file;
	s->line = line;
	s->first = d->nopt;
	s->n = 0;
	return s;
}

static void add_opt(struct jf_doc *d, const char *name, const char *val, const char *file, int line)
{
	struct jf_sec *s = &d->sec[d->nsec - 1];
	if (d->nopt >= JF_MAX_OPTIONS || s->n >= JF_MAX_SECTION_OPTIONS) {
		at(file, line);
		die_usage(name, "more than %d options in the %s", d->nopt >= JF_MAX_OPTIONS ? JF_MAX_OPTIONS : JF_MAX_SECTION_OPTIONS,
			  d->nopt >= JF_MAX_OPTIONS ? "job file" : "section");
	}
	if (d->nopt == d->capopt) {
		int cap = d->capopt ? d->capopt * 2 : 64;
		struct jf_opt *no = realloc(d->opt, sizeof(*no) * (size_t)cap);
		if (!no)
			die_code(EXIT_FAIL, "out of memory");
		d->opt = no;
		d->capopt = cap;
	}
	d->opt[d->nopt++] = (struct jf_opt){ .name = name, .val = val, .file = file, .line = line };
	s->n++;
}

/* ---- values: ${VAR}, fio's keywords, bc's arithmetic ---- */

struct calc {
	const char *p;
	int depth;
	int bad;
};

static long long clamp_ll(__int128 v, struct calc *c)
{
	if (v > LLONG_MAX || v < -LLONG_MAX) {
		c->bad = 1;
		return 0;
	}
	return (long long)v;
}

static long long calc_expr(struct calc *c);

static void calc_ws(struct calc *c)
{
	while (*c->p == ' ' || *c->p == '\t')
		c->p++;
}

/* bc's grammar for what fio hands it: integers, ( ), unary -, ^ (right-associative, binds
 * less than unary minus), * / %, + - */
static long long calc_unary(struct calc *c)
{
	calc_ws(c);
	if (++c->depth > 64) {
		c->bad = 1;
		return 0;
	}
	long long v = 0;
	if (*c->p == '-') {
		c->p++;
		v = -calc_unary(c);
	} else if (*c->p == '+') { /* bc has no unary plus */
		c->bad = 1;
	} else if (*c->p == '(') {
		c->p++;
		v = calc_expr(c);
		calc_ws(c);
		if (*c->p != ')')
			c->bad = 1;
		else
			c->p++;
	} else if (isdigit((unsigned char)*c->p)) {
		__int128 a = 0;
		while (isdigit((unsigned char)*c->p) && !c->bad)
			v = clamp_ll(a = a * 10 + (*c->p++ - '0'), c);
	} else {
		c->bad = 1;
	}
	c->depth--;
	return v;
}

static long long calc_pow(struct calc *c)
{
	long long b = calc_unary(c);
	calc_ws(c);
	if (*c->p != '^' || c->bad)
		return b;
	c->p++;
	long long e = calc_pow(c);
	if (e < 0) {
		c->bad = 1; /* a fraction in bc */
		return 0;
	}
	__int128 r = 1;
	for (long long i = 0; i < e && !c->bad; i++)
		r = clamp_ll(r * b, c);
	return (long long)r;
}

static long long calc_term(struct calc *c)
{
	long long a = calc_pow(c);
	for (;;) {
		calc_ws(c);
		char op = *c->p;
		if ((op != '*' && op != '/' && op != '%') || c->bad)
			return a;
		c->p++;
		long long b = calc_pow(c);
		if (op == '*')
			a = clamp_ll((__int128)a * b, c);
		else if (b == 0)
			c->bad = 1;
		else if (op == '/')
			a = a / b; /* bc's scale 0: truncated toward zero, as C */
		else
			a = a % b;
	}
}

static long long calc_expr(struct calc *c)
{
	if (++c->depth > 64) {
		c->bad = 1;
		return 0;
	}
	long long a = calc_term(c);
	for (;;) {
		calc_ws(c);
		char op = *c->p;
		if ((op != '+' && op != '-') || c->bad)
			break;
		c->p++;
		long long b = calc_term(c);
		a = clamp_ll(op == '+' ? (__int128)a + b : (__int128)a - b, c);
	}
	c->depth--;
	return a;
}

static const char *const keywords[3] = { "$pagesize", "$mb_memory", "$ncpus" };

static void keyword_values(char vals[3][32])
{
	long psz = sysconf(_SC_PAGESIZE), pages = sysconf(_SC_PHYS_PAGES), ncpu = sysconf(_SC_NPROCESSORS_CONF);
	snprintf(vals[0], 32, "%ld", psz > 0 ? psz : 4096);
	snprintf(vals[1], 32, "%llu", psz > 0 && pages > 0 ? (unsigned long long)pages * (unsigned long long)psz >> 20 : 0ull);
	snprintf(vals[2], 32, "%ld", ncpu > 0 ? ncpu : 1);
}

static void too_long(const char *name)
{
	die_usage(name, "value longer than %d bytes after expansion", JF_MAX_VALUE);
}

/* The value of name=val as fio sees it: ${VAR} first, then the keywords, then bc. */
static const char *expand(struct jf_doc *d, const char *name, const char *val)
{
	char out[JF_MAX_VALUE + 1];
	size_t o = 0;
	for (const char *p = val; *p;) {
		const char *close = p[0] == '$' && p[1] == '{' ? strchr(p + 2, '}') : NULL;
		if (close) {
			if (d->flags & JF_NO_ENV)
				die_usage(name, "${%.*s}: environment variables are refused in a job file from --untrusted", (int)(close - p - 2 > 64 ? 64 : close - p - 2), p + 2);
			char var[256];
			if ((size_t)(close - p - 2) >= sizeof(var))
				die_usage(name, "environment variable name longer than %zu bytes", sizeof(var) - 1);
			memcpy(var, p + 2, (size_t)(close - p - 2));
			var[close - p - 2] = 0;
			const char *env = getenv(var); /* unset (or ${}): empty, as fio */
			size_t el = env ? strlen(env) : 0;
			if (o + el > JF_MAX_VALUE)
				too_long(name);
			memcpy(out + o, env ? env : "", el);
			o += el;
			p = close + 1;
			continue;
		}
		if (o + 1 > JF_MAX_VALUE)
			too_long(name);
		out[o++] = *p++;
	}
	out[o] = 0;
	int replaced = 0;
	char kv[3][32];
	for (int k = 0; k < 3; k++) {
		char *s;
		while ((s = strstr(out, keywords[k]))) {
			if (!replaced)
				keyword_values(kv);
			replaced = 1;
			size_t kl = strlen(keywords[k]), rl = strlen(kv[k]), tail = strlen(s + kl);
			if ((size_t)(s - out) + rl + tail > JF_MAX_VALUE)
				too_long(name);
			memmove(s + rl, s + kl, tail + 1);
			memcpy(s, kv[k], rl);
		}
	}
	/* fio hands name=value to bc only after a keyword was replaced, only with + - * / in it,
	 * no quote, and short (name=value under 128 bytes, value up to 100) */
	if (replaced && strpbrk(out, "+-*/") && !strchr(out, '\'') && strlen(name) + 1 + strlen(out) < 128 &&
	    strlen(out) <= 100) {
		struct calc c = { .p = out };
		long long v = calc_expr(&c);
		calc_ws(&c);
		if (c.bad || *c.p)
			die_usage(name, "cannot compute '%s' (a value with $pagesize, $mb_memory or $ncpus and + - * / is "
					"integer arithmetic, as fio's bc)", out);
		snprintf(out, sizeof(out), "%lld", v);
	}
	return sdup(d, out);
}

/* ---- the INI lexer ---- */

struct ini {
	struct jf_doc *d;
	int depth;
	int nstack;
	dev_t dev[JF_MAX_INCLUDE_DEPTH + 1];
	ino_t ino[JF_MAX_INCLUDE_DEPTH + 1];
};

/* fio's blanks: white space and control characters (never the terminating NUL) */
static int blank(int ch)
{
	return ch && (isspace(ch) || iscntrl(ch));
}

/* fio's is_empty_or_comment: nothing but blanks before the first ';' or '#' */
static int empty_or_comment(const char *s)
{
	for (; *s; s++) {
		if (*s == ';' || *s == '#')
			return 1;
		if (!blank((unsigned char)*s))
			return 0;
	}
	return 1;
}

/* fio's strip_blank_end: cut at the first ';' and at the first '#', then trailing blanks */
static void cut_end(char *s)
{
	char *c = strchr(s, ';');
	if (c)
		*c = 0;
	c = strchr(s, '#');
	if (c)
		*c = 0;
	size_t n = strlen(s);
	while (n && blank((unsigned char)s[n - 1]))
		s[--n] = 0;
}

static char *read_bounded(struct jf_doc *d, int fd, const char *what, size_t *len)
{
	size_t cap = 65536, n = 0;
	char *buf = keep(d, malloc(cap));
	for (;;) {
		if (n + 1 >= cap) {
			if (cap > JF_MAX_FILE_BYTES)
				die_usage("jobfile", "'%s' is larger than %u bytes", what, JF_MAX_FILE_BYTES);
			char *nb = realloc(buf, cap * 2);
			if (!nb)
				die_code(EXIT_FAIL, "out of memory");
			d->blk[d->nblk - 1] = buf = nb; /* the last block kept is buf */
			cap *= 2;
		}
		ssize_t r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			die_usage("jobfile", "cannot read '%s': %s", what, strerror(errno));
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (n > JF_MAX_FILE_BYTES)
		die_usage("jobfile", "'%s' is larger than %u bytes", what, JF_MAX_FILE_BYTES);
	d->text_bytes += n;
	if (d->text_bytes > JF_MAX_TOTAL_BYTES)
		die_usage("jobfile", "the job file and its includes are larger than %u bytes", JF_MAX_TOTAL_BYTES);
	buf[n] = 0;
	*len = n;
	return buf;
}

static void lex(struct ini *c, const char *text, size_t len, const char *file, int nested);

static void include(struct ini *c, const char *arg, const char *file, int line)
{
	struct jf_doc *d = c->d;
	if (d->flags & JF_NO_INCLUDE)
		die_usage("include", "refused in a job file from --untrusted (it would read '%.200s' on this host)", arg);
	if (!*arg)
		die_usage("include", "needs a file name (include FILE)");
	if (c->depth >= JF_MAX_INCLUDE_DEPTH)
		die_usage("include", "'%s': includes nested more than %d deep", arg, JF_MAX_INCLUDE_DEPTH);
	if (++d->nincludes > JF_MAX_INCLUDES)
		die_usage("include", "more than %d includes in one job file", JF_MAX_INCLUDES);
	/* relative to the including file's directory */
	char path[PATH_MAX];
	const char *slash = strrchr(file, '/');
	int n = arg[0] == '/' || !slash ? snprintf(path, sizeof(path), "%s", arg)
					: snprintf(path, sizeof(path), "%.*s%s", (int)(slash - file + 1), file, arg);
	if (n < 0 || (size_t)n >= sizeof(path))
		die_usage("include", "path too long: '%.200s'", arg);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	if (fd < 0)
		die_usage("include", "cannot open '%s': %s", path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		die_usage("include", "'%s' is not a regular file", path);
	}
	for (int k = 0; k < c->nstack; k++)
		if (c->dev[k] == st.st_dev && c->ino[k] == st.st_ino) {
			close(fd);
			die_usage("include", "'%s' is already being read (an include cycle)", path);
		}
	const char *fname = sdup(d, path);
	size_t tl;
	at(file, line);
	char *text = read_bounded(d, fd, path, &tl);
	close(fd);
	c->dev[c->nstack] = st.st_dev;
	c->ino[c->nstack] = st.st_ino;
	c->nstack++;
	c->depth++;
	lex(c, text, tl, fname, 1);
	c->depth--;
	c->nstack--;
	drop(d, text);
}

static void lex(struct ini *c, const char *text, size_t len, const char *file, int nested)
{
	struct jf_doc *d = c->d;
	if (memchr(text, 0, len)) {
		at(file, 0);
		die_usage("jobfile", "contains a NUL byte");
	}
	char *buf = keep(d, malloc(JF_MAX_LINE + 1));
	const char *p = text, *end = text + len;
	for (int line = 1; p < end; line++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		at(file, line);
		if (n > JF_MAX_LINE)
			die_usage("jobfile", "line longer than %d bytes", JF_MAX_LINE);
		memcpy(buf, p, n);
		buf[n] = 0;
		p = nl ? nl + 1 : end;
		char *s = buf;
		while (blank((unsigned char)*s))
			s++;
		if (empty_or_comment(s))
			continue;
		cut_end(s);
		if (*s == '[') {
			size_t l = strlen(s);
			if (nested)
				die_usage("include", "an included file cannot start a section ('%.100s')", s);
			if (l < 2 || s[l - 1] != ']')
				die_usage("jobfile", "section header '%.100s' does not end with ']'", s);
			if (l == 2)
				die_usage("jobfile", "empty section name '[]'");
			if (l - 2 > JF_MAX_NAME)
				die_usage("name", "section name longer than %d bytes", JF_MAX_NAME);
			add_sec(d, s + 1, l - 2, file, line);
			continue;
		}
		if (!strncmp(s, "include", 7) && (s[7] == ' ' || s[7] == '\t')) {
			if (!d->nsec)
				die_usage("include", "outside of a [section]");
			char *arg = s + 8;
			while (blank((unsigned char)*arg))
				arg++;
			include(c, arg, file, line);
			at(file, line);
			continue;
		}
		char *eq = strchr(s, '=');
		char *ne = eq ? eq : s + strlen(s);
		while (ne > s && blank((unsigned char)ne[-1]))
			ne--;
		if (ne == s)
			die_usage("jobfile", "'%.100s' has no option name", s);
		if (ne - s > 63)
			die_usage("jobfile", "option name '%.63s...' is longer than 63 bytes", s);
		const char *name = dupn(d, s, (size_t)(ne - s));
		if (!d->nsec)
			die_usage(name, "outside of a [section] (a job file starts with [global] or [JOBNAME])");
		const char *val = NULL;
		if (eq) {
			char *v = eq + 1;
			while (blank((unsigned char)*v))
				v++;
			val = expand(d, name, v);
		}
		add_opt(d, name, val, file, line);
	}
	drop(d, buf);
	at(NULL, 0);
}

/* ---- JSON: {"global": {...}, "jobs": [{...}, ...]} ---- */

static void release_json(void *v)
{
	json_free(v);
}

static const char *jval_text(struct jf_doc *d, const char *name, const struct jval *v)
{
	switch (v->t) {
	case J_STR:
	case J_NUM:
		if (strlen(v->s) >= JF_MAX_VALUE)
			die_usage(name, "value too long");
		return sdup(d, v->s);
	case J_BOOL:
		return v->b ? "1" : "0";
	default:
		die_usage(name, "value must be a string, number or boolean");
	}
}

static void json_section(struct jf_doc *d, const char *name, const struct jval *sec, const char *what)
{
	if (sec->t != J_OBJ)
		die_usage("jobfile", "%s must be an object", what);
	add_sec(d, name, strlen(name), NULL, 0);
	for (size_t i = 0; i < sec->n; i++) {
		const char *k = sdup(d, sec->keys[i]);
		add_opt(d, k, jval_text(d, k, sec->items[i]), NULL, 0);
	}
}

static void from_json(struct jf_doc *d, const char *text, const char *label)
{
	char err[256];
	struct jval *root = json_parse(text, err, sizeof(err));
	if (!root)
		die_usage("jobfile", "'%s' is not valid JSON: %s", label, err);
	guard_own(root, release_json);
	if (root->t != J_OBJ)
		die_usage("jobfile", "top level must be an object with \"jobs\"");
	for (size_t i = 0; i < root->n; i++)
		if (strcmp(root->keys[i], "global") && strcmp(root->keys[i], "jobs"))
			die_usage("jobfile", "unknown top-level key '%s'", root->keys[i]);
	const struct jval *g = json_get(root, "global"), *jobs = json_get(root, "jobs");
	if (g)
		json_section(d, "global", g, "\"global\"");
	if (!jobs || jobs->t != J_ARR || jobs->n == 0)
		die_usage("jobfile", "\"jobs\" must be a non-empty array");
	if (jobs->n > MAX_JOBS)
		die_usage("jobfile", "more than %d jobs", MAX_JOBS);
	for (size_t i = 0; i < jobs->n; i++) {
		char name[32];
		snprintf(name, sizeof(name), "job%zu", i);
		json_section(d, name, jobs->items[i], "each job");
	}
	guard_disown(root);
	json_free(root);
}

void jf_parse_text(struct jf_doc *d, const char *text, const char *path, unsigned flags)
{
	d->flags = flags;
	const char *s = text;
	while (*s && isspace((unsigned char)*s))
		s++;
	if (*s == '{') {
		from_json(d, text, path);
	} else {
		struct ini c = { .d = d };
		lex(&c, text, strlen(text), sdup(d, path), 0);
		if (!d->nsec) {
			at(path, 0);
			die_usage("jobfile", "no [section]: nothing to run");
		}
	}
}

void jf_parse_file(struct jf_doc *d, const char *path, unsigned flags)
{
	d->flags = flags;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		die_usage("jobfile", "cannot open '%s': %s", path, strerror(errno));
	struct stat st;
	size_t len;
	char *text = read_bounded(d, fd, path, &len);
	int reg = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	close(fd);
	const char *s = text;
	while (s < text + len && isspace((unsigned char)*s))
		s++;
	if (s < text + len && *s == '{') {
		if (strlen(text) != len)
			die_usage("jobfile", "'%s' contains a NUL byte", path);
		from_json(d, text, path);
	} else {
		struct ini c = { .d = d };
		if (reg) {
			c.dev[0] = st.st_dev;
			c.ino[0] = st.st_ino;
			c.nstack = 1;
		}
		lex(&c, text, len, sdup(d, path), 0);
		if (!d->nsec) {
			at(path, 0);
			die_usage("jobfile", "no [section]: nothing to run");
		}
	}
	drop(d, text);
	at(NULL, 0);
}

void jf_parse_argv(struct jf_doc *d, int argc, char **argv)
{
	d->from_argv = 1;
	add_sec(d, "global", 6, NULL, 0);
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i] + 2, *eq = strchr(a, '=');
		const char *name = eq ? dupn(d, a, (size_t)(eq - a)) : sdup(d, a);
		const char *val = eq ? sdup(d, eq + 1) : NULL;
		if (!strcmp(name, "name") && val) {
			if (strlen(val) > JF_MAX_NAME)
				die_usage("name", "invalid job name '%s'", val);
			add_sec(d, val, strlen(val), NULL, 0);
			continue;
		}
		add_opt(d, name, val, NULL, 0);
	}
}

/* ---- options fio documents that this engine refuses on purpose (README § Refused) ---- */

struct refusal {
	const char *name, *why;
};

static const struct refusal refused_opts[] = {
	{ "zonemode", "fio's zone modes (strided, zoned block devices) are not supported" },
	{ "zonesize", "fio's zone modes (strided, zoned block devices) are not supported" },
	{ "zonerange", "fio's zone modes (strided, zoned block devices) are not supported" },
	{ "zoneskip", "fio's zone modes (strided, zoned block devices) are not supported" },
	{ "zonecapacity", "zoned block devices are not supported" },
	{ "max_open_zones", "zoned block devices are not supported" },
	{ "job_max_open_zones", "zoned block devices are not supported" },
	{ "ignore_zone_limits", "zoned block devices are not supported" },
	{ "zone_reset_threshold", "zoned block devices are not supported" },
	{ "zone_reset_frequency", "zoned block devices are not supported" },
	{ "exec_prerun", "running commands from a job file is refused" },
	{ "exec_postrun", "running commands from a job file is refused" },
	{ "ioscheduler", "changing the host's I/O scheduler is refused" },
	{ "cgroup", "cgroups are not supported" },
	{ "cgroup_weight", "cgroups are not supported" },
	{ "cgroup_nodelete", "cgroups are not supported" },
	{ "cpus_allowed", "CPU affinity is not supported" },
	{ "cpumask", "CPU affinity is not supported" },
	{ "cpus_allowed_policy", "CPU affinity is not supported" },
	{ "gpu_dev_id", "GPU engines are not supported" },
	{ "pmem_path", "persistent-memory engines are not supported" },
	{ "hostname", "network and remote engines are not supported" },
	{ "port", "network and remote engines are not supported" },
	{ "pool", "network and remote engines are not supported" },
	{ "clientname", "network and remote engines are not supported" },
	{ "clustername", "network and remote engines are not supported" },
	{ "rbdname", "network and remote engines are not supported" },
	{ "http_host", "network and remote engines are not supported" },
	{ "cmd_type", "NVMe passthrough is not supported" },
	{ "sg_write_mode", "SCSI generic engines are not supported" },
	/* every other option of fio 3.33 (fio --cmdhelp=all, --enghelp=libaio|io_uring) the engine lacks,
	 * each with its reason (tests/engine/test_refusals.py fails on one missing here) */
	{ "allow_mounted_write", "the engine never writes a mounted device" },
	{ "gid", "a job file never changes the engine's user or group" },
	{ "uid", "a job file never changes the engine's user or group" },
	{ "lockmem", "a job file never locks the host's memory" },
	{ "unique_filename", "fio's client/server mode is not implemented" },
	{ "profile", "fio's built-in profiles (tiobench, act) are not implemented" },
	{ "read_beyond_wp", "zoned block devices are not supported" },
	{ "block_error_percentiles", "trim error logs are not implemented (they need a device with block errors)" },
	{ "atomic", "atomic writes are not implemented (fio 3.33's O_ATOMIC is not in Linux)" },
	{ "cmdprio_hint", "I/O priority hints are newer than fio 3.33 (and not in this system's kernel headers)" },
	{ "hipri", "polled completions are not implemented (they need a device with poll queues)" },
	{ "sqthread_poll", "io_uring's SQPOLL thread is not implemented (as fio's default)" },
	{ "sqthread_poll_cpu", "io_uring's SQPOLL thread is not implemented (as fio's default)" },
	{ "fixedbufs", "not needed: the engine registers io_uring buffers whenever the kernel allows" },
	{ "registerfiles", "not needed: the engine registers io_uring files whenever the kernel allows" },
	{ "nonvectored", "not needed: the engine's io_uring commands are non-vectored" },
	{ "uncached", "not implemented (RWF_UNCACHED is not in this kernel's interface)" },
	{ "nowait", "not implemented (RWF_NOWAIT per I/O)" },
	{ "userspace_reap", "not needed: the engine reaps libaio completions in user space whenever it can" },
	{ "read_iolog", "I/O log replay is not implemented" },
	{ "read_iolog_chunked", "I/O log replay is not implemented" },
	{ "replay_align", "I/O log replay is not implemented" },
	{ "replay_no_stall", "I/O log replay is not implemented" },
	{ "replay_redirect", "I/O log replay is not implemented" },
	{ "replay_scale", "I/O log replay is not implemented" },
	{ "replay_skip", "I/O log replay is not implemented" },
	{ "replay_time_scale", "I/O log replay is not implemented" },
	{ "merge_blktrace_file", "I/O log replay is not implemented" },
	{ "merge_blktrace_iters", "I/O log replay is not implemented" },
	{ "merge_blktrace_scalars", "I/O log replay is not implemented" },
	{ "write_iolog", "I/O logs are not implemented (write_lat_log and friends are)" },
	{ "opendir", "not implemented (files come from filename, nrfiles and directory)" },
	{ "experimental_verify", "verify machinery not implemented (README § Verification)" },
	{ "trim_percentage", "verify machinery not implemented (trim and verify zeros)" },
	{ "trim_verify_zero", "verify machinery not implemented (trim and verify zeros)" },
	{ "trim_backlog", "verify machinery not implemented (trim and verify zeros)" },
	{ "trim_backlog_batch", "verify machinery not implemented (trim and verify zeros)" },
	{ "latency_run", "not implemented (latency_target ends at the first depth that holds)" },
	{ "rate_ignore_thinktime", "not implemented (thinktime stalls count against the rate)" },
	{ "buffer_pattern", "not implemented (buffers are random, zeros with zero_buffers; verify_pattern is)" },
	{ "buffer_compress_chunk", "not implemented (compression uses fio's default 512-byte chunks)" },
	{ "mem", "not implemented (buffers are page-aligned heap memory, as fio's malloc)" },
	{ "sync_file_range", "not implemented" },
	{ "write_hint", "not implemented (write lifetime hints)" },
	{ "serialize_overlap", "not implemented" },
	{ "iodepth_low", "not implemented (a free slot is refilled at once)" },
	{ "allrandrepeat", "not implemented (randrepeat and randseed decide every generator)" },
	{ "bwavgtime", "not implemented (bandwidth samples are per second)" },
	{ "iopsavgtime", "not implemented (IOPS samples are per second)" },
	{ "disk_util", "not implemented (disk statistics are always reported)" },
	{ "gtod_cpu", "not implemented (no clock thread)" },
	{ "stats", "not implemented (statistics are always kept)" },
	{ "unified_rw_reporting", "not implemented" },
	{ "significant_figures", "not implemented (normal output uses fio's default 4)" },
	{ "unit_base", "not implemented (normal output uses fio's default bytes)" },
	{ "log_compression_cpus", "logs are never compressed (streamed to their files)" },
	{ NULL, NULL },
};

/* fio's ioengines this engine refuses (the message names the reason) */
static const struct refusal refused_engines[] = {
	{ "rdma", "needs RDMA hardware" },
	{ "librpma_apm_client", "needs RDMA hardware" },
	{ "librpma_apm_server", "needs RDMA hardware" },
	{ "librpma_gpspm_client", "needs RDMA hardware" },
	{ "librpma_gpspm_server", "needs RDMA hardware" },
	{ "nbd", "network block devices are not supported" },
	{ "libiscsi", "iSCSI is not supported" },
	{ "spdk", "SPDK is not supported" },
	{ "spdk_bdev", "SPDK is not supported" },
	{ "xnvme", "NVMe passthrough is not supported" },
	{ "io_uring_cmd", "NVMe passthrough is not supported" },
	{ "sg", "SCSI generic devices are not supported" },
	{ "libzbc", "zoned block devices are not supported" },
	{ "net", "network engines are not supported" },
	{ "netsplice", "network engines are not supported" },
	{ "http", "network engines are not supported" },
	{ "rados", "Ceph is not supported" },
	{ "rbd", "Ceph is not supported" },
	{ "gfapi", "GlusterFS is not supported" },
	{ "gfapi_async", "GlusterFS is not supported" },
	{ "nfs", "libnfs is not supported" },
	{ "libhdfs", "HDFS is not supported" },
	{ "dfs", "DAOS is not supported" },
	{ "ime_psync", "DDN IME is not supported" },
	{ "ime_psyncv", "DDN IME is not supported" },
	{ "ime_aio", "DDN IME is not supported" },
	{ "libcufile", "GPU engines are not supported" },
	{ "libhipfile", "GPU engines are not supported" },
	{ "libblkio", "libblkio is not supported" },
	{ "libpmem", "persistent memory is not supported" },
	{ "pmemblk", "persistent memory is not supported" },
	{ "dev-dax", "persistent memory is not supported" },
	{ "mtd", "MTD flash devices are not supported" },
	{ "cpuio", "a special ioengine (CPU burner), not storage I/O" },
	{ "exec", "a special ioengine (runs a program)" },
	{ "page_fault", "a special ioengine (page faults, not storage I/O)" },
	{ "filecreate", "a special ioengine (file creation)" },
	{ "filestat", "a special ioengine (file stat)" },
	{ "filedelete", "a special ioengine (file deletion)" },
	{ "dircreate", "a special ioengine (directory creation)" },
	{ "dirstat", "a special ioengine (directory stat)" },
	{ "dirdelete", "a special ioengine (directory deletion)" },
	{ "e4defrag", "a special ioengine (ext4 defragmentation)" },
	{ "falloc", "a special ioengine (fallocate calls)" },
	{ "ftruncate", "a special ioengine (ftruncate calls)" },
	{ "cpp_null", "an external test engine" },
	{ "splice", "not implemented" },
	{ "mmap", "not implemented" },
	{ "posixaio", "not implemented" },
	{ "pvsync2", "not implemented" },
	{ "vsync", "not implemented" },
	{ "windowsaio", "not on Linux" },
	{ "solarisaio", "not on Linux" },
	{ NULL, NULL },
};

/* Options the engine knows but refuses for some values or combinations (the checks live beside
 * each option's code; this is their catalogue, printed by --limits as block.jobfile.refused_values
 * and, through tests/engine/test_refusals.py, README § Refused options). `example` is arguments
 * that make a plain job (--name=r --filename=F --size=1m, F an existing 1 MiB file; without
 * --filename when the example has --nrfiles) exit 2 naming the option: the test runs each, so an entry that no longer refuses fails there. A check added
 * elsewhere that refuses an option's value adds its line here. */
static const struct refused_value {
	const char *name, *when, *why, *example;
} refused_values[] = {
	{ "verify_state_save", "1", "verify state files are not implemented",
	  "--rw=write --verify=crc32c --verify_state_save=1" },
	{ "verify_state_load", "1", "verify state files are not implemented",
	  "--rw=write --verify=crc32c --verify_state_load=1" },
	{ "verify", "with file_append", "verifying appended regions is not implemented",
	  "--rw=write --verify=crc32c --file_append=1" },
	{ "verify_backlog", "with verify and several files per clone", "the read-back of several files is one phase (not implemented)",
	  "--rw=write --verify=crc32c --verify_backlog=4 --filename=F:G" },
	{ "verify_only", "with several files per clone", "not implemented (the read-back of several files replays a log of the writes)",
	  "--rw=write --verify=crc32c --verify_only=1 --filename=F:G" },
	{ "verify_dump", "with several files per clone", "not implemented (dumps are named after one file)",
	  "--rw=write --verify=crc32c --verify_dump=1 --filename=F:G" },
	{ "loops", "more than 1, with verify and several files per clone", "fio's job loop over several files with verify: not implemented",
	  "--rw=write --verify=crc32c --loops=2 --filename=F:G" },
	{ "io_size", "larger than size, with verify and several files per clone", "fio's job loop over several files with verify: not implemented",
	  "--rw=write --verify=crc32c --io_size=2m --filename=F:G" },
	{ "rw", "trimwrite, randtrimwrite with verify and several files per clone", "not implemented",
	  "--rw=trimwrite --verify=crc32c --filename=F:G" },
	{ "verify", "with trim, randtrim", "nothing is written to read back", "--rw=trim --verify=crc32c" },
	{ "pre_read", "with direct=1", "fio 3.33 fails the job with EIO (its read through the O_DIRECT descriptor is not aligned)",
	  "--rw=read --pre_read=1 --direct=1" },
	{ "io_size", "larger than size, with verify, but for rw=write, randwrite, trimwrite, randtrimwrite (one block size) and write:N",
	  "fio's job loop for mixed jobs and the other patterns: not implemented",
	  "--rw=randrw --verify=crc32c --io_size=2m" },
	{ "verify_only", "with time_based", "a time-based workload cannot be replayed (fio refuses it too)",
	  "--rw=write --verify=crc32c --verify_only=1 --time_based --runtime=1" },
	{ "cmdprio_percentage", "with an ioengine other than io_uring, libaio (also cmdprio_bssplit, cmdprio_class, cmdprio)",
	  "options of fio's io_uring and libaio engines", "--cmdprio_percentage=10" },
	{ "cmdprio_percentage", "with io_submit_mode=offload (also cmdprio_bssplit)",
	  "per-command priorities of offloaded submissions are not implemented",
	  "--ioengine=libaio --io_submit_mode=offload --cmdprio_percentage=10" },
	{ "cmdprio_bssplit", "an entry with a fifth field (a priority hint)", "priority hints are newer than fio 3.33",
	  "--ioengine=io_uring --cmdprio_bssplit=4k/10/2/0/1" },
	{ "rate", "in a job that trims (also rate_min, rate_iops, rate_iops_min)", "the pacing of trims is not implemented",
	  "--rw=trim --rate=1m" },
	{ "max_latency", "a trim (third) value", "the pacing of trims is not implemented", "--max_latency=1s,1s,1s" },
	{ "log_compression", "not 0", "logs are streamed to their files, never held in memory to compress",
	  "--log_compression=1m" },
	{ "log_store_compressed", "not 0", "logs are streamed to their files, never held in memory to compress",
	  "--log_store_compressed=1" },
	{ "write_bw_log", "without a value", "fio's default prefix (the job name) is not implemented", "--write_bw_log" },
	{ "unlink_each_loop", "1", "removing and laying the files out again after every loop is not implemented",
	  "--unlink_each_loop=1 --nrfiles=2" },
	{ "lockfile", "exclusive, readwrite", "file locking between clones is not implemented", "--lockfile=exclusive" },
	{ "offset_increment", "with several files", "not implemented for multi-file jobs",
	  "--numjobs=2 --offset_increment=4k --filename=F:G" },
	{ "fill_device", "rw other than write, on a file", "fio: \"only makes sense with sequential write\"",
	  "--rw=randwrite --fill_device=1" },
	{ "fill_device", "with several files", "not implemented for multi-file jobs",
	  "--rw=write --fill_device=1 --filename=F:G" },
	{ "steadystate", "lat:, lat_slope: criteria", "newer than fio 3.33, the engine's reference (it has iops, iops_slope, "
	  "bw, bw_slope)", "--steadystate=lat:5% --ss_dur=2" },
	{ "create_serialize", "0 in a job of several files", "laying a multi-file job's files out when its start group "
	  "starts is not implemented (a single file's is)", "--create_serialize=0 --nrfiles=2" },
	{ "bs_unaligned", "with direct=1", "sizes that are not multiples of the sector size", "--bsrange=1k-4k --bs_unaligned --direct=1" },
	{ "filename", "- (stdin/stdout)", "not supported", "--filename=-" },
	{ "filename", "a block device in a list or with nrfiles", "a file list takes files only", NULL },
	{ "filename", "a missing parent directory (also of filename_format's names)",
	  "fio creates it; the engine never makes directories", "--filename_format=nodir/$jobname --nrfiles=2" },
	{ "dedupe_percentage", "with zero_buffers or verify", "every buffer would be zeros / verify's header makes blocks unique",
	  "--rw=write --dedupe_percentage=50 --zero_buffers" },
	{ "dedupe_working_set_percentage", "dedupe_mode=working_set without size or with several files",
	  "fio's working set is a percentage of one file's size", "--rw=write --dedupe_percentage=50 --dedupe_mode=working_set --filename=F:G" },
	{ "numa_cpu_nodes", "a node this host does not have", "checked before any I/O", "--numa_cpu_nodes=1000" },
	{ "numa_mem_policy", "a node this host does not have", "checked before any I/O", "--numa_mem_policy=bind:1000" },
	{ "include", "in a job file read --untrusted (a server's)", "it would read a file of this host", NULL },
	{ "io_submit_mode", "offload with libaio in a job that trims", "offloaded asynchronous trims are not implemented",
	  "--rw=trim --ioengine=libaio --io_submit_mode=offload" },
	{ "io_submit_mode", "offload with ioengine=io_uring", "fio 3.33 refuses it too (a ring has one submitter)",
	  "--ioengine=io_uring --io_submit_mode=offload" },
	{ "status-interval", "(process option)", "fio's periodic full reports are not implemented (--progress=jsonl)",
	  "--status-interval=1" },
	{ "terse-version", "2", "fio's terse version 2 is not implemented (3, 4, 5 are)", "--terse-version=2" },
	{ NULL, NULL, NULL, NULL },
};

static const char *refusal(const struct refusal *t, const char *name)
{
	for (; t->name; t++)
		if (!strcmp(t->name, name))
			return t->why;
	return NULL;
}

/* ---- options naming a path: --untrusted's rule (README § Job files, "path options") ---- */

static const char *const path_opts[] = {
	"filename", "directory", "filename_format", "opendir", "read_iolog", "write_iolog", "write_bw_log",
	"write_lat_log", "write_iops_log", "write_hist_log", "replay_redirect", "trigger_file",
	NULL,
};

int jf_is_path_option(const char *opt)
{
	for (const char *const *p = path_opts; *p; p++)
		if (!strcmp(*p, opt))
			return 1;
	return 0;
}

static void check_one_path(const char *opt, const char *path, const char *beneath)
{
	char rel[PATH_MAX];
	int rc = confine_relative(beneath, path, rel, sizeof(rel));
	int dir_ok = !strcmp(opt, "directory") || !strcmp(opt, "opendir");
	if (rc == 0 || (rc == CONFINE_ROOT_ITSELF && dir_ok))
		return;
	switch (rc) {
	case CONFINE_DOTDOT:
		die_usage(opt, "'%s' climbs out of beneath='%s' with '..'", path, beneath);
	case CONFINE_ROOT_ITSELF:
		die_usage(opt, "'%s' names no file beneath '%s'", path, beneath);
	case CONFINE_TOO_LONG:
		die_usage(opt, "'%.200s': %s", path, strerror(ENAMETOOLONG));
	case CONFINE_ROOT_DOTDOT:
		die_usage("beneath", "'%s' must not contain '..'", beneath);
	default:
		die_usage(opt, "'%s' is not beneath '%s' (--untrusted)", path, beneath);
	}
}

void jf_check_path_option(const char *opt, const char *val, const char *beneath)
{
	if (!jf_is_path_option(opt) || !beneath || !*beneath)
		return; /* without beneath nothing confines the run: the caller's choice (a device target) */
	if (strcmp(opt, "filename")) {
		check_one_path(opt, val, beneath);
		return;
	}
	/* fio's filename is a ':'-separated list ('\:' is a colon in a name): every one */
	char part[PATH_MAX];
	size_t n = 0;
	for (const char *p = val;; p++) {
		if (*p == '\\' && p[1] == ':') {
			p++;
		} else if (*p == ':' || !*p) {
			part[n] = 0;
			if (n)
				check_one_path(opt, part, beneath);
			n = 0;
			if (!*p)
				break;
			continue;
		}
		if (n + 1 >= sizeof(part))
			die_usage(opt, "'%.200s': %s", val, strerror(ENAMETOOLONG));
		part[n++] = *p;
	}
}

/* ---- the document into jobs ---- */

static struct {
	const char *file;
	int line;
} job_where[MAX_JOBS];

void jf_where_job(int i)
{
	if (i >= 0 && i < MAX_JOBS)
		at(job_where[i].file, job_where[i].line);
	else
		at(NULL, 0);
}

static void apply(struct options *o, const struct jf_opt *op)
{
	at(op->file, op->line);
	const char *name = op->name, *val = op->val;
	if (!option_is_known(name)) {
		const char *why = refusal(refused_opts, name);
		if (why)
			die_usage(name, "refused: %s", why);
		die_usage(name, "unknown option");
	}
	if (!val) {
		val = option_bare_value(name);
		if (!val) {
			if (op->file)
				die_usage(name, "missing value (use %s=VALUE)", name);
			die_usage(name, "missing value (use --%s=VALUE)", name);
		}
	}
	if (!strcmp(name, "ioengine")) {
		const char *why = refusal(refused_engines, val);
		if (why)
			die_usage(name, "'%s' is refused: %s", val, why);
	}
	if (!strcmp(name, "filename") && !strcmp(val, "-"))
		die_usage(name, "'-' (fio's stdin/stdout) is not supported");
	option_set(o, name, val);
	at(NULL, 0);
}

static void apply_sec(struct options *o, const struct jf_doc *d, const struct jf_sec *s)
{
	for (int i = 0; i < s->n; i++)
		apply(o, &d->opt[s->first + i]);
}

static void apply_cli(struct options *o, const struct jf_doc *cli)
{
	for (int k = 0; cli && k < cli->nsec; k++)
		apply_sec(o, cli, &cli->sec[k]);
}

static void untrusted_paths(const struct options *o, const struct jf_doc *d, int upto, const struct jf_doc *cli)
{
	/* every path the job was given: the global sections above it, its own, the command line's */
	for (int k = 0; k <= upto; k++) {
		const struct jf_sec *s = &d->sec[k];
		if (!s->global && k != upto)
			continue;
		for (int i = 0; i < s->n; i++) {
			const struct jf_opt *op = &d->opt[s->first + i];
			at(op->file, op->line);
			if (op->val)
				jf_check_path_option(op->name, op->val, o->beneath);
		}
	}
	(void)cli; /* the host's own options are not checked against its own beneath */
	at(NULL, 0);
}

static struct options *new_job(struct runcfg *cfg)
{
	struct options *nj = realloc(cfg->jobs, sizeof(*cfg->jobs) * (size_t)(cfg->njobs + 1));
	if (!nj)
		die_code(EXIT_FAIL, "out of memory");
	cfg->jobs = nj;
	return &cfg->jobs[cfg->njobs++];
}

void jf_jobs(struct runcfg *cfg, struct options *global, const struct jf_doc *d, const struct jf_doc *cli,
	     unsigned flags)
{
	for (int k = 0; k < d->nsec; k++) {
		const struct jf_sec *s = &d->sec[k];
		if (s->global) {
			apply_sec(global, d, s);
			continue;
		}
		at(s->file, s->line);
		if (cfg->njobs >= MAX_JOBS)
			die_usage(d->from_argv ? "name" : "jobfile", "more than %d jobs", MAX_JOBS);
		struct options *o = new_job(cfg);
		*o = *global;
		job_where[cfg->njobs - 1].file = s->file;
		job_where[cfg->njobs - 1].line = s->line;
		option_set(o, "name", s->name); /* the section's name; a name= option overrides it */
		o->own_section = 1;
		apply_sec(o, d, s);
		o->own_section = 0;
		apply_cli(o, cli); /* command-line options override the file */
		if (flags & JF_UNTRUSTED_PATHS)
			untrusted_paths(o, d, k, cli);
	}
	if (!cfg->njobs) {
		if (!d->from_argv) {
			at(d->nsec ? d->sec[0].file : NULL, 0);
			die_usage("jobfile", "no job section: only [global] sections");
		}
		struct options *o = new_job(cfg); /* a command line without --name: one job */
		*o = *global;
		job_where[0].file = NULL;
		job_where[0].line = 0;
		if (flags & JF_UNTRUSTED_PATHS)
			untrusted_paths(o, d, 0, cli);
	}
	apply_cli(global, cli); /* the echoed global options: the file's plus the overrides */
	at(NULL, 0);
}

/* ---- printing: --parse-only, --showcmd, --showjob ---- */

/* an ordered set of name=value, later values replacing earlier ones in place */
struct kvset {
	int n;
	const char *name[JF_MAX_SECTION_OPTIONS * 2];
	const char *val[JF_MAX_SECTION_OPTIONS * 2];
};

static void kv_put(struct kvset *kv, const struct jf_opt *op)
{
	const char *v = op->val ? op->val : option_bare_value(op->name);
	if (!v)
		v = "";
	for (int i = 0; i < kv->n; i++)
		if (!strcmp(kv->name[i], op->name)) {
			kv->val[i] = v;
			return;
		}
	if (kv->n < (int)(sizeof(kv->name) / sizeof(kv->name[0]))) {
		kv->name[kv->n] = op->name;
		kv->val[kv->n++] = v;
	}
}

static void kv_del(struct kvset *kv, const char *name)
{
	for (int i = 0; i < kv->n; i++)
		if (!strcmp(kv->name[i], name)) {
			memmove(&kv->name[i], &kv->name[i + 1], sizeof(kv->name[0]) * (size_t)(kv->n - i - 1));
			memmove(&kv->val[i], &kv->val[i + 1], sizeof(kv->val[0]) * (size_t)(kv->n - i - 1));
			kv->n--;
			return;
		}
}

static void kv_sec(struct kvset *kv, const struct jf_doc *d, const struct jf_sec *s)
{
	for (int i = 0; i < s->n; i++)
		kv_put(kv, &d->opt[s->first + i]);
}

static void kv_cli(struct kvset *kv, const struct jf_doc *cli)
{
	for (int k = 0; cli && k < cli->nsec; k++)
		kv_sec(kv, cli, &cli->sec[k]);
}

static void kv_emit(struct jw *w, const char *key, const struct kvset *kv)
{
	jw_obj(w, key);
	for (int i = 0; i < kv->n; i++)
		jw_str(w, kv->name[i], kv->val[i]);
	jw_obj_end(w);
}

void jf_print_parse_only(const struct jf_doc *d, const struct jf_doc *cli, const struct runcfg *cfg)
{
	static struct kvset g, j; /* large: not on the stack */
	struct jw w;
	jw_init(&w, stdout);
	jw_obj(&w, NULL);
	jw_str(&w, "schema", "iowatt-jobfile/1");
	g.n = 0; /* the global sections above the first job: what applies to every job */
	for (int k = 0; k < d->nsec && d->sec[k].global; k++)
		kv_sec(&g, d, &d->sec[k]);
	kv_cli(&g, cli);
	kv_emit(&w, "global", &g);
	jw_arr(&w, "jobs");
	int job = 0, group = -1;
	for (int k = 0; k <= d->nsec && job < cfg->njobs; k++) {
		const struct jf_sec *s = k < d->nsec ? &d->sec[k] : NULL;
		if (s ? s->global : !d->from_argv || job > 0)
			continue; /* past the end: a command line without --name is one job */
		const struct options *o = &cfg->jobs[job];
		j.n = 0;
		for (int i = 0; i < k; i++)
			if (d->sec[i].global)
				kv_sec(&j, d, &d->sec[i]);
		if (s)
			kv_sec(&j, d, s);
		kv_cli(&j, cli);
		kv_del(&j, "name"); /* the job's name is "name" */
		if (job == 0 || o->stonewall)
			group++;
		jw_obj(&w, NULL);
		jw_str(&w, "name", o->name);
		kv_emit(&w, "options", &j);
		jw_i64(&w, "group", group);
		jw_str_or_null(&w, "file", s ? s->file : NULL);
		if (s && s->file)
			jw_i64(&w, "line", s->line);
		else
			jw_null(&w, "line");
		jw_obj_end(&w);
		job++;
	}
	jw_arr_end(&w);
	jw_arr(&w, "refused");
	jw_arr_end(&w);
	jw_obj_end(&w);
	fputc('\n', stdout);
	fflush(stdout);
}

static void shell_quote(FILE *f, const char *s)
{
	int plain = *s != 0;
	for (const char *p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("_-./:=,+%@^", *p))
			plain = 0;
	if (plain) {
		fputs(s, f);
		return;
	}
	fputc('\'', f);
	for (const char *p = s; *p; p++) {
		if (*p == '\'')
			fputs("'\\''", f);
		else
			fputc(*p, f);
	}
	fputc('\'', f);
}

static void cmd_opt(FILE *f, const struct jf_opt *op, int *first)
{
	if (!*first)
		fputc(' ', f);
	*first = 0;
	char arg[JF_MAX_VALUE + 80];
	if (op->val)
		snprintf(arg, sizeof(arg), "--%s=%s", op->name, op->val);
	else
		snprintf(arg, sizeof(arg), "--%s", op->name);
	shell_quote(f, arg);
}

static const char *job_name_of(const struct jf_doc *d, const struct jf_sec *s)
{
	const char *name = s->name;
	for (int i = 0; i < s->n; i++)
		if (!strcmp(d->opt[s->first + i].name, "name") && d->opt[s->first + i].val)
			name = d->opt[s->first + i].val;
	return name;
}

/* the job file as one command line: the global sections before the first job, then each job
 * (--name=X) with the global sections between the first job and it, its own options and the
 * command line's */
void jf_print_cmdline(const struct jf_doc *d, const struct jf_doc *cli)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len); /* written out only once all of it could be */
	if (!f)
		die_code(EXIT_FAIL, "out of memory");
	int first = 1, seen_job = 0;
	for (int k = 0; k < d->nsec && !seen_job; k++) {
		if (!d->sec[k].global) {
			seen_job = 1;
			break;
		}
		for (int i = 0; i < d->sec[k].n; i++)
			cmd_opt(f, &d->opt[d->sec[k].first + i], &first);
	}
	int njobs = 0;
	for (int k = 0; k < d->nsec; k++) {
		const struct jf_sec *s = &d->sec[k];
		if (s->global)
			continue;
		njobs++;
		const char *name = job_name_of(d, s);
		if (!strncmp(name, "global", 6))
			die_usage("name", "job '%s' cannot be written as --name (a name starting with 'global' is a global section)", name);
		struct jf_opt nm = { .name = "name", .val = name };
		cmd_opt(f, &nm, &first);
		int after_first_job = 0;
		for (int i = 0; i < k; i++) {
			if (!d->sec[i].global) {
				after_first_job = 1;
				continue;
			}
			if (!after_first_job)
				continue;
			for (int m = 0; m < d->sec[i].n; m++)
				cmd_opt(f, &d->opt[d->sec[i].first + m], &first);
		}
		for (int i = 0; i < s->n; i++)
			if (strcmp(d->opt[s->first + i].name, "name"))
				cmd_opt(f, &d->opt[s->first + i], &first);
		for (int c = 0; cli && c < cli->nsec; c++)
			for (int i = 0; i < cli->sec[c].n; i++)
				cmd_opt(f, &cli->opt[cli->sec[c].first + i], &first);
	}
	if (!njobs)
		for (int c = 0; cli && c < cli->nsec; c++)
			for (int i = 0; i < cli->sec[c].n; i++)
				cmd_opt(f, &cli->opt[cli->sec[c].first + i], &first);
	fputc('\n', f);
	fclose(f);
	fwrite(buf, 1, len, stdout);
	free(buf);
	fflush(stdout);
}

/* a value an INI line keeps as it is: no ';', '#', newline or control character, no blanks
 * at either end */
static void ini_check(const char *what, const char *name, const char *s)
{
	size_t n = strlen(s);
	int bad = n && (blank((unsigned char)s[0]) || blank((unsigned char)s[n - 1]));
	for (const char *p = s; *p && !bad; p++)
		bad = *p == ';' || *p == '#' || iscntrl((unsigned char)*p);
	if (bad)
		die_usage(name, "%s '%.100s' cannot be written in a job file (';', '#', a control character or blanks at "
				"an end)", what, s);
}

static void ini_sec(FILE *f, const struct jf_doc *d, const struct jf_sec *s, const char *name, const struct jf_doc *cli)
{
	ini_check("section name", "name", name);
	if (strchr(name, ']') && name[strlen(name) - 1] == ']')
		die_usage("name", "section name '%.100s' cannot end with ']'", name);
	fprintf(f, "[%s]\n", name);
	for (int i = 0; s && i < s->n; i++) {
		const struct jf_opt *op = &d->opt[s->first + i];
		if (op->val) {
			ini_check("value", op->name, op->val);
			fprintf(f, "%s=%s\n", op->name, op->val);
		} else {
			fprintf(f, "%s\n", op->name);
		}
	}
	for (int c = 0; cli && c < cli->nsec; c++)
		for (int i = 0; i < cli->sec[c].n; i++) {
			const struct jf_opt *op = &cli->opt[cli->sec[c].first + i];
			if (op->val) {
				ini_check("value", op->name, op->val);
				fprintf(f, "%s=%s\n", op->name, op->val);
			} else {
				fprintf(f, "%s\n", op->name);
			}
		}
}

/* the document as an INI job file (a command line's global options as [global]; without a
 * --name, one job "job" as the engine runs it) */
void jf_print_ini(const struct jf_doc *d, const struct jf_doc *cli)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len); /* written out only once all of it could be */
	if (!f)
		die_code(EXIT_FAIL, "out of memory");
	int njobs = 0;
	for (int k = 0; k < d->nsec; k++) {
		const struct jf_sec *s = &d->sec[k];
		if (s->global && s->n == 0 && d->from_argv && k == 0)
			continue;
		if (ftell(f) > 0)
			fputc('\n', f);
		njobs += !s->global;
		ini_sec(f, d, s, s->name, s->global ? NULL : cli);
	}
	if (!njobs) {
		if (ftell(f) > 0)
			fputc('\n', f);
		ini_sec(f, d, NULL, "job", cli);
	}
	fclose(f);
	fwrite(buf, 1, len, stdout);
	free(buf);
	fflush(stdout);
}

void jf_limits(struct jw *w)
{
	jw_obj(w, "jobfile");
	jw_u64(w, "max_file_bytes", JF_MAX_FILE_BYTES);
	jw_u64(w, "max_total_bytes", JF_MAX_TOTAL_BYTES);
	jw_u64(w, "max_line_bytes", JF_MAX_LINE);
	jw_u64(w, "max_value_bytes", JF_MAX_VALUE);
	jw_u64(w, "max_sections", JF_MAX_SECTIONS);
	jw_u64(w, "max_section_options", JF_MAX_SECTION_OPTIONS);
	jw_u64(w, "max_options", JF_MAX_OPTIONS);
	jw_u64(w, "max_include_depth", JF_MAX_INCLUDE_DEPTH);
	jw_u64(w, "max_includes", JF_MAX_INCLUDES);
	jw_u64(w, "max_section_name_bytes", JF_MAX_NAME);
	jw_arr(w, "path_options");
	for (const char *const *p = path_opts; *p; p++)
		jw_str(w, NULL, *p);
	jw_arr_end(w);
	jw_arr(w, "refused_options");
	for (const struct refusal *r = refused_opts; r->name; r++)
		jw_str(w, NULL, r->name);
	jw_arr_end(w);
	jw_arr(w, "refused_ioengines");
	for (const struct refusal *r = refused_engines; r->name; r++)
		jw_str(w, NULL, r->name);
	jw_arr_end(w);
	/* the reasons, one entry per refusal (README § Refused options is written from these) */
	jw_arr(w, "refused");
	for (const struct refusal *r = refused_opts; r->name; r++) {
		jw_obj(w, NULL);
		jw_str(w, "option", r->name);
		jw_str(w, "when", "any");
		jw_str(w, "why", r->why);
		jw_null(w, "example");
		jw_obj_end(w);
	}
	for (const struct refusal *r = refused_engines; r->name; r++) {
		jw_obj(w, NULL);
		jw_str(w, "option", "ioengine");
		jw_str(w, "when", r->name);
		jw_str(w, "why", r->why);
		jw_null(w, "example");
		jw_obj_end(w);
	}
	for (const struct refused_value *r = refused_values; r->name; r++) {
		jw_obj(w, NULL);
		jw_str(w, "option", r->name);
		jw_str(w, "when", r->when);
		jw_str(w, "why", r->why);
		jw_str_or_null(w, "example", r->example);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_obj_end(w);
}
