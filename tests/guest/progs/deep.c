/*
 * deep.c - test program: recursion far deeper than the shadow stack
 * (run with --depth 8): only the first levels are recorded, balanced.
 */
#include <stdio.h>
#include <stdlib.h>

int recurse(int n)
{
	if (n == 0)
		return 0;
	return recurse(n - 1) + 1;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;

	printf("depth=%d\n", recurse(n));
	return 0;
}
