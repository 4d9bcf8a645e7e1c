/*
 * ljmp.c - test program of tests/guest/t-mcount-longjmp.sh: functions
 * left by longjmp.  catcher() sets a jump buffer and calls thrower1(),
 * which calls thrower2(), which calls thrower3(); thrower3() longjmps back
 * to catcher(), leaving three hooked frames whose returns never run.
 * catcher() then calls after_jump() and returns normally; main does it
 * three times, then prints "done".
 */
#include <setjmp.h>
#include <stdio.h>

static jmp_buf env;
static volatile int sink;

void thrower3(void)
{
	sink++;
	longjmp(env, 1);
}

void thrower2(void)
{
	thrower3();
	sink++;
}

void thrower1(void)
{
	thrower2();
	sink++;
}

void after_jump(void)
{
	sink++;
}

void catcher(void)
{
	if (!setjmp(env))
		thrower1();
	after_jump();
}

int main(void)
{
	for (int i = 0; i < 3; i++)
		catcher();
	printf("done\n");
	return 0;
}
