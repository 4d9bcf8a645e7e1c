/*
 * ext.h - what the files of the CPython extension vmtrace._vmtrace share
 * (guest/python/ext*.c only; the runtime under them is vtpy.h): the
 * backend chosen at build time, the extension's state, the symbol helpers
 * every event uses (inline: the per-event path makes no call) and the
 * functions one file calls in another.
 *
 * The extension's files, one concern each:
 *   ext.c             the module: start/stop/active/trim/rdtsc, PyInit
 *   ext_names.c       symbols: code objects, C callables, lines, imports
 *   ext_events.c      the events both backends share, out of line
 *   ext_monitoring.c  backend: sys.monitoring (PEP 669), 3.12+
 *   ext_profile.c     backend: PyEval_SetProfile/SetTrace, 3.8-3.11
 *   ext_hooks.c       import and gc hooks (both backends)
 * Everything runs with the GIL held.
 */
#ifndef GUEST_PYTHON_EXT_H
#define GUEST_PYTHON_EXT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>
#include <stdint.h>
#include "vtpy.h"

#if PY_VERSION_HEX >= 0x030C0000 && !defined(VTPY_FORCE_PROFILE)
#define VTPY_MONITORING 1
#define VTPY_BACKEND "sys.monitoring"
#else
#define VTPY_MONITORING 0
#define VTPY_BACKEND "setprofile"
#endif

#if PY_VERSION_HEX < 0x030C0000
#define PyUnstable_Code_GetExtra _PyCode_GetExtra
#define PyUnstable_Code_SetExtra _PyCode_SetExtra
#define PyUnstable_Eval_RequestCodeExtraIndex _PyEval_RequestCodeExtraIndex
#endif

/* sys.monitoring tool id PROFILER */
#define VTPY_TOOL_ID	2

struct vtpy_sym {
	char *name;		/* as written to the .sym file */
	char *module;		/* module name for the --lines match */
	unsigned lines_sess;	/* session whose --lines matched, 0 none */
	unsigned decided_sess;	/* session the match was decided in */
};

/* The extension's state (defined in ext.c). */
struct ext_state {
	struct vtpy_sym *syms;
	size_t nr, alloc;
	Py_ssize_t extra_index;
	/* key -> symbol index + 1 for C functions, code-like objects, lines,
	 * imports and gc: pointers or (index << 32 | line) */
	uint64_t *keys;
	uint32_t *vals;
	size_t keytab_size, keytab_used;
	char **prefixes;
	int nr_prefixes;
	int c_calls;
	unsigned sessno;
	int active;
	uint64_t gc_addr[3];
	PyObject *orig_import;
	PyObject *import_hook;
	PyObject *gc_hook;
	PyObject *disable;
	PyObject *modules;	/* sys.modules */
	long line_event;	/* sys.monitoring.events.LINE */
	long hook_events[16];	/* event bits registered, for stop */
	int nr_hook_events;
};
extern struct ext_state ext_st;

/* The general path out of line: the fast callers stay leaf functions. */
#define VTPY_SLOW __attribute__((noinline, cold))

/* ---- symbols (ext_names.c) ---- */

/* A new symbol @name of @module: kept in memory (a later session or fork
 * child writes it again) and appended to the current .sym file.  Its
 * index, or -1 when full. */
long ext_sym_new(const char *name, const char *module);
/* Decide for this session whether the lines of symbol @s are wanted. */
void ext_sym_decide_lines(struct vtpy_sym *s);
/* First sight of code object @co: name it, remember its word in co_extra.
 * Its symbol index, or -1. */
long ext_code_register(PyCodeObject *co);
/* The symbol of a callable that is not Python code (builtins, methods of
 * C types, classes), or of a code-like object of PyMonitoring_Fire*Event
 * (@codelike): its index, or -1. */
long ext_object_index(PyObject *obj, int codelike);
/* The line symbol "<function>:<line>" of code symbol @idx, or -1. */
long ext_line_index(long idx, int line);
/* The symbol "<prefix><name>" of the str @nameobj (imports, markers), or
 * -1. */
long ext_named_index(const char *prefix, PyObject *nameobj);

/* 1 if the lines of symbol @idx are wanted (--lines), decided once per
 * symbol and session (inline: asked per line event). */
static inline int ext_sym_lines(long idx)
{
	struct vtpy_sym *s = &ext_st.syms[idx];

	if (s->decided_sess != ext_st.sessno)
		ext_sym_decide_lines(s);
	return s->lines_sess == ext_st.sessno;
}

/* The record address of symbol @idx. */
static inline uint64_t sym_addr(long idx)
{
	return VTPY_ADDR_BASE + (uint64_t)idx * VTPY_SYM_SLOT;
}

/* What co_extra holds for a code object: its record word (vt_uft_pack
 * with type and depth 0), never 0 (the magic is in it). */
VT_STATIC_ASSERT(sizeof(void *) >= sizeof(uint64_t), "a record word fits in co_extra");

static inline uint64_t sym_word(long idx)
{
	return vt_uft_pack(0, 0, sym_addr(idx));
}

/* The symbol index of a record word from co_extra. */
static inline long word_index(uint64_t w)
{
	return (long)((vt_uft_addr(w) - VTPY_ADDR_BASE) / VTPY_SYM_SLOT);
}

/* The layout co_extra points to (CPython's _PyCodeObjectExtra, the same
 * since 3.6): read inline, PyUnstable_Code_GetExtra() does the same with
 * a call into libpython per event. */
struct vtpy_code_extra {
	Py_ssize_t ce_size;
	void *ce_extras[1];
};

/* The record word cached in code object @co's co_extra; 0 if it has none
 * yet. */
static inline uint64_t code_word_co(PyCodeObject *co)
{
	const struct vtpy_code_extra *ex = co->co_extra;

	if (unlikely(!ex || ext_st.extra_index >= ex->ce_size))
		return 0;
	return (uint64_t)(uintptr_t)ex->ce_extras[ext_st.extra_index];
}

/* The same for any object: 0 if @code is not a code object. */
static inline uint64_t code_word(PyObject *code)
{
	if (unlikely(!PyCode_Check(code)))
		return 0;
	return code_word_co((PyCodeObject *)code);
}

/* The symbol of code object @co (named on its first sight), or -1. */
static inline long code_index(PyCodeObject *co)
{
	uint64_t w = code_word((PyObject *)co);

	if (likely(w))
		return word_index(w);
	return ext_code_register(co);
}

/* The same for a code object or a code-like object, or -1. */
static inline long any_code_index(PyObject *code)
{
	if (likely(PyCode_Check(code)))
		return code_index((PyCodeObject *)code);
	return ext_object_index(code, 1);
}

/* ---- events both backends share (ext_events.c; inline: per event) ---- */

/* Entry / exit of code (or a code-like object) @code, any symbol state;
 * @flags go into the record's address. */
VTPY_SLOW void ext_code_entry_slow(PyObject *code, uint64_t flags);
VTPY_SLOW void ext_code_exit_slow(PyObject *code, uint64_t flags);
/* A marker "call" of zero length named vmtrace.@name: trace start/stop. */
void ext_mark(const char *name);

/* Per event: the word from co_extra, a TSC read, one record (vtpy.h).
 * @co is a code object: the frame's own, which is what CPython passes
 * for every PY_* event of sys.monitoring (_PyFrame_GetCode) and what
 * PyFrame_GetCode gives the profile function; no type check per event. */
static inline void ev_code_entry_fast(PyCodeObject *co, uint64_t flags)
{
	uint64_t w = code_word_co(co);

	if (unlikely(!w || vtpy_entry_fast(w | vt_uft_pack(0, 0, flags)) < 0))
		ext_code_entry_slow((PyObject *)co, flags);
}

static inline void ev_code_exit_fast(PyCodeObject *co, uint64_t flags)
{
	uint64_t w = code_word_co(co);

	if (unlikely(!w || vtpy_exit_fast(w | vt_uft_pack(0, 0, flags)) < 0))
		ext_code_exit_slow((PyObject *)co, flags);
}

/* Entry / exit of the C callable @callable (--no-c-calls: never called). */
static inline void ev_c_entry(PyObject *callable)
{
	long idx = ext_object_index(callable, 0);

	if (likely(idx >= 0) && vtpy_entry_fast(sym_word(idx)) < 0)
		vtpy_entry(sym_addr(idx));
}

static inline void ev_c_exit(PyObject *callable, uint64_t flags)
{
	long idx = ext_object_index(callable, 0);

	if (likely(idx >= 0) && vtpy_exit_fast(sym_word(idx) | vt_uft_pack(0, 0, flags)) < 0)
		vtpy_exit(sym_addr(idx) | flags);
}

/* ---- the backend (ext_monitoring.c or ext_profile.c) ---- */

/* Module load: what the backend needs ready.  0, or -1 with an
 * exception. */
int ext_backend_init(void);
/* Start delivering events (every thread).  0, or -1 with an exception. */
int ext_backend_start(void);
/* Stop them; keeps a pending exception. */
void ext_backend_stop(void);

/* ---- import and gc hooks (ext_hooks.c) ---- */

/* Wrap builtins.__import__ and add a gc callback (the gc symbols made
 * once).  0, or -1 with an exception. */
int ext_hooks_install(void);
/* Undo ext_hooks_install(); clears errors. */
void ext_hooks_remove(void);

#endif
