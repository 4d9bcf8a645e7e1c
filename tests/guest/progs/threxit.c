/*
 * threxit.c - test program: a thread that calls pthread_exit() three
 * calls deep, leaving its frames unfinished; main continues after it.
 */
#include <pthread.h>
#include <stdio.h>

void quit_here(void)
{
	pthread_exit(NULL);
}

void inner(void)
{
	quit_here();
}

void *worker(void *arg)
{
	inner();
	return NULL;
}

void after(void)
{
	printf("after\n");
}

int main(void)
{
	pthread_t th;

	pthread_create(&th, NULL, worker, NULL);
	pthread_join(th, NULL);
	after();
	return 0;
}
