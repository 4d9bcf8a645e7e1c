/*
 * kvm_formats.h - for the fixture generators of tests/align (mkfixture,
 * mktcpair): the common fields of every event and the formats of
 * kvm_entry (id 70), kvm_exit (id 71) and kvm_pio (id 110), as the
 * kernel's format files read; each generator adds the events only it
 * writes.
 */
#ifndef VT_TESTS_KVM_FORMATS_H
#define VT_TESTS_KVM_FORMATS_H

#include "../td_common_fields.h"	/* COMMON_FIELDS */

static const char fmt_entry[] = "name: kvm_entry\nID: 70\nformat:\n" COMMON_FIELDS
	"\tfield:unsigned int vcpu_id;\toffset:8;\tsize:4;\tsigned:0;\n\n"
	"print fmt: \"vcpu %u\", REC->vcpu_id\n";
static const char fmt_exit[] = "name: kvm_exit\nID: 71\nformat:\n" COMMON_FIELDS
	"\tfield:unsigned int exit_reason;\toffset:8;\tsize:4;\tsigned:0;\n\n"
	"print fmt: \"reason %u\", REC->exit_reason\n";
static const char fmt_pio[] = "name: kvm_pio\nID: 110\nformat:\n" COMMON_FIELDS
	"\tfield:unsigned int rw;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned int port;\toffset:12;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned int size;\toffset:16;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned int count;\toffset:20;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned int val;\toffset:24;\tsize:4;\tsigned:0;\n\n"
	"print fmt: \"pio_%s at 0x%x size %d count %d val 0x%x\", REC->rw ? \"write\" : \"read\", "
	"REC->port, REC->size, REC->count, REC->val\n";

#endif
