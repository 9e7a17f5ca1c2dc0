/* Reporting, process side: fio's --output-format (a comma list of json, json+, terse, normal),
 * --minimal, --terse-version, --output=FILE, --eta, --eta-newline, and the output files' one
 * creation rule (output_create: new file only, no link followed, beneath=DIR when confined).
 *
 * The engine always writes its JSON document (report.c) -- into a memory stream; the terse and
 * normal formatters (terse.c, normal.c) read that document back through the strict parser, so
 * they print exactly the numbers the JSON holds and never touch the workers' data. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "iowatt.h"
#include "optable.h"
#include "output.h"

static void formats_arg(struct runcfg *cfg, const char *val)
{
	if (!val || !*val)
		die_usage("output-format", "must be a comma list of json, json+, terse, normal, got ''");
	char buf[128];
	if (strlen(val) >= sizeof(buf))
		die_usage("output-format", "too long");
	strcpy(buf, val);
	unsigned f = 0;
	for (char *t = buf, *next; t; t = next) { /* an empty item (",,", a trailing ",") is refused, as fio */
		next = strchr(t, ',');
		if (next)
			*next++ = 0;
		if (!strcmp(t, "json"))
			f |= OUT_JSON;
		else if (!strcmp(t, "json+"))
			f |= OUT_JSON | OUT_JSONPLUS;
		else if (!strcmp(t, "terse"))
			f |= OUT_TERSE;
		else if (!strcmp(t, "normal"))
			f |= OUT_NORMAL;
		else
			die_usage("output-format", "must be a comma list of json, json+, terse, normal, got '%s'", val);
	}
	if (!f)
		die_usage("output-format", "must be a comma list of json, json+, terse, normal, got '%s'", val);
	cfg->formats = f;
	cfg->jsonplus = (f & OUT_JSONPLUS) != 0;
}

int output_cli_arg(struct runcfg *cfg, const char *name, const char *val)
{
	if (!cfg->terse_version)
		cfg->terse_version = 3;
	if (!strcmp(name, "output-format")) {
		formats_arg(cfg, val);
		return 1;
	}
	if (!strcmp(name, "minimal")) { /* fio: = --output-format=terse */
		if (val && strcmp(val, "1"))
			die_usage("minimal", "takes no value, got '%s'", val);
		cfg->formats = OUT_TERSE;
		cfg->jsonplus = 0;
		return 1;
	}
	if (!strcmp(name, "append-terse")) { /* fio: the chosen format AND terse (deprecated) */
		if (val && strcmp(val, "1"))
			die_usage("append-terse", "takes no value, got '%s'", val);
		cfg->formats = (cfg->formats ? cfg->formats : OUT_JSON) | OUT_TERSE;
		return 1;
	}
	if (!strcmp(name, "terse-version")) {
		if (!val || (strcmp(val, "3") && strcmp(val, "4") && strcmp(val, "5")))
			die_usage("terse-version", "must be 3, 4 or 5 (version 2 is not supported), got '%s'",
				  val ? val : "");
		cfg->terse_version = val[0] - '0';
		return 1;
	}
	if (!strcmp(name, "output")) {
		if (!val || !*val)
			die_usage("output", "--output=FILE needs a file name");
		static char path[PATH_MAX]; /* val points into parse_cmdline's copy of argv */
		if (strlen(val) >= sizeof(path))
			die_usage("output", "path too long");
		strcpy(path, val);
		cfg->output_path = path;
		return 1;
	}
	if (!strcmp(name, "eta")) {
		if (!val || (strcmp(val, "auto") && strcmp(val, "always") && strcmp(val, "never")))
			die_usage("eta", "must be auto, always or never, got '%s'", val ? val : "");
		cfg->eta = !strcmp(val, "always") ? 1 : !strcmp(val, "never") ? 2 : 0;
		return 1;
	}
	if (!strcmp(name, "status-interval")) /* fio's periodic full reports: not implemented */
		die_usage("status-interval", "not supported (--progress=jsonl prints per-second rates on stderr)");
	if (!strcmp(name, "eta-newline")) {
		uint64_t ns;
		if (!val || parse_time_ns(val, &ns) < 0 || ns == 0)
			die_usage("eta-newline", "must be a time greater than 0 (plain number = seconds), got '%s'",
				  val ? val : "");
		cfg->eta_newline_ns = ns;
		return 1;
	}
	return 0;
}

int output_create(const char *opt, const char *path, const char *root)
{
	int fd;
	if (root && *root) {
		char rel[PATH_MAX];
		int r = confine_relative(root, path, rel, sizeof(rel));
		if (r < 0)
			confine_die(r, opt, path, root);
		int dirfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dirfd < 0)
			die_usage("beneath", "cannot open directory '%s': %s", root, strerror(errno));
		fd = confined_open(dirfd, rel, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
		close(dirfd);
		if (fd == -ELOOP || fd == -EXDEV)
			die_usage(opt, "'%s': a symbolic link or '..' in the path beneath '%s' (never followed)", path, root);
	} else {
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			fd = -errno;
	}
	if (fd == -EEXIST)
		die_usage(opt, "'%s' exists (fio would overwrite it; the engine only creates new files)", path);
	if (fd == -ELOOP)
		die_usage(opt, "'%s' is a symbolic link (never followed)", path);
	if (fd < 0)
		die_usage(opt, "cannot create '%s': %s", path, strerror(-fd));
	return fd;
}

/* the directory output files are confined to: the global beneath, else the first job's */
static const char *output_root(const struct runcfg *cfg)
{
	if (cfg->global && cfg->global->beneath[0])
		return cfg->global->beneath;
	for (int i = 0; i < cfg->njobs; i++)
		if (cfg->jobs[i].beneath[0])
			return cfg->jobs[i].beneath;
	return NULL;
}

void output_open(struct runcfg *cfg)
{
	cfg->output_fd = -1;
	if (cfg->output_path)
		cfg->output_fd = output_create("output", cfg->output_path, output_root(cfg));
}

FILE *output_doc_begin(struct runcfg *cfg, char **buf, size_t *len)
{
	(void)cfg;
	*buf = NULL;
	*len = 0;
	FILE *f = open_memstream(buf, len);
	if (!f)
		die_code(EXIT_FAIL, "out of memory");
	return f;
}

int output_finish(struct runcfg *cfg, FILE *doc, char **bufp, size_t *lenp)
{
	unsigned fmt = cfg->formats ? cfg->formats : OUT_JSON;
	if (fclose(doc) != 0) /* sets *bufp, *lenp */
		die_code(EXIT_FAIL, "out of memory writing the report");
	char *buf = *bufp;
	if (!buf || !*lenp)
		die_code(EXIT_FAIL, "internal: empty report");
	FILE *out = stdout;
	if (cfg->output_path && cfg->output_fd >= 0) {
		out = fdopen(cfg->output_fd, "w");
		if (!out)
			die_code(EXIT_FAIL, "output: %s", strerror(errno));
	}
	if (cfg->eta_printed)
		fputc('\n', stderr);
	struct jval *tree = NULL;
	if (fmt & (OUT_TERSE | OUT_NORMAL)) {
		char err[128];
		tree = json_parse(buf, err, sizeof(err));
		if (!tree)
			die_code(EXIT_FAIL, "internal: the report does not parse: %s", err);
	}
	/* fio's order: terse, json, normal */
	if (fmt & OUT_TERSE)
		terse_print(out, tree, cfg->terse_version ? cfg->terse_version : 3);
	if (fmt & OUT_JSON)
		fputs(buf, out);
	if (fmt & OUT_NORMAL)
		normal_print(out, tree);
	json_free(tree);
	free(buf);
	*bufp = NULL;
	int bad = fflush(out) != 0 || ferror(out);
	if (out != stdout)
		bad |= fclose(out) != 0;
	if (bad)
		warnmsg("output: writing the report failed: %s", strerror(errno));
	return bad ? -1 : 0;
}

/* ---- the ETA line (fio prints "Jobs: N (f=N): [..][p%][r=..,w=..][r=..,w=.. IOPS][eta ..]") ---- */
void output_eta_tick(struct runcfg *cfg, struct job *jobs, int first, int last, uint64_t now)
{
	if (cfg->eta == 2 || (cfg->eta == 0 && !isatty(STDERR_FILENO)))
		return;
	if (!cfg->eta_start)
		cfg->eta_start = now;
	int running = 0;
	uint64_t ios[2] = { 0, 0 }, bytes[2] = { 0, 0 };
	double pct = 0, secs_left = 0;
	int have_plan = 0;
	for (int i = first; i < last; i++) {
		struct job *j = &jobs[i];
		if (!j->started || job_all_finished(j))
			continue;
		running += (int)j->o->numjobs;
		for (unsigned k = 0; k < j->o->numjobs; k++)
			for (int d = 0; d < 2; d++) {
				ios[d] += atomic_load_explicit(&j->workers[k].pub_ios[d], memory_order_relaxed);
				bytes[d] += atomic_load_explicit(&j->workers[k].pub_bytes[d], memory_order_relaxed);
			}
		uint64_t plan = j->o->ramp_ns + j->o->runtime_ns;
		if (plan && now > j->t_start) {
			double p = 100.0 * (double)(now - j->t_start) / (double)plan;
			double left = (double)plan / 1e9 - (double)(now - j->t_start) / 1e9;
			if (p > pct)
				pct = p > 100 ? 100 : p;
			if (left > secs_left)
				secs_left = left;
			have_plan = 1;
		}
	}
	static uint64_t last_ios[2], last_bytes[2], last_t;
	if (!last_t) /* the first line: since the group started */
		for (int i = first; i < last; i++)
			if (jobs[i].started && (!last_t || jobs[i].t_start < last_t))
				last_t = jobs[i].t_start;
	double dt = last_t && now > last_t ? (double)(now - last_t) / 1e9 : 0;
	char rate[64] = "", iops[64] = "";
	if (dt > 0) {
		char r[16], w[16], ri[16], wi[16];
#define DELTA(a, b) ((a) >= (b) ? (double)((a) - (b)) / dt : 0.0) /* a new group starts from 0 */
		num2str_fio(r, sizeof(r), (uint64_t)DELTA(bytes[0], last_bytes[0]), 4, 1, "B/s");
		num2str_fio(w, sizeof(w), (uint64_t)DELTA(bytes[1], last_bytes[1]), 4, 1, "B/s");
		num2str_fio(ri, sizeof(ri), (uint64_t)DELTA(ios[0], last_ios[0]), 4, 0, "");
		num2str_fio(wi, sizeof(wi), (uint64_t)DELTA(ios[1], last_ios[1]), 4, 0, "");
#undef DELTA
		snprintf(rate, sizeof(rate), "[r=%s,w=%s]", r, w);
		snprintf(iops, sizeof(iops), "[r=%s,w=%s IOPS]", ri, wi);
	}
	for (int d = 0; d < 2; d++) {
		last_ios[d] = ios[d];
		last_bytes[d] = bytes[d];
	}
	last_t = now;
	unsigned left = (unsigned)(secs_left + 0.5);
	char eta[32];
	if (have_plan)
		snprintf(eta, sizeof(eta), "%02um:%02us", left / 60, left % 60);
	else
		snprintf(eta, sizeof(eta), "--m:--s");
	int newline = 0;
	if (cfg->eta_newline_ns && now - (cfg->eta_last_newline ? cfg->eta_last_newline : cfg->eta_start) >=
					   cfg->eta_newline_ns) {
		newline = 1;
		cfg->eta_last_newline = now;
	}
	char pcts[16];
	if (have_plan)
		snprintf(pcts, sizeof(pcts), "%.1f%%", pct);
	else
		snprintf(pcts, sizeof(pcts), "-.-%%");
	fprintf(stderr, "\rJobs: %d (f=%d): [%s]%s%s[eta %s]%s", running, running, pcts, rate, iops, eta,
		newline ? "\n" : "");
	fflush(stderr);
	cfg->eta_printed = !newline;
}

/* ---- JSON tree access ---- */
const struct jval *jpath(const struct jval *obj, const char *a, const char *b)
{
	const struct jval *v = obj ? json_get(obj, a) : NULL;
	return v && b ? json_get(v, b) : v;
}

double jnum(const struct jval *obj, const char *key)
{
	const struct jval *v = obj ? json_get(obj, key) : NULL;
	return v && v->t == J_NUM ? strtod(v->s, NULL) : 0.0;
}

uint64_t ju64(const struct jval *obj, const char *key)
{
	const struct jval *v = obj ? json_get(obj, key) : NULL;
	if (!v || v->t != J_NUM || v->s[0] == '-')
		return 0;
	return strchr(v->s, '.') || strchr(v->s, 'e') || strchr(v->s, 'E') ? (uint64_t)strtod(v->s, NULL)
									: strtoull(v->s, NULL, 10);
}

const char *jstr(const struct jval *obj, const char *key)
{
	const struct jval *v = obj ? json_get(obj, key) : NULL;
	return v && v->t == J_STR ? v->s : "";
}

static int ndigits(uint64_t v)
{
	int n = 1;
	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

/* fio's human numbers: divide by 1000 (k, M, G, ...) or 1024 (Ki, Mi, ...) while the integer part
 * has more than maxlen digits; once divided, the digits left over show decimals ("42.7k",
 * "18.8MiB", "22.0MiB"); never divided: the plain integer ("4801") */
void num2str_fio(char *out, size_t len, uint64_t num, int maxlen, int pow2, const char *unit)
{
	static const char *const dec[] = { "", "k", "M", "G", "T", "P", "E" };
	static const char *const bin[] = { "", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei" };
	const uint64_t base = pow2 ? 1024 : 1000;
	int post = 0;
	uint64_t rem = 0;
	while (ndigits(num) > maxlen && post < 6) {
		rem = num % base;
		num /= base;
		post++;
	}
	const char *pfx = pow2 ? bin[post] : dec[post];
	int dig = ndigits(num);
	if (!post || dig >= maxlen - 1) { /* rounded to the nearest, as fio ("8389kB" for 8388608) */
		if (post && rem * 2 >= base)
			num++;
		snprintf(out, len, "%llu%s%s", (unsigned long long)num, pfx, unit);
		return;
	}
	int decimals = maxlen - 1 - dig;
	double v = (double)num + (double)rem / (double)base;
	snprintf(out, len, "%.*f%s%s", decimals, v, pfx, unit);
}

/* ---- option rows of the reporting family (opts[] in options.c) ---- */
static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

void parse_percentile_list(void *base, const struct opt_def *d, const char *name, const char *val)
{
	struct options *o = base;
	(void)d;
	char buf[512];
	if (strlen(val) >= sizeof(buf))
		die_usage(name, "value too long");
	strcpy(buf, val);
	int n = 0;
	for (char *save = NULL, *t = strtok_r(buf, ":", &save); t; t = strtok_r(NULL, ":", &save)) {
		char *end;
		errno = 0;
		double v = strtod(t, &end);
		if (end == t || *end || errno || !(v > 0.0 && v <= 100.0))
			die_usage(name, "each percentile must be a number in (0, 100], got '%s'", t);
		if (n >= 20)
			die_usage(name, "at most 20 percentiles, got '%s'", val);
		o->pct_list[n++] = v;
	}
	if (!n)
		die_usage(name, "empty list '%s'", val);
	qsort(o->pct_list, (size_t)n, sizeof(double), dbl_cmp); /* fio reports them sorted */
	o->npct = n;
}

void echo_percentile_list(struct jw *w, const struct options *o, const struct opt_def *d)
{
	int n;
	const double *p = job_percentiles(o, &n);
	jw_arr(w, d->key);
	for (int i = 0; i < n; i++)
		jw_dbl(w, NULL, p[i]);
	jw_arr_end(w);
}

const double *job_percentiles(const struct options *o, int *n)
{
	if (o && o->npct) {
		*n = o->npct;
		return o->pct_list;
	}
	*n = NPCT;
	return default_percentiles;
}

void parse_log_refused(void *base, const struct opt_def *d, const char *name, const char *val)
{
	(void)base, (void)d;
	if (strcmp(val, "0"))
		die_usage(name, "not supported (logs are streamed to disk as the run goes; they are never held or "
				"compressed in memory)");
}
