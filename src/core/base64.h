/*
 * base64.h - standard base64 (RFC 4648 section 4), for kubeconfig *-data
 * fields, SAS keys and signatures, block ids and content digests.
 *
 * Decoding is written for hand-edited input: ASCII whitespace is skipped and
 * the padding may be left out, but '=' may only close the text, never more
 * than the last group needs, and the unused bits of that group must be zero.
 * Written here rather than taken from OpenSSL because EVP_DecodeBlock takes
 * neither whitespace nor unpadded text, and the core links no crypto library.
 *
 * Ownership: decode writes into the caller's buffer and allocates nothing,
 * so a secret never passes through memory the caller cannot wipe.
 */
#ifndef AJ_BASE64_H
#define AJ_BASE64_H

#include <stddef.h>

struct aj_buf;

/* Bytes aj_base64_decode() may write for len characters of input. */
#define AJ_BASE64_DECODED_MAX(len) ((len) / 4 * 3 + 3)

/* Append the padded encoding of data to out. 0 / -1 (out's limit or memory). */
int aj_base64_encode(struct aj_buf *out, const void *data, size_t len);

/*
 * Decode len characters of in into out, which holds at least
 * AJ_BASE64_DECODED_MAX(len) bytes; *out_len is the decoded length.
 * 0, or -1 when in is not base64 (out may then hold part of it).
 */
int aj_base64_decode(const char *in, size_t len, unsigned char *out, size_t *out_len);

#endif
