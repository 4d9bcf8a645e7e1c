/*
 * grow.c - the one growable-array primitive (lib/grow.h).  Any thread;
 * allocates.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "grow.h"

int vt_grow(void *arr, size_t *cap, size_t need, size_t elem, size_t min)
{
	size_t nc = *cap ? *cap : (min ? min : 1);
	char *old, *na;

	if (need <= *cap)
		return 0;
	if (!elem || need > SIZE_MAX / 2 / elem)
		return -1;
	while (nc < need)
		nc *= 2;
	/* the array pointer is read and written as bytes: it may point to
	 * any element type */
	memcpy(&old, arr, sizeof(old));
	na = realloc(old, nc * elem);
	if (!na)
		return -1;
	memset(na + *cap * elem, 0, (nc - *cap) * elem);
	memcpy(arr, &na, sizeof(na));
	*cap = nc;
	return 0;
}
