#include "watch.h"

#include <string.h>

#include "core/error.h"

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
	aj_buf_init(&d->line, AJ_WATCH_MAX_LINE);
	d->events = 0;
}

void aj_watch_decoder_release(struct aj_watch_decoder *d)
{
	aj_buf_release(&d->line);
	d->events = 0;
}

void aj_watch_decoder_reset(struct aj_watch_decoder *d)
{
	aj_buf_reset(&d->line);
}

/* Decode one complete line (without its '\n') and deliver it. */
static int decode_line(struct aj_watch_decoder *d, const char *s, size_t len,
		       const char *origin, aj_watch_fn fn, void *ctx,
		       struct aj_errors *err)
{
	struct aj_watch_event ev = { AJ_WATCH_ADDED, NULL, 0, 0 };
	cJSON *root, *type;
	size_t i;
	int ret;

	while (len && (s[len - 1] == '\r' || s[len - 1] == ' '))
		len--;
	if (!len)
		return 0;   /* keep-alive blank line */
	root = cJSON_ParseWithLength(s, len);
	if (!root)
		return aj_errors_add(err, NULL, "%s: event %lu: not valid JSON",
				     origin, d->events + 1);
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

/* Add to the unfinished line. */
static int keep(struct aj_watch_decoder *d, const char *data, size_t len,
		const char *origin, struct aj_errors *err)
{
	if (aj_buf_add(&d->line, data, len))
		return aj_errors_add(err, NULL, "%s: an event is larger than %u "
				     "bytes or memory ran out", origin,
				     AJ_WATCH_MAX_LINE);
	return 0;
}

int aj_watch_decoder_feed(struct aj_watch_decoder *d, const char *data,
			  size_t len, const char *origin, aj_watch_fn fn,
			  void *ctx, struct aj_errors *err)
{
	const char *end = data + len, *nl;

	while (data < end) {
		nl = memchr(data, '\n', (size_t)(end - data));
		if (!nl) {
			return keep(d, data, (size_t)(end - data), origin, err);
		}
		if (d->line.len) {
			/* Finish the line begun in an earlier chunk. */
			if (keep(d, data, (size_t)(nl - data), origin, err))
				return -1;
			if (decode_line(d, d->line.buf, d->line.len, origin, fn,
					ctx, err)) {
				aj_buf_reset(&d->line);
				return -1;
			}
			aj_buf_reset(&d->line);
		} else if (decode_line(d, data, (size_t)(nl - data), origin, fn,
				       ctx, err)) {
			return -1;
		}
		data = nl + 1;
	}
	return 0;
}
