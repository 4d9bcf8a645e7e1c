/*
 * t-utf8.c - unit test of lib/utf8.c: validation against RFC 3629 (overlong
 * forms, surrogates, above U+10FFFF), cutting on a character boundary, and
 * cleaning (invalid bytes -> U+FFFD, a cut tail dropped), checked against
 * every byte string of up to 3 bytes: clean() output is always valid and
 * equal to the input when that is valid.
 */
#include <stdio.h>
#include <string.h>
#include "check.h"
#include "utf8.h"

#define V(s)	vt_utf8_valid(s, sizeof(s) - 1)

int main(void)
{
	char out[64];
	size_t n;

	CHECK(V("") && V("abc") && V("\xc3\xa9") && V("\xe2\x82\xac") && V("\xf0\x9f\x98\x80"));
	CHECK(V("\xf4\x8f\xbf\xbf") && V("\xed\x9f\xbf") && V("a\0b"));
	CHECK(!V("\xc3") && !V("\x80") && !V("\xc0\xaf") && !V("\xe0\x80\xaf"));
	CHECK(!V("\xed\xa0\x80") && !V("\xf4\x90\x80\x80") && !V("\xf5\x80\x80\x80"));
	CHECK(!V("\xff") && !V("\xe2\x82") && !V("\xf0\x80\x80\x80"));

	/* the kernel's comm: 15 bytes of "dd" + 13 bytes of é, cut inside */
	const char comm[] = "dd\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3";
	CHECK(vt_utf8_cut(comm, 15, 15) == 14);
	CHECK(vt_utf8_cut(comm, 15, 5) == 4);
	CHECK(vt_utf8_cut(comm, 15, 0) == 0);
	CHECK(vt_utf8_cut("abc", 3, 10) == 3);
	n = vt_utf8_clean(out, sizeof(out), comm, 15);
	CHECK(n == 14 && vt_utf8_valid(out, n) && !memcmp(out, comm, 14));

	/* an invalid byte in the middle becomes U+FFFD */
	n = vt_utf8_clean(out, sizeof(out), "a\xbf" "b", 3);
	CHECK(n == 5 && !memcmp(out, "a\xef\xbf\xbd" "b", 5));
	/* the output is cut on a character boundary to fit */
	n = vt_utf8_clean(out, 4, "a\xc3\xa9\xc3\xa9", 5);
	CHECK(n == 3 && !strcmp(out, "a\xc3\xa9"));
	n = vt_utf8_clean(out, 4, "ab\xbf", 3);
	CHECK(n == 2 && !strcmp(out, "ab"));

	/* every string of 1..3 bytes over the interesting byte values */
	static const unsigned char bytes[] = {
		0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2,
		0xdf, 0xe0, 0xe1, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf4, 0xf5, 0xff,
	};
	size_t nb = sizeof(bytes);
	long bad = 0;

	for (size_t a = 0; a < nb; a++)
		for (size_t b = 0; b <= nb; b++)
			for (size_t c = 0; c <= nb; c++) {
				char in[3] = { (char)bytes[a], 0, 0 };
				size_t len = 1;

				if (b < nb) {
					in[len++] = (char)bytes[b];
					if (c < nb)
						in[len++] = (char)bytes[c];
				} else if (c < nb) {
					continue;
				}
				n = vt_utf8_clean(out, sizeof(out), in, len);
				if (!vt_utf8_valid(out, n))
					bad++;
				if (vt_utf8_valid(in, len) && (n != len || memcmp(out, in, len)))
					bad++;
				size_t k = vt_utf8_cut(in, len, len);

				if (vt_utf8_valid(in, len) && k != len)
					bad++;
				if (k > len || !vt_utf8_valid(in, k))
					bad++;
			}
	CHECK(bad == 0);
	/* no room at all: nothing written, 0 */
	{
		char none[1] = { 'z' };

		CHECK(vt_utf8_clean(none, 0, "ab", 2) == 0 && none[0] == 'z');
	}
	return check_done();
}
