/*
 * burst.c - test helper of tests/host/t-record-burst.sh: a command whose
 * first action is a burst of system calls from tasks the recorder has
 * never seen.  On its first instruction the main thread starts a thread
 * and forks a child; the child starts a thread and forks a grandchild;
 * every one of the five tasks writes N times to fd BURST_FD (/dev/null)
 * at once, the i-th write of i bytes (1..N), so a recording's
 * syscalls:sys_enter_write events say which write of which task went
 * missing.  Each task prints "TID ROLE" on stdout (one write, after its
 * burst).  Usage: burst N (fd BURST_FD must be open).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BURST_FD	57
#define BURST_MAX	4096

static char burst_buf[BURST_MAX];
static int burst_n;

static void burst_writes(const char *role)
{
	char line[64];
	int len;

	for (int i = 1; i <= burst_n; i++)
		if (write(BURST_FD, burst_buf, i) != i)
			_exit(3);
	len = snprintf(line, sizeof(line), "%ld %s\n", (long)syscall(SYS_gettid), role);
	if (write(STDOUT_FILENO, line, len) != len)
		_exit(3);
}

static void *burst_thread(void *role)
{
	burst_writes(role);
	return NULL;
}

/* A thread named @thread_role and this task's own burst (@role). */
static void burst_task(const char *role, char *thread_role)
{
	pthread_t t;

	if (pthread_create(&t, NULL, burst_thread, thread_role))
		_exit(4);
	burst_writes(role);
	pthread_join(t, NULL);
}

/* A chain of @depth processes below this one; the last waits @ms, then
 * writes.  Exits (never returns). */
static void burst_chain(int depth, int ms)
{
	int st = 0;

	if (depth > 0) {
		pid_t c = fork();

		if (c < 0)
			_exit(4);
		if (c == 0)
			burst_chain(depth - 1, ms);
		_exit(waitpid(c, &st, 0) == c && WIFEXITED(st) ? WEXITSTATUS(st) : 5);
	}
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
	burst_writes("chain-end");
	_exit(0);
}

int main(int argc, char **argv)
{
	pid_t child, chain = 0;
	int st;

	burst_n = argc == 2 || argc == 4 ? atoi(argv[1]) : 0;
	if (burst_n < 1 || burst_n > BURST_MAX) {
		fprintf(stderr, "usage: burst N [DEPTH MS] (N 1..%d), fd %d open\n", BURST_MAX,
			BURST_FD);
		return 2;
	}
	if (argc == 4) {
		chain = fork();
		if (chain < 0)
			return 4;
		if (chain == 0)
			burst_chain(atoi(argv[2]), atoi(argv[3]));
	}
	child = fork();
	if (child < 0)
		return 4;
	if (child == 0) {
		pid_t g = fork();

		if (g < 0)
			_exit(4);
		if (g == 0) {
			burst_writes("grandchild");
			_exit(0);
		}
		burst_task("child", "child-thread");
		if (waitpid(g, &st, 0) != g || !WIFEXITED(st) || WEXITSTATUS(st))
			_exit(5);
		_exit(0);
	}
	burst_task("main", "main-thread");
	if (waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st))
		return 5;
	if (chain && (waitpid(chain, &st, 0) != chain || !WIFEXITED(st) || WEXITSTATUS(st)))
		return 5;
	return 0;
}
