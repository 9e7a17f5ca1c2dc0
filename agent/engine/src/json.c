/* A small strict JSON parser (RFC 8259) and a streaming pretty writer. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "iowatt.h"

#define MAX_DEPTH 64
/* members of one object or array: the duplicate-key check is quadratic, and a job file has
 * at most MAX_JOBS jobs of about a hundred options each */
#define MAX_ITEMS 4096
#define STR_(x) #x
#define STR(x) STR_(x)

struct jp {
	const char *p, *start;
	char *err;
	size_t errlen;
	int failed;
};

static void jp_fail(struct jp *j, const char *msg)
{
	if (!j->failed)
		snprintf(j->err, j->errlen, "%s at byte %ld", msg, (long)(j->p - j->start));
	j->failed = 1;
}

static void skip_ws(struct jp *j)
{
	while (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')
		j->p++;
}

static struct jval *jnew(enum jtype t)
{
	struct jval *v = calloc(1, sizeof(*v));
	if (!v)
		abort();
	v->t = t;
	return v;
}

static void put_utf8(char **o, unsigned cp)
{
	unsigned char *u = (unsigned char *)*o;
	if (cp < 0x80) {
		*u++ = (unsigned char)cp;
	} else if (cp < 0x800) {
		*u++ = (unsigned char)(0xC0 | (cp >> 6));
		*u++ = (unsigned char)(0x80 | (cp & 0x3F));
	} else if (cp < 0x10000) {
		*u++ = (unsigned char)(0xE0 | (cp >> 12));
		*u++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
		*u++ = (unsigned char)(0x80 | (cp & 0x3F));
	} else {
		*u++ = (unsigned char)(0xF0 | (cp >> 18));
		*u++ = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
		*u++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
		*u++ = (unsigned char)(0x80 | (cp & 0x3F));
	}
	*o = (char *)u;
}

static int hex4(const char *p, unsigned *out)
{
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		v <<= 4;
		if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
		else return -1;
	}
	*out = v;
	return 0;
}

static char *parse_string(struct jp *j)
{
	/* j->p at opening quote */
	const char *q = ++j->p;
	size_t cap = 0;
	while (*q && *q != '"') {
		if (*q == '\\' && q[1])
			q++;
		q++;
		cap++;
	}
	char *out = malloc(cap * 4 + 1), *o = out;
	if (!out)
		abort();
	for (;;) {
		unsigned char c = (unsigned char)*j->p;
		if (c == '"') {
			j->p++;
			break;
		}
		if (c == 0) {
			jp_fail(j, "unterminated string");
			break;
		}
		if (c < 0x20) {
			jp_fail(j, "control character in string");
			break;
		}
		if (c != '\\') {
			*o++ = (char)c;
			j->p++;
			continue;
		}
		j->p++;
		char e = *j->p;
		if (e) /* a backslash at the end of the text stays on the terminating NUL */
			j->p++;
		switch (e) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '/': *o++ = '/'; break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u': {
			unsigned cp, lo;
			if (hex4(j->p, &cp)) {
				jp_fail(j, "bad \\u escape");
				goto out;
			}
			j->p += 4;
			if (cp >= 0xD800 && cp <= 0xDBFF) {
				if (j->p[0] != '\\' || j->p[1] != 'u' || hex4(j->p + 2, &lo) || lo < 0xDC00 || lo > 0xDFFF) {
					jp_fail(j, "bad surrogate pair");
					goto out;
				}
				j->p += 6;
				cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
			} else if (cp >= 0xDC00 && cp <= 0xDFFF) {
				jp_fail(j, "lone low surrogate");
				goto out;
			}
			if (cp == 0) {
				jp_fail(j, "NUL in string");
				goto out;
			}
			put_utf8(&o, cp);
			break;
		}
		default:
			jp_fail(j, "bad escape");
			goto out;
		}
	}
out:
	*o = 0;
	return out;
}

static struct jval *parse_value(struct jp *j, int depth);

static void push(struct jval *v, struct jval *item, char *key)
{
	if ((v->n & (v->n - 1)) == 0) {
		size_t cap = v->n ? v->n * 2 : 1;
		v->items = realloc(v->items, cap * sizeof(*v->items));
		if (v->t == J_OBJ)
			v->keys = realloc(v->keys, cap * sizeof(*v->keys));
		if (!v->items || (v->t == J_OBJ && !v->keys))
			abort();
	}
	if (v->t == J_OBJ)
		v->keys[v->n] = key;
	v->items[v->n++] = item;
}

static struct jval *parse_value(struct jp *j, int depth)
{
	skip_ws(j);
	if (depth > MAX_DEPTH) {
		jp_fail(j, "nesting too deep");
		return NULL;
	}
	const char *p = j->p;
	if (*p == '{' || *p == '[') {
		int obj = *p == '{';
		struct jval *v = jnew(obj ? J_OBJ : J_ARR);
		j->p++;
		skip_ws(j);
		if (*j->p == (obj ? '}' : ']')) {
			j->p++;
			return v;
		}
		for (;;) {
			char *key = NULL;
			skip_ws(j);
			if (obj) {
				if (*j->p != '"') {
					jp_fail(j, "expected object key");
					break;
				}
				key = parse_string(j);
				if (j->failed) {
					free(key);
					break;
				}
				for (size_t i = 0; i < v->n; i++)
					if (!strcmp(v->keys[i], key)) {
						jp_fail(j, "duplicate key");
						break;
					}
				skip_ws(j);
				if (*j->p != ':') {
					jp_fail(j, "expected ':'");
				}
				if (j->failed) {
					free(key);
					break;
				}
				j->p++;
			}
			if (v->n >= MAX_ITEMS) {
				jp_fail(j, obj ? "more than " STR(MAX_ITEMS) " members in an object" : "more than " STR(MAX_ITEMS) " items in an array");
				free(key);
				break;
			}
			struct jval *item = parse_value(j, depth + 1);
			if (!item) {
				free(key);
				break;
			}
			push(v, item, key);
			skip_ws(j);
			if (*j->p == ',') {
				j->p++;
				continue;
			}
			if (*j->p == (obj ? '}' : ']')) {
				j->p++;
				return v;
			}
			jp_fail(j, obj ? "expected ',' or '}'" : "expected ',' or ']'");
			break;
		}
		json_free(v);
		return NULL;
	}
	if (*p == '"') {
		struct jval *v = jnew(J_STR);
		v->s = parse_string(j);
		if (j->failed) {
			json_free(v);
			return NULL;
		}
		return v;
	}
	if (!strncmp(p, "true", 4) || !strncmp(p, "false", 5)) {
		struct jval *v = jnew(J_BOOL);
		v->b = *p == 't';
		j->p += v->b ? 4 : 5;
		return v;
	}
	if (!strncmp(p, "null", 4)) {
		j->p += 4;
		return jnew(J_NULL);
	}
	/* number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
	const char *q = p;
	if (*q == '-')
		q++;
	if (*q == '0')
		q++;
	else if (*q >= '1' && *q <= '9')
		while (*q >= '0' && *q <= '9')
			q++;
	else {
		jp_fail(j, "unexpected character");
		return NULL;
	}
	if (*q == '.') {
		q++;
		if (!(*q >= '0' && *q <= '9')) {
			jp_fail(j, "bad number");
			return NULL;
		}
		while (*q >= '0' && *q <= '9')
			q++;
	}
	if (*q == 'e' || *q == 'E') {
		q++;
		if (*q == '+' || *q == '-')
			q++;
		if (!(*q >= '0' && *q <= '9')) {
			jp_fail(j, "bad number");
			return NULL;
		}
		while (*q >= '0' && *q <= '9')
			q++;
	}
	struct jval *v = jnew(J_NUM);
	v->s = strndup(p, (size_t)(q - p));
	j->p = q;
	return v;
}

struct jval *json_parse(const char *text, char *err, size_t errlen)
{
	struct jp j = { .p = text, .start = text, .err = err, .errlen = errlen };
	struct jval *v = parse_value(&j, 0);
	if (v) {
		skip_ws(&j);
		if (*j.p) {
			jp_fail(&j, "trailing characters");
			json_free(v);
			v = NULL;
		}
	}
	return v;
}

void json_free(struct jval *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++) {
		json_free(v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->s);
	free(v);
}

const struct jval *json_get(const struct jval *obj, const char *key)
{
	if (!obj || obj->t != J_OBJ)
		return NULL;
	for (size_t i = 0; i < obj->n; i++)
		if (!strcmp(obj->keys[i], key))
			return obj->items[i];
	return NULL;
}

/* ---- writer ---- */
void json_escape(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

void jw_init(struct jw *w, FILE *f)
{
	memset(w, 0, sizeof(*w));
	w->f = f;
	w->first[0] = 1;
}

static void jw_key(struct jw *w, const char *key)
{
	if (!w->first[w->depth])
		fputc(',', w->f);
	w->first[w->depth] = 0;
	if (w->depth) {
		fputc('\n', w->f);
		for (int i = 0; i < w->depth; i++)
			fputs("  ", w->f);
	}
	if (key) {
		json_escape(w->f, key);
		fputs(": ", w->f);
	}
}

static void jw_open(struct jw *w, const char *key, char c)
{
	jw_key(w, key);
	fputc(c, w->f);
	if (w->depth < 63)
		w->depth++;
	w->first[w->depth] = 1;
}

static void jw_close(struct jw *w, char c)
{
	int empty = w->first[w->depth];
	w->depth--;
	if (!empty) {
		fputc('\n', w->f);
		for (int i = 0; i < w->depth; i++)
			fputs("  ", w->f);
	}
	fputc(c, w->f);
	if (w->depth == 0)
		fputc('\n', w->f);
}

void jw_obj(struct jw *w, const char *key) { jw_open(w, key, '{'); }
void jw_obj_end(struct jw *w) { jw_close(w, '}'); }
void jw_arr(struct jw *w, const char *key) { jw_open(w, key, '['); }
void jw_arr_end(struct jw *w) { jw_close(w, ']'); }

void jw_str(struct jw *w, const char *key, const char *val)
{
	jw_key(w, key);
	json_escape(w->f, val);
}

void jw_u64(struct jw *w, const char *key, uint64_t v)
{
	jw_key(w, key);
	fprintf(w->f, "%llu", (unsigned long long)v);
}

void jw_i64(struct jw *w, const char *key, int64_t v)
{
	jw_key(w, key);
	fprintf(w->f, "%lld", (long long)v);
}

void jw_dbl(struct jw *w, const char *key, double v)
{
	jw_key(w, key);
	if (!isfinite(v))
		v = 0;
	fprintf(w->f, "%.6f", v);
}

void jw_str_or_null(struct jw *w, const char *key, const char *val)
{
	if (val && *val)
		jw_str(w, key, val);
	else
		jw_null(w, key);
}

void jw_bool(struct jw *w, const char *key, int v)
{
	jw_key(w, key);
	fputs(v ? "true" : "false", w->f);
}

void jw_null(struct jw *w, const char *key)
{
	jw_key(w, key);
	fputs("null", w->f);
}
