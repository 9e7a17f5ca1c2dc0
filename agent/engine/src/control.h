/* fio's control options of issue 24's job files (src/control.c): ignore_error, exit_what,
 * allow_file_create, fill_device, offset_increment=N% and offset_align. */
#ifndef IOWATT_CONTROL_H
#define IOWATT_CONTROL_H

#include "iowatt.h"

struct opt_def;
/* option rows (options.c) */
void ctl_parse_ignore_error(void *base, const struct opt_def *d, const char *name, const char *val);
void ctl_echo_ignore_error(struct jw *w, const struct options *o, const struct opt_def *d);
void ctl_parse_offset_increment(void *base, const struct opt_def *d, const char *name, const char *val);
void ctl_echo_offset_increment(struct jw *w, const struct options *o, const struct opt_def *d);
/* worker.c: continue over this error of this kind (CE_READ/CE_WRITE/CE_VERIFY)? fio's
 * td_non_fatal_error: the type's continue_on_error bit, then its ignore_error list (EIO, EILSEQ) */
int ctl_error_ignored(const struct options *o, unsigned kind, int err);
/* clone k's region start: offset + k x offset_increment; a percentage as fio finds it per clone
 * (control.c), aligned up */
uint64_t ctl_clone_offset(const struct options *o, unsigned k);
/* the furthest clone start past offset (the layout ends there + size) */
uint64_t ctl_clone_span(const struct options *o);
/* target.c: a percentage offset_increment against the target's size before the run (0: the run
 * creates it), which each clone's layout extends when grows (a file) */
void ctl_resolve_offset_increment(struct options *o, uint64_t base, int grows);
/* options_finalize: create_serialize=0 exits 2 (1, fio's default, is the engine's only layout) */
void ctl_finalize(const struct options *o);
/* error_dump (fio's __io_u_log_error): one stderr line for an I/O error of a job, when it is fatal or
 * error_dump is on */
void ctl_dump_io_error(const struct options *o, const char *path, int err, int ddir, uint64_t off, uint32_t len);

#endif
