/*
 * td_common_fields.h - for the tests that write event formats (the
 * trace.dat unit tests, tests/align's fixture generators): the common
 * fields every event's format starts with, as the kernel's format files
 * read.
 */
#ifndef VT_TESTS_TD_COMMON_FIELDS_H
#define VT_TESTS_TD_COMMON_FIELDS_H

#define COMMON_FIELDS \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"

#endif
