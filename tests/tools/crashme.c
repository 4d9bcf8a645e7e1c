/*
 * crashme.c - test program for tools/gdb/vmtrace.py: two worker threads
 * and the main thread make a few traced calls (far fewer than a buffer
 * holds, so nothing is flushed), then the main thread calls last_words()
 * and crashes (argv[1] == "crash") or says "ready" and waits (argv[1] ==
 * "wait") to be read live by gdb.  Built with -pg.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CALLS 100

static volatile int sink;
static volatile int *volatile nowhere;
static pthread_barrier_t ready;

void worker_step(int i)
{
	sink += i;
}

void main_step(int i)
{
	sink -= i;
}

void last_words(int crash)
{
	if (crash)
		*nowhere = 1;	/* SIGSEGV: the runtime flushes nothing */
}

static void *worker(void *arg)
{
	for (int i = 0; i < CALLS; i++)
		worker_step(i);
	pthread_barrier_wait(&ready);
	for (;;)
		pause();
	return arg;
}

int main(int argc, char **argv)
{
	int crash = argc > 1 && !strcmp(argv[1], "crash");
	pthread_t t[2];

	pthread_barrier_init(&ready, NULL, 3);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < CALLS; i++)
		main_step(i);
	pthread_barrier_wait(&ready);
	if (!crash) {
		printf("ready\n");
		fflush(stdout);
	}
	last_words(crash);
	for (;;)
		pause();
}
