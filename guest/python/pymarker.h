/*
 * pymarker.h - the extension's in-band sync marker functions (marker.c),
 * module methods of vmtrace._vmtrace.  Include after <Python.h>.
 */
#ifndef VTPY_PYMARKER_H
#define VTPY_PYMARKER_H

/* marker() -> seq of the in-band hypercall marker sent, None off KVM. */
PyObject *vtpy_marker(PyObject *self, PyObject *unused);
/* markers_start(interval_ms) -> bool: a C thread sends one every interval. */
PyObject *vtpy_markers_start(PyObject *self, PyObject *args);
/* markers_stop() -> bool: stop that thread, its last marker closed. */
PyObject *vtpy_markers_stop(PyObject *self, PyObject *unused);

#endif
