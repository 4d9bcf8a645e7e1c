/*
 * extents.h - extents.tsv: the extents (FIEMAP) of the regular files a
 * recorded QEMU process had open, read by `vmtrace record` at the start
 * and at the end of a host recording, so that `vmtrace report` can map a
 * host bio's disk bytes back to the image file's offsets.  Full
 * description in docs/format/extents.md.
 *
 * UTF-8 text, '\n' line ends, TAB-separated fields:
 *   line 1   "# vmtrace-extents 1"            magic + version
 *   other "#" lines                           skipped
 *   extent lines:
 *     field    type          meaning
 *     when     start | end   the reading: at the recording's start or end
 *     pid      decimal       the QEMU process
 *     fd       decimal       its descriptor of the file (lowest one)
 *     ino      decimal       the file's inode number
 *     st_dev   MAJ:MIN       the file system's device (stat's st_dev)
 *     dev      MAJ:MIN       the whole disk the host block events name
 *                            (st_dev's disk when st_dev is a partition)
 *     start    decimal       byte of st_dev on dev (partition start; 0)
 *     logical  decimal       the extent's file offset (bytes)
 *     physical decimal       ... and its byte on st_dev
 *     length   decimal       bytes
 *     flags    0x hex        FIEMAP_EXTENT_* flags
 *   fd lines (when = "fd"): the same process has the same file (ino,
 *   st_dev) open at another descriptor, fd; logical .. flags are 0
 */
#ifndef VT_EXTENTS_H
#define VT_EXTENTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define VT_EXTENTS_MAGIC	"# vmtrace-extents 1"
#define VT_EXTENTS_FILE		"extents.tsv"

/* the flags of an extent whose physical bytes are not (yet) where the
 * data is, or not the data (linux/fiemap.h's values) */
#define VT_FIEMAP_UNKNOWN	0x00000002u
#define VT_FIEMAP_DELALLOC	0x00000004u
#define VT_FIEMAP_ENCODED	0x00000008u
#define VT_FIEMAP_NOT_ALIGNED	0x00000100u
#define VT_FIEMAP_DATA_INLINE	0x00000200u
#define VT_FIEMAP_DATA_TAIL	0x00000400u
#define VT_FIEMAP_UNWRITTEN	0x00000800u
#define VT_EXTENT_UNMAPPABLE	(VT_FIEMAP_UNKNOWN | VT_FIEMAP_DELALLOC | VT_FIEMAP_ENCODED | \
				 VT_FIEMAP_NOT_ALIGNED | VT_FIEMAP_DATA_INLINE | \
				 VT_FIEMAP_DATA_TAIL | VT_FIEMAP_UNWRITTEN)

struct vt_extent {
	uint8_t end;		/* 0: read at the start, 1: at the end */
	uint8_t alias;		/* an fd line: @fd is another descriptor of the
				 * file (@pid, @ino, @st_dev), no extent */
	int32_t pid, fd;
	uint64_t ino;
	uint32_t st_dev, dev;	/* kernel dev_t: major << 20 | minor */
	uint64_t start;		/* byte of st_dev on dev */
	uint64_t logical, physical, length;
	uint32_t flags;
};

/* The kernel's dev_t (as block events carry it) of @major, @minor. */
static inline uint32_t vt_kdev(unsigned major, unsigned minor)
{
	return (uint32_t)major << 20 | (minor & 0xfffff);
}

/* Write the magic line and the column header. -1 on a write error. */
int vt_extents_write_header(FILE *fp);
/* Write one extent line (an fd line when @e->alias). -1 on a write error. */
int vt_extents_write(FILE *fp, const struct vt_extent *e);

/* Read @path: *@out (malloc'd, *@n entries).  A missing file is no
 * extents (0, *@n = 0); -1 with the message set on a bad line or file. */
int vt_extents_read(const char *path, struct vt_extent **out, size_t *n);

#endif
