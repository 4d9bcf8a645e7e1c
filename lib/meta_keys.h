/*
 * meta_keys.h - the names of the vmtrace.meta keys (lib/meta.h includes
 * it): the one place each is spelt.  Code passes these to vt_meta_get*(),
 * vt_meta_set*() and vt_meta_del(), never a string literal
 * (tests/lib/meta_keys.py checks it, and that every key read has a writer
 * and every key written a row in docs/format/meta.md).
 *
 * VT_MK_x is a fixed key; VT_MK_FMT_x a printf format building a key with
 * numbers in it (the arguments' types are given: -Wformat checks them).
 * Grouped by who writes them, in the order of docs/format/meta.md's tables.
 */
#ifndef VT_META_KEYS_H
#define VT_META_KEYS_H

/* Standard keys: every producer (lib/tsc.c: tsc.hz, tsc.hz_source) */
#define VT_MK_FORMAT		"format"	/* what the directory holds */
#define VT_MK_PRODUCER		"producer"	/* the program that wrote the data */
#define VT_MK_DOMAIN		"domain"	/* whose TSC the raw stamps are: host, guest */
#define VT_MK_VM		"vm"		/* (user-given) the VM of a guest directory */
#define VT_MK_CLOCK		"clock"		/* unit of the data's stamps: tsc or ns */
#define VT_MK_TSC_HZ		"tsc.hz"	/* the TSC frequency of domain, Hz */
#define VT_MK_TSC_HZ_SOURCE	"tsc.hz_source"	/* how tsc.hz was found */
#define VT_MK_HOSTNAME		"hostname"	/* uname -n of the recording machine */
#define VT_MK_KERNEL		"kernel"	/* uname -sr of that machine */
#define VT_MK_CMDLINE		"cmdline"	/* the traced or recording command line */
#define VT_MK_CONVERT_FROM	"convert.from"	/* vmtrace convert: the tsc directory copied */
#define VT_MK_UFTRACE_NS_HZ	"uftrace.ns_hz"	/* finished: <TID>.dat in ns at this Hz, raw in .tsc */

/* Tracer keys: the Python tracer (guest/python) */
#define VT_MK_PYTHON_VERSION	"python.version"	/* sys.version */
#define VT_MK_PYTHON_VERSION_HEX "python.version_hex"	/* PY_VERSION_HEX, 0x%08lx */
#define VT_MK_PYTHON_BACKEND	"python.backend"	/* monitoring or profile */
#define VT_MK_PYTHON_C_CALLS	"python.c_calls"	/* 1: calls of C functions recorded */
#define VT_MK_PYTHON_MAX_DEPTH	"python.max_depth"	/* --max-depth, 0 none */
#define VT_MK_PYTHON_LINES	"python.lines"		/* --lines: the modules' prefixes */
#define VT_MK_PYTHON_PID	"python.pid"		/* the traced process */
#define VT_MK_PYTHON_SID	"python.sid"		/* its session id, hex */
#define VT_MK_PYTHON_LOST	"python.lost"		/* records lost */

/* Tracer keys: the mcount runtime and its commands (guest/mcount) */
#define VT_MK_MCOUNT_DEPTH	"mcount.depth"		/* vmtrace run --depth */
#define VT_MK_MCOUNT_ENTRIES_ONLY "mcount.entries_only"	/* --entries-only, 0/1 */
#define VT_MK_MCOUNT_BUFSIZE	"mcount.bufsize"	/* --bufsize, bytes */
#define VT_MK_MCOUNT_LOST	"mcount.lost"		/* records lost */
#define VT_MK_MCOUNT_SKIPPED	"mcount.skipped"	/* calls past the depth limit */
#define VT_MK_MARKERS		"markers"		/* sync markers of a debugcon dump */

/* Recorder keys (host/record*.c) */
#define VT_MK_TRACE_CLOCK	"trace_clock"		/* tracefs clock: x86-tsc */
#define VT_MK_KERNEL_VERSION	"kernel.version"	/* uname -v */
#define VT_MK_MACHINE		"machine"		/* uname -m */
#define VT_MK_CPU_VENDOR	"cpu.vendor"		/* /proc/cpuinfo's first vendor_id */
#define VT_MK_RECORD_BUFFER_KB	"record.buffer_kb"	/* ring buffer per CPU, KB */
#define VT_MK_RECORD_PAGE_SIZE	"record.page_size"	/* ring-buffer page size, bytes */
#define VT_MK_RECORD_TRACEDAT	"record.tracedat"	/* trace.dat's format: v7-zstd, v6 */
#define VT_MK_RECORD_NR_CPUS	"record.nr_cpus"	/* CPUs recorded */
#define VT_MK_RECORD_KALLSYMS	"record.kallsyms"	/* auto (when an event prints a kernel
							 * symbol) or always */
#define VT_MK_RECORD_KALLSYMS_BYTES "record.kallsyms_bytes" /* /proc/kallsyms bytes in
							 * trace.dat (0: none needed) */
#define VT_MK_RECORD_EVENTS	"record.events"		/* the events enabled */
#define VT_MK_RECORD_PIDS	"record.pids"		/* tasks whose syscalls were kept */
#define VT_MK_RECORD_TGIDS	"record.tgids"		/* their processes, same order */
#define VT_MK_RECORD_START_TSC_HOST "record.start_tsc_host" /* TSC before tracing on */
#define VT_MK_RECORD_STOP_TSC_HOST "record.stop_tsc_host" /* TSC after tracing off */
#define VT_MK_RECORD_COMMAND_EXIT "record.command_exit"	/* how the traced command ended */
#define VT_MK_RECORD_COMMAND_PID "record.command_pid"	/* the pid of the command
							 * `record -- CMD` started */
#define VT_MK_RECORD_CPU_MS	"record.cpu_ms"		/* the recorder's CPU time, ms */
#define VT_MK_RECORD_DISCARDED	"record.discarded"	/* other tasks' events discarded */
#define VT_MK_RECORD_DATA_BYTES	"record.data_bytes"	/* ring-buffer page bytes in trace.dat */
#define VT_MK_FMT_EVENTS_CPU	"events.cpu%u"		/* (unsigned cpu) data events */
#define VT_MK_EVENTS_TOTAL	"events.total"		/* data events, all CPUs */
#define VT_MK_FMT_LOST_CPU	"lost.cpu%u"		/* (unsigned cpu) events lost */
#define VT_MK_LOST_TOTAL	"lost.total"		/* events lost, all CPUs */
#define VT_MK_FMT_LOST_PAGES_CPU "lost_pages.cpu%u"	/* (unsigned cpu) pages after a loss */
#define VT_MK_LOST_PAGES_TOTAL	"lost_pages.total"	/* such pages, all CPUs */
#define VT_MK_FMT_OVERRUN_CPU	"overrun.cpu%u"		/* (unsigned cpu) stats' overrun */
#define VT_MK_FMT_DROPPED_CPU	"dropped.cpu%u"		/* (unsigned cpu) stats' dropped events */
#define VT_MK_RECORD_RECOVERED	"record.recovered"	/* 1: finished by record --finish */
#define VT_MK_RECORD_RECOVER_REASON "record.recover_reason" /* why, in words */
#define VT_MK_RECORD_RECOVER_INSTANCE "record.recover_instance" /* the instance's pages' fate */
#define VT_MK_RECORD_SALVAGED_BY "record.salvaged_by"	/* (state) pid of the reaping recorder */
#define VT_MK_RECORD_REGISTRY	"record.registry"	/* (state) 1: a /run/vmtrace entry */
#define VT_MK_RECORD_PID	"record.pid"		/* (state) the recorder's pid */
#define VT_MK_RECORD_INSTANCE	"record.instance"	/* (state) its tracefs instance */
#define VT_MK_RECORD_TRACEFS	"record.tracefs"	/* (state) the tracefs mount used */
#define VT_MK_RECORD_BOOT_ID	"record.boot_id"	/* (state) the boot it ran in */

/* KVM facts (host/kvmfacts.c; the thread list through lib/meta_kvm.c) */
#define VT_MK_KVM_VCPU_THREADS	"kvm.vcpu_threads"	/* vCPU threads found */
#define VT_MK_FMT_THREAD_TID	"kvm.thread%llu.tid"	/* (unsigned long long j) its tid */
#define VT_MK_FMT_THREAD_PID	"kvm.thread%llu.pid"	/* (unsigned long long j) its process */
#define VT_MK_FMT_THREAD_VCPU	"kvm.thread%llu.vcpu"	/* (unsigned long long j) its vCPU */
#define VT_MK_FMT_THREAD_COMM	"kvm.thread%llu.comm"	/* (unsigned long long j) its name */
#define VT_MK_KVM_VMS		"kvm.vms"		/* VMs found in debugfs */
#define VT_MK_FMT_VM_PID	"kvm.vm%d.pid"		/* (int vm) QEMU's pid */
#define VT_MK_FMT_VM_DEBUGFS	"kvm.vm%d.debugfs"	/* (int vm) its debugfs directory */
#define VT_MK_FMT_VM_VCPUS	"kvm.vm%d.vcpus"	/* (int vm) vCPU directories seen */
/* (int vm, int vcpu) readings of vcpuN/tsc-offset kept */
#define VT_MK_FMT_VCPU_TSC_OFFSET_NR	"kvm.vm%d.vcpu%d.tsc_offset.nr"
/* (int vm, int vcpu, int k) the k-th: "VALUE TSC WHEN" */
#define VT_MK_FMT_VCPU_TSC_OFFSET	"kvm.vm%d.vcpu%d.tsc_offset.%d"
/* (int vm, int vcpu) readings of vcpuN/tsc-scaling-ratio kept */
#define VT_MK_FMT_VCPU_TSC_RATIO_NR	"kvm.vm%d.vcpu%d.tsc_scaling_ratio.nr"
/* (int vm, int vcpu, int k) the k-th: "VALUE TSC WHEN" */
#define VT_MK_FMT_VCPU_TSC_RATIO	"kvm.vm%d.vcpu%d.tsc_scaling_ratio.%d"
#define VT_MK_KVM_TSC_SCALING_FRAC_BITS "kvm.tsc_scaling_frac_bits" /* the ratio's fraction bits */

/* Given by the user (vmtrace meta DIR KEY=VALUE; docs/align.md's table) */
#define VT_MK_MARKERS_CHARDEV_FD "markers.chardev_fd"	/* fd of the TCG marker chardev */

#endif
