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
/* clone k's region start: offset + k x offset_increment, aligned up as fio when a percentage */
uint64_t ctl_clone_offset(const struct options *o, unsigned k);
/* target.c: a percentage offset_increment in bytes of the target's real size */
void ctl_resolve_offset_increment(struct options *o, uint64_t real_size);

#endif
