/*
 * t-grow.c - lib/grow.c, the one growable-array primitive: the first
 * allocation takes the minimum, the capacity doubles until it holds what
 * is needed, the elements gained are zero and the ones held are kept, a
 * need within the capacity changes nothing, an absurd need fails with the
 * array unchanged.
 */
#include <stdint.h>
#include <stdlib.h>
#include "check.h"
#include "grow.h"

struct rec {
	uint64_t a;
	uint32_t b;
};

int main(void)
{
	struct rec *r = NULL;
	size_t cap = 0;
	int zero = 1;

	CHECK(vt_grow(&r, &cap, 1, sizeof(*r), 16) == 0);
	CHECK(r && cap == 16);
	for (size_t i = 0; i < cap; i++)
		zero &= !r[i].a && !r[i].b;
	CHECK(zero);
	r[15].a = 42;
	CHECK(vt_grow(&r, &cap, 16, sizeof(*r), 16) == 0 && cap == 16);	/* fits */
	CHECK(vt_grow(&r, &cap, 100, sizeof(*r), 16) == 0 && cap == 128);	/* 16 -> 128 */
	CHECK(r[15].a == 42);
	zero = 1;
	for (size_t i = 16; i < cap; i++)
		zero &= !r[i].a && !r[i].b;
	CHECK(zero);
	struct rec *before = r;

	CHECK(vt_grow(&r, &cap, SIZE_MAX / 2, sizeof(*r), 16) == -1);
	CHECK(r == before && cap == 128 && r[15].a == 42);
	free(r);

	uint8_t *b = NULL;
	size_t bc = 0;

	CHECK(vt_grow(&b, &bc, 5, 1, 0) == 0 && bc == 8);	/* no minimum: from 1 */
	free(b);
	/* elements of no size: refused, nothing allocated */
	{
		char *z = NULL;
		size_t zc = 0;

		CHECK(vt_grow(&z, &zc, 4, 0, 0) == -1 && z == NULL && zc == 0);
	}
	return check_done();
}
