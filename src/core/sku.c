#include "sku.h"

#include <limits.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "buf.h"
#include "error.h"
#include "node.h"

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Parse a run of decimal digits at *p (advancing it); -1 when none or too big. */
static int parse_count(const char **p)
{
	long v = 0;
	const char *s = *p;

	if (!is_digit(*s))
		return -1;
	while (is_digit(*s)) {
		v = v * 10 + (*s - '0');
		if (v > INT_MAX)
			return -1;
		s++;
	}
	*p = s;
	return (int)v;
}

int aj_sku_format(const char *tmpl, int nodes, int processes,
		  const struct aj_where *w, char **out, struct aj_errors *err)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);
	const char *p = tmpl;

	*out = NULL;
	while (*p) {
		const char *close;
		size_t len;

		if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) {
			aj_buf_addch(&b, p[0]);
			p += 2;
			continue;
		}
		if (*p == '}') {
			aj_buf_release(&b);
			return aj_errors_add(err, w, "unbalanced '}' in SKU \"%s\"", tmpl);
		}
		if (*p != '{') {
			aj_buf_addch(&b, *p++);
			continue;
		}
		close = strchr(p, '}');
		if (!close) {
			aj_buf_release(&b);
			return aj_errors_add(err, w, "unbalanced '{' in SKU \"%s\"", tmpl);
		}
		len = (size_t)(close - p - 1);
		if (len == 5 && !strncmp(p + 1, "nodes", 5)) {
			aj_buf_addf(&b, "%d", nodes);
		} else if (len == 9 && !strncmp(p + 1, "processes", 9)) {
			aj_buf_addf(&b, "%d", processes);
		} else {
			aj_buf_release(&b);
			return aj_errors_add(err, w,
					     "unknown placeholder {%.*s} in SKU \"%s\" (known: {nodes}, {processes})",
					     (int)len, p + 1, tmpl);
		}
		p = close + 1;
	}
	*out = aj_buf_detach(&b, NULL);
	return *out ? 0 : aj_errors_oom(err);
}

int aj_sku_has_placeholder(const char *s)
{
	return strstr(s, "{nodes}") || strstr(s, "{processes}");
}

/* A range key: "N", "N-M" or "N+", N >= 1. 0 / -1 when malformed. */
static int parse_range(const char *key, int *lo, int *hi)
{
	const char *p = key;

	*lo = parse_count(&p);
	if (*lo < 1)
		return -1;
	if (!*p) {
		*hi = *lo;
		return 0;
	}
	if (p[0] == '+' && !p[1]) {
		*hi = INT_MAX;
		return 0;
	}
	if (*p++ != '-')
		return -1;
	*hi = parse_count(&p);
	return *hi >= *lo && !*p ? 0 : -1;
}

static void where_key(const struct aj_pair *pair, const char *path, struct aj_where *w)
{
	w->file = pair->keypos.file ? pair->keypos.file->name : NULL;
	w->line = pair->keypos.line;
	w->column = pair->keypos.column;
	w->path = path;
}

static int resolve_ranges(const struct aj_node *sku, const char *path, int nodes,
			  int processes, char **out, struct aj_errors *err)
{
	struct aj_buf ranges = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_where w;
	const struct aj_node *match = NULL;
	int bad = 0, ret;
	size_t i;

	aj_node_where(sku, path, &w);
	if (!sku->nr)
		return aj_errors_add(err, &w, "no SKU ranges in the mapping");
	for (i = 0; i < sku->nr; i++) {
		const struct aj_pair *pair = &sku->pairs[i];
		int lo, hi;

		if (parse_range(pair->key, &lo, &hi) || strlen(pair->key) != pair->keylen) {
			struct aj_where kw;

			where_key(pair, path, &kw);
			aj_errors_add(err, &kw,
				      "malformed node range \"%s\" (expected N, N-M or N+)",
				      pair->key);
			bad = 1;
			continue;
		}
		if (pair->value->type != AJ_NODE_STRING) {
			struct aj_where vw;

			aj_node_where(pair->value, path, &vw);
			aj_errors_add(err, &vw, "range \"%s\": expected string, got %s",
				      pair->key, aj_node_type_name(pair->value->type));
			bad = 1;
			continue;
		}
		if (!match && lo <= nodes && nodes <= hi)
			match = pair->value;
		aj_buf_addf(&ranges, "%s\"%s\"", i ? ", " : "", pair->key);
	}
	if (bad) {
		aj_buf_release(&ranges);
		return -1;
	}
	if (!match) {
		if (ranges.failed)
			return aj_errors_oom(err);
		ret = aj_errors_add(err, &w, "no range matches %d node%s (ranges: %s)",
				    nodes, nodes == 1 ? "" : "s", aj_buf_cstr(&ranges));
		aj_buf_release(&ranges);
		return ret;
	}
	aj_buf_release(&ranges);
	aj_node_where(match, path, &w);
	return aj_sku_format(match->str, nodes, processes, &w, out, err);
}

int aj_sku_resolve(const struct aj_node *sku, const char *path, int nodes,
		   int processes, char **out, struct aj_errors *err)
{
	struct aj_where w;

	*out = NULL;
	if (!sku || sku->type == AJ_NODE_NULL) {
		struct aj_where pw = { NULL, 0, 0, path };

		if (sku)
			aj_node_where(sku, path, &pw);
		return aj_errors_add(err, &pw, "required");
	}
	aj_node_where(sku, path, &w);
	if (sku->type == AJ_NODE_STRING)
		return aj_sku_format(sku->str, nodes, processes, &w, out, err);
	if (sku->type == AJ_NODE_MAP)
		return resolve_ranges(sku, path, nodes, processes, out, err);
	return aj_errors_add(err, &w, "expected string or mapping of node ranges, got %s",
			     aj_node_type_name(sku->type));
}

void aj_sku_spec_init(struct aj_sku_spec *s)
{
	s->nodes = 1;
	s->memory_gb = 0;
	s->cpu = 0;
	s->count = 1;
	aj_strlist_init(&s->accelerators);
	s->nvlink = 0;
}

void aj_sku_spec_release(struct aj_sku_spec *s)
{
	aj_strlist_release(&s->accelerators);
	aj_sku_spec_init(s);
}

/* Parse the "-FLAG-FLAG" tail. 0, 1 (not shorthand), -1 (OOM). */
static int parse_flags(const char *p, struct aj_sku_spec *out)
{
	while (*p) {
		size_t len;

		if (*p++ != '-')
			return 1;
		len = strcspn(p, "-");
		if (!len)
			return 1;
		if (len == 6 && !strncasecmp(p, "nvlink", 6)) {
			out->nvlink = 1;
		} else if (len == 2 && !strncasecmp(p, "ib", 2)) {
			;       /* InfiniBand is implied by the families that have it */
		} else {
			size_t i;

			for (i = 0; i < len; i++)
				if (!is_digit(p[i]) && !((p[i] | 0x20) >= 'a' && (p[i] | 0x20) <= 'z'))
					return 1;
			if (aj_strlist_add_owned(&out->accelerators, aj_strndup(p, len)))
				return -1;
		}
		p += len;
	}
	return 0;
}

int aj_sku_parse(const char *s, struct aj_sku_spec *out)
{
	const char *p = s;
	int n = -1, ret;

	aj_sku_spec_init(out);
	if (is_digit(*p)) {
		n = parse_count(&p);
		if (n < 1)
			return 1;
		if (*p == 'x') {
			out->nodes = n;
			p++;
			n = -1;
			if (is_digit(*p) && (n = parse_count(&p)) < 1)
				return 1;
		}
	}
	if (n > 0)
		out->memory_gb = n;
	if (*p != 'C' && *p != 'G')
		return 1;
	out->cpu = *p++ == 'C';
	if (is_digit(*p) && (out->count = parse_count(&p)) < 1) {
		aj_sku_spec_init(out);
		return 1;
	}
	ret = parse_flags(p, out);
	if (!ret && out->cpu && (out->nvlink || out->accelerators.nr))
		ret = 1;
	if (ret)
		aj_sku_spec_release(out);
	return ret;
}

/*
 * The instance families Singularity offers, in preference order. NVLink is
 * set only where the family is known to have it. Series ids are those VC
 * quotas report.
 */
static const struct aj_sku_family families[] = {
	{ "Eadsv5", NULL, NULL, 0, 0, { 4, 8, 16, 32, 64 },
	  { "E4ads_v5", "E8ads_v5", "E16ads_v5", "E32ads_v5", "E64ads_v5" } },
	{ "Dv3", NULL, NULL, 0, 0, { 4, 8, 16, 32, 64 },
	  { "D4_v3", "D8_v3", "D16_v3", "D32_v3", "D64_v3" } },
	{ "ND_A100_v4", "A100", "NVIDIA", 80, 1, { 1, 2, 4, 8 },
	  { "ND12am_A100_v4", "ND24am_A100_v4", "ND48am_A100_v4", "ND96amrs_A100_v4" } },
	{ "NC_A100_v4", "A100", "NVIDIA", 80, 0, { 1, 2, 4 },
	  { "NC24ad_A100_v4", "NC48ad_A100_v4", "NC96ad_A100_v4" } },
	{ "NDv4", "A100", "NVIDIA", 40, 1, { 1, 2, 4, 8 },
	  { "ND12_v4", "ND24_v4", "ND48_v4", "ND96rs_v4" } },
	{ "ND_H100_v5", "H100", "NVIDIA", 80, 1, { 1, 2, 4, 8 },
	  { "ND12_H100_v5", "ND24_H100_v5", "ND48_H100_v5", "ND96r_H100_v5" } },
	{ "ND_H200_v5", "H200", "NVIDIA", 141, 1, { 1, 2, 4, 8 },
	  { "ND12_H200_v5", "ND24_H200_v5", "ND48_H200_v5", "ND96r_H200_v5" } },
	{ "ND_MI200_v4", "MI200", "AMD", 64, 0, { 2, 4, 8, 16 },
	  { "ND12as_MI200_v4", "ND24as_MI200_v4", "ND48as_MI200_v4", "ND96asr_MI200_v4" } },
	{ "ND_MI300X_v4", "MI300X", "AMD", 192, 0, { 1, 2, 4, 8 },
	  { "ND12is_MI300X_v5", "ND24is_MI300X_v5", "ND48is_MI300X_v5", "ND96isr_MI300X_v5" } },
	{ "NDv2", "V100", "NVIDIA", 32, 1, { 1, 2, 4, 8 },
	  { "ND5_v2", "ND10_v2", "ND20_v2", "ND40rs_v2" } },
	{ "LMD_BM_GPUH100", "H100", "NVIDIA", 80, 0, { 1, 2, 4, 8 },
	  { "LMD_BM_GPUH100.1-n1", "LMD_BM_GPUH100.2-n1", "LMD_BM_GPUH100.4-n1",
	    "LMD_BM_GPUH100.8-n1" } },
};

const struct aj_sku_family *aj_sku_families(size_t *nr)
{
	*nr = sizeof(families) / sizeof(families[0]);
	return families;
}

const char *aj_sku_family_instance(const struct aj_sku_family *f,
				   const struct aj_sku_spec *s, int count,
				   int need_nvlink, int *units)
{
	size_t i;

	if (s->cpu != !f->model)
		return NULL;
	if (f->model) {
		for (i = 0; i < s->accelerators.nr; i++)
			if (strcasecmp(s->accelerators.items[i], f->model))
				return NULL;
		if ((s->memory_gb && s->memory_gb != f->memory_gb) ||
		    (need_nvlink && s->nvlink && !f->nvlink))
			return NULL;
	} else if (s->memory_gb) {
		return NULL;
	}
	for (i = 0; i < AJ_SKU_FAMILY_SIZES && f->names[i]; i++)
		if (f->model ? f->units[i] == count : (int)i + 1 == count) {
			if (units)
				*units = f->units[i];
			return f->names[i];
		}
	return NULL;
}

int aj_sku_instance_types(const char *s, struct aj_strlist *out)
{
	struct aj_sku_spec spec;
	const char *p = s;
	size_t i, found = 0;
	int ret;

	if (is_digit(*p)) {
		while (is_digit(*p))
			p++;
		p = *p == 'x' ? p + 1 : s;
	}
	if (strchr(p, '_') || !strncmp(p, "Standard", 8))
		return aj_strlist_add(out, p);
	ret = aj_sku_parse(s, &spec);
	if (ret)
		return ret;
	for (i = 0; i < sizeof(families) / sizeof(families[0]) && found < AJ_SKU_MAX_TYPES; i++) {
		const char *name = aj_sku_family_instance(&families[i], &spec, spec.count, 1, NULL);

		if (!name || aj_strlist_find(out, name) >= 0)
			continue;
		if (aj_strlist_add(out, name)) {
			ret = -1;
			break;
		}
		found++;
	}
	aj_sku_spec_release(&spec);
	return ret;
}
