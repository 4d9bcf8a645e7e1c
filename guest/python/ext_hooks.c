/*
 * ext_hooks.c - the Python tracer's import and gc hooks (both backends,
 * ext.h): builtins.__import__ wrapped so that module loads (not
 * sys.modules hits) become "import NAME" calls, and a gc callback that
 * records each collection as a "gc.collect(genN)" call.  GIL held.
 */
#include <stdio.h>
#include <string.h>
#include "ext.h"

static PyObject *import_hook(PyObject *self, PyObject *args, PyObject *kw)
{
	PyObject *name = PyTuple_GET_SIZE(args) ? PyTuple_GET_ITEM(args, 0) : NULL;
	PyObject *level = PyTuple_GET_SIZE(args) > 4 ? PyTuple_GET_ITEM(args, 4) : NULL;
	PyObject *r;
	long idx = -1;

	if (!ext_st.orig_import) {
		PyErr_SetString(PyExc_ImportError, "vmtrace: no __import__ to call");
		return NULL;
	}
	/* only imports that load something: sys.modules hits are free */
	if (ext_st.active && name && PyUnicode_Check(name) &&
	    (!ext_st.modules || (level && PyLong_Check(level) && PyLong_AsLong(level) > 0) ||
	     !PyDict_GetItemWithError(ext_st.modules, name))) {
		PyErr_Clear();
		idx = ext_named_index("import ", name);
	}
	if (idx >= 0)
		vtpy_entry(sym_addr(idx));
	r = PyObject_Call(ext_st.orig_import, args, kw);
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
	if (!ext_st.active || !PyDict_Check(info))
		Py_RETURN_NONE;
	v = PyDict_GetItemString(info, "generation");
	if (v)
		gen = PyLong_AsLong(v);
	if (gen < 0 || gen > 2)
		gen = 2;
	if (!strcmp(phase, "start")) {
		vtpy_entry(ext_st.gc_addr[gen]);
	} else {
		vtpy_exit(ext_st.gc_addr[gen]);
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

int ext_hooks_install(void)
{
	PyObject *builtins = PyEval_GetBuiltins(), *gc, *cbs;
	int rc;

	for (int gen = 0; gen < 3; gen++) {
		char name[32];
		long idx;

		snprintf(name, sizeof(name), "gc.collect(gen%d)", gen);
		if (!ext_st.gc_addr[gen]) {
			idx = ext_sym_new(name, "");
			if (idx < 0)
				return -1;
			ext_st.gc_addr[gen] = sym_addr(idx);
		}
	}
	ext_st.modules = PySys_GetObject("modules");
	Py_XINCREF(ext_st.modules);
	if (!ext_st.import_hook)
		ext_st.import_hook = PyCFunction_New(&import_def, NULL);
	if (!ext_st.gc_hook)
		ext_st.gc_hook = PyCFunction_New(&gc_def, NULL);
	if (!ext_st.import_hook || !ext_st.gc_hook)
		return -1;
	Py_XSETREF(ext_st.orig_import, PyDict_GetItemString(builtins, "__import__"));
	Py_XINCREF(ext_st.orig_import);
	if (ext_st.orig_import && PyDict_SetItemString(builtins, "__import__", ext_st.import_hook) < 0)
		return -1;
	gc = PyImport_ImportModule("gc");
	if (!gc)
		return -1;
	cbs = PyObject_GetAttrString(gc, "callbacks");
	Py_DECREF(gc);
	if (!cbs)
		return -1;
	rc = PyList_Append(cbs, ext_st.gc_hook);
	Py_DECREF(cbs);
	return rc;
}

void ext_hooks_remove(void)
{
	PyObject *builtins = PyEval_GetBuiltins(), *gc, *cbs, *r;

	if (ext_st.orig_import && builtins &&
	    PyDict_GetItemString(builtins, "__import__") == ext_st.import_hook)
		PyDict_SetItemString(builtins, "__import__", ext_st.orig_import);
	gc = PyImport_ImportModule("gc");
	cbs = gc ? PyObject_GetAttrString(gc, "callbacks") : NULL;
	r = cbs ? PyObject_CallMethod(cbs, "remove", "O", ext_st.gc_hook) : NULL;
	Py_XDECREF(r);
	Py_XDECREF(cbs);
	Py_XDECREF(gc);
	Py_CLEAR(ext_st.modules);
	PyErr_Clear();
}
