/* fio INI job files (iowatt-engine FILE.fio, --parse-only FILE): the lexer (comments, sections,
 * bare flags, blanks), ${VAR} and keyword expansion with bc's arithmetic, the bounds of
 * src/jobfile.c, then every option's parser and each job's final checks. include is refused
 * (it would read files); --untrusted's path rule runs when the input's first line says
 * "; untrusted" (with beneath=/fuzz set by the input or not). */
#include "fuzz.h"
#include "jobfile.h"

struct arg {
	struct runcfg cfg;
	struct jf_doc doc;
	const char *text;
	unsigned flags;
};

static void run(void *p)
{
	struct arg *a = p;
	struct options global;
	options_defaults(&global);
	guard_own(&a->doc, jf_doc_release);
	jf_parse_text(&a->doc, a->text, "fuzz.fio", a->flags);
	jf_jobs(&a->cfg, &global, &a->doc, NULL, a->flags);
	for (int i = 0; i < a->cfg.njobs; i++) {
		jf_where_job(i);
		options_finalize(&a->cfg.jobs[i]);
	}
	die_at(NULL, 0);
	guard_disown(&a->doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	if (!text)
		return 0;
	struct arg a = { .text = text };
	a.flags = !strncmp(text, "; untrusted", 11) ? JF_UNTRUSTED : JF_NO_INCLUDE;
	struct parse_error e;
	parse_guarded(run, &a, &e);
	fuzz_check_error(&e);
	jf_doc_free(&a.doc);
	free(a.cfg.jobs);
	free(text);
	return 0;
}
