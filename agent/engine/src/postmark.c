/* iowatt-engine --postmark=FILE --directory=DIR: PostMark 1.5's small-file benchmark, native.
 *
 * The operation sequence is PostMark 1.5's (Katcher, NetApp TR3022; Debian ships 1.51/1.53
 * with the same sequence) for the same seed and parameters:
 *   - generator: MT19937, seeded as the 1999 sgenrand (pm_mt_seed); RND(x) = next % x for
 *     x > 0, and RND(x) for x <= 0 is 0 WITHOUT a draw (so a fixed size draws nothing);
 *   - before the run, 2 x (largest size) draws fill the data source (printable 32 + RND(95));
 *   - a table of 2 x number slots; a new file takes the slot after the last one taken if
 *     free, else the lowest free slot; a full table makes a create do nothing (no draw);
 *   - a file is named by the count of files created so far (1, 2, ...), in subdirectory
 *     s<RND(subdirectories)> when subdirectories > 1; then its size low + RND(high - low);
 *   - a transaction: unless bias read is -1, RND(10) < bias read reads a used file, else
 *     appends RND(high - size) + 1 bytes to one (nothing when it is at high); then, unless
 *     bias create is -1, RND(10) < bias create creates a file, else deletes a used file; a
 *     used file is found by drawing RND(2 x number) until a used slot comes up; the run stops
 *     early ("out of files") when as many files were deleted as created;
 *   - at the end every slot is deleted in slot order ("deletion alone").
 * The timers are PostMark's (start before the first creation; transactions; end after the
 * last deletion; subdirectories are made before and removed after), in nanoseconds.
 *
 * Safety: DIR is opened once (beneath=ROOT: through the confined open, no link, no "..");
 * every file is created O_CREAT|O_EXCL|O_NOFOLLOW (mode 0600) by name relative to DIR's or a
 * subdirectory's descriptor, so nothing outside DIR is ever touched and no existing file is
 * overwritten; what the run created is removed at the end (unless --keep), also after an
 * error such as ENOSPC (exit 1) or SIGINT/SIGTERM. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "iowatt.h"
#include "postmark.h"

/* ---- generator ---- */

void pm_mt_seed(struct pm_mt *m, uint32_t seed)
{
	for (int k = 0; k < 624; k++) {
		uint32_t hi = seed & 0xffff0000u;
		seed = 69069u * seed + 1u;
		m->s[k] = hi | (seed >> 16);
		seed = 69069u * seed + 1u;
	}
	m->i = 624;
}

static void mt_refill(struct pm_mt *m)
{
	static const uint32_t mag[2] = { 0u, 0x9908b0dfu };
	uint32_t *s = m->s;
	int k;
	for (k = 0; k < 624 - 397; k++) {
		uint32_t y = (s[k] & 0x80000000u) | (s[k + 1] & 0x7fffffffu);
		s[k] = s[k + 397] ^ (y >> 1) ^ mag[y & 1u];
	}
	for (; k < 623; k++) {
		uint32_t y = (s[k] & 0x80000000u) | (s[k + 1] & 0x7fffffffu);
		s[k] = s[k + 397 - 624] ^ (y >> 1) ^ mag[y & 1u];
	}
	uint32_t y = (s[623] & 0x80000000u) | (s[0] & 0x7fffffffu);
	s[623] = s[396] ^ (y >> 1) ^ mag[y & 1u];
	m->i = 0;
}

uint32_t pm_mt_next(struct pm_mt *m)
{
	if (m->i >= 624)
		mt_refill(m);
	uint32_t y = m->s[m->i++];
	y ^= y >> 11;
	y ^= (y << 7) & 0x9d2c5680u;
	y ^= (y << 15) & 0xefc60000u;
	y ^= y >> 18;
	return y;
}

/* ---- configuration (the command file) ---- */

#define MAX_SETS 64
struct pm_cfg {
	int64_t low, high;              /* file sizes, bytes */
	int64_t number, seed, transactions, subdirs, read_bs, write_bs;
	int bias_read, bias_create;
	int buffered, terse, fsync;
	int runs;
	char location[PATH_MAX];        /* as given (replaced by --directory) */
	int nset;
	char set_name[MAX_SETS][32];
	char set_val[MAX_SETS][128];
};

static void cfg_defaults(struct pm_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->low = 500;
	c->high = 10000;
	c->number = 500;
	c->seed = 42;
	c->transactions = 500;
	c->read_bs = 512;
	c->write_bs = 512;
	c->bias_read = 5;
	c->bias_create = 5;
	c->buffered = 1;
}

static void record_set(struct pm_cfg *c, const char *name, const char *val)
{
	for (int k = 0; k < c->nset; k++)
		if (!strcmp(c->set_name[k], name)) {
			str_copy(c->set_val[k], sizeof(c->set_val[k]), val);
			return;
		}
	if (c->nset < MAX_SETS) {
		str_copy(c->set_name[c->nset], sizeof(c->set_name[0]), name);
		str_copy(c->set_val[c->nset], sizeof(c->set_val[0]), val);
		c->nset++;
	}
}

/* a whole decimal integer in [lo, hi]; 0 or -EINVAL */
static int parse_int_range(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
	const char *p = s;
	if (*p == '-')
		p++;
	if (!*p || strspn(p, "0123456789") != strlen(p) || strlen(p) > 12)
		return -EINVAL;
	long long v = strtoll(s, NULL, 10);
	if (v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

static void set_positive(const char *cmd, const char *val, int64_t max, int64_t *out)
{
	if (parse_int_range(val, 1, max, out) < 0)
		die_usage("postmark", "%s: must be a positive integer (at most %lld), got '%s'", cmd, (long long)max,
			  val);
}

static void set_bool(const char *cmd, const char *val, int *out)
{
	if (!strcmp(val, "true"))
		*out = 1;
	else if (!strcmp(val, "false"))
		*out = 0;
	else
		die_usage("postmark", "%s: must be true or false, got '%s'", cmd, val);
}

static void set_bias(const char *cmd, const char *val, int *out)
{
	int64_t v;
	if (parse_int_range(val, -1, 10, &v) < 0)
		die_usage("postmark", "%s: must be an integer from -1 (off) to 10, got '%s'", cmd, val);
	*out = (int)v;
}

#define MAX_SIZE (1ll << 30) /* PostMark keeps sizes in an int and a 2 x high data source */
#define MAX_NUMBER 100000000ll
#define MAX_SUBDIRS 100000ll
#define MAX_BLOCK (64ll << 20) /* set read / set write */

static void limit_row(struct jw *w, const char *set, int64_t lo, int64_t hi, int64_t dflt)
{
	jw_obj(w, set);
	jw_i64(w, "min", lo);
	jw_i64(w, "max", hi);
	jw_i64(w, "default", dflt);
	jw_obj_end(w);
}

void postmark_limits(struct jw *w)
{
	struct pm_cfg d;
	cfg_defaults(&d);
	jw_obj(w, "postmark"); /* each `set` command: its accepted range and PostMark's default */
	limit_row(w, "size_low", 1, MAX_SIZE, d.low);
	limit_row(w, "size_high", 1, MAX_SIZE, d.high);
	limit_row(w, "number", 1, MAX_NUMBER, d.number);
	limit_row(w, "seed", 1, INT_MAX, d.seed);
	limit_row(w, "transactions", 1, INT_MAX, d.transactions);
	limit_row(w, "subdirectories", 1, MAX_SUBDIRS, d.subdirs);
	limit_row(w, "read", 1, MAX_BLOCK, d.read_bs);
	limit_row(w, "write", 1, MAX_BLOCK, d.write_bs);
	limit_row(w, "bias_read", -1, 10, d.bias_read);
	limit_row(w, "bias_create", -1, 10, d.bias_create);
	jw_bool(w, "buffering", d.buffered);
	jw_bool(w, "fsync", d.fsync);
	jw_obj_end(w);
}

static void cfg_line(struct pm_cfg *c, char *line, int lineno, int *quit)
{
	/* commands as PostMark's table has them (matched by prefix, as PostMark does) */
	static const char *const cmds[] = { "set size", "set number", "set seed", "set transactions",
					    "set location", "set subdirectories", "set read", "set write",
					    "set buffering", "set bias read", "set bias create", "set report",
					    "set fsync", "run", "load", "show", "help", "quit", "exit", "?" };
	char *e = line + strlen(line);
	while (e > line && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
		*--e = 0;
	while (*line == ' ' || *line == '\t')
		line++;
	if (!*line || *line == '#')
		return;
	if (*line == '!')
		die_usage("postmark", "line %d: shell escapes ('!') are not run", lineno);
	const char *cmd = NULL;
	for (size_t k = 0; k < sizeof(cmds) / sizeof(cmds[0]); k++) {
		size_t n = strlen(cmds[k]);
		if (!strncmp(line, cmds[k], n) && (line[n] == 0 || line[n] == ' ' || line[n] == '\t')) {
			cmd = cmds[k];
			break;
		}
	}
	if (!cmd)
		die_usage("postmark", "line %d: unknown command '%s'", lineno, line);
	char *val = line + strlen(cmd);
	while (*val == ' ' || *val == '\t')
		val++;
	int needs_val = !strncmp(cmd, "set ", 4);
	if (needs_val && !*val)
		die_usage("postmark", "%s: missing value", cmd);
	if (needs_val)
		record_set(c, cmd + 4, val);
	if (!strcmp(cmd, "set size")) {
		char low[64], *sp;
		if (strlen(val) >= sizeof(low)) /* never cut: a cut value is another value */
			die_usage("postmark", "set size: must be LOW [HIGH] in bytes, got '%.80s...'", val);
		str_copy(low, sizeof(low), val);
		sp = strpbrk(low, " \t");
		const char *hi = NULL;
		if (sp) {
			*sp = 0;
			hi = sp + 1;
			while (*hi == ' ' || *hi == '\t')
				hi++;
		}
		set_positive("set size", low, MAX_SIZE, &c->low);
		c->high = c->low;
		if (hi && *hi) {
			set_positive("set size", hi, MAX_SIZE, &c->high);
			if (c->high < c->low)
				die_usage("postmark", "set size: high bound %lld is below low bound %lld",
					  (long long)c->high, (long long)c->low);
		}
	} else if (!strcmp(cmd, "set number")) {
		set_positive(cmd, val, MAX_NUMBER, &c->number);
	} else if (!strcmp(cmd, "set seed")) {
		set_positive(cmd, val, INT_MAX, &c->seed);
	} else if (!strcmp(cmd, "set transactions")) {
		set_positive(cmd, val, INT_MAX, &c->transactions);
	} else if (!strcmp(cmd, "set subdirectories")) {
		set_positive(cmd, val, MAX_SUBDIRS, &c->subdirs);
	} else if (!strcmp(cmd, "set read")) {
		set_positive(cmd, val, MAX_BLOCK, &c->read_bs);
	} else if (!strcmp(cmd, "set write")) {
		set_positive(cmd, val, MAX_BLOCK, &c->write_bs);
	} else if (!strcmp(cmd, "set buffering")) {
		set_bool(cmd, val, &c->buffered);
	} else if (!strcmp(cmd, "set fsync")) {
		set_bool(cmd, val, &c->fsync);
	} else if (!strcmp(cmd, "set bias read")) {
		set_bias(cmd, val, &c->bias_read);
	} else if (!strcmp(cmd, "set bias create")) {
		set_bias(cmd, val, &c->bias_create);
	} else if (!strcmp(cmd, "set report")) {
		if (strcmp(val, "verbose") && strcmp(val, "terse"))
			die_usage("postmark", "set report: must be verbose or terse, got '%s'", val);
		c->terse = !strcmp(val, "terse");
	} else if (!strcmp(cmd, "set location")) {
		if (*val == '+' || *val == '-')
			die_usage("postmark", "set location: several locations ('%c') are not supported: --directory "
						  "replaces the location", *val);
		str_copy(c->location, sizeof(c->location), val);
	} else if (!strcmp(cmd, "run")) {
		if (*val)
			die_usage("postmark", "run: output redirection ('run %s') is not supported", val);
		if (++c->runs > 1)
			die_usage("postmark", "run: line %d: only one run per command file", lineno);
	} else if (!strcmp(cmd, "load")) {
		die_usage("postmark", "load: line %d: nested command files are not supported", lineno);
	} else if (!strcmp(cmd, "quit") || !strcmp(cmd, "exit")) {
		*quit = 1;
	}
	/* show, help, ?: nothing to do */
}

#define PM_LINE 1024 /* a command line, its newline and the terminating NUL */

/* one line of len bytes (its newline included, if any): refused when longer than PostMark's
 * line or when it holds a NUL, else handed to cfg_line in a terminated copy */
static void cfg_one(struct pm_cfg *c, const char *text, size_t len, int lineno, int *quit)
{
	char line[PM_LINE];
	if (memchr(text, 0, len))
		die_usage("postmark", "line %d: holds a NUL byte (a command file is text)", lineno);
	if (len >= sizeof(line) - 1 && !(len == sizeof(line) - 1 && text[len - 1] == '\n'))
		die_usage("postmark", "line %d: longer than %zu characters", lineno, sizeof(line) - 2);
	memcpy(line, text, len);
	line[len] = 0;
	cfg_line(c, line, lineno, quit);
}

static void cfg_finish(const struct pm_cfg *c, const char *path)
{
	if (!c->runs)
		die_usage("postmark", "the command file '%s' has no 'run' command", path);
	if ((int64_t)c->number * 2 > INT_MAX)
		die_usage("postmark", "set number: too large");
}

static void cfg_read(struct pm_cfg *c, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		die_usage("postmark", "cannot read command file '%s': %s", path, strerror(errno));
	char line[PM_LINE];
	int lineno = 0, quit = 0;
	/* fgets in a fixed buffer: a longer line is refused (cfg_one) before more is read */
	while (!quit && fgets(line, sizeof(line), f)) {
		lineno++;
		size_t len = strlen(line);
		if (!strchr(line, '\n') && !feof(f))
			die_usage("postmark", "line %d: longer than %zu characters or holds a NUL byte", lineno,
				  sizeof(line) - 2);
		cfg_one(c, line, len, lineno, &quit);
	}
	int bad = ferror(f);
	fclose(f);
	if (bad)
		die_usage("postmark", "cannot read command file '%s'", path);
	cfg_finish(c, path);
}

void postmark_parse_text(const char *text, size_t len)
{
	struct pm_cfg c;
	cfg_defaults(&c);
	int lineno = 0, quit = 0;
	for (size_t at = 0; at < len && !quit;) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t l = nl ? (size_t)(nl - (text + at)) + 1 : len - at;
		cfg_one(&c, text + at, l, ++lineno, &quit);
		at += l;
	}
	cfg_finish(&c, "(text)");
}

/* the resolved settings (the run's `postmark.parameters` and --parse-only's), without the call
 * sizes, which depend on the directory's st_blksize */
static void emit_parameters(struct jw *w, const struct pm_cfg *c)
{
	jw_i64(w, "number", c->number);
	jw_i64(w, "size_low_bytes", c->low);
	jw_i64(w, "size_high_bytes", c->high);
	jw_i64(w, "subdirectories", c->subdirs);
	jw_i64(w, "read_block_bytes", c->read_bs);
	jw_i64(w, "write_block_bytes", c->write_bs);
	jw_i64(w, "transactions", c->transactions);
	jw_i64(w, "bias_read", c->bias_read);
	jw_i64(w, "bias_create", c->bias_create);
	jw_bool(w, "buffering", c->buffered);
	jw_i64(w, "seed", c->seed);
	jw_bool(w, "fsync", c->fsync);
	if (c->fsync)
		jw_str(w, "fsync_note", "fsync after every file written: not in PostMark");
	else
		jw_null(w, "fsync_note");
	jw_str_or_null(w, "location_given", c->location);
}

/* What the sequence can do at most (README § Parse-only facts). A new file's size is
 * low + RND(high - low), at most high - 1 (low when high = low); appends only grow a file of at
 * least low bytes up to high, so they write at most high - low per file over its life; a
 * transaction appends at most once (never with bias read -1 or 10) and creates at most once
 * (never with bias create -1 or 0; with 10 it never deletes, and the 2 x number slots leave
 * room for number more files). So, with C the transactions' creations:
 *   bytes written <= (number + C) x max size + min(transactions, number + C) x (high - low). */
static void pm_bounds(const struct pm_cfg *c, struct file_bounds *b)
{
	uint64_t low = (uint64_t)c->low, high = (uint64_t)c->high, n = (uint64_t)c->number;
	uint64_t tx = (uint64_t)c->transactions;
	uint64_t smax = high > low ? high - 1 : low;
	int appends = c->bias_read != -1 && c->bias_read < 10;
	int creates = c->bias_create != -1 && c->bias_create > 0;
	memset(b, 0, sizeof(*b));
	b->mode = "postmark";
	b->threads = 1;
	b->max_block_bytes = (uint64_t)(c->read_bs > c->write_bs ? c->read_bs : c->write_bs);
	b->written_bounded = 1;
	uint64_t created = !creates ? 0 : c->bias_create == 10 && n < tx ? n : tx;
	uint64_t files = n + created;
	b->bytes_written_max = files * smax + (appends ? (tx < files ? tx : files) * (high - low) : 0);
	b->runtime_bounded = 0;
	/* the initial files: number x the mean of RND's uniform sizes, (low + high - 1) / 2 */
	b->dataset_bytes = high > low ? n * (low + high - 1) / 2 : n * low;
	b->files = n;
	b->directories = c->subdirs > 1 ? (uint64_t)c->subdirs : 0;
}

static void parse_only_report(const struct pm_cfg *c, const char *file)
{
	struct file_bounds b;
	pm_bounds(c, &b);
	struct jw w;
	jw_init(&w, stdout);
	jw_obj(&w, NULL);
	jw_obj(&w, "postmark");
	jw_str(&w, "command_file", file);
	jw_obj(&w, "parameters");
	emit_parameters(&w, c);
	jw_obj_end(&w);
	jw_obj(&w, "given");
	for (int k = 0; k < c->nset; k++)
		jw_str(&w, c->set_name[k], c->set_val[k]);
	jw_obj_end(&w);
	jw_obj_end(&w);
	emit_bounds(&w, &b);
	jw_obj_end(&w);
	fputc('\n', stdout);
	fflush(stdout);
}

/* ---- the run ---- */

enum { OP_CREATE, OP_READ, OP_APPEND, OP_DELETE, NOPS };
static const char *const op_names[NOPS] = { "create", "read", "append", "delete" };

struct pm_slot {
	uint32_t num;  /* file name: the count of creations when it was made */
	uint32_t sub;  /* subdirectory index */
	int64_t size;  /* bytes; 0 = free slot */
};

struct pm_run {
	const struct pm_cfg *c;
	struct pm_mt mt;
	int dirfd;
	int *subfd;
	unsigned char *sub_made;        /* this run created subdirectory k */
	int nsub;
	struct pm_slot *tab;
	int64_t ntab, alloc;
	char *src, *rbuf;
	size_t chunk_r, chunk_w;
	int64_t created, deleted, nread, appended, created_alone, deleted_alone, tx_done;
	uint64_t bytes_read, bytes_written;
	uint64_t calls_read, calls_write, calls_fsync;
	struct lstat op[NOPS];
	uint64_t *hist[NOPS];
	int out_of_files;
	int err;                        /* first error, positive errno */
	char errmsg[512];
	/* progress */
	int progress;
	uint64_t t0, next_tick;
};

static inline int64_t rnd(struct pm_run *r, int64_t x)
{
	return x > 0 ? (int64_t)(pm_mt_next(&r->mt) % (uint32_t)x) : 0;
}

static void fail(struct pm_run *r, int e, const char *what, const struct pm_slot *s)
{
	if (r->err)
		return;
	r->err = e;
	char name[64];
	if (r->c->subdirs > 1)
		snprintf(name, sizeof(name), "s%u/%u", s->sub, s->num);
	else
		snprintf(name, sizeof(name), "%u", s->num);
	snprintf(r->errmsg, sizeof(r->errmsg), "%s '%s': %s", what, name, strerror(e));
}

static inline void op_done(struct pm_run *r, int op, uint64_t t0)
{
	uint64_t d = now_ns() - t0;
	lstat_add(&r->op[op], d);
	r->hist[op][hist_idx(d)]++;
}

static int write_all(struct pm_run *r, int fd, int64_t len, uint64_t *done)
{
	const char *p = r->src;
	*done = 0;
	while ((int64_t)*done < len) {
		size_t n = (size_t)(len - (int64_t)*done);
		if (n > r->chunk_w)
			n = r->chunk_w;
		ssize_t w = write(fd, p + *done, n);
		r->calls_write++;
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (w == 0)
			return -ENOSPC;
		*done += (uint64_t)w;
	}
	if (r->c->fsync) {
		r->calls_fsync++;
		if (fsync(fd) < 0)
			return -errno;
	}
	return 0;
}

static void pm_progress(struct pm_run *r, const char *phase, int64_t done, int64_t total)
{
	uint64_t now = now_ns();
	if (now < r->next_tick)
		return;
	r->next_tick = now + 1000000000ull;
	fprintf(stderr,
		"{\"event\":\"progress\",\"mode\":\"postmark\",\"phase\":\"%s\",\"elapsed_ns\":%llu,\"done\":%lld,"
		"\"total\":%lld,\"percent\":%.1f}\n",
		phase, (unsigned long long)(now - r->t0), (long long)done, (long long)total,
		total > 0 ? 100.0 * (double)done / (double)total : 0.0);
	fflush(stderr);
}

static int64_t find_free(struct pm_run *r)
{
	if (r->alloc < r->ntab && r->tab[r->alloc].size == 0)
		return r->alloc++;
	for (int64_t k = 0; k < r->ntab; k++)
		if (r->tab[k].size == 0) {
			r->alloc = k + 1;
			return k;
		}
	return -1;
}

static int64_t find_used(struct pm_run *r)
{
	int64_t k;
	while (r->tab[k = rnd(r, r->ntab)].size == 0)
		;
	return k;
}

static inline void slot_name(const struct pm_slot *s, char *buf)
{
	/* decimal digits of the file number, as PostMark names files */
	char tmp[16];
	int n = 0;
	uint32_t v = s->num;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (int k = 0; k < n; k++)
		buf[k] = tmp[n - 1 - k];
	buf[n] = 0;
}

static void op_create(struct pm_run *r)
{
	const struct pm_cfg *c = r->c;
	int64_t k = find_free(r);
	if (k < 0)
		return;
	struct pm_slot *s = &r->tab[k];
	s->sub = (uint32_t)(c->subdirs > 1 ? rnd(r, c->subdirs) : 0);
	s->num = (uint32_t)++r->created;
	int64_t size = c->low + rnd(r, c->high - c->low);
	char name[16];
	slot_name(s, name);
	uint64_t t0 = now_ns();
	int fd = openat(r->subfd[s->sub], name, (c->buffered ? O_WRONLY : O_RDWR) | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			0600);
	if (fd < 0) {
		int e = errno;
		r->created--; /* nothing was created */
		fail(r, e, "create", s);
		return;
	}
	s->size = size;
	uint64_t done;
	int rc = write_all(r, fd, size, &done);
	r->bytes_written += done;
	if (close(fd) < 0 && !rc)
		rc = -errno;
	if (rc < 0) {
		fail(r, -rc, "create", s);
		return;
	}
	op_done(r, OP_CREATE, t0);
}

static void op_read(struct pm_run *r, int64_t k)
{
	struct pm_slot *s = &r->tab[k];
	char name[16];
	slot_name(s, name);
	uint64_t t0 = now_ns();
	int fd = openat(r->subfd[s->sub], name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		fail(r, errno, "read", s);
		return;
	}
	int64_t left = s->size;
	while (left > 0) {
		size_t n = left < (int64_t)r->chunk_r ? (size_t)left : r->chunk_r;
		ssize_t got = read(fd, r->rbuf, n);
		r->calls_read++;
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			int e = got < 0 ? errno : EIO;
			close(fd);
			fail(r, e, got < 0 ? "read" : "read (file shorter than written)", s);
			return;
		}
		left -= got;
	}
	close(fd);
	op_done(r, OP_READ, t0);
	r->bytes_read += (uint64_t)s->size;
	r->nread++;
}

static void op_append(struct pm_run *r, int64_t k)
{
	const struct pm_cfg *c = r->c;
	struct pm_slot *s = &r->tab[k];
	if (s->size >= c->high)
		return;
	char name[16];
	slot_name(s, name);
	uint64_t t0 = now_ns();
	int fd = openat(r->subfd[s->sub], name, (c->buffered ? O_WRONLY : O_RDWR) | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		fail(r, errno, "append", s);
		return;
	}
	int64_t block = rnd(r, c->high - s->size) + 1;
	uint64_t done;
	int rc = write_all(r, fd, block, &done);
	r->bytes_written += done;
	s->size += (int64_t)done;
	if (close(fd) < 0 && !rc)
		rc = -errno;
	if (rc < 0) {
		fail(r, -rc, "append", s);
		return;
	}
	op_done(r, OP_APPEND, t0);
	r->appended++;
}

static void op_delete(struct pm_run *r, int64_t k)
{
	struct pm_slot *s = &r->tab[k];
	if (!s->size)
		return;
	char name[16];
	slot_name(s, name);
	uint64_t t0 = now_ns();
	if (unlinkat(r->subfd[s->sub], name, 0) < 0) {
		int e = errno;
		fail(r, e, "delete", s);
		if (e != ENOENT)
			return; /* left in place, reported */
	} else {
		op_done(r, OP_DELETE, t0);
	}
	s->size = 0;
	r->deleted++;
}

/* ---- setup: the directory ---- */

static int make_subdirs(struct pm_run *r)
{
	int n = r->c->subdirs > 1 ? (int)r->c->subdirs : 1;
	r->nsub = n;
	r->subfd = calloc((size_t)n, sizeof(int));
	r->sub_made = calloc((size_t)n, 1);
	if (!r->subfd || !r->sub_made)
		die_code(EXIT_FAIL, "out of memory");
	if (r->c->subdirs <= 1) {
		r->subfd[0] = r->dirfd;
		return 0;
	}
	for (int k = 0; k < n; k++)
		r->subfd[k] = -1;
	for (int k = 0; k < n; k++) {
		char name[32];
		snprintf(name, sizeof(name), "s%d", k);
		if (mkdirat(r->dirfd, name, 0700) == 0)
			r->sub_made[k] = 1;
		else if (errno != EEXIST) {
			int e = errno;
			snprintf(r->errmsg, sizeof(r->errmsg), "mkdir '%s': %s", name, strerror(e));
			r->err = e;
			return -e;
		}
		r->subfd[k] = openat(r->dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (r->subfd[k] < 0) {
			int e = errno;
			snprintf(r->errmsg, sizeof(r->errmsg), "open subdirectory '%s': %s%s", name, strerror(e),
				 e == ELOOP || e == ENOTDIR ? " (not a directory of this run: refused)" : "");
			r->err = e;
			return -e;
		}
	}
	return 0;
}

static void remove_subdirs(struct pm_run *r)
{
	if (r->c->subdirs <= 1)
		return;
	for (int k = 0; k < r->nsub; k++) {
		if (r->subfd[k] >= 0)
			close(r->subfd[k]);
		if (!r->sub_made[k])
			continue;
		char name[32];
		snprintf(name, sizeof(name), "s%d", k);
		if (unlinkat(r->dirfd, name, AT_REMOVEDIR) < 0 && !r->err) {
			r->err = errno;
			snprintf(r->errmsg, sizeof(r->errmsg), "rmdir '%s': %s", name, strerror(errno));
		}
	}
}

/* ---- report ---- */

static void emit_op(struct jw *w, const char *key, const struct lstat *s, const uint64_t *hist, int bins)
{
	jw_obj(w, key);
	jw_u64(w, "ops", s->n);
	emit_lstat(w, "lat_ns", s, hist, bins);
	jw_obj_end(w);
}

/* PostMark's scalef(): megabytes above 1 MiB, else kilobytes, 2 decimals */
static const char *human(double v, char *buf, size_t len)
{
	if (v / 1048576.0 > 1)
		snprintf(buf, len, "%.2f megabytes", v / 1048576.0);
	else if (v / 1024.0 != 0)
		snprintf(buf, len, "%.2f kilobytes", v / 1024.0);
	else
		snprintf(buf, len, "%f bytes", v);
	return buf;
}

struct pm_times {
	uint64_t start, tx_start, tx_end, end; /* now_ns() */
};

static double per_s(double n, uint64_t ns)
{
	return ns ? n / ((double)ns / 1e9) : 0;
}

static void report_normal(const struct pm_run *r, const struct pm_times *t, const char *dir)
{
	const struct pm_cfg *c = r->c;
	uint64_t el = t->end - t->start, tel = t->tx_end - t->tx_start;
	uint64_t cre = t->tx_start - t->start, del = t->end - t->tx_end;
	char a[64], b[64];
	printf("PostMark (iowatt-engine %s, PostMark 1.5's operation sequence) in %s\n", IOWATT_VERSION, dir);
	if (c->fsync)
		printf("fsync after every file written: on (not in PostMark)\n");
	if (r->out_of_files)
		printf("out of files! (after %lld transactions; PostMark prints no report here)\n",
		       (long long)r->tx_done);
	if (c->terse) {
		printf("%.3f %.3f %.2f ", (double)el / 1e9, (double)tel / 1e9, per_s((double)c->transactions, tel));
		printf("%.2f %.2f %.2f ", per_s((double)r->created, el), per_s((double)r->created_alone, cre),
		       per_s((double)(r->created - r->created_alone), tel));
		printf("%.2f %.2f ", per_s((double)r->nread, tel), per_s((double)r->appended, tel));
		printf("%.2f %.2f %.2f ", per_s((double)r->deleted, el), per_s((double)r->deleted_alone, del),
		       per_s((double)(r->deleted - r->deleted_alone), tel));
		printf("%.2f %.2f\n", per_s((double)r->bytes_read, el), per_s((double)r->bytes_written, el));
	} else {
		printf("Time:\n");
		printf("\t%.6f seconds total\n", (double)el / 1e9);
		printf("\t%.6f seconds of transactions (%.0f per second)\n", (double)tel / 1e9,
		       per_s((double)r->tx_done, tel));
		printf("\nFiles:\n");
		printf("\t%lld created (%.0f per second)\n", (long long)r->created, per_s((double)r->created, el));
		printf("\t\tCreation alone: %lld files (%.0f per second)\n", (long long)r->created_alone,
		       per_s((double)r->created_alone, cre));
		printf("\t\tMixed with transactions: %lld files (%.0f per second)\n",
		       (long long)(r->created - r->created_alone), per_s((double)(r->created - r->created_alone), tel));
		printf("\t%lld read (%.0f per second)\n", (long long)r->nread, per_s((double)r->nread, tel));
		printf("\t%lld appended (%.0f per second)\n", (long long)r->appended, per_s((double)r->appended, tel));
		printf("\t%lld deleted (%.0f per second)\n", (long long)r->deleted, per_s((double)r->deleted, el));
		printf("\t\tDeletion alone: %lld files (%.0f per second)\n", (long long)r->deleted_alone,
		       per_s((double)r->deleted_alone, del));
		printf("\t\tMixed with transactions: %lld files (%.0f per second)\n",
		       (long long)(r->deleted - r->deleted_alone), per_s((double)(r->deleted - r->deleted_alone), tel));
		printf("\nData:\n");
		printf("\t%s read ", human((double)r->bytes_read, a, sizeof(a)));
		printf("(%s per second)\n", human(per_s((double)r->bytes_read, el), b, sizeof(b)));
		printf("\t%s written ", human((double)r->bytes_written, a, sizeof(a)));
		printf("(%s per second)\n", human(per_s((double)r->bytes_written, el), b, sizeof(b)));
	}
	printf("\nLatency per operation (not in PostMark; ns):\n");
	for (int k = 0; k < NOPS; k++) {
		const struct lstat *s = &r->op[k];
		if (!s->n) {
			printf("\t%-7s      0 ops\n", op_names[k]);
			continue;
		}
		static const double pct[3] = { 50.0, 99.0, 99.9 };
		uint64_t out[3];
		hist_percentiles(r->hist[k], s->n, pct, 3, out);
		printf("\t%-7s %6llu ops  mean %.0f  p50 %llu  p99 %llu  p99.9 %llu  max %llu\n", op_names[k],
		       (unsigned long long)s->n, lstat_mean(s), (unsigned long long)out[0], (unsigned long long)out[1],
		       (unsigned long long)out[2], (unsigned long long)s->max);
	}
}

static void report_json(const struct pm_run *r, const struct pm_times *t, const char *file, const char *dir,
			const char *beneath, int keep, int jsonplus, const struct timeval *tv, const struct rusage *ru0,
			const struct rusage *ru1, const struct cpustat *cpu0, const struct cpustat *cpu1,
			const struct diskstat *d0, const struct diskstat *d1, int interrupted, int sig)
{
	const struct pm_cfg *c = r->c;
	uint64_t el = t->end - t->start, tel = t->tx_end - t->tx_start;
	uint64_t cre = t->tx_start - t->start, del = t->end - t->tx_end;
	double secs = (double)el / 1e9;
	struct jw w;
	jw_init(&w, stdout);
	jw_obj(&w, NULL);
	emit_preamble(&w, tv);
	jw_obj(&w, "global options");
	jw_str(&w, "postmark", file);
	jw_str(&w, "directory", dir);
	jw_obj_end(&w);
	jw_arr(&w, "jobs");
	jw_obj(&w, NULL);
	jw_str(&w, "jobname", "postmark");
	jw_i64(&w, "groupid", 0);
	jw_i64(&w, "error", r->err);
	jw_i64(&w, "eta", 0);
	jw_u64(&w, "elapsed", (el + 999999999ull) / 1000000000ull);
	jw_obj(&w, "job options");
	jw_str(&w, "name", "postmark");
	for (int k = 0; k < c->nset; k++)
		jw_str(&w, c->set_name[k], c->set_val[k]);
	jw_obj_end(&w);
	emit_dir_totals(&w, "read", r->bytes_read, r->calls_read, el, NULL, NULL);
	emit_dir_totals(&w, "write", r->bytes_written, r->calls_write, el, NULL, NULL);
	emit_empty_dir(&w, "trim");
	jw_obj(&w, "sync");
	jw_u64(&w, "total_ios", r->calls_fsync);
	struct lstat none;
	lstat_init(&none);
	emit_lstat(&w, "lat_ns", &none, NULL, 0);
	jw_obj_end(&w);
	double usr = (double)(ru1->ru_utime.tv_sec - ru0->ru_utime.tv_sec) +
		     (double)(ru1->ru_utime.tv_usec - ru0->ru_utime.tv_usec) / 1e6;
	double sys = (double)(ru1->ru_stime.tv_sec - ru0->ru_stime.tv_sec) +
		     (double)(ru1->ru_stime.tv_usec - ru0->ru_stime.tv_usec) / 1e6;
	jw_u64(&w, "job_runtime", (el + 500000) / 1000000);
	jw_dbl(&w, "usr_cpu", secs > 0 ? 100.0 * usr / secs : 0);
	jw_dbl(&w, "sys_cpu", secs > 0 ? 100.0 * sys / secs : 0);
	jw_u64(&w, "ctx", (uint64_t)((ru1->ru_nvcsw - ru0->ru_nvcsw) + (ru1->ru_nivcsw - ru0->ru_nivcsw)));
	jw_u64(&w, "majf", (uint64_t)(ru1->ru_majflt - ru0->ru_majflt));
	jw_u64(&w, "minf", (uint64_t)(ru1->ru_minflt - ru0->ru_minflt));
	emit_job_iowatt(&w, "postmark", el, r->err ? r->errmsg : NULL);
	jw_obj_end(&w);
	jw_arr_end(&w);
	jw_arr(&w, "disk_util");
	emit_disk_util(&w, d0, d1, el);
	jw_arr_end(&w);

	jw_obj(&w, "postmark");
	jw_str(&w, "sequence", "PostMark 1.5");
	jw_str(&w, "directory", dir);
	jw_str_or_null(&w, "beneath", beneath);
	jw_bool(&w, "kept", keep);
	jw_obj(&w, "parameters");
	emit_parameters(&w, c);
	jw_u64(&w, "read_call_bytes", r->chunk_r);
	jw_u64(&w, "write_call_bytes", r->chunk_w);
	jw_obj_end(&w);
	jw_i64(&w, "files_created", r->created);
	jw_i64(&w, "files_created_alone", r->created_alone);
	jw_i64(&w, "files_created_mixed", r->created - r->created_alone);
	jw_i64(&w, "files_read", r->nread);
	jw_i64(&w, "files_appended", r->appended);
	jw_i64(&w, "files_deleted", r->deleted);
	jw_i64(&w, "files_deleted_alone", r->deleted_alone);
	jw_i64(&w, "files_deleted_mixed", r->deleted - r->deleted_alone);
	jw_i64(&w, "transactions", r->tx_done);
	jw_bool(&w, "out_of_files", r->out_of_files);
	jw_u64(&w, "bytes_read", r->bytes_read);
	jw_u64(&w, "bytes_written", r->bytes_written);
	jw_u64(&w, "elapsed_ns", el);
	jw_obj(&w, "phases");
	jw_u64(&w, "creation_ns", cre);
	jw_u64(&w, "transactions_ns", tel);
	jw_u64(&w, "deletion_ns", del);
	jw_obj_end(&w);
	jw_obj(&w, "rates");
	jw_dbl(&w, "transactions_per_s", per_s((double)r->tx_done, tel));
	jw_dbl(&w, "created_per_s", per_s((double)r->created, el));
	jw_dbl(&w, "created_alone_per_s", per_s((double)r->created_alone, cre));
	jw_dbl(&w, "created_mixed_per_s", per_s((double)(r->created - r->created_alone), tel));
	jw_dbl(&w, "read_per_s", per_s((double)r->nread, tel));
	jw_dbl(&w, "appended_per_s", per_s((double)r->appended, tel));
	jw_dbl(&w, "deleted_per_s", per_s((double)r->deleted, el));
	jw_dbl(&w, "deleted_alone_per_s", per_s((double)r->deleted_alone, del));
	jw_dbl(&w, "deleted_mixed_per_s", per_s((double)(r->deleted - r->deleted_alone), tel));
	jw_dbl(&w, "read_bytes_per_s", per_s((double)r->bytes_read, el));
	jw_dbl(&w, "written_bytes_per_s", per_s((double)r->bytes_written, el));
	jw_obj_end(&w);
	jw_obj(&w, "ops");
	for (int k = 0; k < NOPS; k++)
		emit_op(&w, op_names[k], &r->op[k], r->hist[k], jsonplus);
	jw_obj_end(&w);
	jw_obj(&w, "syscalls");
	jw_u64(&w, "read", r->calls_read);
	jw_u64(&w, "write", r->calls_write);
	jw_u64(&w, "fsync", r->calls_fsync);
	jw_obj_end(&w);
	jw_str_or_null(&w, "error", r->err ? r->errmsg : NULL);
	jw_obj_end(&w);

	jw_obj(&w, "iowatt");
	emit_iowatt_head(&w, "postmark", interrupted, sig);
	cpustat_emit(&w, "system_cpu", cpu0, cpu1);
	jw_obj_end(&w);
	jw_obj_end(&w);
	fputc('\n', stdout);
	fflush(stdout);
}

/* ---- entry ---- */

int postmark_requested(int argc, char **argv)
{
	return mode_requested(argc, argv, "postmark");
}

int postmark_main(int argc, char **argv, const volatile sig_atomic_t *signo)
{
	/* clock_gettime by default: an operation takes microseconds, so the TSC's ~20 ns per stamp
	 * saves nothing measurable here while its calibration costs 20 ms of every run's start */
	struct mode_args args = { .mode = "postmark", .file_what = "a command file", .allow_tsc = 0 };
	mode_args_parse(&args, argc, argv);
	const char *file = args.file, *dir = args.dir, *beneath = args.beneath;
	int keep = args.keep, jsonplus = args.jsonplus, normal = args.normal, progress = args.progress;
	struct pm_cfg cfg;
	cfg_defaults(&cfg);
	cfg_read(&cfg, file);
	if (args.parse_only) {
		/* the parsed settings and their bounds; DIR is not opened (it need not exist) */
		parse_only_report(&cfg, file);
		return EXIT_OK;
	}

	struct pm_run r;
	memset(&r, 0, sizeof(r));
	r.c = &cfg;
	r.progress = progress;
	r.dirfd = open_confined_dir(dir, beneath, "postmark");
	struct stat st;
	size_t blk = 4096;
	if (fstat(r.dirfd, &st) == 0 && st.st_blksize > 0)
		blk = (size_t)st.st_blksize;
	/* buffered (PostMark's stdio): calls of the stdio buffer's size (st_blksize), or of the
	 * block size rounded down to it when larger, as glibc issues them; unbuffered: one call per
	 * block, as PostMark */
	r.chunk_w = cfg.buffered ? ((size_t)cfg.write_bs > blk ? (size_t)cfg.write_bs / blk * blk : blk)
				 : (size_t)cfg.write_bs;
	r.chunk_r = cfg.buffered ? ((size_t)cfg.read_bs > blk ? (size_t)cfg.read_bs / blk * blk : blk)
				 : (size_t)cfg.read_bs;
	r.ntab = cfg.number * 2;
	r.tab = calloc((size_t)r.ntab, sizeof(*r.tab));
	r.src = malloc((size_t)cfg.high * 2);
	r.rbuf = malloc(r.chunk_r);
	for (int k = 0; k < NOPS; k++) {
		lstat_init(&r.op[k]);
		r.hist[k] = calloc(HIST_NR, sizeof(uint64_t));
		if (!r.hist[k])
			die_code(EXIT_FAIL, "out of memory");
	}
	if (!r.tab || !r.src || !r.rbuf)
		die_code(EXIT_FAIL, "out of memory");

	clock_init(args.allow_tsc);
	struct timeval tv;
	gettimeofday(&tv, NULL);
	struct rusage ru0, ru1;
	struct cpustat cpu0, cpu1;
	struct diskstat d0, d1;
	char devname[64];
	fd_blockdev(r.dirfd, devname, sizeof(devname));
	memset(&d0, 0, sizeof(d0));
	memset(&d1, 0, sizeof(d1));
	if (devname[0])
		diskstat_read(devname, &d0);
	cpustat_read(&cpu0);
	getrusage(RUSAGE_SELF, &ru0);

	pm_mt_seed(&r.mt, (uint32_t)cfg.seed);
	for (int64_t k = 0; k < cfg.high * 2; k++)
		r.src[k] = (char)(32 + rnd(&r, 95));

	struct pm_times t = { 0 };
	r.t0 = now_ns();
	r.next_tick = progress ? r.t0 + 1000000000ull : UINT64_MAX;
	int setup_ok = make_subdirs(&r) == 0;
	t.start = now_ns();
	if (setup_ok) {
		for (int64_t k = 0; k < cfg.number && !r.err && !g_stop; k++) {
			op_create(&r);
			if ((k & 255) == 0)
				pm_progress(&r, "creation", k, cfg.number);
		}
	}
	r.created_alone = r.created;
	t.tx_start = now_ns();
	if (setup_ok && !r.err && !g_stop) {
		int64_t k;
		for (k = 0; k < cfg.transactions; k++) {
			if (r.created == r.deleted) {
				r.out_of_files = 1;
				break;
			}
			if (cfg.bias_read != -1) {
				if (rnd(&r, 10) < cfg.bias_read)
					op_read(&r, find_used(&r));
				else
					op_append(&r, find_used(&r));
			}
			if (cfg.bias_create != -1) {
				if (rnd(&r, 10) < cfg.bias_create)
					op_create(&r);
				else
					op_delete(&r, find_used(&r));
			}
			if (r.err || g_stop) {
				k++;
				break;
			}
			if ((k & 255) == 0)
				pm_progress(&r, "transactions", k, cfg.transactions);
		}
		r.tx_done = k;
	}
	t.tx_end = now_ns();
	int64_t deleted_before = r.deleted;
	if (!keep) {
		/* also after an error or a signal: everything this run created goes */
		for (int64_t k = 0; k < r.ntab; k++) {
			op_delete(&r, k);
			if ((k & 255) == 0)
				pm_progress(&r, "deletion", k, r.ntab);
		}
	}
	t.end = now_ns();
	r.deleted_alone = r.deleted - deleted_before;
	if (!keep)
		remove_subdirs(&r);
	getrusage(RUSAGE_SELF, &ru1);
	cpustat_read(&cpu1);
	if (devname[0])
		diskstat_read(devname, &d1);

	int interrupted = g_stop != 0;
	if (normal)
		report_normal(&r, &t, dir);
	else
		report_json(&r, &t, file, dir, beneath, keep, jsonplus, &tv, &ru0, &ru1, &cpu0, &cpu1, &d0, &d1,
			    interrupted, interrupted && signo ? (int)*signo : 0);
	int rc = EXIT_OK;
	if (r.err) {
		warnmsg("postmark: %s (after %lld files created and %lld transactions; the run stopped%s)", r.errmsg,
			(long long)r.created, (long long)r.tx_done,
			keep ? ", --keep left its files in place" : " and removed what it created");
		rc = EXIT_FAIL;
	}
	if (r.out_of_files)
		warnmsg("postmark: out of files after %lld transactions: increase the number of files or decrease "
			"the number of transactions", (long long)r.tx_done);
	for (int k = 0; k < NOPS; k++)
		free(r.hist[k]);
	free(r.tab);
	free(r.src);
	free(r.rbuf);
	free(r.subfd);
	free(r.sub_made);
	close(r.dirfd);
	return rc;
}
