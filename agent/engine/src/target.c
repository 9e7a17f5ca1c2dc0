/* The target: probing, safety rules, creation/fill, opening, and facts from sysfs. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "iowatt.h"
#include "control.h"
#include "patterns.h"
#include "multifile.h"

/* Resolve MAJ:MIN to a kernel name and its whole disk. */
static void dev_names(unsigned maj, unsigned min, char *name, size_t nl, char *disk, size_t dl)
{
	char path[128], link[PATH_MAX];
	name[0] = disk[0] = 0;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", maj, min);
	ssize_t n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return;
	link[n] = 0;
	char *base = strrchr(link, '/');
	str_copy(name, nl, base ? base + 1 : link);
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/partition", maj, min);
	if (access(path, F_OK) == 0 && base) {
		*base = 0;
		char *pbase = strrchr(link, '/');
		str_copy(disk, dl, pbase ? pbase + 1 : link);
	} else {
		str_copy(disk, dl, name);
	}
}

void fd_blockdev(int fd, char *name, size_t len)
{
	struct stat st;
	char disk[64];
	name[0] = 0;
	if (fstat(fd, &st) == 0 && major(st.st_dev) != 0)
		dev_names(major(st.st_dev), minor(st.st_dev), name, len, disk, sizeof(disk));
}

/* ---- the run's files: one record per filename, shared by the jobs that name it ---- */

static struct tfile *g_files;

/* beneath=DIR: the filename relative to DIR (confine_relative: the rule of every mode), and DIR's
 * fd. DIR itself comes from the host's policy and is opened as given; everything below it is
 * confined. */
static void tfile_confine(struct tfile *f, const struct options *o)
{
	int r = confine_relative(o->beneath, o->filename, f->rel, sizeof(f->rel));
	if (r < 0)
		confine_die(r, "filename", o->filename, o->beneath);
	f->dirfd = open(o->beneath, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (f->dirfd < 0)
		die_usage("beneath", "cannot open directory '%s': %s", o->beneath, strerror(errno));
	str_copy(f->dir, sizeof(f->dir), o->beneath);
}

static struct tfile *tfile_get(const struct options *o)
{
	struct tfile *f;
	for (f = g_files; f; f = f->next) {
		if (strcmp(f->path, o->filename))
			continue;
		/* one file, one set of rules: the options that govern the file must agree */
		if (strcmp(f->dir, o->beneath))
			die_usage("beneath", "differs between the jobs that use '%s'", o->filename);
		if (f->create_new != o->create_new)
			die_usage("create_new", "differs between the jobs that use '%s'", o->filename);
		if (f->unlink_file != o->unlink_file)
			die_usage("unlink", "differs between the jobs that use '%s'", o->filename);
		if (f->keep_existing != o->keep_existing)
			die_usage("keep_existing", "differs between the jobs that use '%s'", o->filename);
		return f;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		die_code(EXIT_FAIL, "out of memory");
	str_copy(f->path, sizeof(f->path), o->filename);
	f->dirfd = -1;
	f->create_new = o->create_new;
	f->unlink_file = o->unlink_file;
	f->keep_existing = o->keep_existing;
	if (o->beneath[0])
		tfile_confine(f, o);
	f->next = g_files;
	g_files = f;
	return f;
}

/* Every open of the target: beneath DIR without symbolic links when confined, else by its path
 * (O_NOFOLLOW when creating). The first open (or the creation) fixes the file's identity; any
 * later open that finds another file fails with -ESTALE. trial=1: a test open that must not fix
 * the identity (the creation test of file_precheck). Returns an fd or -errno. */
static int tfile_open(struct tfile *f, int flags, mode_t mode, int trial)
{
	int fd;
	if (f->dirfd >= 0) {
		fd = confined_open(f->dirfd, f->rel, flags, mode);
	} else {
		fd = open(f->path, flags | O_CLOEXEC | ((flags & O_CREAT) ? O_NOFOLLOW : 0), mode);
		if (fd < 0)
			fd = -errno;
	}
	if (fd < 0)
		return fd;
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	if (trial)
		return fd;
	if (!f->have_id) {
		f->have_id = 1;
		f->dev = (uint64_t)st.st_dev;
		f->ino = (uint64_t)st.st_ino;
	} else if ((uint64_t)st.st_dev != f->dev || (uint64_t)st.st_ino != f->ino) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/* The directory holding the target (O_PATH) and the target's last component. */
static int tfile_parent(const struct tfile *f, char *base, size_t blen)
{
	char tmp[PATH_MAX];
	const char *src = f->dirfd >= 0 ? f->rel : f->path;
	str_copy(tmp, sizeof(tmp), src);
	char *slash = strrchr(tmp, '/');
	str_copy(base, blen, slash ? slash + 1 : tmp);
	if (!base[0])
		return -EINVAL;
	int fd;
	if (f->dirfd >= 0) {
		if (!slash) {
			fd = fcntl(f->dirfd, F_DUPFD_CLOEXEC, 0);
			return fd < 0 ? -errno : fd;
		}
		*slash = 0;
		return confined_open(f->dirfd, tmp, O_PATH | O_DIRECTORY, 0);
	}
	if (!slash)
		fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	else {
		if (slash == tmp)
			slash++; /* "/file": the parent is "/" */
		*slash = 0;
		fd = open(tmp, O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	return fd < 0 ? -errno : fd;
}

/* Remove the target's directory entry, only while it still names the file (dev, ino); with
 * beneath through unlinkat() on the confined parent. 0, -ESTALE (another file or a link is there
 * now) or -errno. */
static int tfile_remove(const struct tfile *f, uint64_t dev, uint64_t ino)
{
	char base[NAME_MAX + 1];
	int pfd = tfile_parent(f, base, sizeof(base));
	if (pfd < 0)
		return pfd;
	struct stat st;
	int r = 0;
	if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
		r = -errno;
	else if (!S_ISREG(st.st_mode) || (uint64_t)st.st_dev != dev || (uint64_t)st.st_ino != ino)
		r = -ESTALE;
	else if (unlinkat(pfd, base, 0) < 0)
		r = -errno;
	close(pfd);
	return r;
}

/* "OPTION: why" for an open of the target that failed with -e. */
static void open_errmsg(const struct tfile *f, int e, char *buf, size_t len)
{
	if (e == ELOOP && f->dirfd >= 0)
		snprintf(buf, len, "beneath: '%s' has a symbolic link in its path (refused beneath '%s')", f->path,
			 f->dir);
	else if (e == EXDEV && f->dirfd >= 0)
		snprintf(buf, len, "beneath: '%s' resolves outside '%s'", f->path, f->dir);
	else if (e == ESTALE)
		snprintf(buf, len, "filename: '%s' was replaced by another file since the engine first opened it", f->path);
	else
		snprintf(buf, len, "filename: cannot open '%s': %s", f->path, strerror(e));
}

/* O_DIRECT alignment of an open file from statx, 0 if unknown */
static unsigned dio_align(int fd)
{
#ifdef STATX_DIOALIGN
	struct statx sx;
	if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 && (sx.stx_mask & STATX_DIOALIGN))
		return sx.stx_dio_offset_align;
#else
	(void)fd;
#endif
	return 0;
}

int target_probe(struct target *t, const struct options *o)
{
	struct stat st;
	memset(t, 0, sizeof(*t));
	struct tfile *f = t->f = tfile_get(o);
	const char *path = o->filename;
	str_copy(t->path, sizeof(t->path), path);
	t->lbs = 512;
	unsigned dio = 0;
	if (f->create_new && !f->have_id) {
		/* nothing may be there, not even a (dangling) symbolic link */
		if (f->dirfd < 0 && lstat(path, &st) == 0)
			die_usage("create_new", "'%s' already exists", path);
	}
	int fd = tfile_open(f, O_PATH, 0, 0);
	if (fd == -ELOOP && f->create_new && f->dirfd >= 0 && !f->have_id)
		die_usage("create_new", "'%s' already exists (a symbolic link)", path);
	if (fd >= 0) {
		if (fstat(fd, &st) < 0)
			die_usage("filename", "cannot stat '%s': %s", path, strerror(errno));
		if (f->create_new && !f->have_id)
			die_usage("create_new", "'%s' already exists", path);
		t->exists = 1;
		if (!f->probed)
			f->existed = 1;
		if (S_ISBLK(st.st_mode)) {
			close(fd);
			if (f->dirfd >= 0)
				die_usage("beneath", "'%s' is a block device: beneath confines files only", path);
			t->is_blk = 1;
			t->dev_major = major(st.st_rdev);
			t->dev_minor = minor(st.st_rdev);
			/* size and block size from sysfs, so the safety rules run before any open */
			char p[128];
			snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/size", t->dev_major, t->dev_minor);
			long long sectors = read_sysfs_ll(p, -1);
			if (sectors >= 0)
				t->dev_size = (uint64_t)sectors * 512;
			fd = tfile_open(f, O_RDONLY, 0, 0);
			if (fd >= 0) {
				uint64_t sz = 0;
				int lbs = 512;
				if (ioctl(fd, BLKGETSIZE64, &sz) == 0)
					t->dev_size = sz;
				if (ioctl(fd, BLKSSZGET, &lbs) == 0 && lbs > 0)
					t->lbs = (unsigned)lbs;
				close(fd);
			} else if (sectors < 0 || fd == -ESTALE) {
				char msg[PATH_MAX + 128];
				open_errmsg(f, -fd, msg, sizeof(msg));
				die_code(EXIT_USAGE, "%s", msg);
			}
		} else if (S_ISREG(st.st_mode)) {
			t->dev_size = (uint64_t)st.st_size;
			t->dev_major = major(st.st_dev);
			t->dev_minor = minor(st.st_dev);
			dio = dio_align(fd);
			close(fd);
		} else {
			die_usage("filename", "'%s' is neither a regular file nor a block device", path);
		}
	} else if (fd == -ENOENT && !f->have_id) {
		char base[NAME_MAX + 1];
		int pfd = tfile_parent(f, base, sizeof(base));
		if (pfd == -ELOOP || pfd == -EXDEV) {
			char msg[PATH_MAX + 128];
			open_errmsg(f, -pfd, msg, sizeof(msg));
			die_code(EXIT_USAGE, "%s", msg);
		}
		char tmp[PATH_MAX];
		str_copy(tmp, sizeof(tmp), path);
		char *dir = dirname(tmp);
		if (pfd < 0 || fstat(pfd, &st) < 0)
			die_usage("filename", "directory '%s' does not exist", dir);
		if (f->dirfd < 0 && access(dir, W_OK) < 0)
			die_usage("filename", "directory '%s' is not writable: %s", dir, strerror(errno));
		close(pfd);
		t->dev_major = major(st.st_dev);
		t->dev_minor = minor(st.st_dev);
	} else {
		char msg[PATH_MAX + 128];
		open_errmsg(f, fd == -ENOENT ? ESTALE : -fd, msg, sizeof(msg));
		die_code(EXIT_USAGE, "%s", msg);
	}
	f->probed = 1;
	dev_names(t->dev_major, t->dev_minor, t->devname, sizeof(t->devname), t->diskname, sizeof(t->diskname));
	if (t->diskname[0] && (!t->is_blk || t->lbs == 512)) {
		char p[256];
		snprintf(p, sizeof(p), "/sys/block/%s/queue/logical_block_size", t->diskname);
		long long v = read_sysfs_ll(p, 512);
		if (v > 0)
			t->lbs = (unsigned)v;
	}
	if (dio)
		t->lbs = dio;
	return 0;
}

struct mnt { unsigned maj, min; char point[PATH_MAX]; char opts[512]; char fstype[64]; char source[256]; };

/* Calls fn for each /proc/self/mountinfo line; stops when fn returns nonzero. */
static int each_mount(int (*fn)(const struct mnt *, void *), void *arg)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	if (!f)
		return -errno;
	char line[4096];
	int r = 0;
	while (!r && fgets(line, sizeof(line), f)) {
		struct mnt m = { 0 };
		char root[PATH_MAX], opts[256];
		if (sscanf(line, "%*d %*d %u:%u %4095s %4095s %255s", &m.maj, &m.min, root, m.point, opts) != 5)
			continue;
		char *dash = strstr(line, " - ");
		char super[256] = "";
		if (dash)
			sscanf(dash + 3, "%63s %255s %255s", m.fstype, m.source, super);
		snprintf(m.opts, sizeof(m.opts), "%s%s%s", opts, super[0] ? "," : "", super);
		r = fn(&m, arg);
	}
	fclose(f);
	return r;
}

struct devset { unsigned maj[512], min[512]; int n; char why[256]; };

static int mounted_cb(const struct mnt *m, void *arg)
{
	struct devset *ds = arg;
	for (int i = 0; i < ds->n; i++)
		if (m->maj == ds->maj[i] && m->min == ds->min[i]) {
			snprintf(ds->why, sizeof(ds->why), "%u:%u is mounted on %.200s", m->maj, m->min, m->point);
			return 1;
		}
	return 0;
}

static int dir_nonempty(const char *path)
{
	DIR *d = opendir(path);
	if (!d)
		return 0;
	struct dirent *e;
	int n = 0;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n > 0;
}

static int root_dev_cb(const struct mnt *m, void *arg)
{
	unsigned *rd = arg;
	if (!strcmp(m->point, "/")) {
		rd[0] = m->maj;
		rd[1] = m->min;
		return 1;
	}
	return 0;
}

/* Is the block device (or one of its partitions) mounted, held (dm, md, ...), swap, or the
 * device under "/"? Returns 1 with a reason in why. */
int blkdev_in_use(const struct target *t, char *why, size_t whylen)
{
	struct devset ds = { .n = 0 };
	char sysdir[256], p[512];
	snprintf(sysdir, sizeof(sysdir), "/sys/dev/block/%u:%u", t->dev_major, t->dev_minor);
	ds.maj[0] = t->dev_major;
	ds.min[0] = t->dev_minor;
	ds.n = 1;
	snprintf(p, sizeof(p), "%s/holders", sysdir);
	if (dir_nonempty(p)) {
		snprintf(why, whylen, "'%s' is held by another device (see %s)", t->path, p);
		return 1;
	}
	/* partitions of a whole disk */
	DIR *d = opendir(sysdir);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d)) && ds.n < 512) {
			if (e->d_name[0] == '.')
				continue;
			char devf[768];
			snprintf(devf, sizeof(devf), "%s/%s/partition", sysdir, e->d_name);
			if (access(devf, F_OK))
				continue;
			snprintf(devf, sizeof(devf), "%s/%s/dev", sysdir, e->d_name);
			char buf[32];
			unsigned ma, mi;
			if (read_sysfs_str(devf, buf, sizeof(buf)) == 0 && sscanf(buf, "%u:%u", &ma, &mi) == 2) {
				ds.maj[ds.n] = ma;
				ds.min[ds.n] = mi;
				ds.n++;
			}
			snprintf(devf, sizeof(devf), "%s/%s/holders", sysdir, e->d_name);
			if (dir_nonempty(devf)) {
				snprintf(why, whylen, "partition %s of '%s' is held by another device", e->d_name, t->path);
				closedir(d);
				return 1;
			}
		}
		closedir(d);
	}
	if (each_mount(mounted_cb, &ds) == 1) {
		snprintf(why, whylen, "'%s' or a partition of it is mounted (%s)", t->path, ds.why);
		return 1;
	}
	unsigned rd[2] = { 0, 0 };
	each_mount(root_dev_cb, rd);
	for (int i = 0; i < ds.n; i++)
		if (rd[0] == ds.maj[i] && rd[1] == ds.min[i]) {
			snprintf(why, whylen, "'%s' backs the root file system", t->path);
			return 1;
		}
	/* the root device's slaves (dm/md over this disk) */
	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/slaves", rd[0], rd[1]);
	d = opendir(p);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			if (!strcmp(e->d_name, t->devname) || !strcmp(e->d_name, t->diskname)) {
				snprintf(why, whylen, "'%s' backs the root file system", t->path);
				closedir(d);
				return 1;
			}
		}
		closedir(d);
	}
	/* active swap */
	FILE *f = fopen("/proc/swaps", "r");
	if (f) {
		char line[1024], rp[PATH_MAX], me[PATH_MAX];
		if (!realpath(t->path, me))
			str_copy(me, sizeof(me), t->path);
		while (fgets(line, sizeof(line), f)) {
			char dev[512];
			if (sscanf(line, "%511s", dev) == 1 && realpath(dev, rp) && !strcmp(rp, me)) {
				snprintf(why, whylen, "'%s' is an active swap device", t->path);
				fclose(f);
				return 1;
			}
		}
		fclose(f);
	}
	return 0;
}

static void file_precheck(const struct options *o, const struct target *t);

/* offset_increment with numjobs: clone k's region starts at offset + k x increment (fio). With size
 * each clone has size bytes and the layout ends at the last clone's end; without, each clone runs to
 * the target's end, so the last clone must start before it. */
static void oinc_validate(struct options *o, const struct target *t)
{
	o->oinc_span = 0;
	/* N% of the file as fio 3.33 finds it per clone: its size before the run (0 for a file this run
	 * creates) grown by the clones laid out before (control.c); a device never grows */
	ctl_resolve_offset_increment(o, t->exists ? t->dev_size : 0, !t->is_blk);
	if (!o->offset_increment || o->numjobs < 2)
		return;
	unsigned __int128 span = (unsigned __int128)o->offset_increment * (o->numjobs - 1);
	if (span > (uint64_t)INT64_MAX - (1ull << 40))
		die_usage("offset_increment", "%llu x %u clones is beyond the largest file offset",
			  (unsigned long long)o->offset_increment, o->numjobs - 1);
	span = ctl_clone_span(o); /* the furthest clone: a percentage's growth and alignment (control.c) */
	if (o->size_set) {
		o->oinc_span = (uint64_t)span;
	} else if ((uint64_t)span >= o->size || opt_max_bs(o) > o->size - (uint64_t)span) {
		die_usage("offset_increment", "clone %u would start at %llu, too close to the end of '%s' (%llu bytes)",
			  o->numjobs - 1, (unsigned long long)(o->offset + (uint64_t)span), t->path,
			  (unsigned long long)t->dev_size);
	} else if (o->dist == DIST_ZONED || o->dist == DIST_ZONED_ABS) {
		die_usage("offset_increment", "with a zoned random_distribution needs size (each clone's zones)");
	}
	for (unsigned k = 1; o->direct && k < o->numjobs; k++)
		if ((ctl_clone_offset(o, k) - o->offset) % (t->lbs ? t->lbs : 512))
			die_usage("offset_increment", "%llu is not a multiple of the logical block size %u (direct=1)",
				  (unsigned long long)o->offset_increment, t->lbs ? t->lbs : 512);
}

void target_validate(const struct options *oc, struct target *t)
{
	struct options *o = (struct options *)oc;
	if (!o->allow_file_create && !t->exists && !t->is_blk) /* fio: no file is created then */
		die_usage("allow_file_create", "'%s' does not exist and allow_file_create=0", t->path);
	if (o->fill_device && !t->is_blk) {
		/* fio's fill_device on a file: sequential writes until the file system is full (ENOSPC
		 * ends the job without an error; size, when given, ends it earlier); nothing is laid out */
		if (o->rw != RW_WRITE || pat_active(o))
			die_usage("fill_device", "only rw=write is implemented (fio: \"only makes sense with sequential write\"; "
				  "job '%s' has rw=%s)", o->name, rw_name(o->rw));
		if (t->exists && t->f && t->f->keep_existing)
			die_usage("keep_existing", "fill_device would extend '%s', a file the engine did not create", t->path);
		if (!o->size_set) /* fio: size = -1: the writes' end is the file system's */
			o->size = ((uint64_t)INT64_MAX / 2 - o->offset) / opt_max_bs(o) * opt_max_bs(o);
	}
	if (!o->size_set && !(o->fill_device && !t->is_blk)) {
		if (!t->exists)
			die_usage("size", "required because '%s' does not exist", t->path);
		if (o->offset >= t->dev_size)
			die_usage("offset", "%llu is at or beyond the end of '%s' (%llu bytes)",
				  (unsigned long long)o->offset, t->path, (unsigned long long)t->dev_size);
		o->size = t->dev_size - o->offset;
	}
	oinc_validate(o, t);
	if (opt_max_bs(o) > o->size)
		die_usage("bs", "block size %llu is larger than size %llu", (unsigned long long)opt_max_bs(o),
			  (unsigned long long)o->size);
	if (t->is_blk) {
		if (o->offset + o->size + o->oinc_span > t->dev_size || o->offset + o->size < o->offset)
			die_usage("size", "offset+size (%llu) is beyond the end of '%s' (%llu bytes)",
				  (unsigned long long)(o->offset + o->size + o->oinc_span), t->path,
				  (unsigned long long)t->dev_size);
		if (rw_writes(o->rw)) {
			if (!o->destructive)
				die_usage("destructive", "writing to block device '%s' destroys its data: pass --destructive=1",
					  t->path);
			char why[512];
			if (blkdev_in_use(t, why, sizeof(why)))
				die_usage("filename", "refusing to write: %s", why);
		}
	}
	if (o->direct) {
		unsigned a = t->lbs ? t->lbs : 512;
		if (o->offset % a)
			die_usage("offset", "%llu is not a multiple of the logical block size %u (direct=1)",
				  (unsigned long long)o->offset, a);
		for (int d = 0; d < 2; d++) {
			if (!o->nbssplit[d] && o->bs[d] % a)
				die_usage("bs", "%llu is not a multiple of the logical block size %u (direct=1)",
					  (unsigned long long)o->bs[d], a);
			for (int i = 0; i < o->nbssplit[d]; i++)
				if (o->bssplit[d][i].bs % a)
					die_usage("bssplit", "%llu is not a multiple of the logical block size %u (direct=1)",
						  (unsigned long long)o->bssplit[d][i].bs, a);
		}
	}
	if (!t->is_blk)
		file_precheck(o, t);
}

/* The holes of [from, to) in an open file, one call of fn per hole (SEEK_DATA/SEEK_HOLE; a file
 * system without them reports no holes). Returns 0 or fn's first non-zero value. */
static int each_hole(int fd, uint64_t from, uint64_t to, int (*fn)(uint64_t, uint64_t, void *), void *arg)
{
	uint64_t pos = from;
	while (pos < to) {
		off_t data = lseek(fd, (off_t)pos, SEEK_DATA);
		uint64_t hole_end = data < 0 ? to : ((uint64_t)data < to ? (uint64_t)data : to);
		if (data < 0 && errno != ENXIO)
			return 0; /* SEEK_DATA unsupported: treat everything as data */
		if (hole_end > pos) {
			int r = fn(pos, hole_end, arg);
			if (r)
				return r;
		}
		if (data < 0 || (uint64_t)data >= to)
			break;
		off_t h = lseek(fd, data, SEEK_HOLE);
		if (h < 0)
			break;
		pos = (uint64_t)h;
	}
	return 0;
}

static int count_hole(uint64_t a, uint64_t b, void *arg)
{
	*(uint64_t *)arg += b - a;
	return 0;
}

/* What a layout of the open file fd (cur bytes long) would write for this job: the extension up
 * to offset+size and, for jobs that read, the holes inside [offset, offset+size) of the existing
 * part (reads must never hit holes). */
static void layout_need(const struct options *o, int fd, uint64_t cur, uint64_t *extend, uint64_t *holes)
{
	uint64_t want = o->offset + o->size + o->oinc_span;
	*extend = cur < want && !o->fill_device ? want - cur : 0; /* fill_device: the writes grow the file */
	*holes = 0;
	if (fd >= 0 && rw_reads(o->rw) && cur > o->offset)
		each_hole(fd, o->offset, cur < want ? cur : want, count_hole, holes);
}

/* keep_existing / readonly: the job may not lay out this file. "OPTION: why" in buf. */
static void layout_refusal(const char *opt, const struct options *o, uint64_t cur, uint64_t extend, uint64_t holes,
			   char *buf, size_t len)
{
	const char *who = !strcmp(opt, "readonly") ? "a read-only job" : "a file the engine did not create";
	if (extend && cur == 0 && !holes)
		snprintf(buf, len, "%s: '%s' would have to be created and filled with %llu bytes, refused for %s", opt,
			 o->filename, (unsigned long long)extend, who);
	else if (extend)
		snprintf(buf, len,
			 "%s: '%s' is %llu bytes and the job's region ends at %llu: it would be extended by %llu bytes"
			 "%s, refused for %s",
			 opt, o->filename, (unsigned long long)cur, (unsigned long long)(o->offset + o->size + o->oinc_span),
			 (unsigned long long)extend, holes ? " and its holes filled" : "", who);
	else
		snprintf(buf, len, "%s: reading '%s' would first fill %llu bytes of holes in [%llu, %llu) with data, refused for %s",
			 opt, o->filename, (unsigned long long)holes, (unsigned long long)o->offset,
			 (unsigned long long)(o->offset + o->size + o->oinc_span), who);
}

/* Checks a file target before the first I/O of the whole run: the region fits in a file
 * offset, the job can open it (or create it), its layout is allowed (keep_existing, readonly)
 * and fits in the free space. */
static void file_precheck(const struct options *o, const struct target *t)
{
	struct tfile *f = t->f;
	char msg[PATH_MAX + 256];
	if (o->offset + o->size < o->offset || o->offset + o->size > (uint64_t)INT64_MAX - o->oinc_span)
		die_usage("offset", "offset+size (%llu + %llu) is beyond the largest file offset",
			  (unsigned long long)o->offset, (unsigned long long)o->size);
	uint64_t cur = 0, extend, holes;
	struct statvfs vfs;
	int vfs_ok;
	if (t->exists) {
		int fd = target_open(o, t, msg, sizeof(msg));
		if (fd < 0)
			die_code(EXIT_USAGE, "%s", msg);
		close(fd);
		fd = tfile_open(f, O_RDONLY, 0, 0);
		struct stat st;
		if (fd < 0 || fstat(fd, &st) < 0) {
			open_errmsg(f, fd < 0 ? -fd : errno, msg, sizeof(msg));
			die_code(EXIT_USAGE, "%s", msg);
		}
		cur = (uint64_t)st.st_size;
		layout_need(o, fd, cur, &extend, &holes);
		vfs_ok = fstatvfs(fd, &vfs) == 0;
		close(fd);
	} else {
		layout_need(o, -1, 0, &extend, &holes);
		if (o->readonly) {
			layout_refusal("readonly", o, 0, extend, holes, msg, sizeof(msg));
			die_code(EXIT_USAGE, "%s", msg);
		}
		/* the real test: create it (and remove it again; the layout creates it for good) */
		int fd = tfile_open(f, O_WRONLY | O_CREAT | O_EXCL, 0600, 1);
		if (fd < 0) {
			if (fd == -ELOOP || fd == -EXDEV) {
				open_errmsg(f, -fd, msg, sizeof(msg));
				die_code(EXIT_USAGE, "%s", msg);
			}
			die_usage("filename", "cannot create '%s': %s", t->path, strerror(-fd));
		}
		struct stat st;
		int r = fstat(fd, &st) < 0 ? -errno : 0;
		vfs_ok = fstatvfs(fd, &vfs) == 0;
		close(fd);
		if (!r)
			r = tfile_remove(f, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
		if (r)
			die_usage("filename", "cannot remove the test file '%s' again: %s", t->path, strerror(-r));
	}
	if (!extend && !holes)
		return;
	if (t->exists && f->keep_existing) {
		layout_refusal("keep_existing", o, cur, extend, holes, msg, sizeof(msg));
		die_code(EXIT_USAGE, "%s", msg);
	}
	if (o->readonly) {
		layout_refusal("readonly", o, cur, extend, holes, msg, sizeof(msg));
		die_code(EXIT_USAGE, "%s", msg);
	}
	if (vfs_ok) {
		uint64_t avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
		if (extend + holes > avail)
			die_usage("size", "laying out '%s' needs %llu more bytes but only %llu are free there",
				  t->path, (unsigned long long)(extend + holes), (unsigned long long)avail);
	}
}

struct fill_ctx {
	int fd;
	uint64_t *buf;
	size_t chunk;
	struct rng rng;
};

static int fill_hole(uint64_t pos, uint64_t end, void *arg)
{
	struct fill_ctx *c = arg;
	while (pos < end) {
		if (g_stop)
			return -EINTR;
		size_t n = end - pos < c->chunk ? (size_t)(end - pos) : c->chunk;
		for (size_t i = 0; i < (n + 7) / 8; i++)
			c->buf[i] = rng_next(&c->rng);
		ssize_t w = pwrite(c->fd, c->buf, n, (off_t)pos);
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		pos += (uint64_t)w;
	}
	return 0;
}


/* Create the file if this run is to create it and fill with incompressible data what
 * file_precheck() counted: [current size, offset+size) and, for jobs that read, the holes inside
 * the region. Existing data is never rewritten; a file the engine did not create is never laid
 * out under keep_existing, nor any file under readonly. A file the checks found missing is
 * created with O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600: one that appeared meanwhile is not ours.
 * Interrupted (SIGINT/SIGTERM), it stops at once and removes a file it created. Returns 0 or
 * -errno with "OPTION: why" in err. */
int target_prepare(const struct options *o, struct target *t, char *err, size_t errlen)
{
	if (t->is_blk)
		return 0;
	struct tfile *f = t->f;
	uint64_t want = o->offset + o->size + o->oinc_span, cur = 0, extend, holes;
	int fd, created = 0;
	struct stat st;
	if (!f->existed && !f->created) {
		if (o->readonly) {
			layout_refusal("readonly", o, 0, want, 0, err, errlen);
			return -EROFS;
		}
		fd = tfile_open(f, O_WRONLY | O_CREAT | O_EXCL, 0600, 0);
		if (fd < 0) {
			if (fd == -EEXIST)
				snprintf(err, errlen, "filename: '%s' appeared after the engine checked that it did not exist: "
					 "not using a file it did not create", o->filename);
			else if (fd == -ELOOP || fd == -EXDEV)
				open_errmsg(f, -fd, err, errlen);
			else
				snprintf(err, errlen, "filename: cannot create '%s': %s", o->filename, strerror(-fd));
			return fd;
		}
		f->created = created = 1;
		layout_need(o, -1, 0, &extend, &holes);
	} else {
		fd = tfile_open(f, O_RDONLY, 0, 0);
		if (fd < 0) {
			open_errmsg(f, -fd, err, errlen);
			return fd;
		}
		if (fstat(fd, &st) < 0) {
			int e = errno;
			close(fd);
			snprintf(err, errlen, "filename: cannot stat '%s': %s", o->filename, strerror(e));
			return -e;
		}
		cur = (uint64_t)st.st_size;
		layout_need(o, fd, cur, &extend, &holes);
		if (!extend && !holes) {
			t->exists = 1;
			t->dev_size = cur;
			unsigned a = dio_align(fd);
			if (a)
				t->lbs = a;
			close(fd);
			return 0;
		}
		close(fd);
		/* the file changed since the checks (or another job of this run shortened it) */
		if (f->keep_existing && !f->created) {
			layout_refusal("keep_existing", o, cur, extend, holes, err, errlen);
			return -EPERM;
		}
		if (o->readonly) {
			layout_refusal("readonly", o, cur, extend, holes, err, errlen);
			return -EROFS;
		}
		fd = tfile_open(f, O_WRONLY, 0, 0);
		if (fd < 0) {
			open_errmsg(f, -fd, err, errlen);
			return fd;
		}
	}
	struct fill_ctx c = { .fd = fd, .chunk = 1 << 20 };
	c.buf = malloc(c.chunk);
	if (!c.buf) {
		close(fd);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rng_seed(&c.rng, now_ns());
	if (o->fill_device)
		want = cur; /* fio's fill_device: nothing allocated, the writes grow the file */
	/* fio's layout: the extension allocated as fallocate= says (multifile.c); then data only for
	 * jobs that read (a write-only job writes its region itself, as in fio) */
	int r = mf_allocate(fd, o->fallocate, cur, want);
	if (!r && holes)
		r = each_hole(fd, o->offset, cur < want ? cur : want, fill_hole, &c);
	/* overwrite=1: a write job's missing part gets data too (fio's extend_file: new_layout) */
	const int data = cur < want && (rw_reads(o->rw) || (o->overwrite && rw_writes(o->rw)));
	if (!r && data)
		r = fill_hole(cur, want, &c);
	free(c.buf);
	/* fio's create_fsync (default 1): after a layout that wrote data; an allocation alone is not
	 * fsynced (extend_file's "done" path) */
	if (!r && (data || holes) && o->create_fsync && fsync(fd) < 0)
		r = -errno;
	unsigned a = r ? 0 : dio_align(fd);
	close(fd);
	if (r) {
		if (r == -EINTR && created && tfile_remove(f, f->dev, f->ino) == 0) {
			f->created = 0;
			f->removed = 1;
		}
		snprintf(err, errlen, "filename: cannot fill '%.150s': %s", o->filename, strerror(-r));
		return r;
	}
	t->exists = 1;
	t->dev_size = cur > want ? cur : want;
	if (a)
		t->lbs = a;
	return 0;
}

int target_open(const struct options *o, const struct target *t, char *err, size_t errlen)
{
	int flags = rw_writes(o->rw) ? O_RDWR : O_RDONLY;
	if (o->direct)
		flags |= O_DIRECT;
	if (o->sync_mode)
		flags |= o->sync_mode == 1 ? O_SYNC : O_DSYNC;
	int fd = tfile_open(t->f, flags, 0, 0);
	if (fd >= 0)
		return fd;
	if (fd == -EINVAL && o->direct)
		snprintf(err, errlen, "direct: the file system of '%s' does not support O_DIRECT", t->path);
	else if (fd == -EBUSY)
		snprintf(err, errlen, "filename: refusing to write: '%s' is in use (EBUSY)", t->path);
	else
		open_errmsg(t->f, -fd, err, errlen);
	return fd;
}

/* A target under one of the file-safety options is checked again when its job ends. */
static int guarded(const struct tfile *f)
{
	return f->dirfd >= 0 || f->create_new || f->keep_existing || f->unlink_file;
}

int target_verify(const struct target *t, char *err, size_t errlen)
{
	if (t->is_blk || !guarded(t->f))
		return 0;
	struct tfile *f = t->f;
	int fd = tfile_open(f, O_PATH, 0, 0);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (fd == -ELOOP)
		snprintf(err, errlen, "filename: '%s' was replaced by a symbolic link during the job (not followed)", f->path);
	else if (fd == -ESTALE)
		snprintf(err, errlen, "filename: '%s' was replaced by another file during the job", f->path);
	else
		snprintf(err, errlen, "filename: '%s' was removed or moved during the job: %s", f->path, strerror(-fd));
	return fd;
}

int target_cleanup(void)
{
	int rc = 0;
	for (struct tfile *f = g_files; f; f = f->next) {
		if (!f->unlink_file || !f->created || f->removed)
			continue;
		f->removed = 1;
		int r = tfile_remove(f, f->dev, f->ino);
		if (r == -ESTALE)
			warnmsg("unlink: '%s' is no longer the file this run created (replaced during the run): left in place",
				f->path);
		else if (r)
			warnmsg("unlink: cannot remove '%s': %s", f->path, strerror(-r));
		if (r)
			rc = -1;
	}
	return rc;
}

struct fsfind { const char *path; size_t best; struct mnt m; };

static int fs_cb(const struct mnt *m, void *arg)
{
	struct fsfind *f = arg;
	size_t l = strlen(m->point);
	int match = !strcmp(m->point, "/") ||
		    (!strncmp(f->path, m->point, l) && (f->path[l] == '/' || f->path[l] == 0));
	if (match && (l >= f->best || f->best == 0)) {
		f->best = l;
		f->m = *m;
	}
	return 0;
}

static void sysq(struct jw *w, const char *disk, const char *attr, int numeric)
{
	char p[256], buf[256];
	snprintf(p, sizeof(p), "/sys/block/%s/queue/%s", disk, attr);
	if (read_sysfs_str(p, buf, sizeof(buf)) < 0) {
		jw_null(w, attr);
		return;
	}
	if (numeric) {
		jw_i64(w, attr, atoll(buf));
	} else if (!strcmp(attr, "scheduler")) {
		char *l = strchr(buf, '['), *r = l ? strchr(l, ']') : NULL;
		if (l && r) {
			*r = 0;
			jw_str(w, attr, l + 1);
		} else {
			jw_str(w, attr, buf);
		}
	} else {
		jw_str(w, attr, buf);
	}
}

void target_facts(struct jw *w, const struct target *t)
{
	jw_obj(w, "target");
	jw_str(w, "path", t->path);
	jw_str(w, "kind", t->is_blk ? "blockdev" : "file");
	jw_u64(w, "size_bytes", t->dev_size);
	jw_u64(w, "dio_align_bytes", t->lbs);
	jw_bool(w, "created", t->f && t->f->created);
	if (t->f && t->f->dirfd >= 0) {
		jw_obj(w, "beneath");
		jw_str(w, "dir", t->f->dir);
		jw_str(w, "resolver", confine_resolver());
		jw_obj_end(w);
	} else {
		jw_null(w, "beneath");
	}
	if (t->diskname[0]) {
		char p[256], buf[256];
		jw_obj(w, "device");
		jw_str(w, "name", t->devname);
		jw_str(w, "disk", t->diskname);
		snprintf(p, sizeof(p), "/sys/block/%s/device/model", t->diskname);
		if (read_sysfs_str(p, buf, sizeof(buf)) == 0)
			jw_str(w, "model", buf);
		else
			jw_null(w, "model");
		snprintf(p, sizeof(p), "/sys/block/%s/size", t->diskname);
		jw_i64(w, "disk_size_bytes", read_sysfs_ll(p, 0) * 512);
		sysq(w, t->diskname, "logical_block_size", 1);
		sysq(w, t->diskname, "physical_block_size", 1);
		sysq(w, t->diskname, "rotational", 1);
		sysq(w, t->diskname, "scheduler", 0);
		sysq(w, t->diskname, "read_ahead_kb", 1);
		sysq(w, t->diskname, "max_sectors_kb", 1);
		sysq(w, t->diskname, "nr_requests", 1);
		sysq(w, t->diskname, "write_cache", 0);
		jw_obj_end(w);
	} else {
		jw_null(w, "device");
	}
	char rp[PATH_MAX];
	if (t->f && t->f->dirfd >= 0) {
		/* never resolve the confined part through links: DIR (the host's) plus the checked rest */
		char d[PATH_MAX];
		if (!realpath(t->f->dir, d))
			str_copy(d, sizeof(d), t->f->dir);
		snprintf(rp, sizeof(rp), "%.2000s/%.2000s", d, t->f->rel);
	} else if (!realpath(t->path, rp)) {
		char tmp[PATH_MAX];
		str_copy(tmp, sizeof(tmp), t->path);
		if (!realpath(dirname(tmp), rp))
			str_copy(rp, sizeof(rp), t->path);
	}
	struct fsfind ff = { .path = rp, .best = 0 };
	if (!t->is_blk && each_mount(fs_cb, &ff) >= 0 && ff.m.point[0]) {
		jw_obj(w, "fs");
		jw_str(w, "type", ff.m.fstype);
		jw_str(w, "mount_point", ff.m.point);
		jw_str(w, "source", ff.m.source);
		jw_str(w, "mount_options", ff.m.opts);
		jw_obj_end(w);
	} else {
		jw_null(w, "fs");
	}
	jw_obj_end(w);
}

/* Held for the whole run for every block device that is written: an exclusive claim makes
 * the kernel refuse a mount (or another exclusive user) while we write.
 * When a job trims the device the claim is opened for writing and the trims go through it
 * (engine_trim): the kernel's BLKDISCARD drops the range's cached pages first
 * (blk_ioctl_discard -> truncate_bdev_range), and only a descriptor that holds the claim may
 * truncate them, dirty ones too, while the device is claimed. Through another descriptor the
 * kernel tries to claim the device for the moment, cannot (we hold it), and falls back to
 * invalidating the pages, which fails with EBUSY on a dirty one: a buffered trimwrite's
 * second loop. fio holds no claim, so the kernel claims it for each trim and truncates: the
 * same pages dropped as here. A device that cannot be opened for writing keeps the read-only
 * claim: the job's own open then fails as before. */
int target_claim(const struct target *t, int trims)
{
	int fd = trims ? tfile_open(t->f, O_RDWR | O_EXCL, 0, 0) : -EROFS;
	if (fd == -EROFS || fd == -EACCES || fd == -EPERM)
		fd = tfile_open(t->f, O_RDONLY | O_EXCL, 0, 0);
	if (fd < 0) {
		if (fd == -EBUSY)
			die_usage("filename", "refusing to write: '%s' is in use (mounted or claimed, EBUSY)", t->path);
		char msg[PATH_MAX + 128];
		open_errmsg(t->f, -fd, msg, sizeof(msg));
		die_code(EXIT_USAGE, "%s", msg);
	}
	return fd;
}
