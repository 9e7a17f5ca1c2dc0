/* iowatt-engine --limits: every limit, default and choice list the engine enforces, as one JSON
 * document read by whoever prepares its input (the server checks workloads against it before
 * anything is queued; agent/engine/README.md § Limits). Each section is written by the code
 * that enforces it: the block options from opts[] (options.c), PostMark's set commands from
 * postmark.c, the heap/B-tree flags from heapbtree.c, vdbench's flags from fileset.c. */
#include <limits.h>

#include "fileset.h"
#include "heapbtree.h"
#include "iowatt.h"
#include "multifile.h"
#include "jobfile.h"
#include "postmark.h"

#define IOWATT_LIMITS_SCHEMA "iowatt-engine-limits/1"

void engine_limits(FILE *f)
{
	struct jw w;
	jw_init(&w, f);
	jw_obj(&w, NULL);
	jw_str(&w, "schema", IOWATT_LIMITS_SCHEMA);
	jw_str(&w, "version", IOWATT_VERSION);
	jw_obj(&w, "block");
	jw_u64(&w, "max_jobs", MAX_JOBS);          /* jobs on one command line or in one job file */
	jw_u64(&w, "max_bssplit", MAX_BSSPLIT);    /* bssplit entries per direction */
	jw_u64(&w, "max_options", MAX_GIVEN);      /* distinct options given to one job */
	jw_u64(&w, "path_max", PATH_MAX - 1);      /* filename, beneath: bytes */
	jw_u64(&w, "max_offload_threads", OFFLOAD_MAX_THREADS); /* io_submit_mode=offload: iodepth x numjobs */
	jw_u64(&w, "max_offload_async_threads", OFFLOAD_MAX_ASYNC_THREADS); /* the same, libaio / io_uring */
	jw_u64(&w, "max_cmdprio_bssplit", CMDPRIO_MAX_ENTRIES); /* cmdprio_bssplit entries per direction */
	jw_u64(&w, "max_cmdprio_prios", CMDPRIO_MAX_PRIOS); /* distinct priorities per direction (a histogram each) */
	mf_limits(&w);                             /* max_files: nrfiles x numjobs over the run */
	options_limits(&w);
	jf_limits(&w);
	jw_obj_end(&w);
	postmark_limits(&w);
	heapbtree_limits(&w);
	fileset_limits(&w);
	jw_obj_end(&w);
}
