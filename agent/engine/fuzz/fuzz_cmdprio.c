/* cmdprio_bssplit and its companions (one value a line: cmdprio_bssplit, then optionally
 * cmdprio_percentage, cmdprio_class, cmdprio): the entry and list syntax, block sizes, the
 * per-size sums, then the checks and the priorities' order of a whole job (src/cmdprio.c). */
#include "fuzz.h"

struct arg {
	char *lines[4];
	int n;
};

static void run(void *p)
{
	static const char *const names[4] = { "cmdprio_bssplit", "cmdprio_percentage", "cmdprio_class", "cmdprio" };
	struct arg *a = p;
	struct options *o = calloc(1, sizeof(*o));
	if (!o)
		abort();
	guard_own(o, NULL);
	options_defaults(o);
	option_set(o, "ioengine", "io_uring");
	option_set(o, "rw", "randrw");
	option_set(o, "prio", "3");
	for (int i = 0; i < a->n; i++)
		option_set(o, names[i], a->lines[i]);
	cmdprio_finalize(o);
	guard_disown(o);
	free(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	if (!text)
		return 0;
	struct arg a = { .n = 0 };
	for (char *p = text; p && a.n < 4;) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = 0;
		a.lines[a.n++] = p;
		p = nl ? nl + 1 : NULL;
	}
	struct parse_error e;
	parse_guarded(run, &a, &e);
	fuzz_check_error(&e);
	free(text);
	return 0;
}
