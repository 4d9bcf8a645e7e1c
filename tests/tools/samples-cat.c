/*
 * samples-cat.c - test helper: read a samples.tsv with lib/samples.c and
 * print "STACK" per sample, so a test can compare the reader's view of a
 * real sampler output with samples.folded.  Exit 1 with the reader's
 * message on a bad file.
 */
#include <stdio.h>
#include "err.h"
#include "samples.h"

int main(int argc, char **argv)
{
	struct vt_samples *s;
	struct vt_sample x;
	int r;

	if (argc != 2) {
		fprintf(stderr, "usage: samples-cat FILE\n");
		return VT_EXIT_USAGE;
	}
	s = vt_samples_open(argv[1]);
	if (!s) {
		vt_err_print("samples-cat");
		return VT_EXIT_FAIL;
	}
	while ((r = vt_samples_next(s, &x)) == 1)
		printf("%s\n", x.stack);
	if (r < 0)
		vt_err_print("samples-cat");
	vt_samples_close(s);
	return r < 0 ? VT_EXIT_FAIL : VT_EXIT_OK;
}
