/*
 * ext_profile.c - the PyEval_SetProfile/SetTrace backend of the Python
 * tracer (CPython 3.8-3.11, chosen at build time in ext.h): C profile
 * functions on every thread (threading.setprofile installs them on new
 * ones), a C trace function for --lines.  They run in the traced
 * program's threads with the GIL held.
 */
#include <string.h>
#include "ext.h"

#if !VTPY_MONITORING
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

/* C functions: hash lookups, kept out of prof_func's Python path. */
static VTPY_SLOW int prof_c(int what, PyObject *arg)
{
	if (!ext_st.c_calls)
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
		ev_code_entry_fast(frame_code(frame), 0);
		return 0;
	}
	if (what == PyTrace_RETURN) {
		/* arg is NULL when the frame is left by an exception */
		ev_code_exit_fast(frame_code(frame), arg ? 0 : VTPY_ADDR_UNWIND);
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
	if (!ext_sym_lines(idx)) {
		if (what == PyTrace_CALL && PyObject_SetAttrString((PyObject *)frame, "f_trace_lines",
								   Py_False) < 0)
			PyErr_Clear();
		return 0;
	}
	if (what == PyTrace_LINE) {
		li = ext_line_index(idx, PyFrame_GetLineNumber(frame));
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
	if (ext_st.nr_prefixes && ts_set_trace(ts, on ? trace_func : NULL) < 0)
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
	if (!ext_st.active)
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

int ext_backend_start(void)
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
			ext_backend_stop();
			return -1;
		}
	}
	return 0;
}

/* Remove the C functions from every thread; keeps a pending exception. */
void ext_backend_stop(void)
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

int ext_backend_init(void)
{
	return 0;
}

#endif
