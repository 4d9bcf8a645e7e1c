/*
 * t-merge-chrome.c - merge's Chrome JSON sink (merge/sink_chrome.c) driven
 * through its ops: a counter event (no reader makes one yet; the sink
 * writes Chrome's "C" with the value), and an output whose writes fail
 * (/dev/full) at a new track's metadata and at the close: each fails with
 * the output's message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "err.h"
#include "merge/merge.h"

static struct merge_tables tb;

static void test_counter(const char *path)
{
	static const char want[] =
		"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"
		"{\"ph\":\"M\",\"pid\":10,\"tid\":11,\"name\":\"process_name\",\"args\":{\"name\":\"p\"}},\n"
		"{\"ph\":\"M\",\"pid\":10,\"tid\":11,\"name\":\"thread_name\",\"args\":{\"name\":\"t\"}},\n"
		"{\"ph\":\"C\",\"pid\":10,\"tid\":11,\"ts\":1.500,\"name\":\"queue depth\","
		"\"args\":{\"value\":-3}}\n]}\n";
	uint32_t tr = merge_track_get(&tb, MERGE_MACHINE_HOST, 10, 11, merge_str_intern0(&tb, "p"),
				      merge_str_intern0(&tb, "t"));
	struct merge_event ev = { .ts_ns = 1500, .track = tr, .kind = MERGE_EV_COUNTER,
				  .name = merge_str_intern0(&tb, "queue depth"), .value = -3 };
	void *sk = merge_sink_chrome.open(&tb, path, NULL);
	char buf[1024];
	size_t n = 0;
	FILE *fp;

	CHECK(sk != NULL);
	if (!sk)
		return;
	CHECK(merge_sink_chrome.event(sk, &ev) == 0);
	CHECK(merge_sink_chrome.close(sk) == 0);
	fp = fopen(path, "r");
	if (fp) {
		n = fread(buf, 1, sizeof(buf) - 1, fp);
		fclose(fp);
	}
	buf[n] = 0;
	CHECK_STR(buf, want);
	unlink(path);
}

/* A sink onto /dev/full whose buffer is full but for @room bytes. */
static void *full_sink(size_t room)
{
	void *sk = merge_sink_chrome.open(&tb, "/dev/full", NULL);
	struct merge_out *o = sk;	/* its first member (merge_file_sink_open) */

	if (o) {
		memset(o->buf, ' ', o->cap);
		o->len = o->cap - room;
	}
	return sk;
}

static void test_full(void)
{
	const char *want = "/dev/full: write failed: No space left on device";
	uint32_t tr = merge_track_get(&tb, MERGE_MACHINE_HOST, 20, 21, 0, 0);
	struct merge_event ev = { .ts_ns = 1, .track = tr, .kind = MERGE_EV_INSTANT };
	void *sk;

	if (access("/dev/full", W_OK)) {
		printf("no /dev/full: the failed writes not checked\n");
		return;
	}
	/* a new track's metadata */
	sk = full_sink(100);
	CHECK(sk && merge_sink_chrome.event(sk, &ev) < 0);
	CHECK_STR(vt_err_msg(), want);
	CHECK(!sk || merge_sink_chrome.close(sk) < 0);
	/* the close's end of the array */
	sk = merge_sink_chrome.open(&tb, "/dev/full", NULL);
	CHECK(sk && merge_sink_chrome.event(sk, &ev) == 0);
	if (sk)
		((struct merge_out *)sk)->len = ((struct merge_out *)sk)->cap - 4;
	CHECK(!sk || merge_sink_chrome.close(sk) < 0);
	CHECK_STR(vt_err_msg(), want);
}

int main(void)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/t-merge-chrome.json",
		 getenv("VT_TMP") ? getenv("VT_TMP") : "/tmp");
	test_counter(path);
	test_full();
	merge_tables_free(&tb);
	return check_done();
}
