/* Small helpers: error exits, size/time parsing, sysfs reads. */
#include <ctype.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "iowatt.h"

volatile sig_atomic_t g_stop;
struct tscclock g_tsc;

#if defined(__x86_64__)
/* one (CLOCK_MONOTONIC, TSC) pair: the read with the tightest TSC bracket of a few tries */
static void clock_pair(uint64_t *ns, uint64_t *cyc)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 8; i++) {
		uint64_t a = tsc_read(), t = mono_ns(), b = tsc_read();
		if (b - a < best) {
			best = b - a;
			*ns = t;
			*cyc = a + (b - a) / 2;
		}
	}
}

static int cpu_has_invariant_tsc(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[4096];
	int ok = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		ok = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
		break;
	}
	fclose(f);
	return ok;
}
#endif

void clock_init(int allow_tsc)
{
	g_tsc.on = 0;
#if defined(__x86_64__)
	char cs[64];
	if (!allow_tsc || getenv("IOWATT_NO_TSC"))
		return;
	if (read_sysfs_str("/sys/devices/system/clocksource/clocksource0/current_clocksource", cs, sizeof(cs)) < 0 ||
	    strcmp(cs, "tsc") || !cpu_has_invariant_tsc())
		return;
	uint64_t n0, c0, n1, c1;
	clock_pair(&n0, &c0);
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	clock_pair(&n1, &c1);
	if (c1 <= c0 || n1 <= n0)
		return;
	double ghz = (double)(c1 - c0) / (double)(n1 - n0);
	if (ghz < 0.1 || ghz > 20)
		return;
	g_tsc.mult = (uint64_t)(((unsigned __int128)(n1 - n0) << 32) / (c1 - c0));
	g_tsc.c0 = c1;
	g_tsc.ns0 = n1;
	g_tsc.ghz = ghz;
	g_tsc.on = 1;
#else
	(void)allow_tsc;
#endif
}

/* ---- the parse guard: a parser's error exits become a return (parse_guarded) ----
 * The parsers report bad input with die_usage()/die_code(), which print and exit: right for the
 * one-shot command line, but the fuzz targets and the C unit tests call the same parsers many
 * times in one process. Inside parse_guarded() the two return to it instead, with the code and
 * the exact message main would print; memory a parser allocated is handed to guard_own() so a
 * failed parse frees it. Parsing is single-threaded: plain statics. */
static jmp_buf *g_guard;
static struct parse_error *g_guard_err;
#define GUARD_OWNED 8
static struct {
	void *p;
	void (*release)(void *);
} g_owned[GUARD_OWNED];

void guard_own(void *p, void (*release)(void *))
{
	if (!g_guard || !p)
		return;
	for (int k = 0; k < GUARD_OWNED; k++)
		if (!g_owned[k].p) {
			g_owned[k].p = p;
			g_owned[k].release = release ? release : free;
			return;
		}
	abort(); /* a parser owns more than GUARD_OWNED blocks at once: a programming error */
}

void guard_disown(void *p)
{
	for (int k = 0; k < GUARD_OWNED && p; k++)
		if (g_owned[k].p == p)
			g_owned[k].p = NULL;
}

int parse_guarded(void (*fn)(void *), void *arg, struct parse_error *err)
{
	jmp_buf env;
	err->code = 0;
	err->msg[0] = 0;
	memset(g_owned, 0, sizeof(g_owned));
	die_at(NULL, 0);
	g_guard_err = err;
	g_guard = &env;
	if (setjmp(env) == 0)
		fn(arg);
	g_guard = NULL;
	g_guard_err = NULL;
	for (int k = 0; k < GUARD_OWNED; k++) {
		if (g_owned[k].p) /* only what a failed parse left: a finished one disowned its blocks */
			g_owned[k].release(g_owned[k].p);
		g_owned[k].p = NULL;
	}
	return err->code;
}

static void guard_format(int code, const char *prefix, const char *fmt, va_list ap)
{
	struct parse_error *e = g_guard_err;
	int n = snprintf(e->msg, sizeof(e->msg), "%s", prefix);
	if (n < 0 || (size_t)n >= sizeof(e->msg))
		n = 0;
	vsnprintf(e->msg + n, sizeof(e->msg) - (size_t)n, fmt, ap);
	e->code = code;
}

/* where in a job file the option being applied was written (src/jobfile.c) */
static const char *g_at_file;
static int g_at_line;

void die_at(const char *file, int line)
{
	g_at_file = file;
	g_at_line = line;
}

void die_usage(const char *opt, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char where[320] = "";
	if (g_at_file && g_at_line > 0)
		snprintf(where, sizeof(where), "%.240s:%d: ", g_at_file, g_at_line);
	else if (g_at_file)
		snprintf(where, sizeof(where), "%.240s: ", g_at_file);
	g_at_file = NULL; /* an error ends the parse: the next one starts without a place */
	if (g_guard) {
		char prefix[420];
		snprintf(prefix, sizeof(prefix), "%s%.80s: ", where, opt);
		guard_format(EXIT_USAGE, prefix, fmt, ap);
		va_end(ap);
		longjmp(*g_guard, 1);
	}
	fprintf(stderr, "iowatt-engine: %s%s: ", where, opt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EXIT_USAGE);
}

void die_code(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (g_guard) {
		guard_format(code, "", fmt, ap);
		va_end(ap);
		longjmp(*g_guard, 1);
	}
	fputs("iowatt-engine: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(code);
}

void warnmsg(const char *fmt, ...)
{
	va_list ap;
	fputs("iowatt-engine: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

/* fio sizes: integer with optional k/m/g/t/p suffix (optionally followed by b, ib or iB),
 * all powers of 1024 (fio's default kb_base=1024). Hex 0x.. accepted too. */
int parse_size(const char *s, uint64_t *out, unsigned kb_base)
{
	char *end;
	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno)
		return -EINVAL;
	unsigned power = 0;
	switch (tolower((unsigned char)*end)) {
	case '\0': case 'b': break;
	case 'k': power = 1; break;
	case 'm': power = 2; break;
	case 'g': power = 3; break;
	case 't': power = 4; break;
	case 'p': power = 5; break;
	default: return -EINVAL;
	}
	int iec = 0; /* written with an IEC "i": KiB, Mi, ... */
	if (*end) {
		const char *rest = end + 1;
		if (tolower((unsigned char)*end) == 'b') {
			if (*rest)
				return -EINVAL;
		} else if (!strcasecmp(rest, "ib") || !strcasecmp(rest, "i")) {
			iec = 1;
		} else if (*rest && strcasecmp(rest, "b")) {
			return -EINVAL;
		}
	}
	/* fio: kb_base=1024 reads SI-looking suffixes as powers of 2 and IEC ones as powers of 10;
	 * kb_base=1000 the other way round (the standards' meaning) */
	uint64_t unit = (iec ? kb_base == 1000 : kb_base != 1000) ? 1024 : 1000, mult = 1;
	for (unsigned i = 0; i < power; i++)
		mult *= unit;
	if (v > UINT64_MAX / mult)
		return -ERANGE;
	*out = (uint64_t)v * mult;
	return 0;
}

/* fio times: plain number = seconds; suffixes us, ms, s, m, h, d. */
int parse_time_ns(const char *s, uint64_t *out)
{
	char *end;
	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || v < 0)
		return -EINVAL;
	double mul;
	if (!*end || !strcasecmp(end, "s") || !strcasecmp(end, "sec"))
		mul = 1e9;
	else if (!strcasecmp(end, "ms") || !strcasecmp(end, "msec"))
		mul = 1e6;
	else if (!strcasecmp(end, "us") || !strcasecmp(end, "usec"))
		mul = 1e3;
	else if (!strcasecmp(end, "ns") || !strcasecmp(end, "nsec"))
		mul = 1;
	else if (!strcasecmp(end, "m") || !strcasecmp(end, "min"))
		mul = 60e9;
	else if (!strcasecmp(end, "h"))
		mul = 3600e9;
	else if (!strcasecmp(end, "d"))
		mul = 86400e9;
	else
		return -EINVAL;
	double r = v * mul;
	if (r > 1e18)
		return -ERANGE;
	*out = (uint64_t)(r + 0.5);
	return 0;
}

int parse_bool(const char *s, int *out)
{
	if (!strcmp(s, "1") || !strcasecmp(s, "true") || !strcasecmp(s, "yes") || !strcasecmp(s, "on")) {
		*out = 1;
		return 0;
	}
	if (!strcmp(s, "0") || !strcasecmp(s, "false") || !strcasecmp(s, "no") || !strcasecmp(s, "off")) {
		*out = 0;
		return 0;
	}
	return -EINVAL;
}

int read_sysfs_str(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		buf[0] = 0;
		return -EIO;
	}
	fclose(f);
	size_t l = strlen(buf);
	while (l && (buf[l - 1] == '\n' || buf[l - 1] == ' '))
		buf[--l] = 0;
	return 0;
}

long long read_sysfs_ll(const char *path, long long dflt)
{
	char buf[64];
	if (read_sysfs_str(path, buf, sizeof(buf)) < 0)
		return dflt;
	char *end;
	long long v = strtoll(buf, &end, 10);
	return end == buf ? dflt : v;
}

void str_copy(char *dst, size_t len, const char *src)
{
	size_t n = strlen(src);
	if (n >= len)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = 0;
}

void opt_value_copy(const char *name, const char *val, char *buf, size_t len)
{
	if (strlen(val) >= len)
		die_usage(name, "value too long: '%.80s...'", val);
	str_copy(buf, len, val);
}

char *opt_range_split(char *buf)
{
	char *dash = strchr(buf, '-');
	if (!dash)
		return NULL;
	*dash = 0;
	return dash + 1;
}
