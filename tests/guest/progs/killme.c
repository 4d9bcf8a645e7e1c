/*
 * killme.c - test program: fills more than one trace buffer with calls,
 * says "ready" on stdout, then waits to be killed with SIGKILL.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile int sink;

void tick(int i)
{
	sink += i;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10000;

	for (int i = 0; i < n; i++)
		tick(i);
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
