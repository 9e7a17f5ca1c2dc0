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

int target_probe(struct target *t, const char *path)
{
	struct stat st;
	memset(t, 0, sizeof(*t));
	str_copy(t->path, sizeof(t->path), path);
	t->lbs = 512;
	if (stat(path, &st) == 0) {
		t->exists = 1;
		if (S_ISBLK(st.st_mode)) {
			t->is_blk = 1;
			t->dev_major = major(st.st_rdev);
			t->dev_minor = minor(st.st_rdev);
			/* size and block size from sysfs, so the safety rules run before any open */
			char p[128];
			snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/size", t->dev_major, t->dev_minor);
			long long sectors = read_sysfs_ll(p, -1);
			if (sectors >= 0)
				t->dev_size = (uint64_t)sectors * 512;
			int fd = open(path, O_RDONLY);
			if (fd >= 0) {
				uint64_t sz = 0;
				int lbs = 512;
				if (ioctl(fd, BLKGETSIZE64, &sz) == 0)
					t->dev_size = sz;
				if (ioctl(fd, BLKSSZGET, &lbs) == 0 && lbs > 0)
					t->lbs = (unsigned)lbs;
				close(fd);
			} else if (sectors < 0) {
				die_usage("filename", "cannot open '%s': %s", path, strerror(errno));
			}
		} else if (S_ISREG(st.st_mode)) {
			t->dev_size = (uint64_t)st.st_size;
			t->dev_major = major(st.st_dev);
			t->dev_minor = minor(st.st_dev);
		} else {
			die_usage("filename", "'%s' is neither a regular file nor a block device", path);
		}
	} else if (errno == ENOENT) {
		char tmp[PATH_MAX];
		str_copy(tmp, sizeof(tmp), path);
		char *dir = dirname(tmp);
		if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
			die_usage("filename", "directory '%s' does not exist", dir);
		if (access(dir, W_OK) < 0)
			die_usage("filename", "directory '%s' is not writable: %s", dir, strerror(errno));
		t->dev_major = major(st.st_dev);
		t->dev_minor = minor(st.st_dev);
	} else {
		die_usage("filename", "cannot stat '%s': %s", path, strerror(errno));
	}
	dev_names(t->dev_major, t->dev_minor, t->devname, sizeof(t->devname), t->diskname, sizeof(t->diskname));
	if (t->diskname[0] && (!t->is_blk || t->lbs == 512)) {
		char p[256];
		snprintf(p, sizeof(p), "/sys/block/%s/queue/logical_block_size", t->diskname);
		long long v = read_sysfs_ll(p, 512);
		if (v > 0)
			t->lbs = (unsigned)v;
	}
#ifdef STATX_DIOALIGN
	if (t->exists && !t->is_blk) {
		struct statx sx;
		if (statx(AT_FDCWD, path, 0, STATX_DIOALIGN, &sx) == 0 && (sx.stx_mask & STATX_DIOALIGN) &&
		    sx.stx_dio_offset_align)
			t->lbs = sx.stx_dio_offset_align;
	}
#endif
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

void target_validate(const struct options *oc, struct target *t)
{
	struct options *o = (struct options *)oc;
	if (!o->size_set) {
		if (!t->exists)
			die_usage("size", "required because '%s' does not exist", t->path);
		if (o->offset >= t->dev_size)
			die_usage("offset", "%llu is at or beyond the end of '%s' (%llu bytes)",
				  (unsigned long long)o->offset, t->path, (unsigned long long)t->dev_size);
		o->size = t->dev_size - o->offset;
	}
	if (opt_max_bs(o) > o->size)
		die_usage("bs", "block size %llu is larger than size %llu", (unsigned long long)opt_max_bs(o),
			  (unsigned long long)o->size);
	if (t->is_blk) {
		if (o->offset + o->size > t->dev_size || o->offset + o->size < o->offset)
			die_usage("size", "offset+size (%llu) is beyond the end of '%s' (%llu bytes)",
				  (unsigned long long)(o->offset + o->size), t->path, (unsigned long long)t->dev_size);
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

/* Bytes target_prepare() writes: the extension up to offset+size and, for jobs that read, the
 * holes inside [offset, offset+size) of the existing part (reads must never hit holes). */
static uint64_t layout_bytes(const struct options *o, const struct target *t)
{
	uint64_t want = o->offset + o->size, need = 0;
	int fd = t->exists ? open(t->path, O_RDONLY) : -1;
	struct stat st;
	uint64_t cur = fd >= 0 && fstat(fd, &st) == 0 ? (uint64_t)st.st_size : 0;
	if (cur < want)
		need += want - cur;
	if (fd >= 0 && rw_reads(o->rw) && cur > o->offset)
		each_hole(fd, o->offset, cur < want ? cur : want, count_hole, &need);
	if (fd >= 0)
		close(fd);
	return need;
}

/* Checks a file target before the first I/O of the whole run: the region fits in a file
 * offset, the job can open it (or create it), and its layout fits in the free space. */
static void file_precheck(const struct options *o, const struct target *t)
{
	if (o->offset + o->size < o->offset || o->offset + o->size > (uint64_t)INT64_MAX)
		die_usage("offset", "offset+size (%llu + %llu) is beyond the largest file offset",
			  (unsigned long long)o->offset, (unsigned long long)o->size);
	if (t->exists) {
		int fd = target_open(o, t);
		close(fd);
	} else {
		/* the real test: create it (and remove it again; the layout creates it for good) */
		int fd = open(t->path, O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd < 0)
			die_usage("filename", "cannot create '%s': %s", t->path, strerror(errno));
		close(fd);
		unlink(t->path);
	}
	uint64_t need = layout_bytes(o, t);
	if (!need)
		return;
	struct statvfs vfs;
	char dir[PATH_MAX];
	str_copy(dir, sizeof(dir), t->path);
	if (statvfs(t->exists ? t->path : dirname(dir), &vfs) == 0) {
		uint64_t avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
		if (need > avail)
			die_usage("size", "laying out '%s' needs %llu more bytes but only %llu are free there",
				  t->path, (unsigned long long)need, (unsigned long long)avail);
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

/* Create the file if needed and fill with incompressible data what file_precheck() counted:
 * [current size, offset+size) and, for jobs that read, the holes inside the region. Existing
 * data is never rewritten. Interrupted (SIGINT/SIGTERM), it stops at once and removes a file
 * it created. Returns 0 or -errno. */
int target_prepare(const struct options *o, struct target *t)
{
	if (t->is_blk)
		return 0;
	uint64_t want = o->offset + o->size;
	if (!layout_bytes(o, t)) {
		struct stat st;
		if (stat(t->path, &st) == 0)
			t->dev_size = (uint64_t)st.st_size;
		return 0;
	}
	int created = access(t->path, F_OK) != 0;
	int fd = open(t->path, O_WRONLY | O_CREAT, 0644);
	if (fd < 0)
		die_usage("filename", "cannot create '%s': %s", t->path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	uint64_t cur = (uint64_t)st.st_size;
	struct fill_ctx c = { .fd = fd, .chunk = 1 << 20 };
	c.buf = malloc(c.chunk);
	if (!c.buf) {
		close(fd);
		return -ENOMEM;
	}
	rng_seed(&c.rng, now_ns());
	int r = 0;
	if (rw_reads(o->rw) && cur > o->offset)
		r = each_hole(fd, o->offset, cur < want ? cur : want, fill_hole, &c);
	if (!r && cur < want)
		r = fill_hole(cur, want, &c);
	free(c.buf);
	if (!r && fsync(fd) < 0)
		r = -errno;
	close(fd);
	if (r) {
		if (r == -EINTR && created)
			unlink(t->path);
		return r;
	}
	t->exists = 1;
	t->dev_size = cur > want ? cur : want;
#ifdef STATX_DIOALIGN
	struct statx sx;
	if (statx(AT_FDCWD, t->path, 0, STATX_DIOALIGN, &sx) == 0 && (sx.stx_mask & STATX_DIOALIGN) &&
	    sx.stx_dio_offset_align)
		t->lbs = sx.stx_dio_offset_align;
#endif
	return 0;
}

int target_open(const struct options *o, const struct target *t)
{
	int flags = rw_writes(o->rw) ? O_RDWR : O_RDONLY;
	if (o->direct)
		flags |= O_DIRECT;
	if (o->sync_dsync)
		flags |= O_DSYNC;
	int fd = open(t->path, flags);
	if (fd < 0) {
		int e = errno;
		if (e == EINVAL && o->direct)
			die_usage("direct", "the file system of '%s' does not support O_DIRECT", t->path);
		if (e == EBUSY)
			die_usage("filename", "refusing to write: '%s' is in use (EBUSY)", t->path);
		die_usage("filename", "cannot open '%s': %s", t->path, strerror(e));
	}
	return fd;
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
	if (!realpath(t->path, rp)) {
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
 * the kernel refuse a mount (or another exclusive user) while we write. */
int target_claim(const struct target *t)
{
	int fd = open(t->path, O_RDONLY | O_EXCL);
	if (fd < 0) {
		if (errno == EBUSY)
			die_usage("filename", "refusing to write: '%s' is in use (mounted or claimed, EBUSY)", t->path);
		die_usage("filename", "cannot open '%s': %s", t->path, strerror(errno));
	}
	return fd;
}
