/*
 * chain_hmap.c - the containers of the I/O chain analyser (chain_int.h):
 * growable vectors and an open-addressing u64 -> u32 map.  Merge thread;
 * allocates.
 */
#include <stdlib.h>
#include "err.h"
#include "grow.h"
#include "chain_int.h"

#define HMAP_CAP0	1024
#define VEC_CAP0	256	/* elements of a vector's first allocation */

int chain_vec_grow_slow(void **a, size_t *cap, size_t elem)
{
	if (vt_grow(a, cap, *cap + 1, elem, VEC_CAP0))
		return vt_err_set("report: out of memory");
	return 0;
}

uint32_t *chain_hmap_slot(struct chain_hmap *h, uint64_t key, int create)
{
	if (create && (h->n + 1) * 2 > h->cap) {
		size_t nc = h->cap ? h->cap * 2 : HMAP_CAP0;
		uint64_t *nk = calloc(nc, sizeof(*nk));
		uint32_t *nv = calloc(nc, sizeof(*nv));

		if (!nk || !nv) {
			free(nk);
			free(nv);
			return NULL;
		}
		for (size_t i = 0; i < h->cap; i++) {
			if (!h->k[i])
				continue;
			size_t j = chain_mix(h->k[i]) & (nc - 1);

			while (nk[j])
				j = (j + 1) & (nc - 1);
			nk[j] = h->k[i];
			nv[j] = h->v[i];
		}
		free(h->k);
		free(h->v);
		h->k = nk;
		h->v = nv;
		h->cap = nc;
	}
	if (!h->cap)
		return NULL;
	uint64_t k = key + 1;
	size_t j = chain_mix(k) & (h->cap - 1);

	while (h->k[j]) {
		if (h->k[j] == k)
			return &h->v[j];
		j = (j + 1) & (h->cap - 1);
	}
	if (!create)
		return NULL;
	h->k[j] = k;
	h->v[j] = UINT32_MAX;
	h->n++;
	return &h->v[j];
}

void chain_hmap_free(struct chain_hmap *h)
{
	free(h->k);
	free(h->v);
}
