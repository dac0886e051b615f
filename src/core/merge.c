#include "merge.h"

#include "alloc.h"
#include "node.h"

static int is_null(const struct aj_node *n)
{
	return !n || n->type == AJ_NODE_NULL;
}

static int all_of(const struct aj_node *const *v, size_t n, enum aj_node_type type)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i]->type != type)
			return 0;
	return 1;
}

static struct aj_node *merge_values(const struct aj_node *const *v, size_t n);

/*
 * The merged value of one key. `found` holds that key's pairs from every
 * input that has it, in input order. Nulls are dropped; when nothing else is
 * left, the key keeps a null.
 */
static int merge_key(struct aj_node *out, const struct aj_pair *const *found,
		     size_t nr, const struct aj_node **scratch)
{
	const struct aj_pair *last = found[0];
	struct aj_node *value;
	size_t i, live = 0;

	for (i = 0; i < nr; i++) {
		if (is_null(found[i]->value))
			continue;
		scratch[live++] = found[i]->value;
		last = found[i];
	}
	value = live ? merge_values(scratch, live) : aj_node_copy(last->value);
	return aj_node_add(out, last->key, last->keylen, value, &last->keypos);
}

/*
 * Dictionaries: the union of the keys in first-seen order, merged per key.
 * Lookups go through an index per input so large mappings stay fast.
 */
static struct aj_node *merge_maps(const struct aj_node *const *v, size_t n)
{
	struct aj_node *out = aj_node_new(AJ_NODE_MAP, &v[n - 1]->pos);
	const struct aj_pair **found = aj_malloc(n * sizeof(*found));
	const struct aj_node **scratch = aj_malloc(n * sizeof(*scratch));
	struct aj_keyindex *ix = aj_calloc(n, sizeof(*ix));
	size_t i, j, k, built = 0;

	if (!out || !found || !scratch || !ix)
		goto fail;
	for (built = 0; built < n; built++)
		if (aj_keyindex_init(&ix[built], v[built]))
			goto fail;
	for (i = 0; i < n; i++) {
		for (k = 0; k < v[i]->nr; k++) {
			const struct aj_pair *p = &v[i]->pairs[k];
			size_t nr = 0;

			/* Merged already, when an earlier input has the key. */
			for (j = 0; j < i && !aj_keyindex_find(&ix[j], p->key, p->keylen); j++)
				;
			if (j < i)
				continue;
			found[nr++] = p;
			for (j = i + 1; j < n; j++) {
				const struct aj_pair *q = aj_keyindex_find(&ix[j], p->key, p->keylen);

				if (q)
					found[nr++] = q;
			}
			if (merge_key(out, found, nr, scratch))
				goto fail;
		}
	}
	goto done;
fail:
	aj_node_free(out);
	out = NULL;
done:
	for (i = 0; ix && i < built; i++)
		aj_keyindex_release(&ix[i]);
	aj_free(ix);
	aj_free(found);
	aj_free(scratch);
	return out;
}

static int has_mapping_item(const struct aj_node *const *v, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++)
		for (j = 0; j < v[i]->nr; j++)
			if (v[i]->items[j]->type == AJ_NODE_MAP)
				return 1;
	return 0;
}

/*
 * Lists: merged position by position when any item is a dictionary (an item
 * only some lists have is kept; a position where every item is null stays
 * null), concatenated otherwise.
 */
static struct aj_node *merge_lists(const struct aj_node *const *v, size_t n)
{
	struct aj_node *out = aj_node_new(AJ_NODE_SEQ, &v[n - 1]->pos);
	const struct aj_node **scratch = NULL;
	size_t i, j, len = 0;

	if (!out)
		return NULL;
	if (!has_mapping_item(v, n)) {
		for (i = 0; i < n; i++)
			for (j = 0; j < v[i]->nr; j++)
				if (aj_node_append(out, aj_node_copy(v[i]->items[j])))
					goto fail;
		return out;
	}
	scratch = aj_malloc(n * sizeof(*scratch));
	if (!scratch)
		goto fail;
	for (i = 0; i < n; i++)
		if (v[i]->nr > len)
			len = v[i]->nr;
	for (j = 0; j < len; j++) {
		const struct aj_node *null_item = NULL;
		size_t live = 0;

		for (i = 0; i < n; i++) {
			if (j >= v[i]->nr)
				continue;
			if (is_null(v[i]->items[j]))
				null_item = v[i]->items[j];
			else
				scratch[live++] = v[i]->items[j];
		}
		if (aj_node_append(out, live ? merge_values(scratch, live) :
				   aj_node_copy(null_item)))
			goto fail;
	}
	aj_free(scratch);
	return out;
fail:
	aj_free(scratch);
	aj_node_free(out);
	return NULL;
}

/* v holds n >= 1 values, none of them null. */
static struct aj_node *merge_values(const struct aj_node *const *v, size_t n)
{
	if (n > 1 && all_of(v, n, AJ_NODE_MAP))
		return merge_maps(v, n);
	if (n > 1 && all_of(v, n, AJ_NODE_SEQ))
		return merge_lists(v, n);
	return aj_node_copy(v[n - 1]);
}

int aj_merge(const struct aj_node *const *values, size_t n, struct aj_node **out)
{
	const struct aj_node **live;
	struct aj_node *r = NULL;
	size_t i, nr = 0;

	if (!n) {
		*out = NULL;
		return 0;
	}
	live = aj_malloc(n * sizeof(*live));
	if (!live)
		return -1;
	for (i = 0; i < n; i++)
		if (!is_null(values[i]))
			live[nr++] = values[i];
	if (nr)
		r = merge_values(live, nr);
	aj_free(live);
	if (nr && !r)
		return -1;
	*out = r;
	return 0;
}
