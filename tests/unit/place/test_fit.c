/*
 * Can the whole job start now (place/fit.c): quantities, a Volcano queue,
 * a Kueue ClusterQueue and the nodes' packing, each a table of cases with
 * the state and reason written by hand. The cluster is the local test
 * cluster's shape: A100 and H100 nodes of 8 GPUs, tainted
 * nvidia.com/gpu=present:NoSchedule, and CPU nodes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "support.h"

#include "core/alloc.h"
#include "place/fit.h"

#define GI (1LL << 30)
#define NR(a) (sizeof(a) / sizeof((a)[0]))

static void quantities(void **state)
{
	static const struct { int res; const char *in; long long want; } ok[] = {
		{ AJ_FIT_CPU, "8", 8000 },          { AJ_FIT_CPU, "500m", 500 },
		{ AJ_FIT_CPU, "1.5", 1500 },        { AJ_FIT_CPU, "0.0001", 1 },
		{ AJ_FIT_CPU, "2e3", 2000000 },     { AJ_FIT_CPU, "1k", 1000000 },
		{ AJ_FIT_MEMORY, "512Gi", 512 * GI }, { AJ_FIT_MEMORY, "2Ti", 2048 * GI },
		{ AJ_FIT_MEMORY, "1G", 1000000000 }, { AJ_FIT_MEMORY, "1500m", 2 },
		{ AJ_FIT_MEMORY, "1.5Ki", 1536 },   { AJ_FIT_GPU, "8", 8 },
		{ AJ_FIT_PODS, "110", 110 },        { AJ_FIT_GPU, "+4", 4 },
		{ AJ_FIT_MEMORY, "3E-1", 1 },
	};
	static const char *const bad[] = { "", "Gi", "8x", "-1", "1.2.3", "8 Gi", "9Ei", "1e", "e3",
					   "99999999999999999999" };
	long long v;
	size_t i;

	(void)state;
	for (i = 0; i < NR(ok); i++) {
		v = -7;
		if (aj_fit_quantity(ok[i].res, ok[i].in, &v) || v != ok[i].want)
			fail_msg("%s as %s: got %lld, want %lld", ok[i].in,
				 aj_fit_res_name(ok[i].res), v, ok[i].want);
	}
	for (i = 0; i < NR(bad); i++) {
		v = -7;
		if (aj_fit_quantity(AJ_FIT_MEMORY, bad[i], &v) != -1 || v != -7)
			fail_msg("'%s' taken as a quantity", bad[i]);
	}
	assert_int_equal(aj_fit_res_of("nvidia.com/gpu"), AJ_FIT_GPU);
	assert_int_equal(aj_fit_res_of("ephemeral-storage"), -1);
	assert_string_equal(aj_fit_res_name(AJ_FIT_PODS), "pods");
}

static struct aj_fit_res_v res(long long cpu, long long mem, long long gpu, long long pods)
{
	struct aj_fit_res_v r = { { cpu, mem, gpu, pods } };

	return r;
}

static const struct aj_fit_label a100_sel[] = { { "nvidia.com/gpu.product", "A100-SXM4-80GB" } };
static const struct aj_fit_label b200_sel[] = { { "nvidia.com/gpu.product", "B200" } };
static const struct aj_fit_toleration gpu_tol[] = { { "nvidia.com/gpu", 1, NULL, "NoSchedule" } };

/* tasks x pods of 8 GPUs, 16 cpu, 64Gi */
static struct aj_fit_task gpu_task(const char *name, long pods)
{
	struct aj_fit_task t = { name, pods, res(16000, 64 * GI, 8, -1) };

	return t;
}


static void volcano_queue(void **state)
{
	struct aj_fit_task two = gpu_task("worker", 2);
	struct aj_fit_task cpu_only = { "main", 3, res(4000, 8 * GI, -1, -1) };
	struct aj_fit_ask gpu_ask = { &two, 1, NULL, 0, gpu_tol, 1, 1 };
	struct aj_fit_ask cpu_ask = { &cpu_only, 1, NULL, 0, NULL, 0, 1 };
	static const struct {
		const char *state;
		struct aj_fit_res_v cap, alloc;
		int gpu;
		enum aj_place_state want;
		const char *reason;
	} cases[] = {
		{ "Open", { { -1, -1, 32, -1 } }, { { 0, 0, 32, -1 } }, 1, AJ_PLACE_FULL,
		  "queue default: capability nvidia.com/gpu 32, allocated 32, the job asks 16" },
		{ "Open", { { -1, -1, 32, -1 } }, { { 0, 0, 16, -1 } }, 1, AJ_PLACE_FITS,
		  "queue default: 16 of 32 nvidia.com/gpu free" },
		{ NULL, { { -1, -1, -1, -1 } }, { { 0, 0, 64, -1 } }, 1, AJ_PLACE_FITS,
		  "queue default: open, no capability on nvidia.com/gpu" },
		{ "Closed", { { -1, -1, 32, -1 } }, { { 0, 0, 0, -1 } }, 1, AJ_PLACE_FULL,
		  "queue default is Closed" },
		/* the GPUs fit, the CPUs do not: told in cores */
		{ "Open", { { 40000, -1, 32, -1 } }, { { 10000, 0, 0, -1 } }, 1, AJ_PLACE_FULL,
		  "queue default: capability cpu 40, allocated 10, the job asks 32" },
		{ "Open", { { 16000, 64 * GI, 32, -1 } }, { { 1500, 41 * GI, 0, -1 } }, 0,
		  AJ_PLACE_FULL, "queue default: capability memory 64Gi, allocated 41Gi, the job asks 24Gi" },
		/* exactly full after it is still a fit */
		{ "Open", { { -1, 64 * GI, -1, -1 } }, { { 1500, 40 * GI, 0, -1 } }, 0, AJ_PLACE_FITS,
		  "queue default: open, no capability on cpu" },
		{ "Open", { { 16000, -1, 32, -1 } }, { { 1500, 40 * GI, 0, -1 } }, 0, AJ_PLACE_FITS,
		  "queue default: 14500m of 16 cpu free" },
		/* a queue counting pods */
		{ "Open", { { -1, -1, -1, 4 } }, { { 0, 0, 0, 2 } }, 0, AJ_PLACE_FULL,
		  "queue default: capability pods 4, allocated 2, the job asks 3" },
		/* allocated above capability (shrunk): nothing free, never negative */
		{ "Open", { { -1, -1, 8, -1 } }, { { 0, 0, 12, -1 } }, 1, AJ_PLACE_FULL,
		  "queue default: capability nvidia.com/gpu 8, allocated 12, the job asks 16" },
	};
	struct aj_fit_result out;
	size_t i;

	(void)state;
	for (i = 0; i < NR(cases); i++) {
		struct aj_fit_queue q = { "default", cases[i].state, cases[i].cap, cases[i].alloc, 0 };
		char what[32];

		memset(&out, 0, sizeof(out));
		aj_fit_queue(&q, cases[i].gpu ? &gpu_ask : &cpu_ask, &out);
		snprintf(what, sizeof(what), "queue case %zu", i);
		aj_test_fit_check(&out, cases[i].want, cases[i].reason, what);
	}
}

static const struct aj_fit_label a100_labels[] = { { "nvidia.com/gpu.product", "A100-SXM4-80GB" } };
static const struct aj_fit_label h100_labels[] = { { "nvidia.com/gpu.product", "H100-80GB-HBM3" } };

/* team-a of the local cluster, with a100 and h100 GPUs reserved as given */
static void team_a(struct aj_fit_flavor f[3], long long a100_used, long long h100_used)
{
	memset(f, 0, 3 * sizeof(*f));
	f[0].name = "cpu";
	f[0].nominal = res(192000, 1536 * GI, 0, -1);
	f[1].name = "a100";
	f[1].node_labels = a100_labels;
	f[1].node_labels_nr = 1;
	f[1].nominal = res(512000, 8192 * GI, 32, -1);
	f[2].name = "h100";
	f[2].node_labels = h100_labels;
	f[2].node_labels_nr = 1;
	f[2].nominal = res(512000, 8192 * GI, 32, -1);
	f[0].borrow = f[1].borrow = f[2].borrow = res(0, 0, 0, 0);
	f[0].reserved = res(0, 0, 0, -1);
	f[1].reserved = res(a100_used * 2000, a100_used * 8 * GI, a100_used, -1);
	f[2].reserved = res(h100_used * 2000, h100_used * 8 * GI, h100_used, -1);
}

static void cluster_queue(void **state)
{
	struct aj_fit_task two = gpu_task("main", 2);
	struct aj_fit_task cpu_only = { "main", 2, res(64000, 256 * GI, -1, -1) };
	struct aj_fit_task big_cpu = { "main", 4, res(64000, 256 * GI, -1, -1) };
	static const struct {
		int task;                    /* 0: 2 x 8 GPUs, 1: 2 x 64 cpu, 2: 4 x 64 cpu */
		const struct aj_fit_label *sel;
		long long a100_used, h100_used, a100_borrow;
		int inactive;
		enum aj_place_state want;
		const char *reason;
	} cases[] = {
		{ 0, a100_sel, 16, 0, 0, 0, AJ_PLACE_FITS,
		  "ClusterQueue team-a: 16 of 32 nvidia.com/gpu free (flavor a100)" },
		{ 0, a100_sel, 24, 0, 0, 0, AJ_PLACE_FULL,
		  "ClusterQueue team-a: 8 of 32 nvidia.com/gpu free, the job asks 16" },
		/* no selector: the cpu flavor has no GPU, a100 is full, h100 takes it */
		{ 0, NULL, 32, 16, 0, 0, AJ_PLACE_FITS,
		  "ClusterQueue team-a: 16 of 64 nvidia.com/gpu free (flavor h100)" },
		{ 0, NULL, 32, 32, 0, 0, AJ_PLACE_FULL,
		  "ClusterQueue team-a: 0 of 64 nvidia.com/gpu free, the job asks 16" },
		/* a borrowing limit adds to the nominal quota */
		{ 0, a100_sel, 24, 0, 8, 0, AJ_PLACE_FITS,
		  "ClusterQueue team-a: 16 of 40 nvidia.com/gpu free (flavor a100)" },
		/* a product no flavor names: only the cpu flavor is left, with 0 GPUs */
		{ 0, b200_sel, 0, 0, 0, 0, AJ_PLACE_FULL,
		  "ClusterQueue team-a: 0 of 0 nvidia.com/gpu free, the job asks 16" },
		{ 0, a100_sel, 0, 0, 0, 1, AJ_PLACE_FULL,
		  "ClusterQueue team-a is not active: Can't admit new workloads; StopPolicy" },
		{ 1, NULL, 0, 0, 0, 0, AJ_PLACE_FITS,
		  "ClusterQueue team-a: 1216 of 1216 cpu free (flavor cpu)" },
		/* 256 cpu: over the cpu flavor, in a100's while its GPUs are free */
		{ 2, NULL, 0, 0, 0, 0, AJ_PLACE_FITS,
		  "ClusterQueue team-a: 1216 of 1216 cpu free (flavor a100)" },
	};
	struct aj_fit_flavor f[3];
	struct aj_fit_result out;
	size_t i;

	(void)state;
	for (i = 0; i < NR(cases); i++) {
		const struct aj_fit_task *t = cases[i].task == 0 ? &two :
					      cases[i].task == 1 ? &cpu_only : &big_cpu;
		struct aj_fit_ask ask = { t, 1, cases[i].sel, cases[i].sel ? 1 : 0, gpu_tol, 1, 1 };
		struct aj_fit_cluster_queue cq = { "team-a", !cases[i].inactive,
						   cases[i].inactive ?
						   "Can't admit new workloads; StopPolicy" : NULL,
						   f, 3, 0 };
		char what[32];

		team_a(f, cases[i].a100_used, cases[i].h100_used);
		f[1].borrow.v[AJ_FIT_GPU] = cases[i].a100_borrow;
		memset(&out, 0, sizeof(out));
		aj_fit_cluster_queue(&cq, &ask, &out);
		snprintf(what, sizeof(what), "ClusterQueue case %zu", i);
		aj_test_fit_check(&out, cases[i].want, cases[i].reason, what);
	}
	/* a resource no flavor covers, and each resource only in another flavor */
	{
		struct aj_fit_flavor g[2];
		struct aj_fit_task both = { "main", 1, res(100000, -1, 8, -1) };
		struct aj_fit_ask ask = { &both, 1, NULL, 0, NULL, 0, 0 };
		struct aj_fit_cluster_queue cq = { "q", 1, NULL, g, 2, 0 };

		memset(g, 0, sizeof(g));
		g[0].name = "cpus";
		g[0].nominal = res(192000, -1, -1, -1);
		g[0].borrow = g[0].reserved = res(0, 0, 0, 0);
		g[1] = g[0];
		g[1].name = "cpus2";
		aj_fit_cluster_queue(&cq, &ask, &out);
		aj_test_fit_check(&out, AJ_PLACE_FULL, "ClusterQueue q: no flavor covers nvidia.com/gpu", "uncovered");
		g[1].nominal = res(8000, -1, 8, -1);
		aj_fit_cluster_queue(&cq, &ask, &out);
		aj_test_fit_check(&out, AJ_PLACE_FULL, "ClusterQueue q: no one flavor has room for all the job asks",
		      "apart");
	}
}

static const struct aj_fit_taint gpu_taint[] = { { "nvidia.com/gpu", "present", "NoSchedule" } };
static const struct aj_fit_label cpu_labels[] = { { "type", "kwok" } };

static struct aj_fit_node gpu_node(const char *name, const struct aj_fit_label *labels,
				   long long gpus_free)
{
	struct aj_fit_node n = { name, 0, labels, 1, gpu_taint, 1,
				 res(128000 - (8 - gpus_free) * 16000, 2048 * GI, gpus_free, 110),
				 res(128000, 2048 * GI, 8, 110), 0 };

	return n;
}

static struct aj_fit_node cpu_node(const char *name, long long cpu_free, long long pods_free)
{
	struct aj_fit_node n = { name, 0, cpu_labels, 1, NULL, 0,
				 res(cpu_free, 512 * GI, -1, pods_free), res(64000, 512 * GI, -1, 110),
				 0 };

	return n;
}

static void nodes_pack(void **state)
{
	struct aj_fit_node n[8];
	struct aj_fit_task four = gpu_task("main", 4);
	struct aj_fit_result out;
	struct aj_fit_ask ask = { &four, 1, a100_sel, 1, gpu_tol, 1, 1 };

	(void)state;
	n[0] = gpu_node("kwok-a100-0", a100_labels, 8);
	n[1] = gpu_node("kwok-a100-1", a100_labels, 8);
	n[2] = gpu_node("kwok-a100-2", a100_labels, 8);
	n[3] = gpu_node("kwok-a100-3", a100_labels, 4);
	n[4] = gpu_node("kwok-h100-0", h100_labels, 8);
	n[5] = cpu_node("kwok-cpu-0", 64000, 110);
	n[6] = cpu_node("kwok-cpu-1", 64000, 110);
	n[7] = gpu_node("kwok-a100-4", a100_labels, 8);
	n[7].unschedulable = 1;

	/* one A100 node half used, one cordoned: three take a whole pod each */
	assert_int_equal(aj_fit_nodes(n, 8, &ask, &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_FULL,
	      "4 matching nodes have room for 3 of the 4 pods of task main "
	      "(8 nvidia.com/gpu, 16 cpu, 64Gi memory each, one per node)", "a100 x4");
	four.pods = 3;
	assert_int_equal(aj_fit_nodes(n, 8, &ask, &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_FITS, "all 3 pods fit on 3 of 4 matching nodes", "a100 x3");

	/* a GPU product on no node */
	ask.selector = b200_sel;
	assert_int_equal(aj_fit_nodes(n, 8, &ask, &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_FULL, "no schedulable node has nvidia.com/gpu.product=B200", "b200");
	/* a product only on a cordoned node is on no schedulable one */
	n[7].labels = b200_sel;
	assert_int_equal(aj_fit_nodes(n, 8, &ask, &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_FULL, "no schedulable node has nvidia.com/gpu.product=B200",
	      "b200 cordoned");

	/* the GPU taint not tolerated */
	ask.selector = a100_sel;
	ask.tolerations_nr = 0;
	assert_int_equal(aj_fit_nodes(n, 8, &ask, &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_FULL,
	      "no schedulable node the job selects is tolerated: kwok-a100-0 has "
	      "nvidia.com/gpu=present:NoSchedule", "taint");
	/* Exists with no key tolerates every taint */
	{
		static const struct aj_fit_toleration all[] = { { NULL, 1, NULL, NULL } };

		ask.tolerations = all;
		ask.tolerations_nr = 1;
		assert_int_equal(aj_fit_nodes(n, 8, &ask, &out), 0);
		aj_test_fit_check(&out, AJ_PLACE_FITS, "all 3 pods fit on 3 of 4 matching nodes", "tolerate all");
	}
	/* Equal with another value does not tolerate; with the value it does */
	{
		static const struct aj_fit_toleration other[] = {
			{ "nvidia.com/gpu", 0, "absent", "NoSchedule" } };
		static const struct aj_fit_toleration same[] = {
			{ "nvidia.com/gpu", 0, "present", NULL } };

		ask.tolerations = other;
		assert_int_equal(aj_fit_nodes(n, 8, &ask, &out), 0);
		assert_int_equal(out.state, AJ_PLACE_FULL);
		ask.tolerations = same;
		assert_int_equal(aj_fit_nodes(n, 8, &ask, &out), 0);
		assert_int_equal(out.state, AJ_PLACE_FITS);
	}

	/* GPU pods without a selector never land on CPU nodes (no GPU offered) */
	{
		struct aj_fit_task nine = gpu_task("main", 5);
		struct aj_fit_ask any = { &nine, 1, NULL, 0, gpu_tol, 1, 1 };

		assert_int_equal(aj_fit_nodes(n, 8, &any, &out), 0);
		aj_test_fit_check(&out, AJ_PLACE_FULL,
		      "7 matching nodes have room for 4 of the 5 pods of task main "
		      "(8 nvidia.com/gpu, 16 cpu, 64Gi memory each, one per node)", "any gpu");
		nine.pods = 4;
		assert_int_equal(aj_fit_nodes(n, 8, &any, &out), 0);
		aj_test_fit_check(&out, AJ_PLACE_FITS, "all 4 pods fit on 4 of 7 matching nodes", "any gpu x4");
	}
}

static void nodes_first_fit_decreasing(void **state)
{
	/* the small task first in the job: first fit in the job's order would fail */
	struct aj_fit_task tasks[] = {
		{ "small", 1, res(-1, -1, 4, -1) },
		{ "big", 1, res(-1, -1, 8, -1) },
	};
	struct aj_fit_ask ask = { tasks, 2, NULL, 0, gpu_tol, 1, 0 };
	struct aj_fit_node n[2];
	struct aj_fit_result out;

	(void)state;
	n[0] = gpu_node("a", a100_labels, 8);
	n[1] = gpu_node("b", a100_labels, 4);
	assert_int_equal(aj_fit_nodes(n, 2, &ask, &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_FITS, "all 2 pods fit on 2 of 2 matching nodes", "ffd");
	/* several pods on one node when they may share it */
	tasks[0].pods = 3;
	tasks[0].req.v[AJ_FIT_GPU] = 2;
	tasks[1].pods = 0;
	n[1].free.v[AJ_FIT_GPU] = 0;
	assert_int_equal(aj_fit_nodes(n, 2, &ask, &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_FITS, "all 3 pods fit on 1 of 2 matching nodes", "shared");
	tasks[0].pods = 5;
	assert_int_equal(aj_fit_nodes(n, 2, &ask, &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_FULL,
	      "2 matching nodes have room for 4 of the 5 pods of task small (2 nvidia.com/gpu each)",
	      "shared full");
}

static void nodes_pod_slots(void **state)
{
	struct aj_fit_task cpu = { "main", 3, res(1000, GI, -1, -1) };
	struct aj_fit_ask ask = { &cpu, 1, NULL, 0, NULL, 0, 0 };
	struct aj_fit_node n[3];
	struct aj_fit_result out;

	(void)state;
	n[0] = cpu_node("c0", 64000, 1);
	n[1] = cpu_node("c1", 64000, 0);
	/* a GPU node is tainted: CPU pods do not tolerate it */
	n[2] = gpu_node("g0", a100_labels, 8);
	assert_int_equal(aj_fit_nodes(n, 3, &ask, &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_FULL,
	      "2 matching nodes have room for 1 of the 3 pods of task main (1 cpu, 1Gi memory each)",
	      "pod slots");
	n[1].free.v[AJ_FIT_PODS] = 2;
	assert_int_equal(aj_fit_nodes(n, 3, &ask, &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_FITS, "all 3 pods fit on 2 of 2 matching nodes", "pod slots freed");
	/* no node at all */
	assert_int_equal(aj_fit_nodes(NULL, 0, &ask, &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_FULL, "no schedulable node", "empty");
	/* every node cordoned */
	n[0].unschedulable = n[1].unschedulable = n[2].unschedulable = 1;
	assert_int_equal(aj_fit_nodes(n, 3, &ask, &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_FULL, "no schedulable node", "cordoned");
	/* nothing to place fits anywhere */
	cpu.pods = 0;
	assert_int_equal(aj_fit_nodes(n, 3, &ask, &out), 0);
	assert_int_equal(out.state, AJ_PLACE_FITS);
}

static void nodes_out_of_memory(void **state)
{
	struct aj_fit_task cpu = { "main", 1, res(1000, GI, -1, -1) };
	struct aj_fit_ask ask = { &cpu, 1, NULL, 0, NULL, 0, 0 };
	struct aj_fit_node n = cpu_node("c0", 64000, 110);
	struct aj_fit_result out = { AJ_PLACE_UNKNOWN, "untouched" };
	long i;
	int rc = -1;

	(void)state;
	for (i = 0; rc; i++) {
		aj_alloc_fail_after(i);
		rc = aj_fit_nodes(&n, 1, &ask, &out);
		aj_alloc_fail_after(-1);
		if (rc)
			assert_string_equal(out.reason, "untouched");
	}
	aj_test_fit_check(&out, AJ_PLACE_FITS, "1 pod fits on 1 of 1 matching nodes", "oom");
}

/* An Azure ML compute's free nodes: the ones not allocated plus the idle ones. */
static void compute_free_nodes(void **state)
{
	static const struct {
		struct aj_fit_compute c;
		long instances;
		int want;
		const char *reason;
	} cases[] = {
		{ { "gpu-cluster", "AmlCompute", "Succeeded", 8, 2, 0, 2, 0, 0, 0, 0 , 0 }, 4,
		  AJ_PLACE_FITS, "compute gpu-cluster: 6 of 8 nodes free" },
		/* idle nodes take a job at once */
		{ { "gpu-cluster", "AmlCompute", NULL, 8, 8, 3, 5, 0, 0, 0, 0 , 0 }, 3,
		  AJ_PLACE_FITS, "compute gpu-cluster: 3 of 8 nodes free" },
		{ { "gpu-cluster", "AmlCompute", "Succeeded", 8, 8, 0, 5, 2, 1, 0, 0 , 0 }, 1,
		  AJ_PLACE_FULL,
		  "compute gpu-cluster: 0 of 8 nodes free (5 running, 2 preparing, 1 unusable), "
		  "the job needs 1" },
		{ { "gpu-cluster", "AmlCompute", "Succeeded", 8, 6, 0, 4, 0, 0, 1, 1 , 0 }, 4,
		  AJ_PLACE_FULL,
		  "compute gpu-cluster: 2 of 8 nodes free (4 running, 1 leaving, 1 preempted), "
		  "the job needs 4" },
		/* a compute shrunk below what it runs */
		{ { "small", "AmlCompute", "Succeeded", 2, 4, 0, 4, 0, 0, 0, 0 , 0 }, 1,
		  AJ_PLACE_FULL, "compute small: 0 of 2 nodes free (4 running), the job needs 1" },
		/* no instance count said: one node */
		{ { "small", "AmlCompute", "Succeeded", 1, 0, 0, 0, 0, 0, 0, 0 , 0 }, 0,
		  AJ_PLACE_FITS, "compute small: 1 of 1 nodes free" },
		{ { "gpu-cluster", "AmlCompute", "Deleting", 8, 0, 0, 0, 0, 0, 0, 0 , 0 }, 1,
		  AJ_PLACE_FULL, "compute gpu-cluster is Deleting" },
		{ { "k8s", "Kubernetes", "Succeeded", 0, 0, 0, 0, 0, 0, 0, 0 , 0 }, 1, AJ_PLACE_UNKNOWN,
		  "compute k8s is a Kubernetes: only an AmlCompute's free nodes are read" },
		{ { "odd", NULL, NULL, 0, 0, 0, 0, 0, 0, 0, 0 , 0 }, 1, AJ_PLACE_UNKNOWN,
		  "compute odd is of no type: only an AmlCompute's free nodes are read" },
	};
	struct aj_fit_result out;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		aj_fit_compute(&cases[i].c, cases[i].instances, &out);
		aj_test_fit_check(&out, cases[i].want, cases[i].reason, cases[i].reason);
	}
}

/* The local cluster's kwok nodes (4 A100, 4 H100, 3 CPU), busy, and an A100 cordoned. */
static void local_cluster(struct aj_fit_node n[12])
{
	static const char *const names[] = { "kwok-a100-0", "kwok-a100-1", "kwok-a100-2", "kwok-a100-3",
					     "kwok-h100-0", "kwok-h100-1", "kwok-h100-2", "kwok-h100-3" };
	size_t i;

	for (i = 0; i < 8; i++)
		n[i] = gpu_node(names[i], i < 4 ? a100_labels : h100_labels, 0);
	n[8] = cpu_node("kwok-cpu-0", 0, 0);
	n[9] = cpu_node("kwok-cpu-1", 1000, 3);
	n[10] = cpu_node("kwok-cpu-2", 64000, 110);
	n[11] = gpu_node("kwok-a100-4", a100_labels, 8);
	n[11].unschedulable = 1;
}

static void nodes_empty(void **state)
{
	static const struct aj_fit_task mixed[] = {
		{ "master", 1, { { 16000, 64 * GI, 4, -1 } } },
		{ "worker", 20, { { 16000, 64 * GI, 8, -1 } } },
	};
	static const struct aj_fit_task big_master[] = {
		{ "master", 1, { { 100000, GI, -1, -1 } } },
		{ "worker", 2, { { 1000, GI, -1, -1 } } },
	};
	static const struct aj_fit_task cpu12[] = { { "main", 12, { { 1000, GI, -1, -1 } } } };
	static const struct aj_fit_task huge[] = {
		{ "master", 1, { { 96000, 512 * GI, 8, -1 } } },
		{ "worker", 39, { { 96000, 512 * GI, 8, -1 } } },
	};
	struct aj_fit_task gpu5_6 = { "main", 5, res(16000, 64 * GI, 6, -1) };
	struct aj_fit_task gpu2_16 = { "main", 2, res(16000, 64 * GI, 16, -1) };
	struct aj_fit_task a4 = gpu_task("main", 4), a5 = gpu_task("main", 5);
	const struct {
		const char *name;
		const struct aj_fit_task *tasks;
		size_t tasks_nr;
		const struct aj_fit_label *selector;
		int tolerates, one_per_node, want;
		const char *reason;
	} cases[] = {
		/* the lifecycle test's job of 40 8-GPU nodes: its GPUs first (5x), then pods (3.6x) */
		{ "huge", huge, 2, NULL, 1, 1, AJ_PLACE_FULL,
		  "asks 40 pods × 8 nvidia.com/gpu = 320; the schedulable nodes hold 64" },
		{ "a100 x5", &a5, 1, a100_sel, 1, 1, AJ_PLACE_FULL,
		  "asks 5 pods × 8 nvidia.com/gpu = 40; the schedulable nodes it may use hold 32" },
		{ "tasks differ", mixed, 2, NULL, 1, 1, AJ_PLACE_FULL,
		  "asks 164 nvidia.com/gpu over 21 pods; the schedulable nodes hold 64" },
		{ "one per node", cpu12, 1, NULL, 0, 1, AJ_PLACE_FULL,
		  "asks 12 pods, one per node; there are 3 schedulable nodes it may use" },
		{ "b200", &a4, 1, b200_sel, 1, 1, AJ_PLACE_FULL,
		  "no schedulable node has nvidia.com/gpu.product=B200" },
		{ "pod too big", &gpu2_16, 1, NULL, 1, 0, AJ_PLACE_FULL,
		  "one pod asks 16 nvidia.com/gpu; the largest schedulable node has 8" },
		{ "task's pod too big", big_master, 2, NULL, 0, 0, AJ_PLACE_FULL,
		  "one pod of task master asks 100 cpu; the largest schedulable node it may use has 64" },
		/* 30 of 32 GPUs, but one 6-GPU pod per 8-GPU node */
		{ "no packing", &gpu5_6, 1, a100_sel, 1, 0, AJ_PLACE_FULL,
		  "4 matching nodes have room for 4 of the 5 pods of task main "
		  "(6 nvidia.com/gpu, 16 cpu, 64Gi memory each)" },
		/* every GPU in use now, but the job fits the nodes empty */
		{ "busy", &a4, 1, a100_sel, 1, 1, AJ_PLACE_FITS, "all 4 pods fit on 4 of 4 matching nodes" },
		{ "cpu pods", cpu12, 1, NULL, 0, 0, AJ_PLACE_FITS, "all 12 pods fit on 1 of 3 matching nodes" },
	};
	struct aj_fit_node n[12];
	struct aj_fit_result out;
	size_t i;

	(void)state;
	local_cluster(n);
	for (i = 0; i < NR(cases); i++) {
		struct aj_fit_ask ask = { cases[i].tasks, cases[i].tasks_nr, cases[i].selector,
					  cases[i].selector ? 1 : 0, gpu_tol, (size_t)cases[i].tolerates,
					  cases[i].one_per_node };

		assert_int_equal(aj_fit_nodes_empty(n, 12, &ask, &out), 0);
		aj_test_fit_check(&out, cases[i].want, cases[i].reason, cases[i].name);
	}
	/* no node at all */
	{
		struct aj_fit_ask ask = { &a4, 1, NULL, 0, gpu_tol, 1, 1 };

		assert_int_equal(aj_fit_nodes_empty(NULL, 0, &ask, &out), 0);
		aj_test_fit_check(&out, AJ_PLACE_FULL, "no schedulable node", "no nodes");
	}
}

static void nodes_empty_out_of_memory(void **state)
{
	struct aj_fit_task big = gpu_task("main", 40);
	struct aj_fit_ask ask = { &big, 1, NULL, 0, gpu_tol, 1, 1 };
	struct aj_fit_result out = { AJ_PLACE_UNKNOWN, "untouched" };
	struct aj_fit_node n[12];
	long i;
	int rc = -1;

	(void)state;
	local_cluster(n);
	for (i = 0; rc; i++) {
		aj_alloc_fail_after(i);
		rc = aj_fit_nodes_empty(n, 12, &ask, &out);
		aj_alloc_fail_after(-1);
		if (rc)
			assert_string_equal(out.reason, "untouched");
	}
	aj_test_fit_check(&out, AJ_PLACE_FULL,
			  "asks 40 pods × 8 nvidia.com/gpu = 320; the schedulable nodes hold 64", "oom");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(quantities),
		cmocka_unit_test(volcano_queue),
		cmocka_unit_test(cluster_queue),
		cmocka_unit_test(nodes_pack),
		cmocka_unit_test(nodes_first_fit_decreasing),
		cmocka_unit_test(nodes_pod_slots),
		cmocka_unit_test(nodes_out_of_memory),
		cmocka_unit_test(compute_free_nodes),
		cmocka_unit_test(nodes_empty),
		cmocka_unit_test(nodes_empty_out_of_memory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
