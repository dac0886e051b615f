#include "azure/vcselect.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/sku.h"
#include "core/json.h"

static const char *const tier_names[AJ_TIERS] = { "Premium", "Standard", "Basic" };

const char *aj_tier_name(enum aj_tier t)
{
	return tier_names[t];
}

int aj_tier_parse(const char *s, enum aj_tier *out)
{
	int i;

	for (i = 0; s && i < AJ_TIERS; i++)
		if (!strcasecmp(s, tier_names[i])) {
			*out = (enum aj_tier)i;
			return 0;
		}
	return -1;
}

void aj_vc_init(struct aj_vc *vc)
{
	memset(vc, 0, sizeof(*vc));
}

void aj_vc_release(struct aj_vc *vc)
{
	size_t i;

	for (i = 0; i < vc->quotas_nr; i++)
		aj_free(vc->quotas[i].series);
	aj_free(vc->quotas);
	aj_free(vc->subscription);
	aj_free(vc->resource_group);
	aj_free(vc->name);
	aj_free(vc->location);
	aj_vc_init(vc);
}

int aj_vc_set(struct aj_vc *vc, const char *subscription, const char *resource_group,
	      const char *name)
{
	aj_free(vc->subscription);
	aj_free(vc->resource_group);
	aj_free(vc->name);
	vc->subscription = aj_strdup(subscription);
	vc->resource_group = aj_strdup(resource_group);
	vc->name = aj_strdup(name);
	return vc->subscription && vc->resource_group && vc->name ? 0 : -1;
}

struct aj_vc_quota *aj_vc_quota_row(struct aj_vc *vc, const char *series)
{
	struct aj_vc_quota *q;
	size_t i;

	for (i = 0; i < vc->quotas_nr; i++)
		if (!strcmp(vc->quotas[i].series, series))
			return &vc->quotas[i];
	if (AJ_GROW(vc->quotas, vc->quotas_nr + 1, vc->quotas_alloc))
		return NULL;
	q = &vc->quotas[vc->quotas_nr];
	memset(q, 0, sizeof(*q));
	if (!(q->series = aj_strdup(series)))
		return NULL;
	for (i = 0; i < AJ_TIERS; i++)
		q->limit[i] = -1;
	q->user_limit = -1;
	vc->quotas_nr++;
	return q;
}

long aj_vc_quota_free(const struct aj_vc_quota *q, enum aj_tier t)
{
	if (q->limit[t] < 0)
		return -1;
	return q->used[t] < q->limit[t] ? q->limit[t] - q->used[t] : 0;
}

/* --- reading the VC resource --- */

/* Larger limits are refused; sums over many rows stop here rather than overflow. */
#define QUOTA_MAX (LONG_MAX / 2)

static int number(const cJSON *v, long *out)
{
	if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > (double)QUOTA_MAX)
		return -1;
	*out = (long)v->valuedouble;
	return 0;
}

static long sum(long a, long b)
{
	return a > QUOTA_MAX - b ? QUOTA_MAX : a + b;
}

static void add_to(long *limit, long *used, long l, long u)
{
	*limit = *limit < 0 ? l : sum(*limit, l);
	*used = sum(*used, u);
}

/* One limits[] list; user: the overall cap, else per tier. */
static int read_limits(struct aj_vc *vc, const cJSON *limits, int user, const char *where,
		       struct aj_errors *err)
{
	const cJSON *it;
	int i = 0;

	cJSON_ArrayForEach(it, limits) {
		const cJSON *id = aj_json_get(it, "id"), *tier = aj_json_get(it, "slaTier");
		struct aj_vc_quota *q;
		long limit, used = 0;
		enum aj_tier t = AJ_TIER_BASIC;

		if (!cJSON_IsString(id) || !*id->valuestring || number(aj_json_get(it, "limit"),
								       &limit) ||
		    (aj_json_get(it, "used") && !cJSON_IsNull(aj_json_get(it, "used")) &&
		     number(aj_json_get(it, "used"), &used)))
			return aj_errors_add(err, NULL, "virtual cluster %s: %s.limits[%d]: "
					     "expected {id, limit, used}", vc->name, where, i);
		if (!(q = aj_vc_quota_row(vc, id->valuestring)))
			return aj_errors_oom(err);
		if (user)
			add_to(&q->user_limit, &q->user_used, limit, used);
		else {
			if (cJSON_IsString(tier))
				aj_tier_parse(tier->valuestring, &t);
			add_to(&q->limit[t], &q->used[t], limit, used);
		}
		i++;
	}
	return 0;
}

static int by_series(const void *a, const void *b)
{
	return strcmp(((const struct aj_vc_quota *)a)->series,
		      ((const struct aj_vc_quota *)b)->series);
}

int aj_vc_read_quotas(struct aj_vc *vc, const cJSON *resource, struct aj_errors *err)
{
	const cJSON *managed = aj_json_get(aj_json_get(resource, "properties"), "managed");
	const cJSON *region, *loc = aj_json_get(resource, "location");

	if (cJSON_IsString(loc) && !vc->location && !(vc->location = aj_strdup(loc->valuestring)))
		return aj_errors_oom(err);
	if (read_limits(vc, aj_json_get(aj_json_get(managed, "defaultGroupPolicyOverallQuotas"),
					"limits"), 1,
			"defaultGroupPolicyOverallQuotas", err))
		return -1;
	cJSON_ArrayForEach(region, aj_json_get(managed, "quotas")) {
		struct aj_buf where = AJ_BUF_INIT(AJ_BUF_SMALL);
		int r;

		aj_buf_addf(&where, "quotas.%s", region->string ? region->string : "?");
		r = read_limits(vc, aj_json_get(region, "limits"), 0, aj_buf_cstr(&where), err);
		aj_buf_release(&where);
		if (r)
			return -1;
	}
	if (vc->quotas_nr > 1)
		qsort(vc->quotas, vc->quotas_nr, sizeof(*vc->quotas), by_series);
	return 0;
}

/* --- selection --- */

struct cand {
	struct aj_vc_candidate c;
	size_t family;            /* index in the family table */
	int tier_pos;             /* 0: the requested tier */
};

/* Direct instance types one request may list (a SKU expands to fewer). */
#define AJ_VC_DIRECT_MAX 32

struct sel {
	const struct aj_vc_request *req;
	struct aj_sku_spec spec;
	const char *direct[AJ_VC_DIRECT_MAX];   /* direct instance types; none: a shorthand */
	size_t direct_nr;
	int count;                /* GPUs, or the CPU size tier */
	enum aj_tier tier;
	const struct aj_sku_family *families;
	size_t families_nr;
};

/* Ranking keys of section "Ranking" in the header, 1-based; 0 when equal. */
enum { KEY_TIER = 1, KEY_VENDOR, KEY_NVLINK, KEY_QUOTA, KEY_COORDS, KEY_FAMILY };

static int vc_coords_cmp(const struct aj_vc *a, const struct aj_vc *b)
{
	int r = strcmp(a->subscription, b->subscription);

	if (!r)
		r = strcmp(a->resource_group, b->resource_group);
	return r ? r : strcmp(a->name, b->name);
}

static int amd_rank(const struct sel *s, const struct cand *c)
{
	return !s->spec.cpu && !s->spec.accelerators.nr && c->c.vendor &&
	       strcmp(c->c.vendor, "NVIDIA");
}

/* <0 when a ranks first; *key says which rule decided. */
static int compare(const struct sel *s, const struct cand *a, const struct cand *b, int *key)
{
	int r;

	*key = KEY_TIER;
	if (a->tier_pos != b->tier_pos)
		return a->tier_pos - b->tier_pos;
	*key = KEY_VENDOR;
	if ((r = amd_rank(s, a) - amd_rank(s, b)))
		return r;
	*key = KEY_NVLINK;
	if (s->spec.nvlink && a->c.nvlink != b->c.nvlink)
		return b->c.nvlink - a->c.nvlink;
	*key = KEY_QUOTA;
	if (a->c.remaining != b->c.remaining)
		return a->c.remaining > b->c.remaining ? -1 : 1;
	*key = KEY_COORDS;
	if ((r = vc_coords_cmp(a->c.vc, b->c.vc)))
		return r;
	*key = KEY_FAMILY;
	if (a->family != b->family)
		return a->family < b->family ? -1 : 1;
	*key = 0;
	return 0;
}

static const struct aj_vc_quota *find_quota(const struct aj_vc *vc, const char *series)
{
	size_t i;

	for (i = 0; i < vc->quotas_nr; i++)
		if (!strcmp(vc->quotas[i].series, series))
			return &vc->quotas[i];
	return NULL;
}

/* The instance type of family f for this request, or NULL. */
static const char *family_instance(const struct sel *s, const struct aj_sku_family *f, int *units)
{
	size_t i, d;

	if (!s->direct_nr)
		return aj_sku_family_instance(f, &s->spec, s->count, 0, units);
	for (i = 0; i < AJ_SKU_FAMILY_SIZES && f->names[i]; i++)
		for (d = 0; d < s->direct_nr; d++)
			if (!strcmp(f->names[i], s->direct[d])) {
				*units = f->units[i];
				return f->names[i];
			}
	return NULL;
}

/* "no Standard or Basic quota for " and the like: the tiers a job may use. */
static void no_quota_prefix(struct aj_buf *b, enum aj_tier from)
{
	if (from == AJ_TIER_PREMIUM)
		aj_buf_addstr(b, "no quota for ");
	else if (from == AJ_TIER_STANDARD)
		aj_buf_addstr(b, "no Standard or Basic quota for ");
	else
		aj_buf_addstr(b, "no Basic quota for ");
}

/*
 * The best candidate VC vc offers (*best, 1), or 0 with why it offers none
 * in why: the quotas that fall short, else the series it has no usable
 * quota for. -1 on OOM.
 */
static int best_on_vc(const struct sel *s, const struct aj_vc *vc, struct cand *best,
		      struct aj_buf *why)
{
	struct aj_buf missing = AJ_BUF_INIT(AJ_BUF_SMALL);
	size_t fi;
	int found = 0;

	for (fi = 0; fi < s->families_nr; fi++) {
		const struct aj_sku_family *f = &s->families[fi];
		const struct aj_vc_quota *q;
		const char *name;
		int units = 0, t, any_tier = 0;
		long need, user_free;

		if (!(name = family_instance(s, f, &units)))
			continue;
		need = (long)units * s->req->nodes;
		q = find_quota(vc, f->series);
		user_free = !q || q->user_limit < 0 ? LONG_MAX :
			q->user_used < q->user_limit ? q->user_limit - q->user_used : 0;
		for (t = (int)s->tier; q && t < AJ_TIERS; t++) {
			long tier_free = aj_vc_quota_free(q, (enum aj_tier)t);
			struct cand c;
			int key;

			if (tier_free < 0)
				continue;
			any_tier = 1;
			if (tier_free < need || user_free < need) {
				aj_buf_addf(why, "%s%s %s: %ld free, %ld needed", why->len ? "; " : "",
					    f->series, tier_free < need ? tier_names[t] : "user quota",
					    tier_free < need ? tier_free : user_free, need);
				continue;
			}
			memset(&c, 0, sizeof(c));
			c.c.vc = vc;
			c.c.series = f->series;
			c.c.instance_type = name;
			c.c.vendor = f->vendor;
			c.c.nvlink = f->nvlink;
			c.c.tier = (enum aj_tier)t;
			c.c.units = need;
			c.c.remaining = (tier_free < user_free ? tier_free : user_free) - need;
			c.family = fi;
			c.tier_pos = t - (int)s->tier;
			if (!found || compare(s, &c, best, &key) < 0)
				*best = c;
			found = 1;
			break;    /* lower tiers of this family only rank below */
		}
		if (!any_tier)
			aj_buf_addf(&missing, "%s%s", missing.len ? ", " : "", f->series);
	}
	if (!found && !why->len) {
		no_quota_prefix(why, s->tier);
		aj_buf_addstr(why, aj_buf_cstr(&missing));
	}
	if (missing.failed)
		why->failed = 1;
	aj_buf_release(&missing);
	return why->failed ? -1 : found;
}

static void coords(struct aj_buf *b, const struct aj_vc *vc)
{
	aj_buf_addf(b, "%s/%s/%s", vc->subscription, vc->resource_group, vc->name);
}

/* Why loser ranks below winner, in words. */
static char *lost_because(const struct sel *s, const struct cand *loser, const struct cand *win)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);
	int key;

	compare(s, loser, win, &key);
	switch (key) {
	case KEY_TIER:
		aj_buf_addf(&b, "best tier %s ranks below %s on ", tier_names[loser->c.tier],
			    tier_names[win->c.tier]);
		break;
	case KEY_VENDOR:
		aj_buf_addf(&b, "offers %s (%s); NVIDIA is preferred when the SKU names no "
			    "accelerator, as on ", loser->c.vendor, loser->c.instance_type);
		break;
	case KEY_NVLINK:
		aj_buf_addf(&b, "%s has no NVLink, which the SKU asks for and which is on ",
			    loser->c.instance_type);
		break;
	case KEY_QUOTA:
		aj_buf_addf(&b, "leaves %ld free after the job, %ld on ", loser->c.remaining,
			    win->c.remaining);
		break;
	default:
		aj_buf_addstr(&b, "ranks equal and sorts after ");
		break;
	}
	coords(&b, win->c.vc);
	return aj_buf_detach(&b, NULL);
}

void aj_vc_choice_release(struct aj_vc_choice *c)
{
	size_t i;

	for (i = 0; i < c->others_nr; i++)
		aj_free(c->others[i].why);
	aj_free(c->others);
	aj_free(c->chosen.why);
	memset(c, 0, sizeof(*c));
}

static int matches(const char *filter, const char *value)
{
	return !filter || !*filter || !strcasecmp(filter, value);
}

/* An instance type without "Singularity." and "Standard_": its family's name for it. */
static const char *direct_name(const char *p)
{
	if (!strncmp(p, "Singularity.", 12))
		p += 12;
	return !strncmp(p, "Standard_", 9) ? p + 9 : p;
}

/* What the request asks for, in messages: its SKU, else its first instance type. */
static const char *asked(const struct aj_vc_request *req)
{
	return req->sku ? req->sku : req->instance_types_nr ? req->instance_types[0] : "";
}

/* Parse the SKU into s. 0 / -1 (error at config.jobs[0].sku). */
static int sel_init(struct sel *s, const struct aj_vc_request *req, struct aj_errors *err)
{
	static const struct aj_where w = { NULL, 0, 0, "config.jobs[0].sku" };
	const char *p = req->sku ? req->sku : "";
	size_t fi;
	int r, any = 0, units;

	memset(s, 0, sizeof(*s));
	s->req = req;
	aj_sku_spec_init(&s->spec);
	s->families = aj_sku_families(&s->families_nr);
	s->tier = AJ_TIER_PREMIUM;
	if (req->tier && *req->tier && aj_tier_parse(req->tier, &s->tier)) {
		struct aj_where tw = { NULL, 0, 0, "config.jobs[0].sla_tier" };

		return aj_errors_add(err, &tw, "\"%s\" is not an SLA tier (Premium, Standard, Basic)",
				     req->tier);
	}
	if (req->nodes < 1)
		return aj_errors_add(err, NULL, "cannot choose a virtual cluster for %d nodes",
				     req->nodes);
	while (*p >= '0' && *p <= '9')
		p++;
	p = p != req->sku && *p == 'x' ? p + 1 : req->sku ? req->sku : "";
	if (!strncmp(p, "Singularity.", 12))
		p += 12;
	if (!req->sku && req->instance_types_nr) {
		for (fi = 0; fi < req->instance_types_nr && fi < AJ_VC_DIRECT_MAX; fi++)
			s->direct[s->direct_nr++] = direct_name(req->instance_types[fi]);
	} else if (strchr(p, '_') || !strncmp(p, "Standard", 8)) {
		s->direct[s->direct_nr++] = direct_name(p);
	} else {
		r = aj_sku_parse(req->sku ? req->sku : "", &s->spec);
		if (r < 0)
			return aj_errors_oom(err);
		if (r > 0)
			return aj_errors_add(err, &w, "\"%s\": neither a Singularity instance type "
					     "nor SKU shorthand such as 2x80G8-A100-NvLink or C4",
					     req->sku ? req->sku : "");
		s->count = s->spec.cpu && req->processes > 0 ? req->processes : s->spec.count;
	}
	for (fi = 0; fi < s->families_nr && !any; fi++)
		any = family_instance(s, &s->families[fi], &units) != NULL;
	if (!any) {
		if (s->spec.cpu && !s->direct_nr)
			return aj_errors_add(err, &w, "\"%s\": no Singularity CPU family has size "
					     "tier %d (-p picks the tier, 1 to %d)", req->sku,
					     s->count, AJ_SKU_FAMILY_SIZES);
		return aj_errors_add(err, &w, "\"%s\": no Singularity instance family matches",
				     asked(req));
	}
	return 0;
}

static int push_other(struct aj_vc_choice *out, size_t *alloc, const struct cand *c, char *why)
{
	if (!why || AJ_GROW(out->others, out->others_nr + 1, *alloc)) {
		aj_free(why);
		return -1;
	}
	out->others[out->others_nr] = c->c;
	out->others[out->others_nr++].why = why;
	return 0;
}

static int no_vc_error(const struct sel *s, const struct aj_vc_choice *out,
		       struct aj_errors *err)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_LARGE);
	struct aj_where w = { NULL, 0, 0, "config.target" };
	size_t i;
	int r;

	aj_buf_addf(&b, "no virtual cluster has %s quota for %d x \"%s\"",
		    tier_names[s->tier], s->req->nodes, asked(s->req));
	if (s->tier != AJ_TIER_BASIC)
		aj_buf_addstr(&b, " (or a lower tier)");
	if (!out->others_nr)
		aj_buf_addstr(&b, ": none found");
	for (i = 0; i < out->others_nr; i++) {
		aj_buf_addstr(&b, i ? "; " : ": ");
		coords(&b, out->others[i].vc);
		aj_buf_addf(&b, ": %s", out->others[i].why);
	}
	if (b.failed) {
		aj_buf_release(&b);
		return aj_errors_oom(err);
	}
	r = aj_errors_add(err, &w, "%s", aj_buf_cstr(&b));
	aj_buf_release(&b);
	return r;
}

int aj_vc_select(const struct aj_vc_request *req, const struct aj_vc *vcs, size_t nr,
		 struct aj_vc_choice *out, struct aj_errors *err)
{
	struct sel s;
	struct cand *ok = NULL;
	size_t ok_nr = 0, alloc = 0, i, j, considered = 0;
	int ret = -1;

	memset(out, 0, sizeof(*out));
	if (sel_init(&s, req, err))
		goto done;
	ok = aj_calloc(nr ? nr : 1, sizeof(*ok));
	if (!ok) {
		aj_errors_oom(err);
		goto done;
	}
	for (i = 0; i < nr; i++) {
		const struct aj_vc *vc = &vcs[i];
		struct aj_buf why = AJ_BUF_INIT(AJ_BUF_SMALL);
		struct cand c;
		int r;

		if (!matches(req->subscription, vc->subscription) ||
		    !matches(req->resource_group, vc->resource_group) ||
		    !matches(req->vc, vc->name))
			continue;
		considered++;
		memset(&c, 0, sizeof(c));
		r = best_on_vc(&s, vc, &c, &why);
		if (r > 0) {
			/* insertion keeps ok[] sorted best first */
			for (j = ok_nr; j > 0; j--) {
				int key;

				if (compare(&s, &ok[j - 1], &c, &key) <= 0)
					break;
				ok[j] = ok[j - 1];
			}
			ok[j] = c;
			ok_nr++;
		} else if (r == 0) {
			c.c.vc = vc;
			c.c.tier = s.tier;
			r = push_other(out, &alloc, &c, aj_buf_detach(&why, NULL));
		}
		aj_buf_release(&why);
		if (r < 0) {
			aj_errors_oom(err);
			goto done;
		}
	}
	if (req->vc && *req->vc && !considered) {
		struct aj_where w = { NULL, 0, 0, "config.target.name" };

		aj_errors_add(err, &w, "virtual cluster \"%s\" not found%s%s%s%s", req->vc,
			      req->subscription && *req->subscription ? " in subscription " : "",
			      req->subscription && *req->subscription ? req->subscription : "",
			      req->resource_group && *req->resource_group ? ", resource group " : "",
			      req->resource_group && *req->resource_group ? req->resource_group : "");
		goto done;
	}
	if (!ok_nr) {
		no_vc_error(&s, out, err);
		goto done;
	}
	/* Losers go before the refused VCs, best first. */
	{
		size_t refused = out->others_nr;

		for (i = 1; i < ok_nr; i++)
			if (push_other(out, &alloc, &ok[i], lost_because(&s, &ok[i], &ok[0]))) {
				aj_errors_oom(err);
				goto done;
			}
		if (refused && ok_nr > 1) {
			struct aj_vc_candidate *tmp = aj_malloc(refused * sizeof(*tmp));

			if (!tmp) {
				aj_errors_oom(err);
				goto done;
			}
			memcpy(tmp, out->others, refused * sizeof(*tmp));
			memmove(out->others, out->others + refused,
				(ok_nr - 1) * sizeof(*tmp));
			memcpy(out->others + ok_nr - 1, tmp, refused * sizeof(*tmp));
			aj_free(tmp);
		}
	}
	out->chosen = ok[0].c;
	ret = 0;
done:
	aj_free(ok);
	aj_sku_spec_release(&s.spec);
	return ret;
}
