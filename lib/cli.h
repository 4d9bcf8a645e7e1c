/*
 * cli.h - number parsing for command-line options and environment
 * variables, one set of rules for every vmtrace command and the Linux
 * mcount runtime: decimal, or hexadecimal with a 0x prefix; no sign (but
 * vt_parse_i64's minus), no spaces, no trailing text, no overflow.
 * The parsers are pure functions: no allocation, no error message (the
 * caller names the option in its own).  vt_cli_usage() is the one way a
 * command answers --help and a wrong command line.
 */
#ifndef VT_CLI_H
#define VT_CLI_H

#include <stdint.h>
#include <stdio.h>

/* The lowest TSC frequency an option accepts (Hz): anything below is a
 * typo (kHz or MHz given), not a clock. */
#define VT_CLI_MIN_HZ	1000ULL

/* Parse @s (may be NULL) as an unsigned integer in [@min, @max] into
 * *@out.  0, or -1 (then *@out is untouched). */
int vt_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* Parse @s as a signed integer (a leading '-' allowed) into *@out.
 * 0, or -1 (then *@out is untouched). */
int vt_parse_i64(const char *s, int64_t *out);

/* Parse @s as a size: a number with an optional unit, B, K, M or G
 * (powers of 1024; KB/KiB and the like too, any case), a bare number
 * counting @unit bytes (1024 for every -b: docs/cli.md, Units); the size
 * in bytes in [@min, @max] into *@out.  0, or -1 (*@out untouched). */
int vt_parse_size(const char *s, uint64_t unit, uint64_t min, uint64_t max, uint64_t *out);

/* Parse @s as a duration: a number (a decimal fraction allowed: "0.5")
 * with an optional unit, ms, s or m/min, a bare number counting @unit_ms
 * milliseconds (1 for every -i/--interval: docs/cli.md, Units); the
 * duration in ms, rounded, in
 * [@min, @max] into *@out.  0, or -1 (*@out untouched). */
int vt_parse_ms(const char *s, uint64_t unit_ms, uint64_t min, uint64_t max, uint64_t *out);

/* Parse @s as a TSC frequency in Hz (>= VT_CLI_MIN_HZ) into *@hz.
 * 0, or -1 (then *@hz is untouched). */
int vt_parse_hz(const char *s, uint64_t *hz);
/* The same for a command's --tsc-hz option: on a bad value the message
 * (naming the command, the value and the unit) is printed here.  0, or
 * -1: the caller exits with VT_EXIT_USAGE. */
int vt_cli_tsc_hz(const char *s, uint64_t *hz);

/* A command's answer to -h/--help (@help non-zero: @usage to stdout,
 * returns VT_EXIT_OK) or to a wrong command line (the first line of @usage,
 * its synopsis, and a hint naming --help to stderr, returns VT_EXIT_USAGE).  For `return vt_cli_usage(usage, c == 'h');` at the end
 * of an option switch. */
int vt_cli_usage(void (*usage)(FILE *fp), int help);

#endif
