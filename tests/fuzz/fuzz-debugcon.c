/*
 * fuzz-debugcon.c - libFuzzer target for lib/debugcon.c's frame parser
 * (the debugcon stream comes from a guest: untrusted).  Every delivered
 * frame's payload is read to its end, so ASan sees any bad bound.
 */
#include <stdint.h>
#include <stddef.h>
#include "debugcon.h"

static int touch_frame(void *arg, unsigned type, const uint8_t *payload, size_t len)
{
	unsigned *acc = arg;

	for (size_t i = 0; i < len; i++)
		*acc += payload[i];
	*acc += type;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned acc = 0;

	(void)vt_dc_parse("fuzz", data, size, touch_frame, &acc);
	return 0;
}
