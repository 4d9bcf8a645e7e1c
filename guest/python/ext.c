/*
 * ext.c - vmtrace._vmtrace, the CPython extension of the guest Python
 * tracer: C callbacks that turn Python events into uftrace records
 * (vtpy.h) with the raw TSC.  Backend chosen at build time: sys.monitoring
 * (PEP 669, tool id PROFILER) on 3.12+, PyEval_SetProfile/SetTrace before.
 * Callbacks run in the traced program's threads with the GIL held; the
 * per-event work is a co_extra lookup, a TSC read and two stores.  Names
 * are made (and allocate) once per code object / C function, on first use.
 * This file is the module (its functions and PyInit); the other parts are
 * listed in ext.h.
 */
#include "ext.h"
#include "pymarker.h"
#include <pthread.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "err.h"
#include "meta.h"

struct ext_state ext_st;

void vtpy_meta_extra(struct vt_meta *m)
{
	vt_meta_set(m, VT_MK_PYTHON_VERSION, "%s", Py_GetVersion());
	vt_meta_set(m, VT_MK_PYTHON_VERSION_HEX, "0x%08lx", (unsigned long)PY_VERSION_HEX);
	vt_meta_set(m, VT_MK_PYTHON_BACKEND, "%s", VTPY_BACKEND);
	vt_meta_set(m, VT_MK_PYTHON_C_CALLS, "%d", ext_st.c_calls);
	vt_meta_set(m, VT_MK_PYTHON_MAX_DEPTH, "%u", vtpy_max_depth);
	if (!vtpy_clock_ns) {
		/* no calibration sleep inside the traced program */
		struct vt_tsc_freq f;

		if (vt_tsc_freq_opts(&f, VT_TSC_NO_CALIBRATE) == 0)
			vt_tsc_meta_set(m, &f);
	}
	if (ext_st.nr_prefixes) {
		char buf[2048] = "";
		size_t n = 0;

		for (int i = 0; i < ext_st.nr_prefixes && n < sizeof(buf) - 1; i++)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? "," : "",
					      ext_st.prefixes[i]);
		vt_meta_set(m, VT_MK_PYTHON_LINES, "%s", buf);
	}
}

static void prefixes_free(void)
{
	for (int i = 0; i < ext_st.nr_prefixes; i++)
		free(ext_st.prefixes[i]);
	free(ext_st.prefixes);
	ext_st.prefixes = NULL;
	ext_st.nr_prefixes = 0;
}

/* Write every symbol known so far into a new session's .sym file. */
static void syms_rewrite(void)
{
	for (size_t i = 0; i < ext_st.nr; i++)
		vtpy_session_sym(sym_addr((long)i), ext_st.syms[i].name);
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
	if (ext_st.active) {
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
		ext_st.prefixes = calloc((size_t)n + 1, sizeof(char *));
		for (Py_ssize_t i = 0; ext_st.prefixes && i < n; i++) {
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
			ext_st.prefixes[ext_st.nr_prefixes++] = strdup(p);
		}
		Py_DECREF(seq);
	}
	ext_st.c_calls = c_calls;
	vtpy_max_depth = max_depth && max_depth <= VT_UFT_MAX_DEPTH ? max_depth :
			 VT_UFT_MAX_DEPTH + 1;
	vtpy_clock_ns = !strcmp(clock, "ns");
	cfg.dir = dir;
	cfg.exename = exename && *exename ? exename : "python3";
	cfg.cmdline = cmdline;
	cfg.lines = ext_st.nr_prefixes > 0;
	if (vtpy_session_open(&cfg) < 0) {
		PyErr_Format(vtpy_session_errno() == EACCES || errno == EACCES ?
			     PyExc_PermissionError : PyExc_OSError, "vmtrace: %s", vt_err_msg());
		return NULL;
	}
	ext_st.sessno++;
	syms_rewrite();
	if (ext_hooks_install() < 0 || ext_backend_start() < 0) {
		PyObject *et, *ev, *tb;

		/* the caller gets the reason (ext_hooks_remove clears errors) */
		PyErr_Fetch(&et, &ev, &tb);
		ext_hooks_remove();
		vtpy_session_close(-1);
		PyErr_Restore(et, ev, tb);
		return NULL;
	}
	ext_st.active = 1;
	ext_mark("trace_start");
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
	if (!ext_st.active)
		Py_RETURN_NONE;
	ext_mark("trace_stop");
	ext_st.active = 0;
	ext_backend_stop();
	ext_hooks_remove();
	err = vtpy_session_errno();
	lost = vtpy_session_close(exit_status);
	return Py_BuildValue("{s:K,s:i,s:s}", "lost", (unsigned long long)lost, "errno", err,
			     "dir", vtpy_session_dir());
}

static PyObject *vt_active(PyObject *self, PyObject *unused)
{
	return PyBool_FromLong(ext_st.active);
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

static PyObject *vt_finish_ns(PyObject *self, PyObject *args)
{
	const char *dir;
	int r;

	if (!PyArg_ParseTuple(args, "s", &dir))
		return NULL;
	r = vtpy_dir_finish_ns(dir);
	if (r < 0)
		return PyErr_Format(PyExc_OSError, "vmtrace: %s", vt_err_msg());
	return PyBool_FromLong(r == VT_UFT_FIN_DONE || r == VT_UFT_FIN_PARTIAL);
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
	{ "finish_ns", vt_finish_ns, METH_VARARGS,
	  "finish_ns(dir) -> bool: make a finished writer's clock=tsc directory readable by"
	  " uftrace (ns copies of its .dat files and task.txt, the TSC stamps kept as .tsc);"
	  " False when it is not one or its TSC frequency is unknown." },
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
	if (ext_st.active && vtpy_session_fork_child() == 0)
		syms_rewrite();
	else if (ext_st.active)
		ext_st.active = 0;
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

	if (ext_backend_init() < 0)
		return NULL;
	ext_st.extra_index = PyUnstable_Eval_RequestCodeExtraIndex(NULL);
	if (ext_st.extra_index < 0) {
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
