/*
 * Watch delivery: one loop with W watches on one namespace (label set=sK),
 * while a second thread creates N ConfigMaps round-robin over the labels,
 * each carrying its creation time. Prints the events per second delivered
 * and the delay from create to callback (p50/p90/p99), and the resident
 * memory the loop adds with its watches connected.
 *
 * Usage: watch_bench KUBECONFIG NAMESPACE [N] [W]   (defaults 2000 3)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "core/error.h"
#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "kube/watch.h"

struct bench {
	const char *kubeconfig, *ns;
	long n, w;
	double *delay;
	long seen;
	double first, last;
};

static double now_real(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long rss_kib(void)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			v = strtol(line + 6, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

static int client(struct aj_kube *k, const char *kubeconfig)
{
	struct aj_kube_config cfg;
	struct aj_kube_config_opts o = { 0 };
	struct aj_errors err = AJ_ERRORS_INIT;

	o.kubeconfig = kubeconfig;
	if (aj_kube_config_load(&cfg, &o, &err) || aj_kube_init(k, &cfg, &err)) {
		struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);

		aj_errors_format_all(&err, &b);
		fprintf(stderr, "%s\n", aj_buf_cstr(&b));
		return -1;
	}
	aj_kube_set_rate(k, 0, 0);
	return 0;
}

static void *creator(void *arg)
{
	struct bench *b = arg;
	struct aj_kube k;
	long i;

	if (client(&k, b->kubeconfig))
		return NULL;
	for (i = 0; i < b->n; i++) {
		struct aj_errors err = AJ_ERRORS_INIT;
		char name[32], set[32], t[32];
		struct aj_kube_ref ref = { &aj_kube_configmaps, b->ns, name, NULL };
		cJSON *obj = cJSON_CreateObject(), *meta, *labels, *data;

		snprintf(name, sizeof(name), "b%ld", i);
		snprintf(set, sizeof(set), "s%ld", i % b->w);
		snprintf(t, sizeof(t), "%.6f", now_real());
		meta = cJSON_AddObjectToObject(obj, "metadata");
		cJSON_AddStringToObject(meta, "name", name);
		labels = cJSON_AddObjectToObject(meta, "labels");
		cJSON_AddStringToObject(labels, "set", set);
		data = cJSON_AddObjectToObject(obj, "data");
		cJSON_AddStringToObject(data, "t", t);
		if (aj_kube_create(&k, &ref, obj, NULL, NULL, &err))
			fprintf(stderr, "create %s failed\n", name);
		aj_errors_release(&err);
		cJSON_Delete(obj);
	}
	aj_kube_release(&k);
	return NULL;
}

static int on_event(void *ctx, struct aj_watch_event *ev)
{
	struct bench *b = ctx;
	const cJSON *t;
	double now = now_real();

	if (ev->type != AJ_WATCH_ADDED)
		return 0;
	t = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ev->object, "data"), "t");
	if (!cJSON_IsString(t) || b->seen >= b->n)
		return 0;
	if (!b->seen)
		b->first = now;
	b->last = now;
	b->delay[b->seen++] = now - strtod(t->valuestring, NULL);
	return 0;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	struct bench b = { 0 };
	struct aj_kube k;
	struct aj_watch_loop l;
	struct aj_errors err = AJ_ERRORS_INIT;
	pthread_t th;
	long i, rss0, rss1;
	double start;

	if (argc < 3) {
		fprintf(stderr, "usage: watch_bench KUBECONFIG NAMESPACE [N] [W]\n");
		return 2;
	}
	b.kubeconfig = argv[1];
	b.ns = argv[2];
	b.n = argc > 3 ? strtol(argv[3], NULL, 10) : 2000;
	b.w = argc > 4 ? strtol(argv[4], NULL, 10) : 3;
	b.delay = calloc((size_t)b.n, sizeof(double));
	aj_alloc_hook_cjson();
	if (!b.delay || aj_kube_global_init(&err) || client(&k, b.kubeconfig))
		return 1;
	rss0 = rss_kib();
	if (aj_watch_loop_init(&l, &k, &err))
		return 1;
	for (i = 0; i < b.w; i++) {
		char sel[32];
		struct aj_kube_ref ref = { &aj_kube_configmaps, b.ns, NULL, NULL };
		struct aj_kube_list_opts o = { 0 };

		snprintf(sel, sizeof(sel), "set=s%ld", i);
		o.label_selector = sel;
		if (aj_watch_add(&l, &ref, &o, on_event, &b, &err))
			return 1;
	}
	/* Lists and streams up. */
	if (aj_watch_loop_run(&l, 2000, &err))
		return 1;
	rss1 = rss_kib();
	start = now_real();
	pthread_create(&th, NULL, creator, &b);
	while (b.seen < b.n && now_real() - start < 300)
		if (aj_watch_loop_run(&l, 100, &err))
			return 1;
	pthread_join(th, NULL);
	qsort(b.delay, (size_t)b.seen, sizeof(double), cmp);
	printf("events %ld/%ld  watches %ld  delivered %.0f events/s  "
	       "delay p50 %.2f ms p90 %.2f ms p99 %.2f ms  loop rss +%ld KiB\n",
	       b.seen, b.n, b.w, b.seen > 1 ? (double)(b.seen - 1) / (b.last - b.first) : 0.0,
	       b.seen ? b.delay[b.seen / 2] * 1e3 : 0, b.seen ? b.delay[b.seen * 9 / 10] * 1e3 : 0,
	       b.seen ? b.delay[b.seen * 99 / 100] * 1e3 : 0, rss1 - rss0);
	aj_watch_loop_release(&l);
	aj_kube_release(&k);
	free(b.delay);
	return b.seen == b.n ? 0 : 1;
}
