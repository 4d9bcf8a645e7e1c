/*
 * marker.c - in-band sync markers from Python (vmtrace.marker(), and the
 * tracer's `markers_ms` option): hypercall markers of lib/marker.h, whose
 * registers carry the guest's TSC readings into the host's kvm_hypercall
 * events, so the host trace alone proves the guest<->host clock map.
 * Works from guest user space with no privilege (KVM traces the call, then
 * refuses it).  One chain of readings per process, under a mutex: calls
 * from Python threads and the periodic C thread interleave safely.  The
 * periodic thread is a C thread, invisible to the Python tracer.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#include "marker.h"
#include "pymarker.h"

#define MARKER_MAX_MS	(3600 * 1000)

static pthread_mutex_t mk_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vt_marker_hc mk_hc;
static int mk_state;		/* 0 unknown, 1 under KVM, -1 not KVM */
static pthread_t mk_thread;
static int mk_running;
static unsigned mk_interval_ms;
static pthread_cond_t mk_cond = PTHREAD_COND_INITIALIZER;

/* Caller holds mk_lock.  1 when hypercalls may be made.  The chain is
 * this process's (a forked child starts its own). */
static int mk_ready(void)
{
	uint32_t pid = (uint32_t)getpid();

	if (!mk_state)
		mk_state = vt_marker_hc_init(&mk_hc) ? 1 : -1;
	if (mk_hc.chain != pid) {
		mk_hc.chain = pid;
		mk_hc.prev_after = 0;
	}
	return mk_state > 0;
}

static uint32_t mk_cpu(void)
{
	int c = sched_getcpu();

	return c >= 0 ? (uint32_t)c : VT_MARKER_CPU_NONE;
}

/* One marker and the closing call carrying its "after" (caller holds
 * mk_lock); returns its seq. */
static uint64_t mk_emit_closed(void)
{
	struct vt_marker rec;

	vt_marker_emit_hypercall(&rec, &mk_hc, mk_cpu());
	vt_marker_hc_close(&mk_hc, VT_MARKER_CPU_NONE);
	return rec.seq;
}

static void *mk_loop(void *arg)
{
	struct timespec ts;
	struct vt_marker rec;

	(void)arg;
	pthread_mutex_lock(&mk_lock);
	while (mk_running) {
		/* chained: each marker's "after" rides in the next call */
		vt_marker_emit_hypercall(&rec, &mk_hc, mk_cpu());
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += mk_interval_ms / 1000;
		ts.tv_nsec += (long)(mk_interval_ms % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		while (mk_running && pthread_cond_timedwait(&mk_cond, &mk_lock, &ts) != ETIMEDOUT)
			;
	}
	vt_marker_hc_close(&mk_hc, VT_MARKER_CPU_NONE);
	pthread_mutex_unlock(&mk_lock);
	return NULL;
}

/* marker() -> seq, or None when not running under KVM */
PyObject *vtpy_marker(PyObject *self, PyObject *unused)
{
	uint64_t seq = 0;
	int ok;

	(void)self;
	(void)unused;
	Py_BEGIN_ALLOW_THREADS
	pthread_mutex_lock(&mk_lock);
	ok = mk_ready() && !mk_running;
	if (ok)
		seq = mk_emit_closed();
	pthread_mutex_unlock(&mk_lock);
	Py_END_ALLOW_THREADS
	if (!ok) {
		if (mk_running)
			return PyErr_Format(PyExc_RuntimeError,
					    "vmtrace: periodic markers are running (every %u ms)",
					    mk_interval_ms);
		Py_RETURN_NONE;
	}
	return PyLong_FromUnsignedLongLong(seq);
}

/* markers_start(interval_ms) -> True when started, False when not under KVM */
PyObject *vtpy_markers_start(PyObject *self, PyObject *args)
{
	unsigned interval;
	int rc = 0, ok;

	(void)self;
	if (!PyArg_ParseTuple(args, "I", &interval))
		return NULL;
	if (!interval || interval > MARKER_MAX_MS)
		return PyErr_Format(PyExc_ValueError, "vmtrace: marker interval %u ms: want 1..%d",
				    interval, MARKER_MAX_MS);
	pthread_mutex_lock(&mk_lock);
	if (mk_running) {
		pthread_mutex_unlock(&mk_lock);
		return PyErr_Format(PyExc_RuntimeError, "vmtrace: periodic markers already running");
	}
	ok = mk_ready();
	if (ok) {
		mk_interval_ms = interval;
		mk_running = 1;
		rc = pthread_create(&mk_thread, NULL, mk_loop, NULL);
		if (rc)
			mk_running = 0;
	}
	pthread_mutex_unlock(&mk_lock);
	if (rc) {
		errno = rc;
		return PyErr_SetFromErrno(PyExc_OSError);
	}
	return PyBool_FromLong(ok);
}

/* markers_stop(): end the periodic thread (its last marker gets closed) */
PyObject *vtpy_markers_stop(PyObject *self, PyObject *unused)
{
	int was;

	(void)self;
	(void)unused;
	pthread_mutex_lock(&mk_lock);
	was = mk_running;
	mk_running = 0;
	pthread_cond_broadcast(&mk_cond);
	pthread_mutex_unlock(&mk_lock);
	if (was) {
		Py_BEGIN_ALLOW_THREADS
		pthread_join(mk_thread, NULL);
		Py_END_ALLOW_THREADS
	}
	return PyBool_FromLong(was);
}
