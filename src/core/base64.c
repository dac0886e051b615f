#include "core/base64.h"

#include "core/buf.h"

static const char alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int aj_base64_encode(struct aj_buf *out, const void *data, size_t len)
{
	const unsigned char *p = data;
	char group[4];

	for (; len; p += len < 3 ? len : 3, len -= len < 3 ? len : 3) {
		unsigned long v = (unsigned long)p[0] << 16;

		if (len > 1)
			v |= (unsigned long)p[1] << 8;
		if (len > 2)
			v |= p[2];
		group[0] = alphabet[v >> 18];
		group[1] = alphabet[(v >> 12) & 63];
		group[2] = len > 1 ? alphabet[(v >> 6) & 63] : '=';
		group[3] = len > 2 ? alphabet[v & 63] : '=';
		if (aj_buf_add(out, group, 4))
			return -1;
	}
	return 0;
}

static int value_of(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

int aj_base64_decode(const char *in, size_t len, unsigned char *out, size_t *out_len)
{
	unsigned long acc = 0;
	size_t i, n = 0, chars = 0, bits = 0, pad = 0;

	*out_len = 0;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];
		int v;

		if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
			continue;
		if (c == '=') {
			pad++;
			continue;
		}
		v = value_of(c);
		if (v < 0 || pad)
			return -1;
		chars++;
		acc = (acc << 6) | (unsigned long)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[n++] = (unsigned char)(acc >> bits);
			acc &= (1ul << bits) - 1;
		}
	}
	/* A last group of 2 or 3 characters, its spare bits zero, padded fully or not at all. */
	if (bits >= 6 || acc || pad > 2 || (pad && (chars + pad) % 4))
		return -1;
	*out_len = n;
	return 0;
}
