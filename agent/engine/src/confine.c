/* Opening a path beneath a directory without following any symbolic link (beneath=DIR).
 *
 * openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS) through syscall();
 * on a kernel without openat2 (ENOSYS, before 5.6, or a seccomp filter that hides it) the same
 * walk is done in user space: one openat(O_PATH | O_DIRECTORY | O_NOFOLLOW) per directory
 * component from the confined directory's fd, the last component opened with O_NOFOLLOW. The
 * relative path was normalised by confine_split(): no "..", no empty or "." components, so the
 * walk never climbs. A test build (-DIOWATT_NO_OPENAT2, `make noopenat2`) always walks. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#if !defined(IOWATT_NO_OPENAT2) && defined(SYS_openat2)
#include <linux/openat2.h>
#endif

#include "iowatt.h"

#if defined(IOWATT_NO_OPENAT2) || !defined(SYS_openat2)
#define USE_OPENAT2 0
#else
#define USE_OPENAT2 1
#endif
static int g_walk = !USE_OPENAT2; /* 1 once the kernel said ENOSYS (always in the test build) */

const char *confine_resolver(void)
{
	return g_walk ? "openat-walk" : "openat2";
}

int confine_split(const char *path, char *out, size_t len)
{
	size_t n = 0;
	const char *p = path;
	if (*p == '/')
		return -EINVAL;
	while (*p) {
		while (*p == '/')
			p++;
		const char *e = strchr(p, '/');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		if (l == 0)
			break;
		if (l == 2 && p[0] == '.' && p[1] == '.')
			return -EXDEV;
		if (!(l == 1 && p[0] == '.')) {
			if (n + l + 2 > len)
				return -ENAMETOOLONG;
			if (n)
				out[n++] = '/';
			memcpy(out + n, p, l);
			n += l;
		}
		p += l;
	}
	if (len)
		out[n] = 0;
	return n ? 0 : -EINVAL;
}

/* The fd refers to a symbolic link (O_PATH | O_NOFOLLOW opens the link itself). */
static int refuse_link(int fd)
{
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISLNK(st.st_mode)) {
		close(fd);
		return -ELOOP;
	}
	return fd;
}

static int walk(int dirfd, const char *rel, int flags, mode_t mode)
{
	char buf[PATH_MAX];
	if (strlen(rel) >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, rel);
	int cur = dirfd;
	char *comp = buf;
	for (;;) {
		char *slash = strchr(comp, '/');
		if (!slash)
			break;
		*slash = 0;
		int next = openat(cur, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		if (next < 0) {
			struct stat st;
			/* a symbolic link as a directory component fails with ENOTDIR: say what it is */
			if (e == ENOTDIR && fstatat(cur, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
				e = ELOOP;
			if (cur != dirfd)
				close(cur);
			return -e;
		}
		if (cur != dirfd)
			close(cur);
		cur = next;
		comp = slash + 1;
	}
	int fd = openat(cur, comp, flags | O_NOFOLLOW | O_CLOEXEC, mode);
	int e = errno;
	if (cur != dirfd)
		close(cur);
	if (fd < 0)
		return -e;
	return refuse_link(fd);
}

int confined_open(int dirfd, const char *rel, int flags, mode_t mode)
{
#if USE_OPENAT2
	if (!g_walk) {
		struct open_how how = {
			.flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC),
			.mode = (flags & O_CREAT) ? mode : 0,
			.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
		};
		for (int tries = 0; tries < 8; tries++) {
			long fd = syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));
			if (fd >= 0)
				return refuse_link((int)fd);
			if (errno == EAGAIN) /* a concurrent rename: the kernel could not prove it stays beneath */
				continue;
			if (errno != ENOSYS)
				return -errno;
			g_walk = 1;
			break;
		}
		if (!g_walk)
			return -EAGAIN;
	}
#endif
	return walk(dirfd, rel, flags, mode);
}
