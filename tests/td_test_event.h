/*
 * td_test_event.h - for the trace.dat unit tests (t-tracedat-write, -full,
 * -corrupt): the format of their test event vt_test (id 1001, one u32
 * seq after the common fields), as the kernel's format files read.
 */
#ifndef VT_TESTS_TD_TEST_EVENT_H
#define VT_TESTS_TD_TEST_EVENT_H

#include "td_common_fields.h"	/* COMMON_FIELDS */

static const char fmt[] =
	"name: vt_test\nID: 1001\nformat:\n" COMMON_FIELDS
	"\tfield:unsigned int seq;\toffset:8;\tsize:4;\tsigned:0;\n\n"
	"print fmt: \"seq=%u\", REC->seq\n";

#endif
