/*
 * fire.c - a test extension for CPython 3.13+: fires PY_START/PY_RETURN
 * through the monitoring C-API (PyMonitoring_*) for a "code-like" object,
 * as Cython-compiled code does (CPython issue 111997).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *fire(PyObject *self, PyObject *codelike)
{
	PyMonitoringState state[2] = { { 0 } };
	uint8_t events[2] = { PY_MONITORING_EVENT_PY_START, PY_MONITORING_EVENT_PY_RETURN };
	uint64_t version = 0;

	if (PyMonitoring_EnterScope(state, &version, events, 2) < 0)
		return NULL;
	if (PyMonitoring_FirePyStartEvent(&state[0], codelike, 0) < 0 ||
	    PyMonitoring_FirePyReturnEvent(&state[1], codelike, 0, Py_None) < 0) {
		PyMonitoring_ExitScope();
		return NULL;
	}
	PyMonitoring_ExitScope();
	Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
	{ "fire", fire, METH_O, "fire PY_START and PY_RETURN for a code-like object" },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef mod = {
	PyModuleDef_HEAD_INIT, .m_name = "vtfire", .m_size = -1, .m_methods = methods,
};

PyMODINIT_FUNC PyInit_vtfire(void)
{
	return PyModule_Create(&mod);
}
