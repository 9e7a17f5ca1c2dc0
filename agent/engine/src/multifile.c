/* Multi-file jobs with fio's meaning (HOWTO "Target file/device"): directory (a ':' list, one
 * per clone), filename=a:b (files shared by the clones), nrfiles with fio's generated names
 * (filename_format, default $jobname.$jobnum.$filenum), filesize (LOW[-HIGH]), file_append,
 * openfiles, file_service_type, create_on_open, fallocate. Every file is a target of
 * src/target.c: probed, confined (beneath), created O_EXCL|O_NOFOLLOW, identity-checked and
 * unlinked exactly as a single filename is. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "multifile.h"
#include "verify.h"

static unsigned g_run_files; /* files of every job so far (MAX_RUN_FILES) */

static int list_has_sep(const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' && s[1] == ':')
			s++;
		else if (*s == ':')
			return 1;
	}
	return 0;
}

/* fio's ':' list with "\:" for a colon in a name: the idx-th item into out; -1 past the end,
 * -2 if too long or empty */
static int list_item(const char *s, unsigned idx, char *out, size_t len)
{
	unsigned k = 0;
	size_t n = 0;
	for (;; s++) {
		if (*s == '\\' && s[1] == ':') {
			if (k == idx) {
				if (n + 1 >= len)
					return -2;
				out[n++] = ':';
			}
			s++;
			continue;
		}
		if (*s == ':' || !*s) {
			if (k == idx) {
				out[n] = 0;
				return n ? 0 : -2;
			}
			if (!*s)
				return -1;
			k++;
			continue;
		}
		if (k == idx) {
			if (n + 1 >= len)
				return -2;
			out[n++] = *s;
		}
	}
}

static unsigned list_count(const char *s)
{
	unsigned n = 1;
	for (; *s; s++) {
		if (*s == '\\' && s[1] == ':')
			s++;
		else if (*s == ':')
			n++;
	}
	return n;
}

int mf_wanted(const struct options *o)
{
	return !o->filename[0] || list_has_sep(o->filename) || o->filesize_lo || o->file_append || o->create_on_open;
}

/* DIR/NAME (fio prefixes the directory even to an absolute name) */
static void join(char *out, size_t len, const char *dir, const char *name, const char *opt)
{
	int n = dir[0] ? snprintf(out, len, "%s/%s", dir, name) : snprintf(out, len, "%s", name);
	if (n < 0 || (size_t)n >= len)
		die_usage(opt, "path too long: '%.80s...'", dir[0] ? dir : name);
}

/* fio's filename_format: $jobname, $jobnum (the clone), $filenum, $clientuid (empty: no
 * client/server mode); anything else is kept as written. */
static void format_name(char *out, size_t len, const char *fmt, const char *jobname, unsigned jobnum,
			unsigned filenum)
{
	size_t n = 0;
	char num[16];
	while (*fmt) {
		const char *rep = NULL;
		size_t skip = 0;
		if (!strncmp(fmt, "$jobname", 8)) {
			rep = jobname;
			skip = 8;
		} else if (!strncmp(fmt, "$jobnum", 7)) {
			snprintf(num, sizeof(num), "%u", jobnum);
			rep = num;
			skip = 7;
		} else if (!strncmp(fmt, "$filenum", 8)) {
			snprintf(num, sizeof(num), "%u", filenum);
			rep = num;
			skip = 8;
		} else if (!strncmp(fmt, "$clientuid", 10)) {
			rep = "";
			skip = 10;
		}
		if (rep) {
			size_t l = strlen(rep);
			if (n + l >= len)
				die_usage("filename_format", "generated name too long");
			memcpy(out + n, rep, l);
			n += l;
			fmt += skip;
		} else {
			if (n + 1 >= len)
				die_usage("filename_format", "generated name too long");
			out[n++] = *fmt++;
		}
	}
	out[n] = 0;
	if (!n)
		die_usage("filename_format", "generates an empty name");
}

int mf_name_single(struct options *o)
{
	if (o->filename[0] || o->nrfiles > 1 || o->numjobs > 1 || o->filesize_lo || o->file_append || o->create_on_open)
		return 0;
	char name[PATH_MAX];
	format_name(name, sizeof(name), o->filename_format[0] ? o->filename_format : "$jobname.$jobnum.$filenum",
		    o->name, 0, 0);
	str_copy(o->filename, sizeof(o->filename), name);
	return 1;
}

void mf_apply_directory(struct options *o)
{
	if (!o->directory[0] || !o->filename[0])
		return;
	char dir[PATH_MAX], path[PATH_MAX];
	if (list_item(o->directory, 0, dir, sizeof(dir)) < 0)
		die_usage("directory", "invalid list '%s'", o->directory);
	join(path, sizeof(path), dir, o->filename, "directory");
	str_copy(o->filename, sizeof(o->filename), path);
	o->directory[0] = 0;
}

/* fio's files-per-descriptor need: raise the soft limit up to the hard one when the run needs it */
static void need_descriptors(uint64_t n)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	uint64_t want = n + 64;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
		rlim_t cap = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? (rlim_t)want : rl.rlim_max;
		rl.rlim_cur = cap;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want)
			die_usage("openfiles", "the job keeps %llu files open at once, more than this process may open (%llu)",
				  (unsigned long long)n, (unsigned long long)rl.rlim_cur);
	}
}

static struct options *scratch_options(const struct options *o)
{
	struct options *s = malloc(sizeof(*s));
	if (!s)
		die_code(EXIT_FAIL, "out of memory");
	*s = *o;
	return s;
}

void mf_job_setup(struct job *j)
{
	struct options *o = j->o;
	if (o->fill_device) /* control.c's fill_device takes one file */
		die_usage("fill_device", "not implemented for jobs of several files (job '%s')", o->name);
	struct mfset *m = calloc(1, sizeof(*m));
	if (!m)
		die_code(EXIT_FAIL, "out of memory");
	pthread_mutex_init(&m->lock, NULL);
	m->shared = o->filename[0] != 0;
	unsigned ndirs = o->directory[0] ? list_count(o->directory) : 1;
	if (m->shared) {
		m->per_worker = list_count(o->filename);
		m->nfiles = m->per_worker;
	} else {
		m->per_worker = o->nrfiles;
		m->nfiles = o->nrfiles * o->numjobs;
	}
	if ((o->offset_increment || o->oinc_pct) && o->numjobs > 1)
		die_usage("offset_increment", "not implemented for jobs of several files (job '%s')", o->name);
	/* verify with several files (src/verify.c): each clone logs its writes (file, offset) and reads
	 * them back from that log, as fio's io_hist. What the log does not replay stays refused */
	if (o->verify && o->file_append)
		die_usage("verify", "not supported with file_append (job '%s')", o->name);
	if (o->verify && m->per_worker > 1) {
		if (o->verify_backlog)
			die_usage("verify_backlog", "not supported with several files per clone (job '%s')", o->name);
		if (o->verify_only)
			die_usage("verify_only", "not supported with several files per clone (job '%s')", o->name);
		if (o->verify_dump)
			die_usage("verify_dump", "not supported with several files per clone (job '%s')", o->name);
		if (o->loops > 1)
			die_usage("loops", "not supported with verify and several files per clone (job '%s')", o->name);
		if (verify_io_passes(o))
			die_usage("io_size", "larger than size is not supported with verify and several files per clone (job '%s')",
				  o->name);
		if (rw_trimwrite(o->rw))
			die_usage("rw", "trimwrite is not supported with verify and several files per clone (job '%s')", o->name);
		/* the writes have one block size here (bsrange, bssplit: patterns.c refuses them with
		 * several files), so the read-back's log replaces a write by the next at its offset */
	}
	if (m->nfiles > MAX_RUN_FILES || g_run_files + m->nfiles > MAX_RUN_FILES)
		die_usage(m->shared ? "filename" : "nrfiles",
			  "the run would use %u files (nrfiles x numjobs over every job), at most %u", g_run_files + m->nfiles,
			  MAX_RUN_FILES);
	g_run_files += m->nfiles;
	unsigned nopen = o->openfiles && o->openfiles < m->per_worker ? o->openfiles : m->per_worker;
	need_descriptors((uint64_t)nopen * o->numjobs);
	m->files = calloc(m->nfiles, sizeof(*m->files));
	if (!m->files)
		die_code(EXIT_FAIL, "out of memory");
	j->mf = m;

	struct options *s = scratch_options(o);
	uint64_t minbs = opt_min_bs(o), maxbs = opt_max_bs(o);
	struct rng rng;
	rng_seed(&rng, o->randseed ^ 0xf11e5123ull ^ ((uint64_t)j->index << 40));
	/* size divided among a worker's files (fio: the first ones get a block more when it does not
	 * divide) */
	uint64_t fs = o->size_set ? o->size / m->per_worker : 0;
	uint64_t extra = o->size_set ? (o->size - fs * m->per_worker) / minbs : 0;
	char dir[PATH_MAX], name[PATH_MAX];
	for (unsigned i = 0; i < m->nfiles; i++) {
		struct mfile *f = &m->files[i];
		unsigned clone = m->shared ? 0 : i / m->per_worker, fno = m->shared ? i : i % m->per_worker;
		dir[0] = 0;
		if (o->directory[0] && list_item(o->directory, m->shared ? 0 : clone % ndirs, dir, sizeof(dir)) < 0)
			die_usage("directory", "invalid list '%s'", o->directory);
		if (m->shared) {
			if (list_item(o->filename, fno, name, sizeof(name)) < 0)
				die_usage("filename", "invalid list '%s' (an empty name?)", o->filename);
		} else {
			format_name(name, sizeof(name), o->filename_format[0] ? o->filename_format : "$jobname.$jobnum.$filenum",
				    o->name, clone, fno);
		}
		*s = *o;
		join(s->filename, sizeof(s->filename), dir, name, o->directory[0] ? "directory" : "filename");
		target_probe(&f->tgt, s);
		if (f->tgt.is_blk)
			die_usage("filename", "'%s' is a block device: a file list or nrfiles takes files only", s->filename);
		f->offset = o->file_append ? (f->tgt.exists ? f->tgt.dev_size : 0) : o->offset;
		s->offset = f->offset;
		uint64_t lo = o->filesize_lo, hi = o->filesize_hi;
		if (lo) {
			uint64_t fsz;
			if (f->tgt.exists && f->tgt.dev_size >= lo && f->tgt.dev_size <= hi)
				fsz = f->tgt.dev_size; /* as fio: an existing file inside the range keeps its size */
			else if (lo == hi)
				fsz = lo;
			else
				fsz = (lo + rng_below(&rng, hi - lo)) / minbs * minbs;
			if (o->file_append)
				fsz += f->offset;
			if (f->offset > fsz)
				die_usage("offset", "%llu is beyond the file size %llu of '%s'", (unsigned long long)f->offset,
					  (unsigned long long)fsz, s->filename);
			s->size = fsz - f->offset;
			s->size_set = 1;
		} else if (o->size_set) {
			s->size = fs + (fno < extra ? minbs : 0);
			s->size_set = 1;
		} else {
			s->size_set = 0; /* an existing file: all of it after offset (target_validate) */
		}
		if (s->size_set && s->size < maxbs) {
			/* too small for one block: fio serves no I/O from it; it is still laid out */
			if (!s->size) {
				f->region = 0;
				continue;
			}
			s->size_set = 1;
			struct options t = *s;
			t.bs[0] = t.bs[1] = s->size;
			t.nbssplit[0] = t.nbssplit[1] = 0;
			target_validate(&t, &f->tgt);
			f->region = s->size;
			continue;
		}
		target_validate(s, &f->tgt);
		f->region = s->size;
	}
	free(s);
	/* a worker's bytes per pass: whole smallest blocks of its files, or size when smaller */
	uint64_t sum = 0;
	for (unsigned i = 0; i < m->per_worker; i++)
		if (m->files[i].region >= maxbs)
			sum += m->files[i].region / minbs * minbs;
	if (!sum)
		die_usage("bs", "block size %llu is larger than every file of job '%s'", (unsigned long long)maxbs, o->name);
	m->budget_base = o->filesize_lo && o->size_set && o->size / minbs * minbs < sum ? o->size / minbs * minbs : sum;
	if (!o->size_set)
		o->size = sum;
	j->tgt = m->files[0].tgt; /* facts of the first file (shares its tfile) */
}

/* the job's options with this file's name, region and layout */
static void file_options(struct options *s, const struct options *o, const struct mfile *f)
{
	*s = *o;
	str_copy(s->filename, sizeof(s->filename), f->tgt.path);
	s->offset = f->offset;
	s->size = f->region;
	s->size_set = 1;
}

int mf_prepare(struct job *j)
{
	struct mfset *m = j->mf;
	if (j->o->create_on_open)
		return 0; /* each file is created by its first open, in the job */
	struct options *s = scratch_options(j->o);
	int r = 0;
	for (unsigned i = 0; i < m->nfiles && !r; i++) {
		struct mfile *f = &m->files[i];
		if (!f->region && f->tgt.exists)
			continue;
		file_options(s, j->o, f);
		if (!f->region)
			s->size = 0;
		r = target_prepare(s, &f->tgt, j->errmsg, sizeof(j->errmsg));
		f->laid_out = !r;
	}
	free(s);
	j->tgt = m->files[0].tgt; /* the facts after the layout */
	return r;
}

/* ---- the worker's files ---- */

static void swap_out(struct worker *w, struct mfstate *s)
{
	s->roff = w->roff;
	s->rsize = w->rsize;
	s->nblocks = w->nblocks;
	s->perm_i = w->perm_i;
	s->seq_pos[0] = w->seq_pos[0];
	s->seq_pos[1] = w->seq_pos[1];
	s->perm = w->perm;
	s->scatter = w->scatter;
	s->dg = w->dg;
	s->map = w->map;
}

static void swap_in(struct worker *w, const struct mfstate *s)
{
	w->roff = s->roff;
	w->rsize = s->rsize;
	w->nblocks = s->nblocks;
	w->perm_i = s->perm_i;
	w->seq_pos[0] = s->seq_pos[0];
	w->seq_pos[1] = s->seq_pos[1];
	w->perm = s->perm;
	w->scatter = s->scatter;
	w->dg = s->dg;
	w->map = s->map;
	w->fd = s->fd;
}

/* open one of the worker's files (create_on_open: the first open creates it), with the job's
 * cache hints as job_start gives a single file */
static int mf_open(struct worker *w, struct mfstate *s)
{
	struct job *j = w->job;
	const struct options *o = j->o;
	struct mfile *f = &j->mf->files[s->file];
	if (o->create_on_open && !f->laid_out) {
		pthread_mutex_lock(&j->mf->lock);
		int r = 0;
		if (!f->laid_out) {
			struct options *sc = malloc(sizeof(*sc));
			if (!sc) {
				r = -ENOMEM;
			} else {
				file_options(sc, o, f);
				sc->fallocate = FALLOC_NONE; /* fio: no layout, the open creates it */
				sc->overwrite = 0;
				sc->rw = RW_WRITE; /* nor data for reads: fio reads what the writes left (short at the end) */
				r = target_prepare(sc, &f->tgt, w->errmsg, sizeof(w->errmsg));
				free(sc);
			}
			f->laid_out = !r;
		}
		pthread_mutex_unlock(&j->mf->lock);
		if (r)
			return r;
	}
	int fd = target_open(o, &f->tgt, w->errmsg, sizeof(w->errmsg));
	if (fd < 0)
		return fd;
	if (o->invalidate) /* direct jobs too, as fio (job.c) */
		posix_fadvise(fd, (off_t)f->offset, (off_t)f->region, POSIX_FADV_DONTNEED);
	int adv = -1;
	switch (o->fadvise) {
	case FADV_NONE: break;
	case FADV_AUTO: adv = rw_is_random(o->rw) ? POSIX_FADV_RANDOM : POSIX_FADV_SEQUENTIAL; break;
	case FADV_SEQ: adv = POSIX_FADV_SEQUENTIAL; break;
	case FADV_RAND: adv = POSIX_FADV_RANDOM; break;
	case FADV_NORMAL: adv = POSIX_FADV_NORMAL; break;
	}
	if (adv >= 0)
		posix_fadvise(fd, 0, 0, adv);
	s->fd = fd;
	w->mfw->nopen++;
	return 0;
}

static unsigned open_limit(const struct worker *w)
{
	unsigned of = w->job->o->openfiles;
	return of && of < w->mfw->n ? of : w->mfw->n;
}

static void mf_close(struct worker *w, struct mfstate *s)
{
	if (s->fd < 0)
		return;
	const struct options *o = w->job->o;
	if (o->fsync_on_close && rw_writes(o->rw) && fsync(s->fd) < 0 && errno != EINVAL && !w->err) {
		w->err = -errno; /* fio's put_file: the close's error */
		snprintf(w->errmsg, sizeof(w->errmsg), "fsync_on_close: %s", strerror(errno));
	}
	close(s->fd);
	s->fd = -1;
	w->mfw->nopen--;
}

int mf_worker_init(struct worker *w)
{
	struct job *j = w->job;
	const struct options *o = j->o;
	struct mfset *m = j->mf;
	struct mfworker *mw = calloc(1, sizeof(*mw));
	if (!mw)
		return -ENOMEM;
	w->mfw = mw;
	mw->n = m->per_worker;
	mw->st = calloc(mw->n, sizeof(*mw->st));
	if (!mw->st)
		return -ENOMEM;
	w->minbs = opt_min_bs(o);
	uint64_t maxbs = opt_max_bs(o);
	int mixed = rw_is_random(o->rw) && o->dist == DIST_RANDOM && !o->norandommap && maxbs > w->minbs;
	for (unsigned i = 0; i < mw->n; i++) {
		struct mfstate *s = &mw->st[i];
		s->file = m->shared ? i : w->id * m->per_worker + i;
		s->fd = -1;
		const struct mfile *f = &m->files[s->file];
		s->roff = f->offset;
		s->rsize = f->region;
		s->nblocks = f->region >= maxbs ? f->region / w->minbs : 0;
		/* trimwrite: each block is trimmed, then written: its share twice (fio: size bytes of each) */
		s->pass_bytes = s->nblocks * w->minbs * (rw_trimwrite(o->rw) ? 2 : 1);
		s->done = !s->pass_bytes;
		mw->ndone += (unsigned)s->done;
		if (!s->nblocks)
			continue;
		perm_init(&s->perm, s->nblocks, rng_next(&w->rng));
		perm_init(&s->scatter, s->nblocks, o->randseed ^ 0x5ca77e5ull ^ ((uint64_t)s->file << 32));
		if (mixed) {
			s->map = calloc((s->nblocks + 63) / 64, sizeof(uint64_t));
			if (!s->map)
				return -ENOMEM;
		}
		if (o->dist != DIST_RANDOM && distgen_init(&s->dg, o->dist, o->dist_param, s->nblocks) < 0)
			return -EINVAL;
	}
	switch (o->fst) {
	case FST_ZIPF: case FST_PARETO: case FST_NORMAL: {
		enum dist k = o->fst == FST_ZIPF ? DIST_ZIPF : o->fst == FST_PARETO ? DIST_PARETO : DIST_NORMAL;
		/* fio's gauss without a deviation is the mean of 12 uniform draws: stddev 1/12 of the range */
		double p = o->fst == FST_NORMAL && o->fst_param == 0 ? 100.0 / 12.0 : o->fst_param;
		if (distgen_init(&mw->fdg, k, p, mw->n) < 0)
			return -EINVAL;
		perm_init(&mw->fscatter, mw->n, o->randseed ^ 0xf5e7ull);
		break;
	}
	default:
		break;
	}
	uint64_t base = m->budget_base;
	if (!m->shared) { /* this worker's own files (sizes may differ between clones) */
		uint64_t sum = 0;
		for (unsigned i = 0; i < mw->n; i++)
			sum += mw->st[i].pass_bytes / (rw_trimwrite(o->rw) ? 2 : 1);
		base = o->filesize_lo && o->size_set && o->size / w->minbs * w->minbs < sum ? o->size / w->minbs * w->minbs
											   : sum;
	}
	w->budget = (o->io_size ? o->io_size / w->minbs * w->minbs : base) * o->loops;
	if (rw_trimwrite(o->rw))
		w->budget *= 2; /* every block trimmed, then written: size (or io_size) bytes of each, as fio */
	/* the first files, up to openfiles, are opened now (errors before the job starts) */
	unsigned lim = open_limit(w);
	for (unsigned i = 0; i < mw->n && mw->nopen < lim; i++) {
		if (!mw->st[i].pass_bytes)
			continue;
		int r = mf_open(w, &mw->st[i]);
		if (r < 0)
			return r;
	}
	for (unsigned i = 0; i < mw->n; i++)
		if (mw->st[i].pass_bytes) {
			mw->cur = i;
			break;
		}
	swap_in(w, &mw->st[mw->cur]);
	mw->passes = 1;
	return 0;
}

void mf_worker_free(struct worker *w)
{
	struct mfworker *mw = w->mfw;
	if (!mw)
		return;
	for (unsigned i = 0; mw->st && i < mw->n; i++) {
		if (mw->st[i].fd >= 0)
			close(mw->st[i].fd);
		free(mw->st[i].map);
	}
	free(mw->st);
	free(mw);
	w->mfw = NULL;
	w->map = NULL; /* it was one of the files' maps */
}

static void new_pass(struct mfworker *mw)
{
	mw->ndone = 0;
	mw->passes++;
	for (unsigned i = 0; i < mw->n; i++) {
		struct mfstate *s = &mw->st[i];
		s->issued = 0;
		s->done = !s->pass_bytes;
		mw->ndone += (unsigned)s->done;
	}
}

/* may file i be served now: its pass not done, and open or a descriptor slot free */
static inline int servable(const struct worker *w, unsigned i, unsigned lim)
{
	const struct mfstate *s = &w->mfw->st[i];
	return !s->done && (s->fd >= 0 || w->mfw->nopen < lim);
}

int mf_select(struct worker *w)
{
	struct mfworker *mw = w->mfw;
	const struct options *o = w->job->o;
	if (mw->ndone == mw->n)
		new_pass(mw);
	struct mfstate *cur = &mw->st[mw->cur];
	if (mw->n == 1 || (mw->have_cur && !cur->done && cur->fd >= 0 && (mw->svc_left || o->fst == FST_SEQUENTIAL))) {
		if (mw->svc_left)
			mw->svc_left--;
		mw->have_cur = 1;
		return 0;
	}
	unsigned lim = open_limit(w), pick = mw->n, start;
	switch (o->fst) {
	case FST_RANDOM:
		start = (unsigned)rng_below(&w->rng, mw->n);
		for (unsigned k = 0; k < 8 && !servable(w, start, lim); k++)
			start = (unsigned)rng_below(&w->rng, mw->n);
		break;
	case FST_ZIPF: case FST_PARETO: case FST_NORMAL:
		/* as fio: the distribution decides, a file past its share is served again (its pass
		 * starts over); the job ends at its byte budget */
		start = (unsigned)perm_at(&mw->fscatter, distgen_next(&mw->fdg, &w->rng));
		if (mw->st[start].done && mw->st[start].pass_bytes) {
			mw->st[start].done = 0;
			mw->st[start].issued = 0;
			mw->ndone--;
		}
		break;
	default: /* round robin, sequential: the next file after the current one */
		start = mw->have_cur ? (mw->cur + 1) % mw->n : 0;
		break;
	}
	/* the drawn file, or the next servable one after it (a done file is skipped, as fio) */
	for (unsigned k = 0; k < mw->n; k++) {
		unsigned i = (start + k) % mw->n;
		if (servable(w, i, lim)) {
			pick = i;
			break;
		}
	}
	if (pick == mw->n) {
		/* every file that may be served is busy (open files done, I/O in flight): reap first;
		 * done files without I/O in flight give their descriptors back */
		for (unsigned i = 0; i < mw->n; i++)
			if (mw->st[i].done && !mw->st[i].inflight)
				mf_close(w, &mw->st[i]);
		for (unsigned k = 0; k < mw->n && pick == mw->n; k++)
			if (servable(w, (start + k) % mw->n, lim))
				pick = (start + k) % mw->n;
		if (pick == mw->n)
			return 2;
	}
	struct mfstate *s = &mw->st[pick];
	if (s->fd < 0) {
		int r = mf_open(w, s);
		if (r < 0) {
			w->err = r;
			return 1;
		}
	}
	if (pick != mw->cur) {
		swap_out(w, cur);
		swap_in(w, s);
		mw->cur = pick;
	}
	w->fd = s->fd; /* also when the current file was closed and opened again */
	mw->have_cur = 1;
	mw->svc_left = o->fst_nr > 1 && o->fst <= FST_SEQUENTIAL ? o->fst_nr - 1 : 0;
	return 0;
}

void mf_issued(struct worker *w, struct io_req *r, uint64_t bs)
{
	struct mfworker *mw = w->mfw;
	struct mfstate *s = &mw->st[mw->cur];
	r->fd = s->fd;
	r->fidx = mw->cur;
	s->inflight++;
	s->issued += bs;
	if (r->ddir == DDIR_TRIM && rw_trimwrite(w->job->o->rw)) {
		s->tw_off = r->off;
		s->tw_len = r->len;
	}
	if (!s->done && s->issued >= s->pass_bytes) {
		s->done = 1;
		mw->ndone++;
	}
}

/* trimwrite with number_ios, fio 3.33's rule (backend.c: do_io doubles td->o.number_ios as each
 * pass starts, exceeds_number_ios ends the pass when the job's I/Os reach number_ios x loops,
 * keep_running starts the next while loops are left, and clear_io_state sends every file back to
 * its start): as a single file's (patterns.c), over all the job's files. A pass that serves every
 * file to its end first ends there (new_pass), and counts as one. 2 files of 64k, number_ios=6,
 * a file's trims failing with ENOTTY ignored (they do not count): loops 2 is 24 pairs, then 24
 * (48), loops 3 32, 32, 32 (96), each pass from block 0 of the first file, as fio's pwrite64s */
int mf_trimwrite_count_reached(struct worker *w)
{
	struct mfworker *mw = w->mfw;
	const struct options *o = w->job->o;
	unsigned __int128 limit = (unsigned __int128)o->number_ios * o->loops;
	for (unsigned i = 0; i < mw->passes && limit <= UINT64_MAX; i++)
		limit <<= 1;
	if (w->nios < limit)
		return 0;
	if (mw->passes >= o->loops)
		return 1;
	swap_out(w, &mw->st[mw->cur]);
	for (unsigned i = 0; i < mw->n; i++) {
		struct mfstate *s = &mw->st[i];
		s->seq_pos[0] = s->seq_pos[1] = 0;
		s->perm_i = s->nblocks; /* random: a new permutation, an empty map (fio_file_reset) */
		if (s->map)
			memset(s->map, 0, (s->nblocks + 63) / 64 * sizeof(uint64_t));
		s->tw_len = 0; /* a trim not yet written stays so, as fio's */
	}
	new_pass(mw);
	for (unsigned i = 0; i < mw->n; i++)
		if (mw->st[i].pass_bytes) {
			mw->cur = i;
			break;
		}
	swap_in(w, &mw->st[mw->cur]);
	mw->have_cur = 0; /* round robin starts again at the first file */
	mw->svc_left = 0;
	return 0;
}

/* fio 3.33's trimwrite keeps per file whether its last trim was written (f->last_start[TRIM] and
 * [WRITE]): the file's next I/O is the write of the block just trimmed, whole, at its offset (not
 * marked in the random map); then the next trim. Round robin over two files: trim A, trim B,
 * write A, write B, ... as fio's iolog */
int mf_trimwrite(struct worker *w, struct io_req *r)
{
	struct mfstate *s = &w->mfw->st[w->mfw->cur];
	if (!s->tw_len)
		return 0;
	r->ddir = DDIR_WRITE;
	r->off = s->tw_off;
	r->len = s->tw_len;
	s->tw_len = 0;
	return 1;
}

void mf_completed(struct worker *w, const struct io_req *r)
{
	struct mfworker *mw = w->mfw;
	struct mfstate *s = &mw->st[r->fidx];
	s->inflight--;
	if (r->res > 0) {
		s->ios[r->ddir]++;
		s->bytes[r->ddir] += (uint64_t)r->res;
	}
	/* past openfiles, a file whose pass is done gives its descriptor back (fio closes it); not in
	 * a verify read-back, whose order is the writes' (mf_verify_file) */
	if (s->done && !s->inflight && open_limit(w) < mw->n && !(w->vw && w->vw->mode == VM_VERIFY))
		mf_close(w, s);
}

int mf_pre_read(struct worker *w)
{
	struct mfworker *mw = w->mfw;
	for (unsigned i = 0; i < mw->n; i++) {
		struct mfstate *s = &mw->st[i];
		int opened = s->fd < 0, err = opened ? mf_open(w, s) : 0;
		if (!err)
			err = worker_pre_read(w, s->fd, s->roff, s->rsize);
		if (opened && s->fd >= 0) { /* fio: a file it opened to read is closed again */
			close(s->fd);
			s->fd = -1;
			mw->nopen--;
		}
		if (err)
			return err;
	}
	return 0;
}

int mf_verify_file(struct worker *w, struct io_req *r, unsigned fidx)
{
	struct mfstate *s = &w->mfw->st[fidx];
	if (s->fd < 0) {
		int err = mf_open(w, s);
		if (err)
			return err;
	}
	r->fd = s->fd;
	r->fidx = fidx;
	s->inflight++;
	return 0;
}

int mf_verify(struct job *j, char *err, size_t errlen)
{
	struct mfset *m = j->mf;
	for (unsigned i = 0; i < m->nfiles; i++) {
		if (!m->files[i].tgt.f || (!m->files[i].laid_out && !m->files[i].tgt.exists))
			continue;
		int r = target_verify(&m->files[i].tgt, err, errlen);
		if (r < 0)
			return r;
	}
	return 0;
}

void mf_report(struct jw *w, const struct job *j, unsigned first, unsigned n)
{
	const struct mfset *m = j->mf;
	jw_arr(w, "files");
	for (unsigned i = 0; i < m->nfiles; i++) {
		const struct mfile *f = &m->files[i];
		uint64_t ios[3] = { 0, 0, 0 }, bytes[3] = { 0, 0, 0 };
		for (unsigned k = first; j->workers && k < first + n && k < j->o->numjobs; k++) {
			const struct mfworker *mw = j->workers[k].mfw;
			for (unsigned s = 0; mw && s < mw->n; s++)
				if (mw->st[s].file == i)
					for (int d = 0; d < 3; d++) {
						ios[d] += mw->st[s].ios[d];
						bytes[d] += mw->st[s].bytes[d];
					}
		}
		jw_obj(w, NULL);
		jw_str(w, "filename", f->tgt.path);
		jw_u64(w, "offset_bytes", f->offset);
		jw_u64(w, "size_bytes", f->region);
		jw_bool(w, "created", f->tgt.f && f->tgt.f->created);
		jw_u64(w, "read_ios", ios[0]);
		jw_u64(w, "read_bytes", bytes[0]);
		jw_u64(w, "write_ios", ios[1]);
		jw_u64(w, "write_bytes", bytes[1]);
		jw_u64(w, "trim_ios", ios[2]);
		jw_u64(w, "trim_bytes", bytes[2]);
		jw_obj_end(w);
	}
	jw_arr_end(w);
}

void mf_job_free(struct job *j)
{
	if (!j->mf)
		return;
	pthread_mutex_destroy(&j->mf->lock);
	free(j->mf->files);
	free(j->mf);
	j->mf = NULL;
}

void mf_limits(struct jw *w)
{
	jw_u64(w, "max_files", MAX_RUN_FILES);
}

/* ---- options ---- */

const struct opt_choice mf_fallocate_choices[] = {
	{ "none", FALLOC_NONE }, { "native", FALLOC_NATIVE }, { "posix", FALLOC_POSIX }, { "keep", FALLOC_KEEP },
	{ "truncate", FALLOC_TRUNCATE }, { "0", FALLOC_NONE }, { "1", FALLOC_POSIX }, { NULL, 0 },
};

const struct opt_choice mf_fst_choices[] = {
	{ "roundrobin", FST_ROUNDROBIN }, { "random", FST_RANDOM }, { "sequential", FST_SEQUENTIAL },
	{ "zipf", FST_ZIPF }, { "pareto", FST_PARETO }, { "normal", FST_NORMAL }, { "gauss", FST_NORMAL },
	{ NULL, 0 },
};

int mf_allocate(int fd, int mode, uint64_t from, uint64_t to)
{
	if (to <= from)
		return 0;
	off_t off = (off_t)from, len = (off_t)(to - from);
	int r;
	switch (mode) {
	case FALLOC_NATIVE:
		(void)fallocate(fd, 0, off, len); /* as fio: not supported (or failed) = no allocation */
		return 0;
	case FALLOC_POSIX:
		r = posix_fallocate(fd, off, len);
		if (r)
			warnmsg("fallocate: posix_fallocate failed: %s (continuing without, as fio)", strerror(r));
		return 0;
	case FALLOC_KEEP:
		return fallocate(fd, FALLOC_FL_KEEP_SIZE, off, len) < 0 ? -errno : 0;
	case FALLOC_TRUNCATE:
		return ftruncate(fd, (off_t)to) < 0 ? -errno : 0;
	default:
		return 0;
	}
}

/* directory=DIR[:DIR...]; an empty value takes a directory given before back (the agent, which
 * points a job file at its target with filename, clears the file's directory this way) */
void mf_parse_directory(void *base, const struct opt_def *d, const char *name, const char *val)
{
	struct options *o = base;
	(void)d;
	if (strlen(val) >= sizeof(o->directory))
		die_usage(name, "path too long: '%.80s...'", val);
	strcpy(o->directory, val);
}

void mf_echo_directory(struct jw *w, const struct options *o, const struct opt_def *d)
{
	jw_str_or_null(w, d->key, o->directory);
}

/* fio's filesize: SIZE or LOW-HIGH (a random size in [LOW, HIGH) per file, whole smallest blocks) */
void mf_parse_filesize(void *base, const struct opt_def *d, const char *name, const char *val)
{
	struct options *o = base;
	(void)d;
	char buf[128];
	opt_value_copy(name, val, buf, sizeof(buf));
	/* fio 3.33's parser (parse.c handle_option) takes the range's ends apart at ',', ':' or '-':
	 * filesize=32k,64k is 32k-64k (the same sizes drawn), and "32k," is 32k */
	char *dash = strpbrk(buf, ",:-");
	if (dash)
		*dash++ = 0;
	if (dash && !*dash)
		dash = NULL;
	uint64_t lo, hi;
	if (parse_size(buf, &lo, o->kb_base) || (dash && (strpbrk(dash, ",:-") || parse_size(dash, &hi, o->kb_base))))
		die_usage(name, "invalid size or range '%s' (SIZE, or LOW-HIGH, LOW,HIGH, LOW:HIGH)", val);
	if (!dash)
		hi = lo;
	if (!lo || hi < lo)
		die_usage(name, "must be greater than 0 and LOW <= HIGH, got '%s'", val);
	o->filesize_lo = lo;
	o->filesize_hi = hi;
}

void mf_echo_filesize(struct jw *w, const struct options *o, const struct opt_def *d)
{
	(void)d;
	if (o->filesize_lo) {
		jw_u64(w, "filesize_low_bytes", o->filesize_lo);
		jw_u64(w, "filesize_high_bytes", o->filesize_hi);
	} else {
		jw_null(w, "filesize_low_bytes");
		jw_null(w, "filesize_high_bytes");
	}
}

/* file_service_type=TYPE[:N]: random/roundrobin/sequential take an I/O count, zipf (theta,
 * default 1.1, != 1), pareto (h, default 0.2, in (0, 1)) and normal/gauss (deviation %, default 0,
 * in [0, 100)) a number, as fio */
void mf_parse_fst(void *base, const struct opt_def *d, const char *name, const char *val)
{
	struct options *o = base;
	const char *colon = strchr(val, ':');
	size_t kl = colon ? (size_t)(colon - val) : strlen(val);
	const struct opt_choice *c;
	for (c = d->choices; c->name; c++)
		if (strlen(c->name) == kl && !strncmp(c->name, val, kl))
			break;
	if (!c->name)
		die_usage(name, "unknown type '%s' (random, roundrobin, sequential, zipf, pareto, normal, gauss)", val);
	o->fst = c->val;
	o->fst_nr = 1;
	o->fst_param = c->val == FST_ZIPF ? 1.1 : c->val == FST_PARETO ? 0.2 : 0;
	if (!colon)
		return;
	char *end;
	if (c->val <= FST_SEQUENTIAL) {
		uint64_t n;
		if (parse_u64(colon + 1, &n) || n < 1 || n > 1000000000)
			die_usage(name, "the I/O count after ':' must be 1..1000000000, got '%s'", val);
		o->fst_nr = (unsigned)n;
		return;
	}
	double p = strtod(colon + 1, &end);
	if (end == colon + 1 || *end)
		die_usage(name, "invalid number after ':' in '%s'", val);
	if (c->val == FST_ZIPF && (!(p > 0) || p == 1.0))
		die_usage(name, "zipf theta must be > 0 and != 1 in '%s'", val);
	if (c->val == FST_PARETO && !(p > 0 && p < 1))
		die_usage(name, "pareto h must be in (0, 1) in '%s'", val);
	if (c->val == FST_NORMAL && !(p >= 0 && p < 100))
		die_usage(name, "normal deviation must be in [0, 100) in '%s'", val);
	o->fst_param = p;
}

void mf_echo_fst(struct jw *w, const struct options *o, const struct opt_def *d)
{
	const char *s = "?";
	for (const struct opt_choice *c = d->choices; c->name; c++)
		if (c->val == o->fst) {
			s = c->name;
			break;
		}
	jw_str(w, d->key, s);
	if (o->fst <= FST_SEQUENTIAL)
		jw_u64(w, "file_service_param", o->fst_nr);
	else
		jw_dbl(w, "file_service_param", o->fst_param);
}

/* lockfile: accepted at none only */
void mf_parse_refused(void *base, const struct opt_def *d, const char *name, const char *val)
{
	(void)base;
	(void)d;
	if (strcmp(val, "none"))
		die_usage(name, "'%s' is not supported (file locking between clones is not implemented; only none)", val);
}

void mf_finalize(struct options *o)
{
	if (o->unlink_each_loop)
		die_usage("unlink_each_loop", "not supported (removing and laying the files out again after every loop "
			  "is not implemented)");
	if (o->openfiles > o->nrfiles && !o->filename[0])
		o->openfiles = o->nrfiles;
	if (o->directory[0]) {
		char d[PATH_MAX];
		for (unsigned i = 0; i < list_count(o->directory); i++)
			if (list_item(o->directory, i, d, sizeof(d)) < 0)
				die_usage("directory", "invalid list '%s' (an empty name?)", o->directory);
	}
}
