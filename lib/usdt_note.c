/*
 * usdt_note.c - reading the SystemTap SDT notes (USDT markers) of an ELF file
 * and turning a marker's argument string into uprobe fetch args
 * (lib/usdt_note.h).  A format helper on libc and lib/elfread.c only, for the
 * recorder's CPython probes (host/usdt_probes.c: `vmtrace record
 * --python`, `vmtrace top --python`).  May allocate; any thread.
 *
 * A note (owner "stapsdt", type 3) carries, little-endian:
 *   off size
 *     0    8  pc: link-time address of the marker's nop
 *     8    8  base: link-time address of .stapsdt.base (prelink fix-up)
 *    16    8  semaphore: link-time address of a 2-byte counter, or 0
 *    24    -  provider\0 name\0 args\0
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "elfread.h"
#include "err.h"
#include "usdt_note.h"

#define STAPSDT_NOTE_TYPE	3
#define STAPSDT_FIXED		24

struct read_ctx {
	const struct vt_elf *elf;
	const char *provider;
	struct vt_usdt_probe *out;
	int max;
	int nr;
	uint64_t base_addr;	/* address of .stapsdt.base in this file */
	int have_base;
};

static int vaddr_to_off(const struct vt_elf *e, uint64_t vaddr, uint64_t *off)
{
	struct vt_elf_load l;

	for (int i = 0; !vt_elf_load(e, i, &l); i++) {
		if (vaddr >= l.vaddr && vaddr < l.vaddr + l.memsz) {
			*off = vaddr - l.vaddr + l.offset;
			return 0;
		}
	}
	return -1;
}

static int copy_str(char *dst, size_t len, const char **p, const char *end)
{
	size_t n = strnlen(*p, end - *p);

	if (*p + n >= end || n >= len)
		return -1;
	memcpy(dst, *p, n + 1);
	*p += n + 1;
	return 0;
}

static int note_cb(void *arg, const struct vt_elf_note *n)
{
	struct read_ctx *c = arg;
	struct vt_usdt_probe *p;
	const char *s, *end;
	uint64_t pc, base, sem;

	if (n->type != STAPSDT_NOTE_TYPE || strcmp(n->name, "stapsdt"))
		return 0;
	if (n->descsz < STAPSDT_FIXED + 3)
		return vt_err_set("%s: note at offset %llu: SDT note too short",
				  vt_elf_path(c->elf), (unsigned long long)n->offset);
	memcpy(&pc, n->desc, 8);
	memcpy(&base, n->desc + 8, 8);
	memcpy(&sem, n->desc + 16, 8);
	if (c->nr >= c->max)
		return 0;
	p = &c->out[c->nr];
	memset(p, 0, sizeof(*p));
	s = (const char *)n->desc + STAPSDT_FIXED;
	end = (const char *)n->desc + n->descsz;
	if (copy_str(p->provider, sizeof(p->provider), &s, end) ||
	    copy_str(p->name, sizeof(p->name), &s, end) ||
	    copy_str(p->args, sizeof(p->args), &s, end))
		return vt_err_set("%s: note at offset %llu: bad SDT strings",
				  vt_elf_path(c->elf), (unsigned long long)n->offset);
	if (c->provider && strcmp(p->provider, c->provider))
		return 0;
	if (c->have_base && base != c->base_addr) {
		pc += c->base_addr - base;
		if (sem)
			sem += c->base_addr - base;
	}
	p->pc_vaddr = pc;
	p->sem_vaddr = sem;
	if (vaddr_to_off(c->elf, pc, &p->pc_off))
		return vt_err_set("%s: marker %s:%s at 0x%llx is in no loaded segment",
				  vt_elf_path(c->elf), p->provider, p->name,
				  (unsigned long long)pc);
	if (sem && vaddr_to_off(c->elf, sem, &p->sem_off))
		return vt_err_set("%s: semaphore of %s:%s at 0x%llx is in no loaded segment",
				  vt_elf_path(c->elf), p->provider, p->name,
				  (unsigned long long)sem);
	c->nr++;
	return 0;
}

int vt_usdt_probes_read(const char *path, const char *provider, struct vt_usdt_probe *out, int max)
{
	struct read_ctx c = { .provider = provider, .out = out, .max = max };
	struct vt_elf_section sec;
	struct vt_elf *e;
	int ret;

	e = vt_elf_open(path);
	if (!e)
		return -1;
	c.elf = e;
	/*
	 * Prelinked files moved .stapsdt.base: the note's base is the link
	 * address, the section's the actual one; markers move by the
	 * difference.  With no prelink the two are equal.
	 */
	if (!vt_elf_section(e, ".stapsdt.base", &sec)) {
		c.have_base = 1;
		c.base_addr = sec.addr;
	}
	ret = vt_elf_notes(e, ".note.stapsdt", note_cb, &c);
	vt_elf_close(e);
	return ret ? -1 : c.nr;
}

/* Kernel pt_regs name of an x86-64 register operand ("rax", "eax", "r12d"). */
static const char *reg_name(const char *r, char *buf, size_t len)
{
	static const struct { const char *a, *b, *c, *d, *kn; } regs[] = {
		{ "rax", "eax", "ax", "al", "ax" }, { "rbx", "ebx", "bx", "bl", "bx" },
		{ "rcx", "ecx", "cx", "cl", "cx" }, { "rdx", "edx", "dx", "dl", "dx" },
		{ "rsi", "esi", "si", "sil", "si" }, { "rdi", "edi", "di", "dil", "di" },
		{ "rbp", "ebp", "bp", "bpl", "bp" }, { "rsp", "esp", "sp", "spl", "sp" },
		{ "rip", "eip", "ip", "ip", "ip" },
	};
	int n;

	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		if (!strcmp(r, regs[i].a) || !strcmp(r, regs[i].b) ||
		    !strcmp(r, regs[i].c) || !strcmp(r, regs[i].d))
			return regs[i].kn;
	if (r[0] == 'r' && isdigit((unsigned char)r[1])) {
		n = atoi(r + 1);
		if (n >= 8 && n <= 15) {
			snprintf(buf, len, "r%d", n);
			return buf;
		}
	}
	return NULL;
}

/* One operand "SIZE@OPERAND" to a fetch arg body (without name/type). */
static int one_fetch(const char *op, int is_string, char *out, size_t len, char *type, size_t tlen)
{
	char rbuf[8], regbuf[16];
	const char *at = strchr(op, '@'), *kn;
	long size, disp = 0;
	char *end;

	if (!at)
		return vt_err_set("SDT operand '%s' has no size", op);
	size = strtol(op, &end, 10);
	if (end != at || size == 0 || labs(size) > 8)
		return vt_err_set("SDT operand '%s' has a bad size", op);
	snprintf(type, tlen, "%c%ld", size < 0 ? 's' : 'u', labs(size) * 8);
	op = at + 1;
	if (is_string)
		snprintf(type, tlen, "string");
	if (op[0] == '$') {		/* immediate */
		if (is_string)
			return vt_err_set("SDT operand '%s': immediate cannot be a string", op);
		snprintf(out, len, "\\%s", op + 1);
		return 0;
	}
	if (op[0] != '%') {		/* DISP(%reg) */
		disp = strtol(op, &end, 10);
		if (*end != '(' || end[1] != '%')
			return vt_err_set("SDT operand '%s' is not supported", op);
		op = end + 2;
		snprintf(regbuf, sizeof(regbuf), "%.*s", (int)strcspn(op, ")"), op);
		kn = reg_name(regbuf, rbuf, sizeof(rbuf));
		if (!kn || !strcmp(kn, "ip"))
			return vt_err_set("SDT operand register '%s' is not supported", regbuf);
		if (is_string)
			snprintf(out, len, "+0(%+ld(%%%s))", disp, kn);
		else
			snprintf(out, len, "%+ld(%%%s)", disp, kn);
		return 0;
	}
	snprintf(regbuf, sizeof(regbuf), "%s", op + 1);
	kn = reg_name(regbuf, rbuf, sizeof(rbuf));
	if (!kn)
		return vt_err_set("SDT operand register '%s' is not supported", regbuf);
	if (is_string)
		snprintf(out, len, "+0(%%%s)", kn);
	else
		snprintf(out, len, "%%%s", kn);
	return 0;
}

static int in_list(const char *s, const char *const *list)
{
	for (; list && *list; list++)
		if (!strcmp(s, *list))
			return 1;
	return 0;
}

int vt_usdt_fetchargs(const char *stap_args, const char *const *names,
		   const char *const *string_names, char *out, size_t len)
{
	char args[VT_USDT_ARGS_MAX], body[128], type[16];
	char *save = NULL, *tok;
	size_t used = 0;
	int i = 0;

	if (snprintf(args, sizeof(args), "%s", stap_args) >= (int)sizeof(args))
		return vt_err_set("SDT argument string too long");
	out[0] = 0;
	for (tok = strtok_r(args, " ", &save); tok && names[i]; tok = strtok_r(NULL, " ", &save), i++) {
		int n;

		if (!names[i][0])
			continue;
		if (one_fetch(tok, in_list(names[i], string_names), body, sizeof(body),
			      type, sizeof(type)))
			return -1;
		n = snprintf(out + used, len - used, "%s%s=%s:%s", used ? " " : "",
			     names[i], body, type);
		if ((size_t)n >= len - used)	/* snprintf of strings: n >= 0 */
			return vt_err_set("uprobe fetch args too long");
		used += n;
	}
	if (names[i])
		return vt_err_set("SDT marker has fewer arguments than expected (%d)", i);
	return 0;
}
