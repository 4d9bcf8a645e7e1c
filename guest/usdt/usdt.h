/*
 * usdt.h - guest/usdt: `vmtrace top --python`, a live per-function view of
 * an unprepared Python process from CPython's USDT markers.  The markers
 * are read by lib/usdt_note.h and turned into uprobe events by the
 * recorder's host/usdt_probes.h (which `vmtrace record --python` uses
 * too); this folder holds the command only.  Tools only.
 */
#ifndef GUEST_USDT_H
#define GUEST_USDT_H

#include <stdint.h>

/* `vmtrace top --python[=FILE] -p PID ...` (guest/usdt/top.c; cmd_top
 * hands over when it sees --python): returns an exit code. */
int usdt_top_main(int argc, char **argv);

/* top's -i, --interval (both tops): a bare number of ms, as stream's -i;
 * 100 ms..1 day.  Parse @s into *@ms: 0, or -1 with the message printed
 * (tools/cmd_top.c). */
#define TOP_MIN_INTERVAL_MS	100
#define TOP_MAX_INTERVAL_MS	86400000
int top_parse_interval(const char *s, uint64_t *ms);

#endif
