/*
 * ext.c - vmtrace._vmtrace, the CPython extension of the guest Python
 * tracer: C callbacks that turn Python events into uftrace records
 * (vtpy.h) with the raw TSC.  Backend chosen at build time: sys.monitoring
 * (PEP 669, tool id PROFILER) on 3.12+, PyEval_SetProfile/SetTrace before.
 * Callbacks run in the traced program's threads with the GIL held; the
 * per-event work is a co_extra lookup, a TSC read and two stores.  Names
 * are made (and allocate) once per code object / C function, on first use.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>
#include "pymarker.h"
#include <pthread.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "err.h"
#include "meta.h"
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
#if PY_VERSION_HEX < 0x030900B1
static inline PyCodeObject *PyFrame_GetCode(PyFrameObject *f)
{
	Py_INCREF(f->f_code);
	return f->f_code;
}
#endif
#if !VTPY_MONITORING && PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
/* 3.11: the code object sits in the frame's interpreter frame; reading it
 * there spares PyFrame_GetCode's call and reference count per event. */
#define Py_BUILD_CORE
#include <internal/pycore_frame.h>
#undef Py_BUILD_CORE
#endif

#if !VTPY_MONITORING && PY_VERSION_HEX < 0x03090000
/* 3.8: the count of threads with a C trace function, which gates line
 * events in 3.8's eval loop, is in _PyRuntime (ts_set_trace keeps it). */
#define Py_BUILD_CORE
#include <internal/pycore_pystate.h>
#undef Py_BUILD_CORE
#endif

#if !VTPY_MONITORING
/* The code object of @f, borrowed (the frame holds it): a public member of
 * PyFrameObject up to 3.10 (PyFrame_GetCode would add a call and a
 * reference count per event), the interpreter frame's on 3.11. */
static inline PyCodeObject *frame_code(PyFrameObject *f)
{
#if PY_VERSION_HEX < 0x030B0000
	return f->f_code;
#elif PY_VERSION_HEX < 0x030C0000
	return f->f_frame->f_code;
#else
	PyCodeObject *co = PyFrame_GetCode(f);

	Py_DECREF(co);
	return co;
#endif
}
#endif

/* sys.monitoring tool id PROFILER */
#define VTPY_TOOL_ID	2
/* Open-addressing table for symbols not keyed by a code object. */
#define KEYTAB_MIN	1024

struct vtpy_sym {
	char *name;		/* as written to the .sym file */
	char *module;		/* module name for the --lines match */
	unsigned lines_sess;	/* session whose --lines matched, 0 none */
	unsigned decided_sess;	/* session the match was decided in */
};

static struct {
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
} st;

/* ---- symbols ---- */

static int prefix_match(const char *module)
{
	for (int i = 0; i < st.nr_prefixes; i++) {
		size_t n = strlen(st.prefixes[i]);

		if (!strncmp(module, st.prefixes[i], n) &&
		    (module[n] == '\0' || module[n] == '.' || st.prefixes[i][n - 1] == '.' ||
		     n == 0))
			return 1;
	}
	return 0;
}

/* A new symbol: kept in memory (a later session or fork child writes it
 * again) and appended to the current .sym file.  -1 when full. */
static long sym_new(const char *name, const char *module)
{
	struct vtpy_sym *s;

	if (st.nr >= VTPY_SYM_MAX)
		return -1;
	if (st.nr == st.alloc) {
		size_t n = st.alloc ? st.alloc * 2 : 1024;
		void *p = realloc(st.syms, n * sizeof(*st.syms));

		if (!p)
			return -1;
		st.syms = p;
		st.alloc = n;
	}
	s = &st.syms[st.nr];
	s->name = strdup(name);
	s->module = strdup(module ? module : "");
	if (!s->name || !s->module) {
		free(s->name);
		free(s->module);
		return -1;
	}
	s->lines_sess = 0;
	s->decided_sess = 0;
	vtpy_session_sym(VTPY_ADDR_BASE + st.nr * VTPY_SYM_SLOT, name);
	return (long)st.nr++;
}

static inline uint64_t sym_addr(long idx)
{
	return VTPY_ADDR_BASE + (uint64_t)idx * VTPY_SYM_SLOT;
}

/* Decide once per symbol and session whether its lines are wanted. */
static int sym_lines(long idx)
{
	struct vtpy_sym *s = &st.syms[idx];

	if (s->decided_sess != st.sessno) {
		s->decided_sess = st.sessno;
		s->lines_sess = st.nr_prefixes && prefix_match(s->module) ? st.sessno : 0;
	}
	return s->lines_sess == st.sessno;
}

/* splitmix64's finaliser constants: pointers differ in few bits */
#define KEY_MIX_MUL	0xbf58476d1ce4e5b9ULL
#define KEY_MIX_SHIFT1	29
#define KEY_MIX_SHIFT2	32

static inline size_t key_hash(uint64_t k)
{
	k ^= k >> KEY_MIX_SHIFT1;
	k *= KEY_MIX_MUL;
	k ^= k >> KEY_MIX_SHIFT2;
	return (size_t)k;
}

static long key_find(uint64_t key)
{
	size_t mask = st.keytab_size - 1, i;

	if (unlikely(!st.keytab_size))
		return -1;
	for (i = key_hash(key) & mask; st.vals[i]; i = (i + 1) & mask)
		if (st.keys[i] == key)
			return (long)st.vals[i] - 1;
	return -1;
}

static int key_add(uint64_t key, long idx)
{
	size_t mask, i;

	if ((st.keytab_used + 1) * 2 > st.keytab_size) {
		size_t n = st.keytab_size ? st.keytab_size * 2 : KEYTAB_MIN;
		uint64_t *k = calloc(n, sizeof(*k));
		uint32_t *v = calloc(n, sizeof(*v));

		if (!k || !v) {
			free(k);
			free(v);
			return -1;
		}
		for (size_t j = 0; j < st.keytab_size; j++) {
			if (!st.vals[j])
				continue;
			for (i = key_hash(st.keys[j]) & (n - 1); v[i]; i = (i + 1) & (n - 1))
				;
			k[i] = st.keys[j];
			v[i] = st.vals[j];
		}
		free(st.keys);
		free(st.vals);
		st.keys = k;
		st.vals = v;
		st.keytab_size = n;
	}
	mask = st.keytab_size - 1;
	for (i = key_hash(key) & mask; st.vals[i]; i = (i + 1) & mask)
		;
	st.keys[i] = key;
	st.vals[i] = (uint32_t)(idx + 1);
	st.keytab_used++;
	return 0;
}

static const char *utf8_or(PyObject *o, const char *dflt)
{
	const char *s = o && PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : NULL;

	if (!s)
		PyErr_Clear();
	return s ? s : dflt;
}

static const char *frame_module(void)
{
	PyObject *globals = PyEval_GetGlobals();
	PyObject *name = globals ? PyDict_GetItemString(globals, "__name__") : NULL;

	return utf8_or(name, "?");
}

/* What co_extra holds for a code object: its record word (vt_uft_pack
 * with type and depth 0), never 0 (the magic is in it). */
VT_STATIC_ASSERT(sizeof(void *) >= sizeof(uint64_t), "a record word fits in co_extra");

static inline uint64_t sym_word(long idx)
{
	return vt_uft_pack(0, 0, sym_addr(idx));
}

static inline long word_index(uint64_t w)
{
	return (long)((vt_uft_addr(w) - VTPY_ADDR_BASE) / VTPY_SYM_SLOT);
}

/* First sight of a code object: name it, remember its word in co_extra. */
static long code_register(PyCodeObject *co)
{
	char buf[1024];
	PyObject *qual;
	const char *module = frame_module();
	long idx;

#if PY_VERSION_HEX >= 0x030B0000
	qual = co->co_qualname;
#else
	qual = co->co_name;
#endif
	snprintf(buf, sizeof(buf), "%s.%s (%s:%d)", module, utf8_or(qual, "?"),
		 utf8_or(co->co_filename, "?"), co->co_firstlineno);
	idx = sym_new(buf, module);
	if (idx < 0)
		return -1;
	if (PyUnstable_Code_SetExtra((PyObject *)co, st.extra_index,
				     (void *)(uintptr_t)sym_word(idx)) < 0) {
		PyErr_Clear();
		return -1;
	}
	return idx;
}

/* The layout co_extra points to (CPython's _PyCodeObjectExtra, the same
 * since 3.6): read inline, PyUnstable_Code_GetExtra() does the same with
 * a call into libpython per event. */
struct vtpy_code_extra {
	Py_ssize_t ce_size;
	void *ce_extras[1];
};

/* The record word cached in @code's co_extra; 0 if @code is not a code
 * object or has none yet. */
static inline uint64_t code_word(PyObject *code)
{
	const struct vtpy_code_extra *ex;

	if (unlikely(!PyCode_Check(code)))
		return 0;
	ex = ((PyCodeObject *)code)->co_extra;
	if (unlikely(!ex || st.extra_index >= ex->ce_size))
		return 0;
	return (uint64_t)(uintptr_t)ex->ce_extras[st.extra_index];
}

static inline long code_index(PyCodeObject *co)
{
	uint64_t w = code_word((PyObject *)co);

	if (likely(w))
		return word_index(w);
	return code_register(co);
}

/* A callable that is not Python code: builtins, methods of C types,
 * classes, and the code-like objects of PyMonitoring_Fire*Event. */
static long object_index(PyObject *obj, int codelike)
{
	char buf[512];
	uint64_t key = (uint64_t)(uintptr_t)obj;
	const char *owner = NULL, *name = NULL;
	PyObject *tmp = NULL;
	long idx;

	if (PyCFunction_Check(obj)) {
		PyCFunctionObject *f = (PyCFunctionObject *)obj;

		key = (uint64_t)(uintptr_t)f->m_ml;
		idx = key_find(key);
		if (likely(idx >= 0))
			return idx;
		name = f->m_ml->ml_name;
		if (f->m_self && PyModule_Check(f->m_self))
			owner = PyModule_GetName(f->m_self);
		else if (f->m_self)
			owner = Py_TYPE(f->m_self)->tp_name;
		else if (f->m_module && PyUnicode_Check(f->m_module))
			owner = PyUnicode_AsUTF8(f->m_module);
		if (!owner)
			PyErr_Clear();
	} else if (!codelike && !PyType_Check(obj) && Py_TYPE(obj) != &PyMethodDescr_Type) {
		/* other callables: key on their type (instances come and go) */
		key = (uint64_t)(uintptr_t)Py_TYPE(obj);
		idx = key_find(key);
		if (likely(idx >= 0))
			return idx;
		owner = Py_TYPE(obj)->tp_name;
		name = "__call__";
	} else {
		idx = key_find(key);
		if (likely(idx >= 0))
			return idx;
		tmp = PyObject_GetAttrString(obj, codelike ? "co_qualname" : "__qualname__");
		if (!tmp) {
			PyErr_Clear();
			tmp = PyObject_GetAttrString(obj, codelike ? "co_name" : "__name__");
		}
		if (!tmp)
			PyErr_Clear();
		name = utf8_or(tmp, Py_TYPE(obj)->tp_name);
		owner = codelike ? "codelike" : "builtins";
		if (!codelike && PyType_Check(obj))
			owner = ((PyTypeObject *)obj)->tp_name;
		if (PyType_Check(obj))
			name = "__call__";
	}
	snprintf(buf, sizeof(buf), "%s.%s", owner ? owner : "?", name ? name : "?");
	Py_XDECREF(tmp);
	idx = sym_new(buf, codelike ? frame_module() : "");
	if (idx >= 0 && key_add(key, idx) < 0)
		return -1;
	return idx;
}

static inline long any_code_index(PyObject *code)
{
	if (likely(PyCode_Check(code)))
		return code_index((PyCodeObject *)code);
	return object_index(code, 1);
}

/* The line symbol "<function>:<line>" of code symbol @idx. */
static long line_index(long idx, int line)
{
	uint64_t key = ((uint64_t)(idx + 1) << 32) | (uint32_t)line | (1ULL << 63);
	long li = key_find(key);
	char buf[1100];
	const char *fn, *sp;

	if (likely(li >= 0))
		return li;
	fn = st.syms[idx].name;		/* a new line: its name, once */
	sp = strstr(fn, " (");
	snprintf(buf, sizeof(buf), "%.*s:%d%s", sp ? (int)(sp - fn) : (int)strlen(fn), fn, line,
		 sp ? sp : "");
	li = sym_new(buf, st.syms[idx].module);
	if (li >= 0 && key_add(key, li) < 0)
		return -1;
	return li;
}

static long named_index(const char *prefix, PyObject *nameobj)
{
	char buf[512];
	long idx;
	PyObject *interned;
	uint64_t key;

	/* module names are interned strings: key on the object, kept alive */
	interned = PyUnicode_Check(nameobj) ? nameobj : NULL;
	if (!interned)
		return -1;
	Py_INCREF(interned);
	PyUnicode_InternInPlace(&interned);
	key = (uint64_t)(uintptr_t)interned | 1;
	idx = key_find(key);
	if (idx >= 0) {
		Py_DECREF(interned);
		return idx;
	}
	snprintf(buf, sizeof(buf), "%s%s", prefix, utf8_or(interned, "?"));
	idx = sym_new(buf, "");
	if (idx < 0 || key_add(key, idx) < 0) {
		Py_DECREF(interned);
		return -1;
	}
	/* the reference stays: the key must not be reused by another name */
	return idx;
}

/* ---- events shared by both backends ---- */

static inline void ev_code_entry(PyObject *code, uint64_t flags)
{
	long idx = any_code_index(code);

	if (likely(idx >= 0))
		vtpy_entry(sym_addr(idx) | flags);
}

static inline void ev_code_exit(PyObject *code, uint64_t flags)
{
	long idx = any_code_index(code);

	if (likely(idx >= 0))
		vtpy_exit(sym_addr(idx) | flags);
}

/* The general path out of line: the fast callers stay leaf functions. */
#define VTPY_SLOW __attribute__((noinline, cold))

static VTPY_SLOW void ev_code_entry_slow(PyObject *code, uint64_t flags)
{
	ev_code_entry(code, flags);
}

static VTPY_SLOW void ev_code_exit_slow(PyObject *code, uint64_t flags)
{
	ev_code_exit(code, flags);
}

/* Per event: the word from co_extra, a TSC read, one record (vtpy.h). */
static inline void ev_code_entry_fast(PyObject *code, uint64_t flags)
{
	uint64_t w = code_word(code);

	if (unlikely(!w || vtpy_entry_fast(w | vt_uft_pack(0, 0, flags)) < 0))
		ev_code_entry_slow(code, flags);
}

static inline void ev_code_exit_fast(PyObject *code, uint64_t flags)
{
	uint64_t w = code_word(code);

	if (unlikely(!w || vtpy_exit_fast(w | vt_uft_pack(0, 0, flags)) < 0))
		ev_code_exit_slow(code, flags);
}

static inline void ev_c_entry(PyObject *callable)
{
	long idx = object_index(callable, 0);

	if (likely(idx >= 0) && vtpy_entry_fast(sym_word(idx)) < 0)
		vtpy_entry(sym_addr(idx));
}

static inline void ev_c_exit(PyObject *callable, uint64_t flags)
{
	long idx = object_index(callable, 0);

	if (likely(idx >= 0) && vtpy_exit_fast(sym_word(idx) | vt_uft_pack(0, 0, flags)) < 0)
		vtpy_exit(sym_addr(idx) | flags);
}

/* A marker "call" of zero length: trace start/stop. */
static void ev_mark(const char *name)
{
	PyObject *n = PyUnicode_FromString(name);
	long idx;

	if (!n) {
		PyErr_Clear();
		return;
	}
	idx = named_index("vmtrace.", n);
	Py_DECREF(n);
	if (idx >= 0) {
		vtpy_entry(sym_addr(idx));
		vtpy_exit(sym_addr(idx));
	}
}

/* ---- backend: sys.monitoring (3.12+) ---- */
#if VTPY_MONITORING

typedef struct {
	PyObject_HEAD
	vectorcallfunc vectorcall;
	const char *event;
} HookObject;

static PyTypeObject Hook_Type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "vmtrace._vmtrace.Hook",
	.tp_basicsize = sizeof(HookObject),
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
	.tp_vectorcall_offset = offsetof(HookObject, vectorcall),
	.tp_call = PyVectorcall_Call,
};

#define RET_NONE	Py_RETURN_NONE
#define RET_DISABLE	return Py_NewRef(st.disable)

static VTPY_SLOW PyObject *hk_py_start_slow(PyObject *code)
{
	long idx = any_code_index(code);

	if (unlikely(idx < 0))
		RET_NONE;
	vtpy_entry(sym_addr(idx));
	if (unlikely(st.nr_prefixes) && PyCode_Check(code) && sym_lines(idx)) {
		/* lines of this code only: local events, decided once */
		PyObject *mon = PySys_GetObject("monitoring");
		PyObject *r = mon ? PyObject_CallMethod(mon, "set_local_events", "iOl", VTPY_TOOL_ID,
							code, st.line_event) : NULL;

		if (!r)
			PyErr_Clear();
		Py_XDECREF(r);
	}
	RET_NONE;
}

/* --lines needs the general path here (fast_end is NULL then). */
static PyObject *hk_py_start(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kw)
{
	PyObject *code = args[0];
	uint64_t w = code_word(code);

	if (unlikely(!w || vtpy_entry_fast(w) < 0))
		return hk_py_start_slow(code);
	RET_NONE;
}

static PyObject *hk_py_resume(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kw)
{
	ev_code_entry_fast(args[0], VTPY_ADDR_GEN);
	RET_NONE;
}

static PyObject *hk_py_return(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kw)
{
	ev_code_exit_fast(args[0], 0);
	RET_NONE;
}

static PyObject *hk_py_yield(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kw)
{
	ev_code_exit_fast(args[0], VTPY_ADDR_GEN);
	RET_NONE;
}

static PyObject *hk_py_unwind(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kw)
{
	ev_code_exit_fast(args[0], VTPY_ADDR_UNWIND);
	RET_NONE;
}

/* Python callables show up as PY_START, never as a C call */
#define PY_CALLABLE(c) (PyFunction_Check(c) || PyMethod_Check(c))

static PyObject *hk_call(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kw)
{
	PyObject *callable = args[2];

	/* Python callees show up as PY_START: this call site is done */
	if (PY_CALLABLE(callable))
		RET_DISABLE;
	ev_c_entry(callable);
	RET_NONE;
}

static PyObject *hk_c_return(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kw)
{
	if (unlikely(PY_CALLABLE(args[2])))
		RET_NONE;
	ev_c_exit(args[2], 0);
	RET_NONE;
}

static PyObject *hk_c_raise(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kw)
{
	if (unlikely(PY_CALLABLE(args[2])))
		RET_NONE;
	ev_c_exit(args[2], VTPY_ADDR_UNWIND);
	RET_NONE;
}

static PyObject *hk_line(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kw)
{
	PyObject *code = args[0];
	long idx, li;
	int line;

	if (!PyCode_Check(code))
		RET_DISABLE;
	idx = code_index((PyCodeObject *)code);
	if (idx < 0 || !sym_lines(idx))
		RET_DISABLE;
	line = (int)PyLong_AsLong(args[1]);
	li = line_index(idx, line);
	if (li >= 0)
		vtpy_line(sym_addr(li));
	RET_NONE;
}

static const struct hook_def {
	const char *event;	/* name in sys.monitoring.events */
	vectorcallfunc fn;
	int c_call;		/* part of --no-c-calls */
	int line;
} hook_defs[] = {
	{ "PY_START", hk_py_start, 0, 0 },
	{ "PY_RESUME", hk_py_resume, 0, 0 },
	{ "PY_THROW", hk_py_resume, 0, 0 },
	{ "PY_RETURN", hk_py_return, 0, 0 },
	{ "PY_YIELD", hk_py_yield, 0, 0 },
	{ "PY_UNWIND", hk_py_unwind, 0, 0 },
	{ "CALL", hk_call, 1, 0 },
	{ "C_RETURN", hk_c_return, 1, 0 },
	{ "C_RAISE", hk_c_raise, 1, 0 },
	{ "LINE", hk_line, 0, 1 },
};

static int backend_start(void)
{
	PyObject *mon = PySys_GetObject("monitoring"), *events, *r;
	long mask = 0;

	if (!mon) {
		PyErr_SetString(PyExc_RuntimeError, "sys.monitoring is missing");
		return -1;
	}
	events = PyObject_GetAttrString(mon, "events");
	if (!events)
		return -1;
	st.nr_hook_events = 0;
	Py_XSETREF(st.disable, PyObject_GetAttrString(mon, "DISABLE"));
	r = PyObject_CallMethod(mon, "use_tool_id", "is", VTPY_TOOL_ID, "vmtrace");
	if (!r) {
		Py_DECREF(events);
		return -1;
	}
	Py_DECREF(r);
	for (size_t i = 0; i < VT_ARRAY_SIZE(hook_defs); i++) {
		const struct hook_def *d = &hook_defs[i];
		PyObject *ev = PyObject_GetAttrString(events, d->event);
		HookObject *h;
		long bit;

		if (!ev)
			goto fail;
		bit = PyLong_AsLong(ev);
		Py_DECREF(ev);
		if (d->line)
			st.line_event = bit;
		if ((d->c_call && !st.c_calls) || (d->line && !st.nr_prefixes))
			continue;
		h = PyObject_New(HookObject, &Hook_Type);
		if (!h)
			goto fail;
		h->vectorcall = d->fn;
		h->event = d->event;
		r = PyObject_CallMethod(mon, "register_callback", "ilO", VTPY_TOOL_ID, bit, h);
		Py_DECREF(h);
		if (!r)
			goto fail;
		Py_DECREF(r);
		if ((size_t)st.nr_hook_events < VT_ARRAY_SIZE(st.hook_events))
			st.hook_events[st.nr_hook_events++] = bit;
		if (!d->line)
			mask |= bit;
	}
	Py_DECREF(events);
	r = PyObject_CallMethod(mon, "set_events", "il", VTPY_TOOL_ID, mask);
	if (!r)
		goto fail_free;
	Py_DECREF(r);
	return 0;
fail:
	Py_DECREF(events);
fail_free:
	r = PyObject_CallMethod(mon, "free_tool_id", "i", VTPY_TOOL_ID);
	Py_XDECREF(r);
	return -1;
}

static void backend_stop(void)
{
	PyObject *mon = PySys_GetObject("monitoring"), *r, *exc;

	if (!mon)
		return;
	exc = PyErr_GetRaisedException();
	r = PyObject_CallMethod(mon, "set_events", "il", VTPY_TOOL_ID, 0L);
	Py_XDECREF(r);
	for (int i = 0; i < st.nr_hook_events; i++) {
		r = PyObject_CallMethod(mon, "register_callback", "ilO", VTPY_TOOL_ID,
					st.hook_events[i], Py_None);
		Py_XDECREF(r);
		PyErr_Clear();
	}
	st.nr_hook_events = 0;
#if PY_VERSION_HEX >= 0x030D0000
	r = PyObject_CallMethod(mon, "clear_tool_id", "i", VTPY_TOOL_ID);
	Py_XDECREF(r);
	PyErr_Clear();
#endif
	r = PyObject_CallMethod(mon, "free_tool_id", "i", VTPY_TOOL_ID);
	Py_XDECREF(r);
	PyErr_Clear();
	PyErr_SetRaisedException(exc);
}

#else /* ---- backend: PyEval_SetProfile / SetTrace (3.8-3.11) ---- */

/* C functions: hash lookups, kept out of prof_func's Python path. */
static VTPY_SLOW int prof_c(int what, PyObject *arg)
{
	if (!st.c_calls)
		return 0;
	switch (what) {
	case PyTrace_C_CALL:
		ev_c_entry(arg);
		break;
	case PyTrace_C_RETURN:
		ev_c_exit(arg, 0);
		break;
	case PyTrace_C_EXCEPTION:
		ev_c_exit(arg, VTPY_ADDR_UNWIND);
		break;
	}
	return 0;
}

static int prof_func(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg)
{
	if (what == PyTrace_CALL) {
		ev_code_entry_fast((PyObject *)frame_code(frame), 0);
		return 0;
	}
	if (what == PyTrace_RETURN) {
		/* arg is NULL when the frame is left by an exception */
		ev_code_exit_fast((PyObject *)frame_code(frame), arg ? 0 : VTPY_ADDR_UNWIND);
		return 0;
	}
	return prof_c(what, arg);
}

/* Line events of the frames whose module matched --lines; other frames
 * get f_trace_lines = False on their first event. */
static int trace_func(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg)
{
	PyCodeObject *co;
	long idx, li;

	if (what != PyTrace_CALL && what != PyTrace_LINE)
		return 0;
	co = frame_code(frame);
	idx = code_index(co);
	if (idx < 0)
		return 0;
	if (!sym_lines(idx)) {
		if (what == PyTrace_CALL && PyObject_SetAttrString((PyObject *)frame, "f_trace_lines",
								   Py_False) < 0)
			PyErr_Clear();
		return 0;
	}
	if (what == PyTrace_LINE) {
		li = line_index(idx, PyFrame_GetLineNumber(frame));
		if (li >= 0)
			vtpy_line(sym_addr(li));
	}
	return 0;
}

#if PY_VERSION_HEX >= 0x03090000
#define ts_set_profile(ts, fn)	_PyEval_SetProfile(ts, fn, NULL)
#define ts_set_trace(ts, fn)	_PyEval_SetTrace(ts, fn, NULL)
#else
/*
 * 3.8 has PyEval_SetProfile/SetTrace only for the calling thread.  These
 * do for any thread state @ts what 3.9's _PyEval_SetProfile/SetTrace do
 * (GIL held): the audit event in the caller's context, the hook cleared
 * before the old object is released (its finalizer may run code), then
 * set; the thread sees it at its next call or line.  0, or -1 with an
 * exception when an audit hook refuses.  (Not PyThreadState_Swap to @ts:
 * an audit hook written in Python would then run, and could release the
 * GIL, as the other thread; a Py_DEBUG build aborts on such a swap.)
 */
static int ts_set_profile(PyThreadState *ts, Py_tracefunc fn)
{
	PyObject *old = ts->c_profileobj;

	if (PySys_Audit("sys.setprofile", NULL) < 0)
		return -1;
	ts->c_profilefunc = NULL;
	ts->c_profileobj = NULL;
	ts->use_tracing = ts->c_tracefunc != NULL;
	Py_XDECREF(old);
	ts->c_profilefunc = fn;
	ts->use_tracing = fn != NULL || ts->c_tracefunc != NULL;
	return 0;
}

static int ts_set_trace(PyThreadState *ts, Py_tracefunc fn)
{
	PyObject *old = ts->c_traceobj;

	if (PySys_Audit("sys.settrace", NULL) < 0)
		return -1;
	_PyRuntime.ceval.tracing_possible += (fn != NULL) - (ts->c_tracefunc != NULL);
	ts->c_tracefunc = NULL;
	ts->c_traceobj = NULL;
	ts->use_tracing = ts->c_profilefunc != NULL;
	Py_XDECREF(old);
	ts->c_tracefunc = fn;
	ts->use_tracing = fn != NULL || ts->c_profilefunc != NULL;
	return 0;
}
#endif

/* Install (@on) or remove the C functions on thread state @ts.  0, or -1
 * with an exception (an audit hook refused). */
static int thread_install(PyThreadState *ts, int on)
{
	if (ts_set_profile(ts, on ? prof_func : NULL) < 0)
		return -1;
	if (st.nr_prefixes && ts_set_trace(ts, on ? trace_func : NULL) < 0)
		return -1;
	return 0;
}

/* threading.setprofile() hook: the first event of a thread started while
 * tracing installs the C functions for it, then counts as an event. */
static PyObject *thread_boot(PyObject *self, PyObject *args)
{
	PyObject *frame, *arg;
	const char *event;

	if (!PyArg_ParseTuple(args, "OsO", &frame, &event, &arg))
		return NULL;
	if (!st.active)
		Py_RETURN_NONE;
	if (thread_install(PyThreadState_Get(), 1) < 0) {
		/* an audit hook refused: not traced (asked again next event) */
		PyErr_Clear();
		Py_RETURN_NONE;
	}
	if (!strcmp(event, "call") && PyFrame_Check(frame))
		prof_func(NULL, (PyFrameObject *)frame, PyTrace_CALL, Py_None);
	Py_RETURN_NONE;
}

static PyMethodDef boot_def = { "_thread_boot", thread_boot, METH_VARARGS, NULL };

static int threading_set(PyObject *fn)
{
	PyObject *threading = PyImport_ImportModule("threading"), *r;

	if (!threading)
		return -1;
	r = PyObject_CallMethod(threading, "setprofile", "O", fn);
	Py_DECREF(threading);
	Py_XDECREF(r);
	return r ? 0 : -1;
}

static void backend_stop(void);

static int backend_start(void)
{
	PyThreadState *ts;
	PyObject *boot = PyCFunction_New(&boot_def, NULL);

	if (!boot)
		return -1;
	if (threading_set(boot) < 0) {
		Py_DECREF(boot);
		return -1;
	}
	Py_DECREF(boot);
	/* every thread that exists now, not only the caller */
	for (ts = PyInterpreterState_ThreadHead(PyThreadState_Get()->interp); ts;
	     ts = PyThreadState_Next(ts)) {
		if (thread_install(ts, 1) < 0) {
			backend_stop();
			return -1;
		}
	}
	return 0;
}

/* Remove the C functions from every thread; keeps a pending exception. */
static void backend_stop(void)
{
	PyThreadState *ts;
	PyObject *et, *ev, *tb;

	PyErr_Fetch(&et, &ev, &tb);
	for (ts = PyInterpreterState_ThreadHead(PyThreadState_Get()->interp); ts;
	     ts = PyThreadState_Next(ts)) {
		if (thread_install(ts, 0) < 0)
			PyErr_Clear();
	}
	if (threading_set(Py_None) < 0)
		PyErr_Clear();
	PyErr_Restore(et, ev, tb);
}
#endif

/* ---- imports and gc (both backends) ---- */

static PyObject *import_hook(PyObject *self, PyObject *args, PyObject *kw)
{
	PyObject *name = PyTuple_GET_SIZE(args) ? PyTuple_GET_ITEM(args, 0) : NULL;
	PyObject *level = PyTuple_GET_SIZE(args) > 4 ? PyTuple_GET_ITEM(args, 4) : NULL;
	PyObject *r;
	long idx = -1;

	if (!st.orig_import) {
		PyErr_SetString(PyExc_ImportError, "vmtrace: no __import__ to call");
		return NULL;
	}
	/* only imports that load something: sys.modules hits are free */
	if (st.active && name && PyUnicode_Check(name) &&
	    (!st.modules || (level && PyLong_Check(level) && PyLong_AsLong(level) > 0) ||
	     !PyDict_GetItemWithError(st.modules, name))) {
		PyErr_Clear();
		idx = named_index("import ", name);
	}
	if (idx >= 0)
		vtpy_entry(sym_addr(idx));
	r = PyObject_Call(st.orig_import, args, kw);
	if (idx >= 0)
		vtpy_exit(sym_addr(idx) | (r ? 0 : VTPY_ADDR_UNWIND));
	return r;
}

static PyMethodDef import_def = {
	"__import__", (PyCFunction)(void (*)(void))import_hook, METH_VARARGS | METH_KEYWORDS,
	"vmtrace's wrapper of __import__: records module loads."
};

static PyObject *gc_hook(PyObject *self, PyObject *args)
{
	PyObject *info, *v;
	const char *phase;
	long gen = 0, collected = 0, uncollectable = 0;

	if (!PyArg_ParseTuple(args, "sO", &phase, &info))
		return NULL;
	if (!st.active || !PyDict_Check(info))
		Py_RETURN_NONE;
	v = PyDict_GetItemString(info, "generation");
	if (v)
		gen = PyLong_AsLong(v);
	if (gen < 0 || gen > 2)
		gen = 2;
	if (!strcmp(phase, "start")) {
		vtpy_entry(st.gc_addr[gen]);
	} else {
		vtpy_exit(st.gc_addr[gen]);
		v = PyDict_GetItemString(info, "collected");
		if (v)
			collected = PyLong_AsLong(v);
		v = PyDict_GetItemString(info, "uncollectable");
		if (v)
			uncollectable = PyLong_AsLong(v);
		vtpy_session_gc((int)gen, collected, uncollectable);
	}
	PyErr_Clear();
	Py_RETURN_NONE;
}

static PyMethodDef gc_def = { "_gc_hook", gc_hook, METH_VARARGS, NULL };

static int hooks_install(void)
{
	PyObject *builtins = PyEval_GetBuiltins(), *gc, *cbs;
	int rc;

	for (int gen = 0; gen < 3; gen++) {
		char name[32];
		long idx;

		snprintf(name, sizeof(name), "gc.collect(gen%d)", gen);
		if (!st.gc_addr[gen]) {
			idx = sym_new(name, "");
			if (idx < 0)
				return -1;
			st.gc_addr[gen] = sym_addr(idx);
		}
	}
	st.modules = PySys_GetObject("modules");
	Py_XINCREF(st.modules);
	if (!st.import_hook)
		st.import_hook = PyCFunction_New(&import_def, NULL);
	if (!st.gc_hook)
		st.gc_hook = PyCFunction_New(&gc_def, NULL);
	if (!st.import_hook || !st.gc_hook)
		return -1;
	Py_XSETREF(st.orig_import, PyDict_GetItemString(builtins, "__import__"));
	Py_XINCREF(st.orig_import);
	if (st.orig_import && PyDict_SetItemString(builtins, "__import__", st.import_hook) < 0)
		return -1;
	gc = PyImport_ImportModule("gc");
	if (!gc)
		return -1;
	cbs = PyObject_GetAttrString(gc, "callbacks");
	Py_DECREF(gc);
	if (!cbs)
		return -1;
	rc = PyList_Append(cbs, st.gc_hook);
	Py_DECREF(cbs);
	return rc;
}

static void hooks_remove(void)
{
	PyObject *builtins = PyEval_GetBuiltins(), *gc, *cbs, *r;

	if (st.orig_import && builtins &&
	    PyDict_GetItemString(builtins, "__import__") == st.import_hook)
		PyDict_SetItemString(builtins, "__import__", st.orig_import);
	gc = PyImport_ImportModule("gc");
	cbs = gc ? PyObject_GetAttrString(gc, "callbacks") : NULL;
	r = cbs ? PyObject_CallMethod(cbs, "remove", "O", st.gc_hook) : NULL;
	Py_XDECREF(r);
	Py_XDECREF(cbs);
	Py_XDECREF(gc);
	Py_CLEAR(st.modules);
	PyErr_Clear();
}

/* ---- module functions ---- */

void vtpy_meta_extra(struct vt_meta *m)
{
	vt_meta_set(m, "python.version", "%s", Py_GetVersion());
	vt_meta_set(m, "python.version_hex", "0x%08lx", (unsigned long)PY_VERSION_HEX);
	vt_meta_set(m, "python.backend", "%s", VTPY_BACKEND);
	vt_meta_set(m, "python.c_calls", "%d", st.c_calls);
	vt_meta_set(m, "python.max_depth", "%u", vtpy_max_depth);
	if (!vtpy_clock_ns) {
		/* no calibration sleep inside the traced program */
		struct vt_tsc_freq f;

		if (vt_tsc_freq_opts(&f, VT_TSC_NO_CALIBRATE) == 0)
			vt_tsc_meta_set(m, &f);
	}
	if (st.nr_prefixes) {
		char buf[2048] = "";
		size_t n = 0;

		for (int i = 0; i < st.nr_prefixes && n < sizeof(buf) - 1; i++)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? "," : "",
					      st.prefixes[i]);
		vt_meta_set(m, "python.lines", "%s", buf);
	}
}

static void prefixes_free(void)
{
	for (int i = 0; i < st.nr_prefixes; i++)
		free(st.prefixes[i]);
	free(st.prefixes);
	st.prefixes = NULL;
	st.nr_prefixes = 0;
}

/* Write every symbol known so far into a new session's .sym file. */
static void syms_rewrite(void)
{
	for (size_t i = 0; i < st.nr; i++)
		vtpy_session_sym(sym_addr((long)i), st.syms[i].name);
}

static PyObject *vt_start(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "dir", "lines", "c_calls", "max_depth", "exename", "cmdline",
				  "clock", NULL };
	const char *dir, *exename = NULL, *cmdline = NULL, *clock = "tsc";
	PyObject *lines = NULL;
	int c_calls = 1;
	unsigned max_depth = 0;
	struct vtpy_session cfg;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "s|OpIzzs", kwlist, &dir, &lines, &c_calls,
					 &max_depth, &exename, &cmdline, &clock))
		return NULL;
	if (st.active) {
		PyErr_Format(PyExc_RuntimeError, "vmtrace: already tracing into %s",
			     vtpy_session_dir());
		return NULL;
	}
	if (strcmp(clock, "tsc") && strcmp(clock, "ns")) {
		PyErr_Format(PyExc_ValueError, "vmtrace: clock must be tsc or ns, not %s", clock);
		return NULL;
	}
	prefixes_free();
	if (lines && lines != Py_None) {
		Py_ssize_t n;
		PyObject *seq = PySequence_Fast(lines, "lines must be a sequence of module prefixes");

		if (!seq)
			return NULL;
		n = PySequence_Fast_GET_SIZE(seq);
		st.prefixes = calloc((size_t)n + 1, sizeof(char *));
		for (Py_ssize_t i = 0; st.prefixes && i < n; i++) {
			const char *p = PyUnicode_Check(PySequence_Fast_GET_ITEM(seq, i)) ?
				PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(seq, i)) : NULL;

			if (!p) {
				Py_DECREF(seq);
				prefixes_free();
				if (!PyErr_Occurred())
					PyErr_SetString(PyExc_TypeError, "lines: prefixes must be str");
				return NULL;
			}
			if (!*p)
				continue;
			st.prefixes[st.nr_prefixes++] = strdup(p);
		}
		Py_DECREF(seq);
	}
	st.c_calls = c_calls;
	vtpy_max_depth = max_depth && max_depth <= VT_UFT_MAX_DEPTH ? max_depth :
			 VT_UFT_MAX_DEPTH + 1;
	vtpy_clock_ns = !strcmp(clock, "ns");
	cfg.dir = dir;
	cfg.exename = exename && *exename ? exename : "python3";
	cfg.cmdline = cmdline;
	cfg.lines = st.nr_prefixes > 0;
	if (vtpy_session_open(&cfg) < 0) {
		PyErr_Format(vtpy_session_errno() == EACCES || errno == EACCES ?
			     PyExc_PermissionError : PyExc_OSError, "vmtrace: %s", vt_err_msg());
		return NULL;
	}
	st.sessno++;
	syms_rewrite();
	if (hooks_install() < 0 || backend_start() < 0) {
		PyObject *et, *ev, *tb;

		/* the caller gets the reason (hooks_remove clears errors) */
		PyErr_Fetch(&et, &ev, &tb);
		hooks_remove();
		vtpy_session_close(-1);
		PyErr_Restore(et, ev, tb);
		return NULL;
	}
	st.active = 1;
	ev_mark("trace_start");
	Py_RETURN_NONE;
}

static PyObject *vt_stop(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "exit_status", NULL };
	int exit_status = -1;
	uint64_t lost;
	int err;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|i", kwlist, &exit_status))
		return NULL;
	if (!st.active)
		Py_RETURN_NONE;
	ev_mark("trace_stop");
	st.active = 0;
	backend_stop();
	hooks_remove();
	err = vtpy_session_errno();
	lost = vtpy_session_close(exit_status);
	return Py_BuildValue("{s:K,s:i,s:s}", "lost", (unsigned long long)lost, "errno", err,
			     "dir", vtpy_session_dir());
}

static PyObject *vt_active(PyObject *self, PyObject *unused)
{
	return PyBool_FromLong(st.active);
}

static PyObject *vt_trim(PyObject *self, PyObject *args)
{
	const char *path;
	long n;

	if (!PyArg_ParseTuple(args, "s", &path))
		return NULL;
	n = vtpy_dat_finish(path);
	if (n < 0)
		return PyErr_Format(PyExc_OSError, "vmtrace: %s", vt_err_msg());
	return PyLong_FromLong(n);
}

static PyObject *vt_rdtsc_py(PyObject *self, PyObject *unused)
{
	return PyLong_FromUnsignedLongLong(vt_rdtsc());
}

static PyMethodDef methods[] = {
	{ "start", (PyCFunction)(void (*)(void))vt_start, METH_VARARGS | METH_KEYWORDS,
	  "start(dir, lines=(), c_calls=True, max_depth=0, exename=None, cmdline=None,"
	  " clock='tsc'): begin tracing every thread into the uftrace directory dir." },
	{ "stop", (PyCFunction)(void (*)(void))vt_stop, METH_VARARGS | METH_KEYWORDS,
	  "stop(exit_status=-1) -> {'lost': N, 'errno': E, 'dir': D}: end tracing." },
	{ "active", vt_active, METH_NOARGS, "True while tracing." },
	{ "trim", vt_trim, METH_VARARGS,
	  "trim(path): cut a finished writer's .dat file after its last record and append"
	  " what its .stage file holds." },
	{ "rdtsc", vt_rdtsc_py, METH_NOARGS, "The raw TSC." },
	{ "marker", vtpy_marker, METH_NOARGS,
	  "marker() -> seq: send one in-band sync marker (a hypercall the host's"
	  " kvm_hypercall event records); None when not running under KVM." },
	{ "markers_start", vtpy_markers_start, METH_VARARGS,
	  "markers_start(interval_ms) -> bool: send a marker every interval_ms from a"
	  " C thread; False when not running under KVM." },
	{ "markers_stop", vtpy_markers_stop, METH_NOARGS,
	  "markers_stop() -> bool: end the periodic markers (True if they ran)." },
	{ NULL, NULL, 0, NULL },
};

static void fork_child(void)
{
	/* runs in the child of fork(), before Python code: C only */
	if (st.active && vtpy_session_fork_child() == 0)
		syms_rewrite();
	else if (st.active)
		st.active = 0;
}

static struct PyModuleDef moddef = {
	PyModuleDef_HEAD_INIT, "_vmtrace",
	"vmtrace's CPython tracer: Python events as uftrace records with the raw TSC.", -1,
	methods, NULL, NULL, NULL, NULL,
};

#if PY_VERSION_HEX < 0x03090000
/* 3.8's PyMODINIT_FUNC does not mark it visible (we build with
 * -fvisibility=hidden); 3.9+ adds that itself. */
__attribute__((visibility("default")))
#endif
PyMODINIT_FUNC PyInit__vmtrace(void)
{
	PyObject *m;

#if VTPY_MONITORING
	if (PyType_Ready(&Hook_Type) < 0)
		return NULL;
#endif
	st.extra_index = PyUnstable_Eval_RequestCodeExtraIndex(NULL);
	if (st.extra_index < 0) {
		PyErr_SetString(PyExc_RuntimeError, "vmtrace: no free code extra slot");
		return NULL;
	}
	pthread_atfork(NULL, NULL, fork_child);
	m = PyModule_Create(&moddef);
	if (!m)
		return NULL;
	PyModule_AddStringConstant(m, "backend", VTPY_BACKEND);
	PyModule_AddIntConstant(m, "TOOL_ID", VTPY_TOOL_ID);
	return m;
}
