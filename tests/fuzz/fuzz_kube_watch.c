/*
 * Watch-event and Status decoding. After its first byte the input is a
 * sequence of WebSocket messages, one per line (newline kept), or a single
 * message when the first byte's top bit is set. The messages are decoded
 * once each in one piece and once cut into pieces at places chosen by the
 * first byte; both must agree on the outcome and on the events seen. ERROR events
 * go through the Status decoder, and the whole input is also decoded as the
 * body of a failed request (HTTP code and Retry-After taken from the input).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "kube/status.h"
#include "kube/watch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct seen {
	unsigned long events;
	unsigned long types;   /* a checksum of the event types, in order */
};

static void status_roundtrip(struct aj_kube_status *st)
{
	struct aj_errors err = AJ_ERRORS_INIT;

	if (aj_kube_status_to_errors(st, "fuzz", &err) != -1 || aj_errors_empty(&err))
		abort();
	if (!aj_kube_reason_name(st->reason))
		abort();
	(void)aj_kube_status_expired(st);
	aj_errors_release(&err);
}

static int on_event(void *ctx, struct aj_watch_event *ev)
{
	struct seen *s = ctx;

	s->events++;
	s->types = s->types * 7 + (unsigned long)ev->type + 1;
	if (!aj_watch_type_name(ev->type))
		abort();
	if (ev->type == AJ_WATCH_ERROR) {
		struct aj_kube_status st;

		aj_kube_status_init(&st);
		if (!aj_kube_status_from_json(&st, 500, ev->object))
			status_roundtrip(&st);
		aj_kube_status_release(&st);
	}
	if (s->events % 3 == 0) {
		/* Keep the object, as a callback may. */
		cJSON_Delete(ev->object);
		ev->object = NULL;
	}
	return 0;
}

static int decode(const uint8_t *data, size_t size, unsigned step, int single,
		  struct seen *s)
{
	struct aj_watch_decoder d;
	struct aj_errors err = AJ_ERRORS_INIT;
	size_t start = 0, end, off, n;
	int r = 0;

	aj_watch_decoder_init(&d);
	while (start < size && !r) {
		const uint8_t *nl = single ? NULL : memchr(data + start, '\n', size - start);

		end = nl ? (size_t)(nl - data) + 1 : size;
		off = start;
		do {
			n = step ? (size_t)(step + off % 5) : end - start;
			if (n > end - off)
				n = end - off;
			r = aj_watch_decoder_feed(&d, (const char *)data + off, n, off == start,
						  off + n == end, "fuzz", on_event, s, &err);
			off += n;
		} while (off < end && !r);
		start = end;
	}
	if (r && aj_errors_empty(&err))
		abort();
	if (!r && (d.events != s->events || d.in_message))
		abort();
	aj_watch_decoder_release(&d);
	aj_errors_release(&err);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct seen whole = { 0, 0 }, chunked = { 0, 0 };
	struct aj_kube_status st;
	char retry[8];
	long code;
	int a, b;

	aj_alloc_hook_cjson();
	if (size < 1)
		return 0;
	a = decode(data + 1, size - 1, 0, data[0] & 0x80, &whole);
	b = decode(data + 1, size - 1, 1u + data[0] % 16, data[0] & 0x80, &chunked);
	/* The chunked run may stop early on the same error, never disagree. */
	if (a != b || (!a && (whole.events != chunked.events || whole.types != chunked.types)))
		abort();

	code = 400 + data[0] % 200;
	if (size > 1) {
		size_t n = size - 1 < sizeof(retry) - 1 ? size - 1 : sizeof(retry) - 1;

		memcpy(retry, data + 1, n);
		retry[n] = '\0';
	}
	aj_kube_status_init(&st);
	if (!aj_kube_status_decode(&st, code, (const char *)data + 1, size - 1,
				   data[0] & 1 && size > 1 ? retry : NULL)) {
		if (st.code <= 0 || st.reason == AJ_KUBE_OK)
			abort();
		status_roundtrip(&st);
	}
	aj_kube_status_release(&st);
	return 0;
}
