/*
 * proc.h - small /proc and debugfs readers shared by the recorder
 * (host/record.c) and the KVM facts collector (host/kvmfacts.c).  Main
 * thread of the recorder; blocking reads of small files, no allocation.
 */
#ifndef HOST_PROC_H
#define HOST_PROC_H

#include <stddef.h>
#include <sys/types.h>

/* Read the small text file @path into @buf (@len bytes with the NUL),
 * trailing newlines removed.  0, or -1 with @buf "" when the file is
 * absent, unreadable or empty. */
int host_proc_read_small(const char *path, char *buf, size_t len);

/* Call @fn(@arg, tid) for every thread of process @pid (/proc/PID/task).
 * 0, or -1 when the process is gone or /proc cannot be read. */
int host_proc_each_task(pid_t pid, void (*fn)(void *arg, pid_t pid, pid_t tid), void *arg);

/* The CPU vendor of this machine as /proc/cpuinfo's first vendor_id
 * gives it ("GenuineIntel", "AuthenticAMD", ...) into @buf.  0, or -1 with
 * @buf "" when /proc/cpuinfo has none. */
int host_proc_cpu_vendor(char *buf, size_t len);

#endif
