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
#include <limits.h>
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

/* Next path component (skipping empty and "." ones), or NULL at the end. */
static const char *next_comp(const char **p, size_t *len)
{
	for (;;) {
		while (**p == '/')
			(*p)++;
		if (!**p)
			return NULL;
		const char *c = *p, *e = strchr(c, '/');
		*len = e ? (size_t)(e - c) : strlen(c);
		*p += *len;
		if (!(*len == 1 && c[0] == '.'))
			return c;
	}
}

int confine_relative(const char *root, const char *path, char *rel, size_t len)
{
	const char *d = root, *p = path, *c;
	size_t l;
	while ((c = next_comp(&d, &l)))
		if (l == 2 && c[0] == '.' && c[1] == '.')
			return CONFINE_ROOT_DOTDOT;
	if (path[0] == '/') {
		if (root[0] != '/')
			return CONFINE_ROOT_RELATIVE;
		d = root;
		const char *dc, *pc;
		size_t dl, pl;
		while ((dc = next_comp(&d, &dl))) {
			pc = next_comp(&p, &pl);
			if (!pc || pl != dl || memcmp(pc, dc, dl))
				return CONFINE_NOT_BENEATH;
		}
		while (*p == '/')
			p++;
	}
	int r = confine_split(p, rel, len);
	if (r == -EXDEV)
		return CONFINE_DOTDOT;
	if (r == -EINVAL) {
		if (len)
			rel[0] = 0;
		return CONFINE_ROOT_ITSELF;
	}
	return r < 0 ? CONFINE_TOO_LONG : 0;
}

void confine_die(int rc, const char *what, const char *path, const char *root)
{
	switch (rc) {
	case CONFINE_ROOT_DOTDOT:
		die_usage("beneath", "'%s' must not contain '..'", root);
	case CONFINE_ROOT_RELATIVE:
		die_usage("beneath", "'%s' is relative but %s '%s' is absolute", root, what, path);
	case CONFINE_NOT_BENEATH:
		die_usage("beneath", "%s '%s' is not beneath '%s'", what, path, root);
	case CONFINE_DOTDOT:
		die_usage("beneath", "%s '%s' climbs out of '%s' with '..'", what, path, root);
	case CONFINE_ROOT_ITSELF:
		die_usage("beneath", "%s '%s' names no file beneath '%s'", what, path, root);
	default:
		die_usage("beneath", "%s '%s': %s", what, path, strerror(ENAMETOOLONG));
	}
}

int open_confined_dir(const char *dir, const char *beneath, const char *mode)
{
	if (!dir || !*dir)
		die_usage("directory", "--directory=DIR is required with --%s", mode);
	if (!beneath || !*beneath) {
		int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			die_usage("directory", "cannot open directory '%s': %s", dir, strerror(errno));
		return fd;
	}
	char rel[PATH_MAX];
	int rc = confine_relative(beneath, dir, rel, sizeof(rel));
	if (rc < 0 && rc != CONFINE_ROOT_ITSELF)
		confine_die(rc, "directory", dir, beneath);
	int root = open(beneath, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		die_usage("beneath", "cannot open directory '%s': %s", beneath, strerror(errno));
	if (rc == CONFINE_ROOT_ITSELF)
		return root;
	int fd = confined_open(root, rel, O_RDONLY | O_DIRECTORY, 0);
	close(root);
	if (fd < 0)
		die_usage("beneath", "directory '%s' beneath '%s': %s%s", dir, beneath, strerror(-fd),
			  fd == -ELOOP || fd == -ENOTDIR ? " (a symbolic link in its path is refused)" : "");
	return fd;
}

int confined_parent(int dirfd, char *rel, const char **leaf)
{
	char *slash = strrchr(rel, '/');
	if (!slash) {
		*leaf = rel;
		return dirfd;
	}
	*slash = 0;
	int fd = confined_open(dirfd, rel, O_RDONLY | O_DIRECTORY, 0);
	*slash = '/';
	*leaf = slash + 1;
	return fd;
}

void confined_parent_close(int dirfd, int fd)
{
	if (fd >= 0 && fd != dirfd)
		close(fd);
}
