/*
 * ext_monitoring.c - the sys.monitoring backend of the Python tracer
 * (PEP 669, tool id PROFILER; CPython 3.12+, chosen at build time in
 * ext.h): vectorcall hooks registered per event that write the records
 * (ext.h's inline fast path), DISABLE for call sites of Python callees,
 * local LINE events for --lines.  Hooks run in the traced program's
 * threads with the GIL held.
 */
#include "ext.h"

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
#define RET_DISABLE	return Py_NewRef(ext_st.disable)

static VTPY_SLOW PyObject *hk_py_start_slow(PyObject *code)
{
	long idx = any_code_index(code);

	if (unlikely(idx < 0))
		RET_NONE;
	vtpy_entry(sym_addr(idx));
	if (unlikely(ext_st.nr_prefixes) && PyCode_Check(code) && ext_sym_lines(idx)) {
		/* lines of this code only: local events, decided once */
		PyObject *mon = PySys_GetObject("monitoring");
		PyObject *r = mon ? PyObject_CallMethod(mon, "set_local_events", "iOl", VTPY_TOOL_ID,
							code, ext_st.line_event) : NULL;

		if (!r)
			PyErr_Clear();
		Py_XDECREF(r);
	}
	RET_NONE;
}

/*
 * The PY_* hooks: args[0] is the frame's code object, always (CPython
 * passes _PyFrame_GetCode(frame)), so the fast path reads its co_extra
 * with no type check.  --lines needs the general path here (fast_end is
 * NULL then).
 */
static PyObject *hk_py_start(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kw)
{
	PyObject *code = args[0];
	uint64_t w = code_word_co((PyCodeObject *)code);

	if (unlikely(!w || vtpy_entry_fast(w) < 0))
		return hk_py_start_slow(code);
	RET_NONE;
}

static PyObject *hk_py_resume(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kw)
{
	ev_code_entry_fast((PyCodeObject *)args[0], VTPY_ADDR_GEN);
	RET_NONE;
}

static PyObject *hk_py_return(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kw)
{
	ev_code_exit_fast((PyCodeObject *)args[0], 0);
	RET_NONE;
}

static PyObject *hk_py_yield(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kw)
{
	ev_code_exit_fast((PyCodeObject *)args[0], VTPY_ADDR_GEN);
	RET_NONE;
}

static PyObject *hk_py_unwind(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kw)
{
	ev_code_exit_fast((PyCodeObject *)args[0], VTPY_ADDR_UNWIND);
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
	if (idx < 0 || !ext_sym_lines(idx))
		RET_DISABLE;
	line = (int)PyLong_AsLong(args[1]);
	li = ext_line_index(idx, line);
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

int ext_backend_start(void)
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
	ext_st.nr_hook_events = 0;
	Py_XSETREF(ext_st.disable, PyObject_GetAttrString(mon, "DISABLE"));
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
			ext_st.line_event = bit;
		if ((d->c_call && !ext_st.c_calls) || (d->line && !ext_st.nr_prefixes))
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
		if ((size_t)ext_st.nr_hook_events < VT_ARRAY_SIZE(ext_st.hook_events))
			ext_st.hook_events[ext_st.nr_hook_events++] = bit;
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

void ext_backend_stop(void)
{
	PyObject *mon = PySys_GetObject("monitoring"), *r, *exc;

	if (!mon)
		return;
	exc = PyErr_GetRaisedException();
	r = PyObject_CallMethod(mon, "set_events", "il", VTPY_TOOL_ID, 0L);
	Py_XDECREF(r);
	for (int i = 0; i < ext_st.nr_hook_events; i++) {
		r = PyObject_CallMethod(mon, "register_callback", "ilO", VTPY_TOOL_ID,
					ext_st.hook_events[i], Py_None);
		Py_XDECREF(r);
		PyErr_Clear();
	}
	ext_st.nr_hook_events = 0;
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

int ext_backend_init(void)
{
	return PyType_Ready(&Hook_Type);
}

#endif
