/*
 * extents.c - the extents (FIEMAP) of the regular files QEMU processes
 * have open, for extents.tsv (lib/extents.h, docs/format/extents.md):
 * `vmtrace report` maps the host bios of aio=native / io_uring on an
 * image file back to the file's offsets with them.
 */
#include <dirent.h>
#include <stddef.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "extents.h"
#include "host_extents.h"

/* extents read per ioctl, and at most per file (a fragmented image's
 * rest stays unmapped: its bios are guesses) */
#define EXT_BATCH	512
#define EXT_MAX		(1u << 20)
/* files smaller than this are no disk image (logs, pid files) */
#define EXT_MIN_SIZE	(1u << 20)

static int read_u64(const char *path, unsigned long long *v)
{
	FILE *fp = fopen(path, "r");
	int ok = fp && fscanf(fp, "%llu", v) == 1;

	if (fp)
		fclose(fp);
	return ok ? 0 : -1;
}

/* @st_dev's whole disk and its start byte there: a partition's parent
 * (sysfs "partition", "start", ../dev), else itself */
static void disk_of(dev_t st_dev, uint32_t *dev, uint64_t *start)
{
	char path[128];
	unsigned long long s;
	unsigned ma, mi;
	FILE *fp;

	*dev = vt_kdev(major(st_dev), minor(st_dev));
	*start = 0;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/partition", major(st_dev),
		 minor(st_dev));
	if (access(path, F_OK))
		return;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/start", major(st_dev), minor(st_dev));
	if (read_u64(path, &s))
		return;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/../dev", major(st_dev), minor(st_dev));
	fp = fopen(path, "r");
	if (fp && fscanf(fp, "%u:%u", &ma, &mi) == 2) {
		*dev = vt_kdev(ma, mi);
		*start = (uint64_t)s * 512;
	}
	if (fp)
		fclose(fp);
}

static int file_extents(FILE *out, int fd, const struct stat *st, struct vt_extent *e)
{
	size_t sz = sizeof(struct fiemap) + EXT_BATCH * sizeof(struct fiemap_extent);
	struct fiemap *fm = malloc(sz);
	uint64_t from = 0;
	unsigned total = 0;
	int ret = 0;

	if (!fm)
		return -1;
	disk_of(st->st_dev, &e->dev, &e->start);
	e->st_dev = vt_kdev(major(st->st_dev), minor(st->st_dev));
	e->ino = (uint64_t)st->st_ino;
	for (;;) {
		memset(fm, 0, sizeof(*fm));
		fm->fm_start = from;
		fm->fm_length = FIEMAP_MAX_OFFSET - from;
		fm->fm_flags = FIEMAP_FLAG_SYNC;
		fm->fm_extent_count = EXT_BATCH;
		if (ioctl(fd, FS_IOC_FIEMAP, fm) < 0 || !fm->fm_mapped_extents)
			break;
		int last = 0;

		for (unsigned i = 0; i < fm->fm_mapped_extents; i++) {
			struct fiemap_extent *x = &fm->fm_extents[i];

			e->logical = x->fe_logical;
			e->physical = x->fe_physical;
			e->length = x->fe_length;
			e->flags = x->fe_flags;
			if (vt_extents_write(out, e)) {
				ret = -1;
				goto out;
			}
			last = !!(x->fe_flags & FIEMAP_EXTENT_LAST);
			from = x->fe_logical + x->fe_length;
		}
		total += fm->fm_mapped_extents;
		if (last || total >= EXT_MAX)
			break;
	}
out:
	free(fm);
	return ret;
}

/* the file of /proc/PID/fd/FD (@path) opened by its name, read-only
 * (its name is a link to the file, whatever mode QEMU opened it in) */
static int open_same(const char *path, dev_t dev, ino_t ino)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0 && (fstat(fd, &st) || st.st_dev != dev || st.st_ino != ino)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* the fd lines of @f's other fds not yet written (@e: the file's
 * identity as its extent lines have it) */
static int write_aliases(FILE *out, struct host_ext_file *f, const struct vt_extent *e)
{
	for (; f->nr_alias_written < f->nr_alias; f->nr_alias_written++) {
		struct vt_extent a = *e;

		a.alias = 1;
		a.end = 0;
		a.fd = f->alias[f->nr_alias_written];
		a.logical = a.physical = a.length = 0;
		a.flags = 0;
		if (vt_extents_write(out, &a))
			return -1;
	}
	return 0;
}

static int read_file(FILE *out, struct host_ext_file *f, int end)
{
	struct vt_extent e = { .end = (uint8_t)!!end, .pid = f->pid, .fd = f->fd };
	char link[64];
	struct stat st;
	int fd, ret;

	/* the end reading: through QEMU's fd if it still has it, else by
	 * the name it had (QEMU has exited: blocks it allocated are there) */
	snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)f->pid, f->fd);
	fd = open_same(link, f->dev, f->ino);
	if (fd < 0 && f->path[0] == '/')
		fd = open_same(f->path, f->dev, f->ino);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st)) {
		close(fd);
		return 0;
	}
	ret = file_extents(out, fd, &st, &e);
	close(fd);
	if (!end && !ret) {
		f->read = 1;
		f->ident = e;
		/* its other fds, so that the report takes QEMU's syscalls
		 * on them (fallocate, fdatasync) as on the file */
		ret = write_aliases(out, f, &e);
	}
	return ret;
}

/* note @pid's fd @fd of the file @st (its path /proc/PID/fd/FD: @path) */
static void note_fd(struct host_ext_files *files, pid_t pid, int fd, const char *path,
		    const struct stat *st)
{
	int j;

	for (j = 0; j < files->n; j++) {
		struct host_ext_file *g = &files->f[j];

		if (g->pid == pid && g->dev == st->st_dev && g->ino == st->st_ino)
			break;
	}
	if (j < files->n) {
		/* a file once, at its lowest fd when first read (QEMU may
		 * hold two), its other fds noted once each */
		struct host_ext_file *g = &files->f[j];
		int k;

		if (fd == g->fd)
			return;
		for (k = 0; k < g->nr_alias && g->alias[k] != fd; k++)
			;
		if (k < g->nr_alias || g->nr_alias == HOST_EXT_ALIAS)
			return;
		if (!g->read && fd < g->fd) {
			g->alias[g->nr_alias++] = g->fd;
			g->fd = fd;
		} else {
			g->alias[g->nr_alias++] = fd;
		}
		return;
	}
	if (files->n == HOST_EXT_FILES)
		return;
	struct host_ext_file *f = &files->f[files->n++];
	ssize_t len = readlink(path, f->path, sizeof(f->path) - 1);

	memset(f, 0, offsetof(struct host_ext_file, path));
	f->path[len > 0 ? len : 0] = 0;
	f->pid = pid;
	f->fd = fd;
	f->dev = st->st_dev;
	f->ino = st->st_ino;
}

int host_extents_write(FILE *out, const pid_t *pids, int nr, struct host_ext_files *files)
{
	for (int i = 0; i < nr; i++) {
		char dir[64], path[64 + sizeof(((struct dirent *)0)->d_name)];
		struct dirent *de;
		DIR *d;

		snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pids[i]);
		d = opendir(dir);
		if (!d)
			continue;
		while ((de = readdir(d))) {
			struct stat st;

			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			if (stat(path, &st) || !S_ISREG(st.st_mode) || st.st_size < EXT_MIN_SIZE)
				continue;
			note_fd(files, pids[i], atoi(de->d_name), path, &st);
		}
		closedir(d);
		/* files new to this scan: their start reading; known ones:
		 * the fds opened since */
		for (int j = 0; j < files->n; j++) {
			struct host_ext_file *f = &files->f[j];

			if (f->pid != pids[i])
				continue;
			if (!f->read ? read_file(out, f, 0) : write_aliases(out, f, &f->ident))
				return -1;
		}
	}
	return 0;
}

int host_extents_write_end(FILE *out, struct host_ext_files *files)
{
	for (int j = 0; j < files->n; j++)
		if (files->f[j].read && read_file(out, &files->f[j], 1))
			return -1;
	return 0;
}
