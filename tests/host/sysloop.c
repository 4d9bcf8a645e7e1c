/*
 * sysloop.c - benchmark generator: a tight loop of getppid() system calls
 * (one syscalls:sys_enter_getppid + sys_exit_getppid pair each), run for a
 * given number of calls or seconds.  Prints calls made and their rate.
 * Usage: sysloop CALLS  |  sysloop -t SECONDS
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SYSLOOP_BATCH	1024

static double sysloop_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	unsigned long long n = 0, max = 0;
	double secs = 0, t0;

	if (argc == 3 && !strcmp(argv[1], "-t"))
		secs = atof(argv[2]);
	else if (argc == 2)
		max = strtoull(argv[1], NULL, 10);
	else {
		fprintf(stderr, "usage: sysloop CALLS | sysloop -t SECONDS\n");
		return 2;
	}
	t0 = sysloop_now();
	for (;;) {
		for (int i = 0; i < SYSLOOP_BATCH; i++)
			syscall(SYS_getppid);
		n += SYSLOOP_BATCH;
		if (max && n >= max)
			break;
		if (secs && sysloop_now() - t0 >= secs)
			break;
	}
	printf("calls %llu rate %.0f\n", n, n / (sysloop_now() - t0));
	return 0;
}
