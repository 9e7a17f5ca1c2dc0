/* --heap-btree flags (one argument per input line): records, cache fractions, structures and the
 * memory bound the flags are checked against. */
#include "heapbtree.h"
#include "fuzz.h"

struct arg {
	int argc;
	char **argv;
};

static void run(void *p)
{
	struct arg *a = p;
	heapbtree_parse_args(a->argc, a->argv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	if (!text)
		return 0;
	char *argv[FUZZ_MAX_ARGS + 1];
	int argc = fuzz_argv(text, argv);
	argv[argc] = NULL;
	struct arg a = { argc, argv };
	struct parse_error e;
	parse_guarded(run, &a, &e);
	fuzz_check_error(&e);
	free(text);
	return 0;
}
