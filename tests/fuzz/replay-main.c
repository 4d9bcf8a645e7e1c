/*
 * replay-main.c - a main() for the libFuzzer targets of tests/fuzz/ without
 * libFuzzer, for the project's tests: linked with one fuzz-<name>.c by the
 * build's own compiler and flags ($(OUT)/fuzz/replay-<name>), it feeds every
 * file named on the command line (a directory: each regular file in it,
 * in name order) to LLVMFuzzerTestOneInput once.  So the corpus runs in
 * the gcc builds too: instrumented by `make coverage`, sanitized by
 * `make test SAN=1`.  Each input is copied to a buffer of exactly its size,
 * as libFuzzer does, so an overread past it is a sanitizer finding.
 * Exit 0 when every input ran, 1 when one could not be read.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Run the target on the file @path: 0, or -1 (message on stderr). */
static int replay_file(const char *path, const struct stat *st)
{
	size_t size = st->st_size, got = 0;
	uint8_t *buf = malloc(size ? size : 1);
	int fd;

	if (!buf) {
		fprintf(stderr, "replay: %s: out of memory (%zu bytes)\n", path, size);
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		free(buf);
		return -1;
	}
	while (got < size) {
		ssize_t n = read(fd, buf + got, size - got);

		if (n <= 0) {
			fprintf(stderr, "replay: %s: %s\n", path,
				n ? strerror(errno) : "shorter than its size");
			close(fd);
			free(buf);
			return -1;
		}
		got += n;
	}
	close(fd);
	LLVMFuzzerTestOneInput(buf, size);
	free(buf);
	return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* Run the target on @path, a file or a directory of files: the number of
 * inputs run, or -1. */
static long replay_path(const char *path)
{
	struct dirent **ents;
	struct stat st;
	long done = 0;
	int n;

	if (stat(path, &st) < 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return replay_file(path, &st) < 0 ? -1 : 1;
	n = scandir(path, &ents, NULL, by_name);
	if (n < 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		char *sub = NULL;

		if (done < 0 || ents[i]->d_name[0] == '.') {
			/* after a failure, or a hidden file: skipped */
		} else if (asprintf(&sub, "%s/%s", path, ents[i]->d_name) < 0) {
			fprintf(stderr, "replay: %s: out of memory\n", path);
			sub = NULL;
			done = -1;
		} else if (stat(sub, &st) == 0 && S_ISREG(st.st_mode)) {
			done = replay_file(sub, &st) < 0 ? -1 : done + 1;
		}
		free(sub);
		free(ents[i]);
	}
	free(ents);
	return done;
}

int main(int argc, char **argv)
{
	long total = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		long n = replay_path(argv[i]);

		if (n < 0)
			return 1;
		total += n;
	}
	printf("%ld inputs replayed\n", total);
	return 0;
}
