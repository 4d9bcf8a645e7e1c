/*
 * ext_events.c - the events both backends share (ext.h), out of line:
 * the general path of a code entry/exit (a code object seen for the first
 * time, a full buffer) and the trace start/stop markers.  The per-event
 * fast path is inline in ext.h.  GIL held.
 */
#include "ext.h"

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

VTPY_SLOW void ext_code_entry_slow(PyObject *code, uint64_t flags)
{
	ev_code_entry(code, flags);
}

VTPY_SLOW void ext_code_exit_slow(PyObject *code, uint64_t flags)
{
	ev_code_exit(code, flags);
}

/* A marker "call" of zero length: trace start/stop. */
void ext_mark(const char *name)
{
	PyObject *n = PyUnicode_FromString(name);
	long idx;

	if (!n) {
		PyErr_Clear();
		return;
	}
	idx = ext_named_index("vmtrace.", n);
	Py_DECREF(n);
	if (idx >= 0) {
		vtpy_entry(sym_addr(idx));
		vtpy_exit(sym_addr(idx));
	}
}
