/*
 * app.c - the traced code of the unikernel example's guest: every function
 * here is built -pg and enters the freestanding mcount runtime.  A table of
 * keys is filled (hashing), sorted, searched and checksummed in rounds; a
 * sync marker is emitted before the first round and after each one.  Runs
 * on the boot CPU with interrupts off; no allocation (static table).
 */
#include <stddef.h>
#include <stdint.h>
#include "app.h"

#define APP_KEYS	48
#define APP_LOOKUPS	12
#define APP_LOOKUP_STEP	3	/* every third key of a round is looked up */
#define FNV_BASIS	2166136261u
#define FNV_PRIME	16777619u
#define CRC_POLY	0xedb88320u
#define BITS_PER_BYTE	8
#define BYTE_MASK	0xffu
#define U32_BYTES	((int)sizeof(uint32_t))
#define U32_BITS	(U32_BYTES * BITS_PER_BYTE)
/* what the example's host side prints as the guest program */
#define APP_HELLO	"program=vmtrace-example-unikernel\n"

static uint32_t keys[APP_KEYS];

const struct unik_app unik_app = {
	.hello = APP_HELLO,
	.nr_marks = APP_NR_MARKS,
	.run = app_run,
};

static uint32_t hash_u32(uint32_t v)
{
	uint32_t h = FNV_BASIS;

	for (int i = 0; i < U32_BYTES; i++) {
		h ^= (v >> (BITS_PER_BYTE * i)) & BYTE_MASK;
		h *= FNV_PRIME;
	}
	return h;
}

static void fill(uint32_t seed)
{
	for (int i = 0; i < APP_KEYS; i++)
		keys[i] = hash_u32(seed * APP_KEYS + (uint32_t)i);
}

static void sort_keys(void)
{
	for (int i = 1; i < APP_KEYS; i++) {
		uint32_t k = keys[i];
		int j = i - 1;

		while (j >= 0 && keys[j] > k) {
			keys[j + 1] = keys[j];
			j--;
		}
		keys[j + 1] = k;
	}
}

static int search(uint32_t k)
{
	int lo = 0, hi = APP_KEYS - 1;

	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;

		if (keys[mid] == k)
			return mid;
		if (keys[mid] < k)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

static uint32_t crc32_keys(void)
{
	uint32_t crc = ~0u;

	for (int i = 0; i < APP_KEYS; i++) {
		crc ^= keys[i];
		for (int b = 0; b < U32_BITS; b++)
			crc = (crc >> 1) ^ (CRC_POLY & -(crc & 1));
	}
	return ~crc;
}

static uint32_t one_round(uint32_t seed)
{
	uint32_t found = 0;

	fill(seed);
	sort_keys();
	for (uint32_t i = 0; i < APP_LOOKUPS; i++)
		found += search(hash_u32(seed * APP_KEYS + i * APP_LOOKUP_STEP)) >= 0;
	return crc32_keys() + found;
}

uint32_t app_run(struct vt_marker *marks, unik_mark_fn mark)
{
	uint32_t sum = 0;

	mark(&marks[0], 0);
	for (int r = 0; r < APP_ROUNDS; r++) {
		sum += one_round((uint32_t)r);
		mark(&marks[r + 1], (uint64_t)r + 1);
	}
	return sum;
}
