/*
 * floor.c - _vtfloor, a bench-only CPython extension (tests/bench/python,
 * built by b-python.sh, never installed): the cost CPython itself puts
 * under any C tracer, for the breakdown in docs/benchmarks.md.
 *
 * Hook objects for sys.monitoring (3.12+) whose vectorcall does nothing
 * (NOOP) or only reads the TSC into a static (TSC), and the same two as a
 * C profile function for PyEval_SetProfile (3.8-3.11).  Called with the
 * GIL held by the interpreter's thread; nothing allocates per event.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

enum floor_mode {
	FLOOR_NOOP = 0,
	FLOOR_TSC = 1,
};

static volatile uint64_t floor_sink_tsc;

static inline uint64_t floor_rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

#if PY_VERSION_HEX >= 0x030C0000
typedef struct {
	PyObject_HEAD
	vectorcallfunc vectorcall;
} FloorHook;

static PyTypeObject FloorHook_Type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "_vtfloor.Hook",
	.tp_basicsize = sizeof(FloorHook),
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
	.tp_vectorcall_offset = offsetof(FloorHook, vectorcall),
	.tp_call = PyVectorcall_Call,
};

static PyObject *hook_noop(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kw)
{
	Py_RETURN_NONE;
}

static PyObject *hook_tsc(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kw)
{
	floor_sink_tsc = floor_rdtsc();
	Py_RETURN_NONE;
}

/* hook(mode) -> a callable for sys.monitoring.register_callback */
static PyObject *floor_hook(PyObject *self, PyObject *arg)
{
	long mode = PyLong_AsLong(arg);
	FloorHook *h;

	if (mode == -1 && PyErr_Occurred())
		return NULL;
	h = PyObject_New(FloorHook, &FloorHook_Type);
	if (!h)
		return NULL;
	h->vectorcall = mode == FLOOR_TSC ? hook_tsc : hook_noop;
	return (PyObject *)h;
}
#endif

static int prof_noop(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg)
{
	return 0;
}

static int prof_tsc(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg)
{
	floor_sink_tsc = floor_rdtsc();
	return 0;
}

/* setprofile(mode or None): a C profile function on the calling thread */
static PyObject *floor_setprofile(PyObject *self, PyObject *arg)
{
	long mode;

	if (arg == Py_None) {
		PyEval_SetProfile(NULL, NULL);
		Py_RETURN_NONE;
	}
	mode = PyLong_AsLong(arg);
	if (mode == -1 && PyErr_Occurred())
		return NULL;
	PyEval_SetProfile(mode == FLOOR_TSC ? prof_tsc : prof_noop, NULL);
	Py_RETURN_NONE;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* rdtsc_ns(n) -> wall ns per rdtsc over n back-to-back reads */
static PyObject *floor_rdtsc_ns(PyObject *self, PyObject *arg)
{
	long n = PyLong_AsLong(arg);
	uint64_t t0, t1;

	if (n <= 0) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_ValueError, "n must be > 0");
		return NULL;
	}
	t0 = mono_ns();
	for (long i = 0; i < n; i++)
		floor_sink_tsc = floor_rdtsc();
	t1 = mono_ns();
	return PyFloat_FromDouble((double)(t1 - t0) / (double)n);
}

static PyMethodDef floor_methods[] = {
#if PY_VERSION_HEX >= 0x030C0000
	{ "hook", floor_hook, METH_O, "hook(mode): 0 no-op, 1 rdtsc only" },
#endif
	{ "setprofile", floor_setprofile, METH_O, "setprofile(mode|None)" },
	{ "rdtsc_ns", floor_rdtsc_ns, METH_O, "rdtsc_ns(n): ns per rdtsc" },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef floor_def = {
	PyModuleDef_HEAD_INIT, "_vtfloor", "vmtrace bench: CPython's own tracing floor.", -1,
	floor_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__vtfloor(void)
{
#if PY_VERSION_HEX >= 0x030C0000
	if (PyType_Ready(&FloorHook_Type) < 0)
		return NULL;
#endif
	return PyModule_Create(&floor_def);
}
