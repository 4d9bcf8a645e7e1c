/*
 * fuzz-util.h - helpers shared by the libFuzzer targets of tests/fuzz/
 * (our readers open files by path, so each input is put in a file first).
 * Runs on the fuzzer's thread; blocks on a small write to /tmp.
 */
#ifndef FUZZ_UTIL_H
#define FUZZ_UTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

/* Write @size bytes of @data to a new file made from the mkstemp()
 * template @path (rewritten to the file's name): 0 when written, -1 when
 * not (then no file remains).  The caller unlinks @path when done. */
static inline int fuzz_write_temp(const uint8_t *data, size_t size, char *path)
{
	int fd = mkstemp(path);

	if (fd < 0)
		return -1;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		unlink(path);
		return -1;
	}
	close(fd);
	return 0;
}

#endif
