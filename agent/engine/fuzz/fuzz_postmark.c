/* PostMark command files (--postmark=FILE --parse-only): the command table, the set values and
 * the line limits. The input may hold NUL bytes: the parser must refuse them itself. */
#include "postmark.h"
#include "fuzz.h"

struct arg {
	const uint8_t *data;
	size_t size;
};

static void run(void *p)
{
	const struct arg *a = p;
	postmark_parse_text((const char *)a->data, a->size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > FUZZ_MAX_INPUT)
		return 0;
	struct arg a = { data, size };
	struct parse_error e;
	parse_guarded(run, &a, &e);
	fuzz_check_error(&e);
	return 0;
}
