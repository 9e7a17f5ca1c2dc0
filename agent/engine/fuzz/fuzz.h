/* Shared by the libFuzzer targets: each calls one engine parser in-process through
 * parse_guarded(), so a usage error (exit 2 in the engine) is a return here and only a
 * sanitizer report, a crash or a hang is a finding. */
#ifndef IOWATT_FUZZ_H
#define IOWATT_FUZZ_H

#include <semaphore.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "iowatt.h"

sem_t g_wake; /* defined in main.c for the real binary; a worker posts it (never reached here) */

#define FUZZ_MAX_INPUT (256u << 10) /* larger inputs only slow the search down */
#define FUZZ_MAX_ARGS 64

/* data as a NUL-terminated string (NULL when it holds a NUL byte: the engine refuses those
 * before any parser sees them) */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
	if (size > FUZZ_MAX_INPUT || memchr(data, 0, size))
		return NULL;
	char *t = malloc(size + 1);
	if (!t)
		abort();
	memcpy(t, data, size);
	t[size] = 0;
	return t;
}

/* data split at newlines into argv[1..]; argv[0] is the program. Returns argc (0: refused). */
static inline int fuzz_argv(char *text, char **argv)
{
	int argc = 0;
	argv[argc++] = "iowatt-engine";
	for (char *p = text; p && argc < FUZZ_MAX_ARGS;) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = 0;
		argv[argc++] = p;
		p = nl ? nl + 1 : NULL;
	}
	return argc;
}

/* a parse error's message must be one line that names what was wrong */
static inline void fuzz_check_error(const struct parse_error *e)
{
	if (e->code && (e->code != EXIT_USAGE || !e->msg[0]))
		abort(); /* out of memory or an unexpected code in a parser: a finding */
}

#endif
