/* The option tables: every flag of every mode is a row of this shape (the block options in
 * options.c's opts[], the heap/B-tree flags in heapbtree.c), applied by opt_apply and read from
 * argv by opts_parse_argv. A row names its field by offset in the mode's struct (`base`). */
#ifndef IOWATT_OPTABLE_H
#define IOWATT_OPTABLE_H

#include <stddef.h>
#include <stdint.h>

struct jw;
struct options;

enum opt_type {
	OT_STR,   /* char[len]: non-empty, shorter than the field */
	OT_BOOL,  /* int: 0 or 1 (OPT_F_INVERT stores the opposite) */
	OT_UINT,  /* unsigned: plain number in [min, max] */
	OT_U64,   /* uint64_t: plain number in [min, max] */
	OT_SIZE,  /* uint64_t: fio size (k/m/g/t/p, kb_base) in [min, max] */
	OT_TIME,  /* uint64_t: nanoseconds from fio's time syntax (plain number = seconds) */
	OT_ENUM,  /* int: one of the names in choices (several names may share a value) */
	OT_FUNC,  /* parsed and echoed by its own functions */
	OT_ARG,   /* const char *: points at the (non-empty) value in argv */
};

#define OPT_F_INVERT 1u      /* OT_BOOL: store !value (buffered = !direct) */
#define OPT_F_UNSTORED 2u    /* validated for fio compatibility, changes nothing */
#define OPT_F_UNRECORDED 4u  /* not kept in the "options as given" (the job's name) */
#define OPT_F_NULL_ZERO 8u   /* echo: 0 / "" is written as null */
#define OPT_F_BARE 16u       /* a flag alone (no =VALUE) means 1, as a boolean's does */
#define OPT_F_UNLISTED 32u   /* not named in "it takes ..." (the mode's own flag) */
/* who may send it (--limits "server"; ADR 0030): a row with neither flag, and not a path option
 * (jobfile.c's path_opts), is one a server's job may carry, judged by the host's rules */
#define OPT_F_HOST 64u       /* set by the host alone (the agent, from its policy: ADR 0009 §5) */
#define OPT_F_FILES 128u     /* makes files of its own on the host beside the target (never from a server) */

struct opt_choice {
	const char *name;
	int val;
};

struct opt_def;
typedef void (*opt_parse_fn)(void *base, const struct opt_def *d, const char *name, const char *val);
typedef void (*opt_echo_fn)(struct jw *w, const struct options *o, const struct opt_def *d);

struct opt_def {
	const char *name;
	const char *alias;           /* a second fio name for the same option, or NULL */
	enum opt_type type;
	size_t off;                  /* offset of the field in struct options */
	size_t len;                  /* OT_STR: size of the field */
	uint64_t min, max;           /* numbers: accepted range (max 0 = no upper limit) */
	size_t set_off;              /* field set to 1 when the option is given (0 = none) */
	const struct opt_choice *choices; /* OT_ENUM, NULL-terminated; the first name of a value is echoed */
	const char *bad;             /* message for a bad value, one %s (OT_STR, OT_ENUM, OT_ARG; numbers and
				      * booleans: instead of the generic one) */
	const char *def;             /* default, as text, applied through the parser; NULL = zero */
	const char *key;             /* key in the JSON echo; NULL = not echoed */
	unsigned flags;
	opt_parse_fn parse;          /* OT_FUNC */
	opt_echo_fn echo;            /* OT_FUNC, or a computed echo for another type */
	const char *help;
	size_t text_off;             /* OT_FUNC of a mode's table: a const char * field holding the value
				      * as given (opts_echo_given), 0 = none */
};

#define FLD(o, d, T) ((T *)(void *)((char *)(o) + (d)->off))
#define CFLD(o, d, T) ((const T *)(const void *)((const char *)(o) + (d)->off))

/* Apply one value to the row's field in base; exits 2 with a message naming the option. */
void opt_apply(void *base, const struct opt_def *d, const char *name, const char *val);
/* A mode's argv (--name[=value] only) through its table into base: a flag alone is 1 for booleans
 * and OPT_F_BARE rows, "" for the others; anything else exits 2 naming `mode`. */
void opts_parse_argv(void *base, const struct opt_def *tbl, size_t n, const char *mode, int argc, char **argv);
/* The same over several tables, each with its own struct, looked up and named in this order. */
struct opt_table {
	const struct opt_def *rows;
	size_t n;
	void *base;
};
void opts_parse_tables(const struct opt_table *t, size_t nt, const char *mode, int argc, char **argv);
/* The echo of a table's settings: every row with a key, in table order, its value from base (a row
 * with an echo function through it; OT_ARG as a string or null). options_echo (iowatt.options) and
 * the file modes' own settings are this. */
void opts_echo_rows(struct jw *w, const struct opt_def *tbl, size_t n, const void *base);
/* fio's "job options" of a mode: every row with a key the command line gave (its set_off), in table
 * order, as text: numbers and booleans as read, OT_ARG and OT_FUNC rows (text_off) as given. */
void opts_echo_given(struct jw *w, const struct opt_def *tbl, size_t n, const void *base);
/* --output-format=json|json+ (|normal for the file modes); --progress=jsonl|none (1 for jsonl) */
void output_format_arg(const char *val, int allow_normal, int *jsonplus, int *normal);
int progress_arg(const char *val);

#endif
