/*
 * The baseline for bench/controller.sh: one client creating N copies of a
 * Volcano Job (read as JSON from a file) at a given QPS and burst, through
 * the same Kubernetes client the controller uses. Prints the seconds taken.
 *
 *   kube_create KUBECONFIG NAMESPACE JOB.json COUNT QPS BURST
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "kube/client.h"
#include "kube/kubeconfig.h"

static const struct aj_kube_resource volcano_jobs = { "batch.volcano.sh", "v1alpha1", "jobs", 1 };

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int fail(struct aj_errors *err)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);

	aj_errors_format_all(err, &b);
	fprintf(stderr, "kube_create: %s", aj_buf_cstr(&b));
	aj_buf_release(&b);
	return 1;
}

int main(int argc, char **argv)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_kube_config cfg;
	struct aj_kube_config_opts o;
	struct aj_kube k;
	struct aj_buf text = AJ_BUF_INIT(AJ_BUF_LARGE);
	struct aj_kube_ref ref = { &volcano_jobs, NULL, NULL, NULL };
	cJSON *job, *meta;
	long i, count;
	double t0;

	if (argc != 7) {
		fprintf(stderr, "usage: kube_create KUBECONFIG NAMESPACE JOB.json COUNT QPS BURST\n");
		return 2;
	}
	count = strtol(argv[4], NULL, 10);
	aj_alloc_hook_cjson();
	memset(&o, 0, sizeof(o));
	o.kubeconfig = argv[1];
	aj_kube_config_init(&cfg);
	if (aj_kube_global_init(&err) || aj_kube_config_load(&cfg, &o, &err) ||
	    aj_kube_init(&k, &cfg, &err) || aj_kube_read_file(argv[3], AJ_BUF_LARGE, &text, &err))
		return fail(&err);
	job = cJSON_Parse(aj_buf_cstr(&text));
	meta = cJSON_GetObjectItem(job, "metadata");
	if (!meta)
		return fprintf(stderr, "kube_create: %s has no metadata\n", argv[3]), 1;
	aj_kube_set_rate(&k, strtod(argv[5], NULL), (int)strtol(argv[6], NULL, 10));
	ref.ns = argv[2];
	cJSON_DeleteItemFromObject(meta, "namespace");
	cJSON_AddStringToObject(meta, "namespace", argv[2]);
	t0 = now();
	for (i = 0; i < count; i++) {
		char name[64];

		snprintf(name, sizeof(name), "direct-%ld", i);
		cJSON_DeleteItemFromObject(meta, "name");
		cJSON_AddStringToObject(meta, "name", name);
		if (aj_kube_create(&k, &ref, job, NULL, NULL, &err))
			return fail(&err);
	}
	printf("%.3f\n", now() - t0);
	cJSON_Delete(job);
	aj_buf_release(&text);
	aj_kube_release(&k);
	return 0;
}
