/*
 * extents.c - the extents (FIEMAP) of the regular files QEMU processes
 * have open, for extents.tsv (lib/extents.h, docs/format/extents.md):
 * `vmtrace report` maps the host bios of aio=native / io_uring on an
 * image file back to the file's offsets with them.
 */
#include <dirent.h>
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

int host_extents_write(FILE *out, const pid_t *pids, int nr, int end)
{
	for (int i = 0; i < nr; i++) {
		char dir[64], path[64 + sizeof(((struct dirent *)0)->d_name)];
		struct dirent *de;
		DIR *d;
		/* a file once, at its lowest fd (QEMU may hold two) */
		struct { dev_t dev; ino_t ino; int fd; } seen[64];
		int ns = 0;

		snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pids[i]);
		d = opendir(dir);
		if (!d)
			continue;
		while ((de = readdir(d))) {
			struct stat st;
			int fd = atoi(de->d_name);

			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			if (stat(path, &st) || !S_ISREG(st.st_mode) || st.st_size < EXT_MIN_SIZE)
				continue;
			int j;

			for (j = 0; j < ns && !(seen[j].dev == st.st_dev && seen[j].ino == st.st_ino); j++)
				;
			if (j < ns) {
				if (fd < seen[j].fd)
					seen[j].fd = fd;
				continue;
			}
			if (ns < (int)(sizeof(seen) / sizeof(*seen)))
				seen[ns++] = (typeof(seen[0])){ st.st_dev, st.st_ino, fd };
		}
		closedir(d);
		for (int j = 0; j < ns; j++) {
			struct vt_extent e = { .end = (uint8_t)!!end, .pid = pids[i], .fd = seen[j].fd };
			struct stat st;
			int fd;

			snprintf(path, sizeof(path), "%s/%d", dir, seen[j].fd);
			/* O_RDONLY|O_NOATIME would need ownership: plain read */
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			if (!fstat(fd, &st) && st.st_ino == seen[j].ino && file_extents(out, fd, &st, &e)) {
				close(fd);
				return -1;
			}
			close(fd);
		}
	}
	return 0;
}
