/*
 * ext_names.c - the symbols of the Python tracer (ext.h): a name made
 * once per code object (kept in its co_extra), C callable, code-like
 * object, line and import, appended to the session's .sym file; the
 * --lines match of each.  Runs in the traced program's threads with the
 * GIL held, on an object's first event only (allocates).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ext.h"
#include "utf8.h"

/* Open-addressing table for symbols not keyed by a code object. */
#define KEYTAB_MIN	1024

static int prefix_match(const char *module)
{
	for (int i = 0; i < ext_st.nr_prefixes; i++) {
		size_t n = strlen(ext_st.prefixes[i]);

		if (!strncmp(module, ext_st.prefixes[i], n) &&
		    (module[n] == '\0' || module[n] == '.' || ext_st.prefixes[i][n - 1] == '.' ||
		     n == 0))
			return 1;
	}
	return 0;
}

/* A new symbol: kept in memory (a later session or fork child writes it
 * again) and appended to the current .sym file.  -1 when full.  @name was
 * cut to its buffer by bytes: it is kept valid UTF-8 (a character the cut
 * split dropped, lib/utf8.h). */
long ext_sym_new(const char *name, const char *module)
{
	struct vtpy_sym *s;
	size_t len = strlen(name);

	if (ext_st.nr >= VTPY_SYM_MAX)
		return -1;
	if (ext_st.nr == ext_st.alloc) {
		size_t n = ext_st.alloc ? ext_st.alloc * 2 : 1024;
		void *p = realloc(ext_st.syms, n * sizeof(*ext_st.syms));

		if (!p)
			return -1;
		ext_st.syms = p;
		ext_st.alloc = n;
	}
	s = &ext_st.syms[ext_st.nr];
	s->name = malloc(len * VT_UTF8_REPL_LEN + 1);
	s->module = strdup(module ? module : "");
	if (!s->name || !s->module) {
		free(s->name);
		free(s->module);
		return -1;
	}
	vt_utf8_clean(s->name, len * VT_UTF8_REPL_LEN + 1, name, len);
	s->lines_sess = 0;
	s->decided_sess = 0;
	vtpy_session_sym(VTPY_ADDR_BASE + ext_st.nr * VTPY_SYM_SLOT, s->name);
	return (long)ext_st.nr++;
}


void ext_sym_decide_lines(struct vtpy_sym *s)
{
	s->decided_sess = ext_st.sessno;
	s->lines_sess = ext_st.nr_prefixes && prefix_match(s->module) ? ext_st.sessno : 0;
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
	size_t mask = ext_st.keytab_size - 1, i;

	if (unlikely(!ext_st.keytab_size))
		return -1;
	for (i = key_hash(key) & mask; ext_st.vals[i]; i = (i + 1) & mask)
		if (ext_st.keys[i] == key)
			return (long)ext_st.vals[i] - 1;
	return -1;
}

static int key_add(uint64_t key, long idx)
{
	size_t mask, i;

	if ((ext_st.keytab_used + 1) * 2 > ext_st.keytab_size) {
		size_t n = ext_st.keytab_size ? ext_st.keytab_size * 2 : KEYTAB_MIN;
		uint64_t *k = calloc(n, sizeof(*k));
		uint32_t *v = calloc(n, sizeof(*v));

		if (!k || !v) {
			free(k);
			free(v);
			return -1;
		}
		for (size_t j = 0; j < ext_st.keytab_size; j++) {
			if (!ext_st.vals[j])
				continue;
			for (i = key_hash(ext_st.keys[j]) & (n - 1); v[i]; i = (i + 1) & (n - 1))
				;
			k[i] = ext_st.keys[j];
			v[i] = ext_st.vals[j];
		}
		free(ext_st.keys);
		free(ext_st.vals);
		ext_st.keys = k;
		ext_st.vals = v;
		ext_st.keytab_size = n;
	}
	mask = ext_st.keytab_size - 1;
	for (i = key_hash(key) & mask; ext_st.vals[i]; i = (i + 1) & mask)
		;
	ext_st.keys[i] = key;
	ext_st.vals[i] = (uint32_t)(idx + 1);
	ext_st.keytab_used++;
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


/* First sight of a code object: name it, remember its word in co_extra. */
long ext_code_register(PyCodeObject *co)
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
	idx = ext_sym_new(buf, module);
	if (idx < 0)
		return -1;
	if (PyUnstable_Code_SetExtra((PyObject *)co, ext_st.extra_index,
				     (void *)(uintptr_t)sym_word(idx)) < 0) {
		PyErr_Clear();
		return -1;
	}
	return idx;
}


/* The class that defines C method @ml, found on @tp's MRO (a method
 * inherited from a base is the base's: one PyMethodDef, one name, whichever
 * subclass calls it first); @tp itself if none lists it. */
static PyTypeObject *defining_type(PyTypeObject *tp, const PyMethodDef *ml)
{
	PyObject *mro = tp->tp_mro;

	if (!mro || !PyTuple_Check(mro))
		return tp;
	for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); i++) {
		PyObject *b = PyTuple_GET_ITEM(mro, i);
		const PyMethodDef *m;

		if (!PyType_Check(b))
			continue;
		for (m = ((PyTypeObject *)b)->tp_methods; m && m->ml_name; m++)
			if (m == ml)
				return (PyTypeObject *)b;
	}
	return tp;
}

/* A callable that is not Python code: builtins, methods of C types,
 * classes, and the code-like objects of PyMonitoring_Fire*Event. */
long ext_object_index(PyObject *obj, int codelike)
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
			owner = defining_type(Py_TYPE(f->m_self), f->m_ml)->tp_name;
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
	} else if (!codelike && Py_TYPE(obj) == &PyMethodDescr_Type) {
		/* an unbound C method: the class that defines it */
		PyMethodDescrObject *d = (PyMethodDescrObject *)obj;

		idx = key_find(key);
		if (likely(idx >= 0))
			return idx;
		owner = d->d_common.d_type ? d->d_common.d_type->tp_name : NULL;
		name = d->d_method ? d->d_method->ml_name : NULL;
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
	idx = ext_sym_new(buf, codelike ? frame_module() : "");
	if (idx >= 0 && key_add(key, idx) < 0)
		return -1;
	return idx;
}


/* The line symbol "<function>:<line>" of code symbol @idx. */
long ext_line_index(long idx, int line)
{
	uint64_t key = ((uint64_t)(idx + 1) << 32) | (uint32_t)line | (1ULL << 63);
	long li = key_find(key);
	char buf[1100];
	const char *fn, *sp;

	if (likely(li >= 0))
		return li;
	fn = ext_st.syms[idx].name;		/* a new line: its name, once */
	sp = strstr(fn, " (");
	snprintf(buf, sizeof(buf), "%.*s:%d%s", sp ? (int)(sp - fn) : (int)strlen(fn), fn, line,
		 sp ? sp : "");
	li = ext_sym_new(buf, ext_st.syms[idx].module);
	if (li >= 0 && key_add(key, li) < 0)
		return -1;
	return li;
}

long ext_named_index(const char *prefix, PyObject *nameobj)
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
	idx = ext_sym_new(buf, "");
	if (idx < 0 || key_add(key, idx) < 0) {
		Py_DECREF(interned);
		return -1;
	}
	/* the reference stays: the key must not be reused by another name */
	return idx;
}
