/*
 * loop.c - benchmark program: N calls of a tiny traced function (built
 * with -pg), so the cost per traced call (entry + exit) can be measured.
 */
#include <stdio.h>
#include <stdlib.h>

static volatile long sink;

void tiny(long i)
{
	sink += i;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000000;

	for (long i = 0; i < n; i++)
		tiny(i);
	printf("%ld\n", sink);
	return 0;
}
