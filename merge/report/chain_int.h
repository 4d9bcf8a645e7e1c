/*
 * chain_int.h - what the files of the I/O chain analyser share
 * (merge/report/chain*.c only; its contract is report.h): the analyser's
 * state (struct report) and its containers.
 *
 * The analyser's files, one concern each:
 *   chain.c         the chain model and the stream: report_new/free and
 *                   report_feed (per event, in time order)
 *   chain_finish.c  after the stream: the host and irq links, the
 *                   statistics (report_finish)
 *   chain_query.c   the read side the text/HTML/SQLite outputs use
 *   chain_hmap.c    the containers: growable vectors, the u64 map
 */
#ifndef REPORT_CHAIN_INT_H
#define REPORT_CHAIN_INT_H

#include <stddef.h>
#include <stdint.h>
#include "report.h"

#define CHAIN_NONE		(-1)

/* u64 -> u32 open-addressing map (key 0 is reserved: keys are stored +1) */
struct chain_hmap {
	uint64_t *k;
	uint32_t *v;
	size_t cap, n;
};

struct frame {
	uint64_t ts;
	uint64_t sys_at_begin;
	uint32_t name;
	int32_t sys_head;
	uint8_t is_exit;
};

/* What a thread is to the chain analyser (struct tstate.kind). */
enum { TS_UNKNOWN, TS_QEMU, TS_OTHER };

struct tstate {
	int32_t open_sys;	/* guest: syscall record, CHAIN_NONE */
	uint64_t host_enter;	/* host: open syscall entry, 0 none */
	uint32_t host_name;
	uint8_t host_io;	/* 0, or the syscall's direction ('R', 'W', ...) */
	uint8_t host_has_off;
	int64_t host_fd;
	uint64_t host_off, host_len;
	uint8_t host_bios;	/* host: bios queued in the open submission */
	int32_t uring_last;	/* host: hostio index of the io_uring operation
				 * it submitted last, until its bio; CHAIN_NONE */
	uint8_t kind;		/* TS_* (0: not known yet) */
	uint64_t sys_total_ns;	/* time in syscalls (attributed to this track) */
	struct frame *fr;
	uint32_t nfr, capfr;
};

struct kick { uint64_t ts; uint64_t addr; int32_t vcpu, tid; };
/* an injection: kind 0 kvm_msi_set_irq (addr, data), 1 kvm_set_irq (data =
 * gsi), 2 kvm_inj_virq (data = vector) */
struct inj { uint64_t ts, addr, data; int32_t tid; uint8_t kind; };
struct hostio {
	struct report_hostio p;
	uint64_t phys;		/* a bio's: its disk byte (p.off may be the file's) */
	uint64_t claimed;	/* bytes of requests it was given (exclusivity) */
	uint8_t rmw_read;	/* given as the read of a read-modify-write */
};
/* a guest device's learned offset rule */
struct devmap { uint32_t machine, dev; int64_t fd, delta; int ok; };
/* an image file's extent on a host disk (extents.tsv, chain_extents.c) */
struct extmap {
	uint32_t dev;		/* the disk's kernel dev_t, as block events name it */
	uint64_t pstart, pend;	/* its bytes on that disk */
	uint64_t logical;	/* the file offset of pstart */
	uint64_t ino;
	int64_t fd;		/* QEMU's fd of the file */
	uint8_t bad;		/* 1 not the data (unwritten ...), 2 changed */
};
/* another fd of an image file (extents.tsv's fd lines): @fd of process
 * @pid is @canon, the fd its extents name; @seq: its order of loading */
struct fdalias { int32_t pid; uint32_t seq; int64_t fd, canon; };
struct girq { uint64_t ts; uint32_t machine; int32_t cpu; };
/* machines: a bit per machine of the calls (machine_bit) */
struct fnacc { uint64_t calls, incl, wait, machines; };

#define CHAIN_VEC(T) struct { T *a; size_t n, cap; }

struct report {
	struct merge_tables *tables;	/* the pipeline's: the events' names and tracks */
	uint8_t *cls;		/* by name id */
	uint32_t *sysname;	/* by name id: interned syscall name */
	uint8_t *sysio;		/* by name id: an I/O syscall */
	uint32_t ncap;
	struct tstate *ts;
	uint32_t nts;
	CHAIN_VEC(struct report_req) reqs;
	CHAIN_VEC(struct report_sys) sys;
	CHAIN_VEC(struct kick) kicks;
	CHAIN_VEC(struct inj) injects;
	CHAIN_VEC(struct hostio) hostio;
	CHAIN_VEC(uint32_t) hlinks;	/* per request host_first.. : hostio indexes */
	CHAIN_VEC(struct devmap) devs;
	struct chain_hmap uring;	/* io_uring user_data -> hostio index in flight */
	struct chain_hmap bios;	/* host (dev, sector) -> hostio index of a queued
				 * bio not yet completed */
	CHAIN_VEC(struct extmap) ext;	/* sorted by (dev, pstart), disjoint */
	CHAIN_VEC(struct fdalias) fdalias;
	uint64_t bio_ext[3];	/* QEMU's bios on an extents' disk: mapped to
				 * file offsets, in unmappable extents, outside */
	CHAIN_VEC(uint32_t) bdevs;	/* host block devices of QEMU's bios:
					 * fd REPORT_BDEV_FD + index */
	int have_uring;		/* io_uring tracepoints seen: io_uring_enter is not the I/O */
	int inj_kind;		/* the injection kind used (lowest seen) */
	CHAIN_VEC(struct girq) irqs;
	CHAIN_VEC(struct report_exit) exits;
	CHAIN_VEC(struct report_fn) fnlist;
	struct fnacc *fns;	/* by name id */
	uint32_t fncap;
	struct chain_hmap pending;	/* (machine, dev, sector) -> first pending request */
	struct chain_hmap pytid;	/* guest tid -> track with function slices */
	struct chain_hmap exitmap;	/* (vcpu, name) -> exits index */
	uint32_t k_dev, k_sector, k_nr_sector, k_rwbs, k_name, k_id, k_port;
	uint32_t k_fd, k_pos, k_count, k_pos_l, k_ret, k_rw, k_type, k_gpa, k_address,
		 k_data, k_vector, k_gsi, k_user_data, k_opcode, k_res, k_offset, k_len;
	uint64_t events;
	int all_calls;		/* report_new's: the critical path's headline
				 * keeps start-up frames and helper processes */
	uint64_t *samples[REPORT_NR_STAGES];
	size_t nsamples[REPORT_NR_STAGES];
	struct report_pct pct[REPORT_NR_STAGES];
	uint32_t *slow;
	int have_exit_slices;
	uint64_t sys_machines;	/* a bit per machine with syscall events */
	int oom;
	struct crit *crit;	/* states and critical path (crit.h), or NULL */
};

/* chain_extents.c: load @dir's extents.tsv (none: nothing); 0 or -1 with
 * the message set. */
int chain_extents_load(struct report *r, const char *dir);
/* The file (QEMU's *@fd) and offset *@off of @len disk bytes at @byte of
 * block device @dev (kernel dev_t): 1, else 0 (counted in bio_ext). */
int chain_extents_map(struct report *r, uint32_t dev, uint64_t byte, uint64_t len,
		      int64_t *fd, uint64_t *off);
/* 1 if @fd is an image file's fd in extents.tsv (the fd of mapped bios) */
int chain_extents_fd(const struct report *r, int64_t fd);
/* QEMU process @pid's @fd as the extents name its file: another fd of
 * the same image file is the fd of its extents; any other, itself */
int64_t chain_extents_canon(const struct report *r, int32_t pid, int64_t fd);

/* The operation letter of a block layer rwbs string (chain.c). */
char report_rwbs_op(const char *rwbs);

/* Whether kvm_pio / kvm_mmio / kvm_fast_mmio event @ev can be a device
 * notify (a kick; chain.c): 1 with its port or address in *@addr, else 0
 * (a read, a platform port, the interrupt controllers' MMIO).  The one
 * rule of the chains and of the critical path. */
int chain_kick_addr(const struct report *r, const struct merge_event *ev, uint64_t *addr);

/* Double the vector *@a of *@cap elements of @elem bytes (lib/grow.h; the
 * new elements zero).  0, or -1 with the message set. */
int chain_vec_grow_slow(void **a, size_t *cap, size_t elem);
/* Make room for element @n of that vector (inline: the common case is a
 * push with room left). */
static inline int chain_vec_grow(void **a, size_t *cap, size_t n, size_t elem)
{
	if (n < *cap)
		return 0;
	return chain_vec_grow_slow(a, cap, elem);
}
/* A new last element of vector @v of report @r, or NULL (r->oom set). */
#define CHAIN_VEC_PUSH(r, v) (chain_vec_grow((void **)&(v).a, &(v).cap, (v).n, sizeof(*(v).a)) ? \
			((r)->oom = 1, (typeof((v).a))NULL) : &(v).a[(v).n++])

/* The value slot of @key in @h (created, holding UINT32_MAX, with
 * @create); NULL when absent (or out of memory). */
uint32_t *chain_hmap_slot(struct chain_hmap *h, uint64_t key, int create);
/* Free @h's storage. */
void chain_hmap_free(struct chain_hmap *h);

/* A 64-bit hash finaliser (murmur3's): the map's and request keys'. */
static inline uint64_t chain_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

/* The numeric argument @key of @ev into *@out: 0, or -1 when absent. */
static inline int arg_u64(const struct merge_event *ev, uint32_t key, uint64_t *out)
{
	const struct merge_arg *a = merge_event_arg(ev, key);

	if (!a || a->type == MERGE_ARG_STR)
		return -1;
	*out = a->v.u;
	return 0;
}

/* The string argument @key of @ev (interned), MERGE_NO_STR when absent. */
static inline uint32_t arg_str(const struct merge_event *ev, uint32_t key)
{
	const struct merge_arg *a = merge_event_arg(ev, key);

	return a && a->type == MERGE_ARG_STR ? a->v.str : MERGE_NO_STR;
}

/* 1 if request @q has link @link. */
static inline int chain_has(const struct report_req *q, int link)
{
	return !!(q->mask & (1u << link));
}

#endif
