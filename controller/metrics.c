#include "metrics.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/buf.h"

int aj_metrics_init(struct aj_metrics *m)
{
	m->families = NULL;
	m->nr = 0;
	m->alloc = 0;
	return pthread_mutex_init(&m->lock, NULL) ? -1 : 0;
}

static void family_release(struct aj_metric_family *f)
{
	size_t i;

	for (i = 0; i < f->nr; i++) {
		aj_free(f->series[i].labels);
		aj_free(f->series[i].buckets);
	}
	aj_free(f->series);
	aj_free(f->name);
	aj_free(f->help);
	aj_free(f->bounds);
}

void aj_metrics_release(struct aj_metrics *m)
{
	size_t i;

	for (i = 0; i < m->nr; i++)
		family_release(&m->families[i]);
	aj_free(m->families);
	pthread_mutex_destroy(&m->lock);
}

int aj_metrics_register(struct aj_metrics *m, const char *name,
			enum aj_metric_type type, const char *help,
			const double *bounds, size_t nbounds)
{
	struct aj_metric_family f;
	int r = -1;

	memset(&f, 0, sizeof(f));
	f.type = type;
	f.name = aj_strdup(name);
	f.help = aj_strdup(help);
	if (type == AJ_METRIC_HISTOGRAM && nbounds) {
		f.bounds = aj_calloc(nbounds, sizeof(*f.bounds));
		if (f.bounds) {
			memcpy(f.bounds, bounds, nbounds * sizeof(*f.bounds));
			f.nbounds = nbounds;
		}
	}
	pthread_mutex_lock(&m->lock);
	if (f.name && f.help && (f.nbounds || type != AJ_METRIC_HISTOGRAM) &&
	    !AJ_GROW(m->families, m->nr + 1, m->alloc)) {
		m->families[m->nr++] = f;
		r = 0;
	}
	pthread_mutex_unlock(&m->lock);
	if (r)
		family_release(&f);
	return r;
}

int aj_metrics_labels(char *out, size_t size, ...)
{
	struct aj_buf b = AJ_BUF_INIT(size ? size - 1 : 0);
	const char *k;
	va_list ap;
	int first = 1;

	va_start(ap, size);
	while ((k = va_arg(ap, const char *))) {
		const char *v = va_arg(ap, const char *);

		aj_buf_addf(&b, "%s%s=\"", first ? "" : ",", k);
		for (; *v; v++) {
			/* The exposition format escapes exactly these three. */
			if (*v == '\\' || *v == '"')
				aj_buf_addch(&b, '\\');
			if (*v == '\n')
				aj_buf_addstr(&b, "\\n");
			else
				aj_buf_addch(&b, *v);
		}
		aj_buf_addch(&b, '"');
		first = 0;
	}
	va_end(ap);
	if (b.failed || !size) {
		aj_buf_release(&b);
		return -1;
	}
	snprintf(out, size, "%s", aj_buf_cstr(&b));
	aj_buf_release(&b);
	return 0;
}

static struct aj_metric_family *family_find(struct aj_metrics *m, const char *name)
{
	size_t i;

	for (i = 0; i < m->nr; i++)
		if (!strcmp(m->families[i].name, name))
			return &m->families[i];
	return NULL;
}

static struct aj_metric_series *series_get(struct aj_metric_family *f, const char *labels)
{
	struct aj_metric_series s;
	size_t i;

	for (i = 0; i < f->nr; i++)
		if (!strcmp(f->series[i].labels, labels))
			return &f->series[i];
	memset(&s, 0, sizeof(s));
	s.labels = aj_strdup(labels);
	if (f->nbounds)
		s.buckets = aj_calloc(f->nbounds, sizeof(*s.buckets));
	if (!s.labels || (f->nbounds && !s.buckets) ||
	    AJ_GROW(f->series, f->nr + 1, f->alloc)) {
		aj_free(s.labels);
		aj_free(s.buckets);
		return NULL;
	}
	f->series[f->nr] = s;
	return &f->series[f->nr++];
}

static int update(struct aj_metrics *m, const char *name, const char *labels,
		  enum aj_metric_type want, double v, int set)
{
	struct aj_metric_family *f;
	struct aj_metric_series *s = NULL;
	size_t i;

	pthread_mutex_lock(&m->lock);
	f = family_find(m, name);
	/* Counters may be set too: totals kept elsewhere are mirrored at scrape. */
	if (f && (f->type == want || (set && f->type == AJ_METRIC_COUNTER)))
		s = series_get(f, labels ? labels : "");
	if (s) {
		if (want == AJ_METRIC_HISTOGRAM) {
			for (i = 0; i < f->nbounds; i++)
				if (v <= f->bounds[i])
					s->buckets[i]++;
			s->sum += v;
			s->count++;
		} else if (set) {
			s->value = v;
		} else {
			s->value += v;
		}
	}
	pthread_mutex_unlock(&m->lock);
	return s ? 0 : -1;
}

int aj_metrics_add(struct aj_metrics *m, const char *name, const char *labels, double v)
{
	return update(m, name, labels, AJ_METRIC_COUNTER, v, 0);
}

int aj_metrics_set(struct aj_metrics *m, const char *name, const char *labels, double v)
{
	return update(m, name, labels, AJ_METRIC_GAUGE, v, 1);
}

int aj_metrics_observe(struct aj_metrics *m, const char *name, const char *labels, double v)
{
	return update(m, name, labels, AJ_METRIC_HISTOGRAM, v, 0);
}

/* "{labels}" or "{labels,extra}" or "" */
static void add_labels(struct aj_buf *out, const char *labels, const char *extra)
{
	if (!*labels && !extra)
		return;
	aj_buf_addf(out, "{%s%s%s}", labels, *labels && extra ? "," : "",
		    extra ? extra : "");
}

int aj_metrics_render(struct aj_metrics *m, struct aj_buf *out)
{
	static const char *const types[] = { "counter", "gauge", "histogram" };
	size_t i, j, k;

	pthread_mutex_lock(&m->lock);
	for (i = 0; i < m->nr; i++) {
		const struct aj_metric_family *f = &m->families[i];

		aj_buf_addf(out, "# HELP %s %s\n# TYPE %s %s\n", f->name, f->help,
			    f->name, types[f->type]);
		for (j = 0; j < f->nr; j++) {
			const struct aj_metric_series *s = &f->series[j];

			if (f->type != AJ_METRIC_HISTOGRAM) {
				aj_buf_addstr(out, f->name);
				add_labels(out, s->labels, NULL);
				aj_buf_addf(out, " %.15g\n", s->value);
				continue;
			}
			for (k = 0; k <= f->nbounds; k++) {
				char le[48];

				if (k < f->nbounds)
					snprintf(le, sizeof(le), "le=\"%.15g\"", f->bounds[k]);
				else
					snprintf(le, sizeof(le), "le=\"+Inf\"");
				aj_buf_addf(out, "%s_bucket", f->name);
				add_labels(out, s->labels, le);
				aj_buf_addf(out, " %lu\n", k < f->nbounds ? s->buckets[k] : s->count);
			}
			aj_buf_addf(out, "%s_sum", f->name);
			add_labels(out, s->labels, NULL);
			aj_buf_addf(out, " %.15g\n%s_count", s->sum, f->name);
			add_labels(out, s->labels, NULL);
			aj_buf_addf(out, " %lu\n", s->count);
		}
	}
	pthread_mutex_unlock(&m->lock);
	return out->failed ? -1 : 0;
}
