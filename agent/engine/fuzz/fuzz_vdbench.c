/* vdbench parameter files (--vdbench=FILE --parse-only): the statement splitter, the fsd/fwd/rd
 * parameters, the distributions and the resolution into file sets. */
#include "fileset.h"
#include "fuzz.h"

static void run(void *text)
{
	vdb_parse_check(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	if (!text)
		return 0;
	struct parse_error e;
	parse_guarded(run, text, &e);
	fuzz_check_error(&e);
	free(text);
	return 0;
}
