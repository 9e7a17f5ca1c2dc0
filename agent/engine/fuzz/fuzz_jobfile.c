/* JSON job files (iowatt-engine FILE.json): the JSON parser, the sections and every option's
 * parser in the option table, then each job's final checks. */
#include "fuzz.h"

struct arg {
	struct runcfg cfg;
	const char *text;
};

static void run(void *p)
{
	struct arg *a = p;
	parse_jobtext(&a->cfg, a->text, "fuzz.json");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	if (!text)
		return 0;
	struct arg a = { .text = text };
	struct parse_error e;
	parse_guarded(run, &a, &e);
	fuzz_check_error(&e);
	free(a.cfg.jobs);
	free(a.cfg.global);
	free(text);
	return 0;
}
