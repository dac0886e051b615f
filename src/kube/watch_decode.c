#include "watch.h"

#include <string.h>

#include "core/error.h"
#include "core/json.h"

static const char *const type_names[] = {
	"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR", "LIST"
};

const char *aj_watch_type_name(enum aj_watch_type t)
{
	return (size_t)t < sizeof(type_names) / sizeof(type_names[0])
		       ? type_names[t] : "?";
}

void aj_watch_decoder_init(struct aj_watch_decoder *d)
{
	aj_buf_init(&d->message, AJ_WATCH_MAX_EVENT);
	d->in_message = 0;
	d->events = 0;
}

void aj_watch_decoder_release(struct aj_watch_decoder *d)
{
	aj_buf_release(&d->message);
	d->in_message = 0;
	d->events = 0;
}

void aj_watch_decoder_reset(struct aj_watch_decoder *d)
{
	aj_buf_reset(&d->message);
	d->in_message = 0;
}

/* Decode one complete message and deliver it. */
static int decode(struct aj_watch_decoder *d, const char *s, size_t len,
		  const char *origin, aj_watch_fn fn, void *ctx,
		  struct aj_errors *err)
{
	struct aj_watch_event ev = { AJ_WATCH_ADDED, NULL, 0, 0 };
	cJSON *root, *type;
	size_t i;
	int ret, trailing;

	/* The server ends each message with a newline. */
	while (len && (s[len - 1] == '\n' || s[len - 1] == '\r' || s[len - 1] == ' '))
		len--;
	if (!len)
		return 0;
	/* lenient: an object nested deeper than cJSON goes must not stop the stream */
	root = aj_json_parse_lenient(s, len, &trailing);
	if (!root)
		return aj_errors_add(err, NULL, "%s: event %lu: not valid JSON",
				     origin, d->events + 1);
	if (trailing) {
		cJSON_Delete(root);
		return aj_errors_add(err, NULL, "%s: event %lu: more than one JSON "
				     "value in a message", origin, d->events + 1);
	}
	type = cJSON_GetObjectItemCaseSensitive(root, "type");
	ev.object = cJSON_DetachItemFromObjectCaseSensitive(root, "object");
	if (!cJSON_IsString(type) || !cJSON_IsObject(ev.object)) {
		cJSON_Delete(ev.object);
		cJSON_Delete(root);
		return aj_errors_add(err, NULL, "%s: event %lu: expected "
				     "{\"type\": string, \"object\": object}",
				     origin, d->events + 1);
	}
	for (i = 0; i < AJ_WATCH_LIST; i++)
		if (!strcmp(type->valuestring, type_names[i]))
			break;
	if (i == AJ_WATCH_LIST) {
		aj_errors_add(err, NULL, "%s: event %lu: unknown type \"%s\"",
			      origin, d->events + 1, type->valuestring);
		cJSON_Delete(ev.object);
		cJSON_Delete(root);
		return -1;
	}
	cJSON_Delete(root);
	ev.type = (enum aj_watch_type)i;
	d->events++;
	ret = fn(ctx, &ev);
	cJSON_Delete(ev.object);
	if (ret)
		return aj_errors_add(err, NULL, "%s: event %lu (%s) was not accepted",
				     origin, d->events, type_names[i]);
	return 0;
}

int aj_watch_decoder_feed(struct aj_watch_decoder *d, const char *data,
			  size_t len, int first, int final, const char *origin,
			  aj_watch_fn fn, void *ctx, struct aj_errors *err)
{
	int ret;

	if (first) {
		if (d->in_message)
			return aj_errors_add(err, NULL, "%s: a message began inside another",
					     origin);
		d->in_message = 1;
	} else if (!d->in_message) {
		return aj_errors_add(err, NULL, "%s: a message piece outside any message",
				     origin);
	}
	if (final)
		d->in_message = 0;
	/* The common case, a message in one piece: decode it where it lies. */
	if (first && final)
		return decode(d, data, len, origin, fn, ctx, err);
	if (len && aj_buf_add(&d->message, data, len)) {
		aj_watch_decoder_reset(d);
		return aj_errors_add(err, NULL, "%s: an event is larger than %u "
				     "bytes or memory ran out", origin,
				     AJ_WATCH_MAX_EVENT);
	}
	if (!final)
		return 0;
	ret = decode(d, d->message.buf, d->message.len, origin, fn, ctx, err);
	/* A burst of large objects must not pin its memory for good. */
	if (d->message.alloc > AJ_WATCH_KEEP_BUFFER)
		aj_buf_release(&d->message);
	aj_buf_reset(&d->message);
	return ret;
}
