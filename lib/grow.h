/*
 * grow.h - the one growable-array primitive of vmtrace's tools (host-side
 * commands; not for the runtimes inside traced programs): an array grows by
 * doubling, and the elements it gains are zero.  Callers keep their array
 * as a pointer and a capacity; the typed wrappers (merge's tables, the
 * report's VEC, align's gathering lists) sit on this one function.
 */
#ifndef VT_GROW_H
#define VT_GROW_H

#include <stddef.h>
#include <stdlib.h>

/*
 * Make the array *@arr (a pointer to the array pointer, of @elem-byte
 * elements, *@cap allocated) hold at least @need elements: the capacity
 * doubles from @min (used when the array is empty); the new elements are
 * zero-filled.  0, or -1 when out of memory or @need is absurd (no message
 * set: the caller names what it was growing); the array is unchanged then.
 */
int vt_grow(void *arr, size_t *cap, size_t need, size_t elem, size_t min);

/*
 * qsort() of @n elements of @base, which may be NULL when @n is 0 (an
 * array that never grew): qsort's base must never be NULL, even for no
 * elements, and sanitizers fail on it.  Every host-side sort goes here.
 */
static inline void vt_sort(void *base, size_t n, size_t size,
			   int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

#endif
