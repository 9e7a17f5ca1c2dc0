/* fio-style command lines (one argument per input line): every option's parser in the option
 * table, the job split at --name, each job's final checks; with --postmark or --vdbench the
 * file modes' common flags (mode_args_parse). A job-file path, --help, --version, --limits,
 * --parse-only, --showcmd and --showjob are dropped: the first reads a file (the jobfile and ini
 * targets cover its text; --showcmd=FILE names one too), the others print and exit 0. */
#include "fuzz.h"

struct arg {
	struct runcfg cfg;
	int argc;
	char **argv;
};

static void run(void *p)
{
	struct arg *a = p;
	if (mode_requested(a->argc, a->argv, "postmark") || mode_requested(a->argc, a->argv, "vdbench")) {
		struct mode_args m = { .mode = mode_requested(a->argc, a->argv, "postmark") ? "postmark" : "vdbench",
				       .file_what = "a file" };
		mode_args_parse(&m, a->argc, a->argv);
		return;
	}
	parse_cmdline(a->argc, a->argv, &a->cfg);
}

static int dropped(const char *arg)
{
	if (strncmp(arg, "--", 2))
		return 1;
	size_t n = strcspn(arg + 2, "=");
	static const char *const exits[] = { "help", "version", "limits", "parse-only", "showcmd", "showjob" };
	for (size_t k = 0; k < sizeof(exits) / sizeof(exits[0]); k++)
		if (n == strlen(exits[k]) && !strncmp(arg + 2, exits[k], n))
			return 1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	if (!text)
		return 0;
	char *all[FUZZ_MAX_ARGS], *argv[FUZZ_MAX_ARGS + 1];
	int n = fuzz_argv(text, all), argc = 1;
	argv[0] = all[0];
	for (int k = 1; k < n; k++)
		if (!dropped(all[k]))
			argv[argc++] = all[k];
	argv[argc] = NULL;
	struct arg a = { .argc = argc, .argv = argv };
	struct parse_error e;
	parse_guarded(run, &a, &e);
	fuzz_check_error(&e);
	free(a.cfg.jobs);
	free(a.cfg.global);
	free(text);
	return 0;
}
