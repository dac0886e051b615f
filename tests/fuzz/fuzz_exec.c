/*
 * The exec channel framing. The first byte picks the protocol (v4 or v5)
 * and how messages are cut into pieces; the rest is read as a sequence of
 * WebSocket messages (a 2-byte length, then the bytes), each fed to the
 * decoder in pieces. A message decoded without error must reach the sink
 * byte for byte, on a known stream; re-framing the payloads must give the
 * messages back. The error stream's bytes also go through the Status parser.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "kube/exec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct seen {
	struct aj_buf payload;   /* the current message's payload */
	int stream;
	int ended;
};

static int sink(void *data, int stream, const void *buf, size_t len, int end,
		struct aj_errors *err)
{
	struct seen *s = data;

	(void)err;
	if (stream < 0 || (stream > AJ_EXEC_RESIZE && stream != AJ_EXEC_CLOSE))
		abort();
	s->stream = stream;
	if (len && aj_buf_add(&s->payload, buf, len))
		abort();
	if (end)
		s->ended = 1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct aj_exec_decoder d;
	struct seen s = { AJ_BUF_INIT(AJ_BUF_SMALL), -1, 0 };
	const uint8_t *p, *end = data + size;
	unsigned cut;
	int v5;

	aj_alloc_hook_cjson();
	if (size < 1)
		return 0;
	v5 = data[0] & 1;
	cut = 1u + (data[0] >> 1);
	aj_exec_decoder_init(&d, v5, sink, &s);
	for (p = data + 1; p + 2 <= end;) {
		size_t len = (size_t)p[0] << 8 | p[1], off = 0;
		struct aj_errors err = AJ_ERRORS_INIT;
		int r = 0;

		p += 2;
		if (len > (size_t)(end - p))
			len = (size_t)(end - p);
		aj_buf_reset(&s.payload);
		s.ended = 0;
		do {
			size_t n = len - off < cut ? len - off : cut;

			r = aj_exec_decode(&d, p + off, n, off == 0, off + n == len, &err);
			off += n;
		} while (!r && off < len);
		if (r) {
			if (aj_errors_empty(&err))
				abort();
			aj_errors_release(&err);
			break;
		}
		/* Decoded: the stream byte, then the payload, reached the sink. */
		if (!s.ended || len < 1 || s.payload.len != len - 1 ||
		    (s.payload.len && memcmp(s.payload.buf, p + 1, len - 1)))
			abort();
		{
			struct aj_buf again = AJ_BUF_INIT(AJ_BUF_SMALL);

			if (aj_exec_frame(&again, s.stream, s.payload.buf, s.payload.len) ||
			    again.len != len || memcmp(again.buf, p, len))
				abort();
			aj_buf_release(&again);
		}
		if (s.stream == AJ_EXEC_ERROR) {
			int code = -1;

			if (aj_exec_status_parse(aj_buf_cstr(&s.payload), s.payload.len, &code, &err)) {
				if (aj_errors_empty(&err))
					abort();
			} else if (code < 0) {
				abort();
			}
			aj_errors_release(&err);
		}
		p += len;
	}
	aj_buf_release(&s.payload);
	return 0;
}
