/* ioengine registry and the two synchronous engines: psync (pread/pwrite) and null. */
#include <errno.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "iowatt.h"

static int sync_init(struct worker *w) { (void)w; return 0; }
static void sync_cleanup(struct worker *w) { (void)w; }

/* A trim, as fio 3.33's os_trim: one BLKDISCARD ioctl, whatever the target (a regular file
 * answers ENOTTY, the I/O's error, as in fio: nothing punches holes). On a device, through the
 * run's exclusive claim (target_claim: the kernel then drops the range's cached pages, dirty
 * ones too, as for fio). r->res as queue()'s. */
void engine_trim(const struct worker *w, struct io_req *r)
{
	uint64_t range[2] = { r->off, r->len };
	int fd = w->job->excl_fd >= 0 ? w->job->excl_fd : w->fd;
	r->res = ioctl(fd, BLKDISCARD, range) < 0 ? -errno : (int64_t)r->len;
}

/* pread/pwrite through syscall(): glibc's wrappers are cancellation points and toggle the
 * thread's async-cancel state around every call (~2-3 % of a page-cache read here); the
 * workers are never cancelled, so the raw system call is the same I/O for less CPU. */
static int psync_queue(struct worker *w, struct io_req *r)
{
	if (__builtin_expect(r->ddir == DDIR_TRIM, 0)) { /* rw=trim... */
		engine_trim(w, r);
		return 1;
	}
#if defined(__LP64__) && defined(SYS_pread64) && defined(SYS_pwrite64)
	(void)w;
	long n = syscall(r->ddir == DDIR_READ ? SYS_pread64 : SYS_pwrite64, r->fd, r->buf, (size_t)r->len,
			 (off_t)r->off);
#else /* 32-bit ABIs split the offset: keep libc's wrappers */
	(void)w;
	ssize_t n = r->ddir == DDIR_READ ? pread(r->fd, r->buf, r->len, (off_t)r->off)
					 : pwrite(r->fd, r->buf, r->len, (off_t)r->off);
#endif
	r->res = n < 0 ? -errno : n;
	return 1;
}

static int null_queue(struct worker *w, struct io_req *r)
{
	(void)w;
	r->res = r->len;
	return 1;
}

static const struct engine_ops psync_ops = {
	.name = "psync", .flags = ENGINE_F_SYNC, .init = sync_init, .queue = psync_queue, .cleanup = sync_cleanup,
};
static const struct engine_ops null_ops = {
	.name = "null", .flags = ENGINE_F_SYNC, .init = sync_init, .queue = null_queue, .cleanup = sync_cleanup,
};

extern const struct engine_ops libaio_ops, io_uring_ops;

/* every ioengine name the option takes, in --help's and --limits' order (aliases of psync too) */
static const struct {
	const char *name;
	const struct engine_ops *ops;
} engines[] = {
	{ "psync", &psync_ops }, { "sync", &psync_ops }, { "pvsync", &psync_ops },
	{ "libaio", &libaio_ops }, { "io_uring", &io_uring_ops }, { "null", &null_ops },
};

const struct engine_ops *engine_find(const char *name)
{
	for (size_t i = 0; i < sizeof(engines) / sizeof(engines[0]); i++)
		if (!strcmp(name, engines[i].name))
			return engines[i].ops;
	return NULL;
}

const char *engine_name_at(size_t i)
{
	return i < sizeof(engines) / sizeof(engines[0]) ? engines[i].name : NULL;
}

int engine_built_in(const char *name)
{
	const struct engine_ops *ops = engine_find(name);
	return ops && !(ops->flags & ENGINE_F_ABSENT);
}
