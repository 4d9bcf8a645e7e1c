/*
 * mt.c - test program for the mcount runtime: a fixed call tree in the
 * main thread and in two worker threads, built with -pg, -pg -mfentry and
 * -finstrument-functions.  The expected trees are in tests/guest/*.expect.
 */
#include <pthread.h>
#include <stdio.h>

#define NR_WORKERS 2

static volatile int sink;

int leaf(int x)
{
	sink += x;
	return x + 1;
}

double fleaf(double x)
{
	return x * 2.0;
}

int middle(int x)
{
	int r = leaf(x);

	return leaf(r);
}

void *worker(void *arg)
{
	int id = (int)(long)arg;

	middle(id);
	sink += (int)fleaf(1.5 + id);
	return NULL;
}

int main(void)
{
	pthread_t th[NR_WORKERS];

	middle(10);
	for (int i = 0; i < NR_WORKERS; i++) {
		pthread_create(&th[i], NULL, worker, (void *)(long)i);
		/* one thread at a time: the trees are then fixed per thread */
		pthread_join(th[i], NULL);
	}
	if (fleaf(2.0) != 4.0) {
		printf("float return broken\n");
		return 1;
	}
	printf("sink=%d\n", sink);
	return 0;
}
