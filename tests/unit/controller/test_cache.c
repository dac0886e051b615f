#include "support.h"

#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "backend/backend.h"
#include "cache.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/jobspec.h"
#include "core/node.h"
#include "core/resolve.h"
#include "core/source.h"
#include "core/strmap.h"
#include "runner/volcano.h"
#include "status.h"

static cJSON *parse(const char *json)
{
	cJSON *o = cJSON_Parse(json);

	assert_non_null(o);
	return o;
}

/* Volcano Jobs live under the volcano runner's slot, summarized by it, as the watch stores them. */
#define VOLCANO aj_runner_slot(&aj_runner_volcano)

static int volcano_put(struct aj_cache *c, cJSON *obj)
{
	struct aj_owned_facts f;

	memset(&f, 0, sizeof(f));
	aj_runner_volcano.summarize(obj, &f);
	return aj_cache_owned_put(c, VOLCANO, obj, &f);
}

static void a_submitted_ajjob_keeps_only_its_summary(void **state)
{
	struct aj_cache c;
	struct aj_ajjob_view v;

	(void)state;
	assert_int_equal(aj_cache_init(&c), 0);
	assert_int_equal(aj_cache_ajjob_put(&c, parse(
		"{\"metadata\":{\"namespace\":\"ml\",\"name\":\"bert\",\"uid\":\"u1\","
		"\"resourceVersion\":\"10\",\"generation\":1},"
		"\"spec\":{\"command\":[\"python\"]}}")), 0);
	assert_int_equal(aj_cache_ajjob_get(&c, "ml/bert", &v), 1);
	assert_string_equal(v.ns, "ml");
	assert_string_equal(v.name, "bert");
	assert_string_equal(v.uid, "u1");
	assert_string_equal(v.resource_version, "10");
	assert_false(v.has_phase);
	assert_int_equal(v.observed_generation, -1);
	/* Not yet submitted: the whole object is there to build from. */
	assert_non_null(v.object);
	assert_non_null(cJSON_GetObjectItem(v.object, "spec"));
	assert_int_equal(v.ttl, -1);
	aj_ajjob_view_release(&v);

	/* the time to live stays once the spec is dropped */
	assert_int_equal(aj_cache_ajjob_put(&c, parse(
		"{\"metadata\":{\"namespace\":\"ml\",\"name\":\"bert\",\"uid\":\"u1\","
		"\"resourceVersion\":\"11\",\"generation\":1,"
		"\"annotations\":{\"aj.dev/cancel\":\"true\"}},"
		"\"spec\":{\"command\":[\"python\"],\"ttlSecondsAfterFinished\":300},"
		"\"status\":{\"phase\":\"Submitted\",\"observedGeneration\":1,"
		"\"volcano\":{\"jobName\":\"bert\"}}}")), 0);
	assert_int_equal(aj_cache_ajjob_get(&c, "ml/bert", &v), 1);
	assert_true(v.has_phase);
	assert_int_equal(v.phase, AJ_PHASE_SUBMITTED);
	assert_int_equal(v.observed_generation, 1);
	assert_string_equal(v.job, "bert");
	assert_true(v.cancel);
	assert_null(v.object);
	assert_non_null(v.status);
	assert_int_equal(v.ttl, 300);
	aj_ajjob_view_release(&v);

	/* a status written by hand with an absurd observedGeneration is no generation */
	assert_int_equal(aj_cache_ajjob_put(&c, parse(
		"{\"metadata\":{\"namespace\":\"ml\",\"name\":\"bert\",\"uid\":\"u1\","
		"\"resourceVersion\":\"12\",\"generation\":1},"
		"\"status\":{\"phase\":\"Submitted\",\"observedGeneration\":1e300}}")), 0);
	assert_int_equal(aj_cache_ajjob_get(&c, "ml/bert", &v), 1);
	assert_int_equal(v.observed_generation, -1);
	assert_int_equal(v.generation, 1);
	aj_ajjob_view_release(&v);

	assert_int_equal(aj_cache_ajjob_count(&c), 1);
	aj_cache_ajjob_delete(&c, "ml/bert");
	assert_int_equal(aj_cache_ajjob_get(&c, "ml/bert", &v), 0);
	aj_cache_release(&c);
}

static long long due_of(struct aj_cache *c, const char *key)
{
	struct aj_ajjob_view v;
	long long due;

	assert_int_equal(aj_cache_ajjob_get(c, key, &v), 1);
	due = v.storage_due;
	aj_ajjob_view_release(&v);
	return due;
}

/* The storage due time is the controller's note: it survives updates of the same AjJob only */
static void the_storage_due_time_follows_the_ajjob_not_its_name(void **state)
{
	char json[256];
	struct aj_cache c;

	(void)state;
#define BERT(uid, rv) \
	(snprintf(json, sizeof(json), "{\"metadata\":{\"namespace\":\"ml\",\"name\":\"bert\"," \
		  "\"uid\":\"%s\",\"resourceVersion\":\"%d\",\"generation\":1}}", uid, rv), \
	 parse(json))
	assert_int_equal(aj_cache_init(&c), 0);
	assert_int_equal(aj_cache_ajjob_set_storage_due(&c, "ml/bert", 5), 0);
	assert_int_equal(aj_cache_ajjob_put(&c, BERT("u1", 1)), 0);
	assert_true(due_of(&c, "ml/bert") == AJ_CACHE_DUE_UNKNOWN);
	assert_int_equal(aj_cache_ajjob_set_storage_due(&c, "ml/bert", 1700000000), 1);
	assert_true(due_of(&c, "ml/bert") == 1700000000);
	/* a watch update of the same AjJob keeps it */
	assert_int_equal(aj_cache_ajjob_put(&c, BERT("u1", 2)), 0);
	assert_true(due_of(&c, "ml/bert") == 1700000000);
	assert_int_equal(aj_cache_ajjob_set_storage_due(&c, "ml/bert", 0), 1);
	assert_true(due_of(&c, "ml/bert") == 0);
	/* a new AjJob under the same name (its delete missed) starts unknown */
	assert_int_equal(aj_cache_ajjob_put(&c, BERT("u2", 3)), 0);
	assert_true(due_of(&c, "ml/bert") == AJ_CACHE_DUE_UNKNOWN);
#undef BERT
	/* gone with the AjJob */
	aj_cache_ajjob_delete(&c, "ml/bert");
	assert_int_equal(aj_cache_ajjob_set_storage_due(&c, "ml/bert", 7), 0);
	aj_cache_release(&c);
}

/* The view's status carries storageRenewAfter as written, so the next status compares equal. */
static void the_storage_renewal_time_stays_in_the_status(void **state)
{
	struct aj_cache c;
	struct aj_ajjob_view v;

	(void)state;
	assert_int_equal(aj_cache_init(&c), 0);
	assert_int_equal(aj_cache_ajjob_put(&c, parse(
		"{\"metadata\":{\"namespace\":\"ml\",\"name\":\"a\",\"uid\":\"u1\","
		"\"resourceVersion\":\"10\",\"generation\":1},\"status\":{\"phase\":\"Running\","
		"\"volcano\":{\"jobName\":\"a\",\"storageRenewAfter\":\"2017-09-27T03:49:33Z\"}}}")), 0);
	assert_int_equal(aj_cache_ajjob_get(&c, "ml/a", &v), 1);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(
		cJSON_GetObjectItem(v.status, "volcano"), "storageRenewAfter")), "2017-09-27T03:49:33Z");
	/* whether it is due is the reconciler's to decide, once */
	assert_true(v.storage_due == AJ_CACHE_DUE_UNKNOWN);
	aj_ajjob_view_release(&v);
	aj_cache_release(&c);
}

static void volcano_jobs_remember_their_controlling_ajjob(void **state)
{
	struct aj_cache c;
	struct aj_owned_view v;

	(void)state;
	assert_int_equal(aj_cache_init(&c), 0);
	assert_int_equal(volcano_put(&c, parse(
		"{\"metadata\":{\"namespace\":\"ml\",\"name\":\"bert\",\"uid\":\"v9\","
		"\"deletionTimestamp\":\"2026-01-01T00:00:00Z\",\"ownerReferences\":["
		"{\"kind\":\"ConfigMap\",\"name\":\"x\",\"uid\":\"c\",\"controller\":false},"
		"{\"kind\":\"AjJob\",\"name\":\"bert\",\"uid\":\"u1\",\"controller\":true}]},"
		"\"spec\":{\"maxRetry\":3},"
		"\"status\":{\"state\":{\"phase\":\"Running\"},\"retryCount\":2}}")), 0);
	assert_int_equal(aj_cache_owned_get(&c, VOLCANO, "ml/bert", &v), 1);
	assert_string_equal(v.owner_uid, "u1");
	assert_string_equal(v.owner_name, "bert");
	assert_string_equal(v.phase, "Running");
	/* what the state machine reads: the PodGroup's name, restarts, deletion */
	assert_string_equal(v.uid, "v9");
	assert_int_equal(v.n[0], 2);
	assert_int_equal(v.n[1], 3);
	assert_true(v.deleting);
	aj_owned_view_release(&v);

	assert_int_equal(volcano_put(&c, parse(
		"{\"metadata\":{\"namespace\":\"ml\",\"name\":\"stray\"}}")), 0);
	assert_int_equal(aj_cache_owned_get(&c, VOLCANO, "ml/stray", &v), 1);
	assert_null(v.owner_uid);
	assert_null(v.phase);
	assert_false(v.deleting);
	assert_int_equal(v.n[0], 0);
	aj_owned_view_release(&v);
	aj_cache_release(&c);
}

/* The Volcano Job the builder makes for spec, as the watch would deliver it. */
static cJSON *built_volcano_job(const char *yaml)
{
	struct aj_build_ctx ctx = { "bert", "ml", "u1", "bert", "aj.dev/v1alpha1", 0 };
	struct aj_shape_args args = { 1, 0, 0 };
	const struct aj_backend *b = aj_backend_find("volcano");
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_jobspec s;
	cJSON *arr = NULL, *job;

	assert_non_null(b);
	aj_test_spec(yaml, &args, NULL, 0, &s);
	if (b->validate(&s, &err) || b->build(&s, &ctx, &arr, &err))
		fail_msg("%s", aj_test_errors_text(&err));
	job = cJSON_DetachItemFromArray(arr, 0);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(job, "kind")), "Job");
	cJSON_Delete(arr);
	aj_jobspec_release(&s);
	return job;
}

/* After a restart the record tells, without the AjJob, whether a storage Secret is to be renewed. */
static void volcano_jobs_remember_whether_they_mount_the_storage_secret(void **state)
{
	struct aj_cache c;
	struct aj_owned_view v;

	(void)state;
	assert_int_equal(aj_cache_init(&c), 0);
	assert_int_equal(volcano_put(&c, built_volcano_job(
		"config: {target: {gpus_per_node: 0}, environment: {image: x}, jobs: [{sku: C1}], "
		"storage: {data: {storage_account_name: acct1, container_name: results, mount_dir: /mnt/d}}}")), 0);
	assert_int_equal(aj_cache_owned_get(&c, VOLCANO, "ml/bert", &v), 1);
	assert_int_equal(v.flags, AJ_OWNED_MOUNTS_STORAGE);
	assert_string_equal(v.owner_uid, "u1");
	aj_owned_view_release(&v);

	assert_int_equal(volcano_put(&c, built_volcano_job(
		"config: {target: {gpus_per_node: 0}, environment: {image: x}, jobs: [{sku: C1}]}")), 0);
	assert_int_equal(aj_cache_owned_get(&c, VOLCANO, "ml/bert", &v), 1);
	assert_int_equal(v.flags, 0);
	aj_owned_view_release(&v);

	/* another job's Secret, or one whose name merely starts like it, is not this job's */
	assert_int_equal(volcano_put(&c, parse(
		"{\"metadata\":{\"namespace\":\"ml\",\"name\":\"gpt\"},\"spec\":{\"tasks\":["
		"{\"template\":{\"spec\":{\"volumes\":[{\"secret\":{\"secretName\":\"bert-storage\"}},"
		"{\"secret\":{\"secretName\":\"gpt-storage2\"}},{\"secret\":{\"secretName\":\"gpt\"}},"
		"{\"secret\":{\"secretName\":7}}]}}}]}}")), 0);
	assert_int_equal(aj_cache_owned_get(&c, VOLCANO, "ml/gpt", &v), 1);
	assert_int_equal(v.flags, 0);
	aj_owned_view_release(&v);
	aj_cache_release(&c);
}

static void ajtemplates_of_one_namespace_form_a_source(void **state)
{
	struct aj_cache c;
	struct aj_source src;
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_template t;

	(void)state;
	assert_int_equal(aj_cache_init(&c), 0);
	assert_int_equal(aj_cache_template_put(&c, parse(
		"{\"metadata\":{\"namespace\":\"ml\",\"name\":\"template.gpu\"},"
		"\"spec\":{\"base\":[\"storage.default\"],\"config\":{\"target\":{\"service\":\"volcano\"}}}}")), 0);
	assert_int_equal(aj_cache_template_put(&c, parse(
		"{\"metadata\":{\"namespace\":\"ml\",\"name\":\"storage.default\"},"
		"\"spec\":{\"config\":{\"storage\":{\"s\":{\"mount_dir\":\"/mnt/s\"}}}}}")), 0);
	/* Same name in another namespace must not be visible. */
	assert_int_equal(aj_cache_template_put(&c, parse(
		"{\"metadata\":{\"namespace\":\"other\",\"name\":\"storage.default\"},"
		"\"spec\":{\"config\":{\"storage\":{\"s\":{\"mount_dir\":\"/wrong\"}}}}}")), 0);

	assert_int_equal(aj_cache_template_source(&c, "ml", &src, &err), 0);
	aj_template_init(&t);
	assert_int_equal(aj_template_resolve(&src, "template/gpu", &t, &err), 0);
	assert_string_equal(aj_node_at(t.config, "storage.s.mount_dir")->str, "/mnt/s");
	assert_string_equal(aj_node_at(t.config, "target.service")->str, "volcano");
	aj_template_release(&t);
	aj_source_release(&src);

	aj_cache_template_delete(&c, "ml/storage.default");
	assert_int_equal(aj_cache_template_source(&c, "ml", &src, &err), 0);
	aj_template_init(&t);
	assert_int_equal(aj_template_resolve(&src, "template/gpu", &t, &err), -1);
	assert_true(aj_test_errors_contain(&err, "template/gpu -> storage/default"));
	aj_template_release(&t);
	aj_source_release(&src);
	aj_errors_release(&err);
	aj_cache_release(&c);
}

/* A status as the API server returns it: members sorted by name. */
static const char server_status[] =
	"{\"backend\":\"volcano\",\"conditions\":["
	"{\"lastTransitionTime\":\"2026-03-01T10:00:00Z\",\"message\":\"Volcano Job bert created\","
	"\"observedGeneration\":1,\"reason\":\"VolcanoJobCreated\",\"status\":\"True\",\"type\":\"Submitted\"},"
	"{\"lastTransitionTime\":\"2026-03-01T09:59:58Z\",\"message\":\"\",\"observedGeneration\":1,"
	"\"reason\":\"VolcanoJobCreated\",\"status\":\"False\",\"type\":\"Running\"},"
	"{\"lastTransitionTime\":\"2026-03-01T09:59:58Z\",\"message\":\"\",\"observedGeneration\":1,"
	"\"reason\":\"VolcanoJobCreated\",\"status\":\"False\",\"type\":\"Succeeded\"},"
	"{\"lastTransitionTime\":\"2026-03-01T09:59:58Z\",\"message\":\"\",\"observedGeneration\":1,"
	"\"reason\":\"VolcanoJobCreated\",\"status\":\"Unknown\",\"type\":\"Failed\"},"
	"{\"lastTransitionTime\":\"2026-03-01T08:00:00Z\",\"status\":\"True\",\"type\":\"Reviewed\"}],"
	"\"message\":\"Volcano Job bert created\",\"observedGeneration\":1,\"phase\":\"Submitted\","
	"\"volcano\":{\"jobName\":\"bert\"}}";

static cJSON *ajjob_with_status(const char *status)
{
	cJSON *o = parse("{\"metadata\":{\"namespace\":\"ml\",\"name\":\"bert\",\"uid\":\"u1\","
			 "\"resourceVersion\":\"12\",\"generation\":1},"
			 "\"spec\":{\"command\":[\"python\"]}}");

	cJSON_AddItemToObject(o, "status", parse(status));
	return o;
}

/* Parse into *keep (replacing what it held), for comparisons. */
static cJSON *parse_keep(cJSON **keep, const char *json)
{
	cJSON_Delete(*keep);
	*keep = parse(json);
	return *keep;
}

static const cJSON *condition(const cJSON *status, const char *type)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, cJSON_GetObjectItem(status, "conditions"))
		if (!strcmp(cJSON_GetObjectItem(c, "type")->valuestring, type))
			return c;
	return NULL;
}

static const char *field(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItem(o, k);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void the_status_is_kept_as_what_the_next_status_is_computed_from(void **state)
{
	struct aj_cache c;
	struct aj_ajjob_view v;
	cJSON *status = parse(server_status);

	(void)state;
	assert_int_equal(aj_cache_init(&c), 0);
	c.whole[0] = "azure";   /* as the controller names its runners' */
	assert_int_equal(aj_cache_ajjob_put(&c, ajjob_with_status(server_status)), 0);
	assert_int_equal(aj_cache_ajjob_get(&c, "ml/bert", &v), 1);
	assert_null(v.object);
	assert_non_null(v.status);
	/* The four conditions the controller writes, in its order; not the others. */
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(v.status, "conditions")), 4);
	assert_string_equal(field(cJSON_GetArrayItem(cJSON_GetObjectItem(v.status, "conditions"), 0),
				  "type"), "Submitted");
	assert_string_equal(field(condition(v.status, "Submitted"), "status"), "True");
	assert_string_equal(field(condition(v.status, "Submitted"), "lastTransitionTime"),
			    "2026-03-01T10:00:00Z");
	assert_string_equal(field(condition(v.status, "Running"), "status"), "False");
	assert_string_equal(field(condition(v.status, "Succeeded"), "lastTransitionTime"),
			    "2026-03-01T09:59:58Z");
	/* Neither True nor False: a flip either way moves the transition time. */
	assert_string_not_equal(field(condition(v.status, "Failed"), "status"), "True");
	assert_string_not_equal(field(condition(v.status, "Failed"), "status"), "False");
	assert_null(condition(v.status, "Reviewed"));
	assert_string_equal(field(v.status, "phase"), "Submitted");
	assert_string_equal(field(v.status, "backend"), "volcano");
	assert_int_equal(cJSON_GetObjectItem(v.status, "observedGeneration")->valueint, 1);
	assert_string_equal(field(cJSON_GetObjectItem(v.status, "volcano"), "jobName"), "bert");
	assert_null(cJSON_GetObjectItem(v.status, "azure"));
	assert_true(v.status_hash == aj_cache_json_hash(status));
	aj_ajjob_view_release(&v);

	/* A member kept whole (status.azure) is carried over whole. */
	assert_int_equal(aj_cache_ajjob_put(&c, ajjob_with_status(
		"{\"phase\":\"Running\",\"azure\":{\"job\":\"j-1\",\"studio\":\"https://ml/j-1\"}}")), 0);
	assert_int_equal(aj_cache_ajjob_get(&c, "ml/bert", &v), 1);
	assert_true(cJSON_Compare(cJSON_GetObjectItem(v.status, "azure"),
				  cJSON_GetObjectItem(parse_keep(&status,
				  "{\"azure\":{\"studio\":\"https://ml/j-1\",\"job\":\"j-1\"}}"), "azure"), 1));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(v.status, "conditions")), 0);
	assert_null(cJSON_GetObjectItem(v.status, "volcano"));
	aj_ajjob_view_release(&v);

	/* Times written otherwise than Kubernetes writes them come back as written. */
	assert_int_equal(aj_cache_ajjob_put(&c, ajjob_with_status(
		"{\"conditions\":[{\"type\":\"Submitted\",\"status\":\"True\","
		"\"lastTransitionTime\":\"2026-03-01T10:00:00.5Z\"},{\"type\":\"Running\","
		"\"status\":\"False\",\"lastTransitionTime\":\"2026-03-01T10:00:00+00:00\"},"
		"{\"type\":\"Succeeded\",\"status\":\"False\",\"lastTransitionTime\":\"yesterday\"},"
		"{\"type\":\"Failed\",\"status\":\"False\"}]}")), 0);
	assert_int_equal(aj_cache_ajjob_get(&c, "ml/bert", &v), 1);
	assert_string_equal(field(condition(v.status, "Submitted"), "lastTransitionTime"),
			    "2026-03-01T10:00:00.5Z");
	assert_string_equal(field(condition(v.status, "Running"), "lastTransitionTime"),
			    "2026-03-01T10:00:00+00:00");
	assert_string_equal(field(condition(v.status, "Succeeded"), "lastTransitionTime"), "yesterday");
	assert_null(field(condition(v.status, "Failed"), "lastTransitionTime"));
	assert_string_equal(field(condition(v.status, "Failed"), "status"), "False");
	aj_ajjob_view_release(&v);
	cJSON_Delete(status);
	aj_cache_release(&c);
}

static void the_json_hash_ignores_member_order_only(void **state)
{
	cJSON *a = parse("{\"a\":1,\"b\":[1,2,{\"x\":true,\"y\":null}],\"c\":\"s\"}");
	cJSON *same = parse("{\"c\":\"s\",\"b\":[1,2,{\"y\":null,\"x\":true}],\"a\":1.0}");
	static const char *const others[] = {
		"{\"a\":1,\"b\":[2,1,{\"x\":true,\"y\":null}],\"c\":\"s\"}",    /* array order */
		"{\"a\":1,\"b\":[1,2,{\"x\":true,\"y\":null}],\"c\":\"t\"}",    /* a string */
		"{\"a\":2,\"b\":[1,2,{\"x\":true,\"y\":null}],\"c\":\"s\"}",    /* a number */
		"{\"a\":\"1\",\"b\":[1,2,{\"x\":true,\"y\":null}],\"c\":\"s\"}",/* a type */
		"{\"a\":1,\"b\":[1,2,{\"x\":false,\"y\":null}],\"c\":\"s\"}",   /* a bool */
		"{\"a\":1,\"b\":[1,2,{\"x\":true}],\"c\":\"s\"}",               /* a member less */
		"{\"a\":1,\"b\":[1,2,{\"x\":true,\"y\":null}],\"d\":\"s\"}",    /* a name */
		"{\"a\":1,\"b\":[1,2,{\"x\":true,\"y\":null}],\"c\":\"s\",\"e\":{}}",
	};
	size_t i;

	(void)state;
	assert_true(aj_cache_json_hash(a) == aj_cache_json_hash(same));
	for (i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		cJSON *o = parse(others[i]);

		if (aj_cache_json_hash(a) == aj_cache_json_hash(o))
			fail_msg("same hash for %s", others[i]);
		cJSON_Delete(o);
	}
	cJSON_Delete(a);
	cJSON_Delete(same);
}

/* The same members in reverse order, at every level (as another printer might). */
static cJSON *reversed(const cJSON *v)
{
	cJSON *r, *c;

	if (cJSON_IsArray(v)) {
		r = cJSON_CreateArray();
		cJSON_ArrayForEach(c, v)
			cJSON_AddItemToArray(r, reversed(c));
		return r;
	}
	if (!cJSON_IsObject(v))
		return cJSON_Duplicate(v, 1);
	r = cJSON_CreateObject();
	cJSON_ArrayForEach(c, v)
		cJSON_AddItemToObject(r, c->string, reversed(c));
	/* Rebuild with the members taken from the end. */
	{
		cJSON *out = cJSON_CreateObject();

		while (r->child) {
			cJSON *last = r->child;

			while (last->next)
				last = last->next;
			cJSON_AddItemToObject(out, last->string, cJSON_DetachItemViaPointer(r, last));
		}
		cJSON_Delete(r);
		return out;
	}
}

static void an_unchanged_status_is_recognised_and_a_changed_one_is_not(void **state)
{
	struct aj_task_pods tasks[] = { { "worker", 2, 2, 0, 0, 0 } };
	struct aj_status submitted = { AJ_PHASE_SUBMITTED, 1, "VolcanoJobCreated",
				       "Volcano Job bert is Pending", "volcano", 1, "volcano", "bert", 0, 0, 0, NULL,
				       tasks, 1, NULL, 0 };
	struct aj_status running = { AJ_PHASE_RUNNING, 1, "VolcanoJobRunning",
				     "Volcano Job bert is Running", "volcano", 1, "volcano", NULL, 0, 0, 0, NULL,
				     NULL, 0, NULL, 0 };
	struct aj_cache c;
	struct aj_ajjob_view v;
	cJSON *written, *obj, *next;
	char *text;
	int changed;

	(void)state;
	assert_int_equal(aj_cache_init(&c), 0);
	/* What the controller wrote, come back through the watch in another order. */
	written = aj_status_next(NULL, &submitted, "2026-03-01T10:00:00Z", &changed);
	assert_non_null(written);
	obj = ajjob_with_status("{}");
	cJSON_ReplaceItemInObject(obj, "status", reversed(written));
	assert_int_equal(aj_cache_ajjob_put(&c, obj), 0);
	assert_int_equal(aj_cache_ajjob_get(&c, "ml/bert", &v), 1);

	/* A later reconcile with nothing new computes the same status. */
	next = aj_status_next(v.status, &submitted, "2026-03-01T11:00:00Z", &changed);
	assert_non_null(next);
	assert_true(aj_cache_json_hash(next) == v.status_hash);
	text = cJSON_PrintUnformatted(next);
	assert_non_null(strstr(text, "2026-03-01T10:00:00Z"));
	assert_null(strstr(text, "2026-03-01T11:00:00Z"));
	cJSON_free(text);
	cJSON_Delete(next);

	/* a pod more running: the tasks make it a new status */
	tasks[0].pending = 1;
	tasks[0].running = 1;
	next = aj_status_next(v.status, &submitted, "2026-03-01T11:00:00Z", &changed);
	assert_true(aj_cache_json_hash(next) != v.status_hash);
	cJSON_Delete(next);

	/* Running: a new status; only the flipped condition moves its time. */
	next = aj_status_next(v.status, &running, "2026-03-01T11:00:00Z", &changed);
	assert_non_null(next);
	assert_true(aj_cache_json_hash(next) != v.status_hash);
	assert_string_equal(field(condition(next, "Running"), "lastTransitionTime"),
			    "2026-03-01T11:00:00Z");
	assert_string_equal(field(condition(next, "Submitted"), "lastTransitionTime"),
			    "2026-03-01T10:00:00Z");
	assert_string_equal(field(cJSON_GetObjectItem(next, "volcano"), "jobName"), "bert");
	cJSON_Delete(next);
	aj_ajjob_view_release(&v);
	cJSON_Delete(written);
	aj_cache_release(&c);
}

/*
 * A waiting job with the scheduler's reason and restarts behind it: the
 * record gives back what the next decision reads (conditions True, the
 * reason, the retry count), and a reconcile with nothing new writes nothing.
 */
static void the_lifecycle_status_comes_back_from_the_cache(void **state)
{
	struct aj_status waiting = { AJ_PHASE_RUNNING, 1, "Unschedulable",
				     "Volcano Job bert is Pending: queue resource quota insufficient",
				     "volcano", 1, "volcano", "bert", 0, 2,
				     AJ_STATUS_FLAG(AJ_COND_RESTARTING) |
				     AJ_STATUS_FLAG(AJ_COND_UNSCHEDULABLE),
				     "queue resource quota insufficient", NULL, 0, NULL, 0 };
	struct aj_cache c;
	struct aj_ajjob_view v;
	cJSON *written, *obj, *next;
	int changed;

	(void)state;
	assert_int_equal(aj_cache_init(&c), 0);
	written = aj_status_next(NULL, &waiting, "2026-03-01T10:00:00Z", &changed);
	obj = ajjob_with_status("{}");
	cJSON_ReplaceItemInObject(obj, "status", reversed(written));
	assert_int_equal(aj_cache_ajjob_put(&c, obj), 0);
	assert_int_equal(aj_cache_ajjob_get(&c, "ml/bert", &v), 1);
	assert_int_equal(v.conditions, (1u << 0) | (1u << 1) | (1u << AJ_COND_RESTARTING) |
				       (1u << AJ_COND_UNSCHEDULABLE));
	assert_string_equal(v.unschedulable, "queue resource quota insufficient");
	assert_int_equal(v.reason_due, 0);
	/* the retry count is kept when Volcano is not seen */
	waiting.retry_count = 0;
	next = aj_status_next(v.status, &waiting, "2026-03-01T11:00:00Z", &changed);
	assert_true(aj_cache_json_hash(next) == v.status_hash);
	cJSON_Delete(next);
	/* the reason look-up note survives a watch update of the same AjJob */
	assert_int_equal(aj_cache_ajjob_set_reason_due(&c, "ml/bert", 1700000000), 1);
	obj = ajjob_with_status("{}");
	cJSON_ReplaceItemInObject(obj, "status", cJSON_Duplicate(written, 1));
	assert_int_equal(aj_cache_ajjob_put(&c, obj), 0);
	aj_ajjob_view_release(&v);
	assert_int_equal(aj_cache_ajjob_get(&c, "ml/bert", &v), 1);
	assert_int_equal(v.reason_due, 1700000000);
	aj_ajjob_view_release(&v);
	cJSON_Delete(written);
	aj_cache_release(&c);
}

/*
 * 10,000 submitted AjJobs and their Volcano Jobs, each replaced once and
 * half of them deleted: every lookup still right, and the records take a
 * few hundred bytes each (the JSON of such an AjJob is over 1 KB).
 */
struct seen_phases {
	int volcano_running, aml_failed, none_pending, other;
};

static void see_phase(void *ctx, const char *backend, enum aj_phase phase)
{
	struct seen_phases *s = ctx;

	if (backend && !strcmp(backend, "volcano") && phase == AJ_PHASE_RUNNING)
		s->volcano_running++;
	else if (backend && !strcmp(backend, "aml") && phase == AJ_PHASE_FAILED)
		s->aml_failed++;
	else if (!backend && phase == AJ_PHASE_PENDING)
		s->none_pending++;
	else
		s->other++;
}

static void every_ajjob_is_counted_by_backend_and_phase_with_its_creation_time(void **state)
{
	struct aj_cache c;
	struct aj_ajjob_view v;
	struct seen_phases seen = { 0, 0, 0, 0 };

	(void)state;
	assert_int_equal(aj_cache_init(&c), 0);
	assert_int_equal(aj_cache_ajjob_put(&c, parse(
		"{\"metadata\":{\"namespace\":\"ml\",\"name\":\"a\",\"uid\":\"u1\","
		"\"creationTimestamp\":\"2026-12-01T10:00:00Z\"},"
		"\"status\":{\"phase\":\"Running\",\"backend\":\"volcano\"}}")), 0);
	assert_int_equal(aj_cache_ajjob_put(&c, parse(
		"{\"metadata\":{\"namespace\":\"ml\",\"name\":\"b\",\"uid\":\"u2\"},"
		"\"status\":{\"phase\":\"Running\",\"backend\":\"volcano\"}}")), 0);
	assert_int_equal(aj_cache_ajjob_put(&c, parse(
		"{\"metadata\":{\"namespace\":\"ml\",\"name\":\"c\",\"uid\":\"u3\"},"
		"\"status\":{\"phase\":\"Failed\",\"backend\":\"aml\"}}")), 0);
	assert_int_equal(aj_cache_ajjob_put(&c, parse(
		"{\"metadata\":{\"namespace\":\"ml\",\"name\":\"d\",\"uid\":\"u4\"},"
		"\"spec\":{\"command\":[\"python\"]}}")), 0);
	aj_cache_ajjob_delete(&c, "ml/b");
	aj_cache_ajjob_phases(&c, see_phase, &seen);
	assert_int_equal(seen.volcano_running, 1);
	assert_int_equal(seen.aml_failed, 1);
	assert_int_equal(seen.none_pending, 1);
	assert_int_equal(seen.other, 0);
	assert_int_equal(aj_cache_ajjob_get(&c, "ml/a", &v), 1);
	assert_int_equal(v.created, 1796119200LL);
	aj_ajjob_view_release(&v);
	assert_int_equal(aj_cache_ajjob_get(&c, "ml/c", &v), 1);
	assert_int_equal(v.created, 0);
	aj_ajjob_view_release(&v);
	aj_cache_release(&c);
}

/* The bytes held for n AjJobs and n Volcano Jobs, failing above per_record on average. */
static size_t bytes_within(struct aj_cache *c, int n, size_t per_record)
{
	size_t bytes = aj_cache_bytes(c);

	if (bytes > (size_t)n * 2 * per_record)
		fail_msg("%zu bytes for %d AjJobs and %d Volcano Jobs", bytes, n, n);
	return bytes;
}

/* AjJob job-N at key, submitted: its uid and resourceVersion, its Volcano Job, no full object. */
static void assert_submitted(struct aj_cache *c, const char *key, const char *uid, const char *rv)
{
	struct aj_ajjob_view v;

	assert_int_equal(aj_cache_ajjob_get(c, key, &v), 1);
	assert_string_equal(v.uid, uid);
	assert_string_equal(v.resource_version, rv);
	assert_string_equal(v.job, strchr(key, '/') + 1);
	assert_int_equal(v.phase, AJ_PHASE_SUBMITTED);
	assert_null(v.object);
	aj_ajjob_view_release(&v);
}

static void many_records_stay_small_and_freed_ones_are_reused(void **state)
{
	enum { N = 10000 };
	struct aj_cache c;
	struct aj_ajjob_view v;
	struct aj_owned_view vv;
	struct aj_strmap keep;
	char json[1024], key[64];
	size_t full;
	int i, round;

	(void)state;
	assert_int_equal(aj_cache_init(&c), 0);
	for (round = 0; round < 2; round++)
		for (i = 0; i < N; i++) {
			snprintf(json, sizeof(json),
				 "{\"metadata\":{\"namespace\":\"training\",\"name\":\"job-%d\","
				 "\"uid\":\"0f8e4a52-6d1c-4c0e-9b8a-%012d\",\"resourceVersion\":\"%d\","
				 "\"generation\":1},\"spec\":{\"command\":[\"python\",\"train.py\"]},"
				 "\"status\":{\"phase\":\"Submitted\",\"observedGeneration\":1,"
				 "\"backend\":\"volcano\",\"message\":\"Volcano Job job-%d is Pending\","
				 "\"conditions\":[{\"type\":\"Submitted\",\"status\":\"True\","
				 "\"lastTransitionTime\":\"2026-03-01T10:00:00Z\"},{\"type\":\"Running\","
				 "\"status\":\"False\",\"lastTransitionTime\":\"2026-03-01T10:00:00Z\"}],"
				 "\"volcano\":{\"jobName\":\"job-%d\"}}}", i, i, 100 + round * N + i, i, i);
			assert_int_equal(aj_cache_ajjob_put(&c, parse(json)), 0);
			/* as Volcano has them: a uid, the tasks and their pods by phase */
			snprintf(json, sizeof(json),
				 "{\"metadata\":{\"namespace\":\"training\",\"name\":\"job-%d\","
				 "\"uid\":\"7c1d2e3f-8a9b-4c5d-8e7f-%012d\","
				 "\"ownerReferences\":[{\"kind\":\"AjJob\",\"name\":\"job-%d\","
				 "\"uid\":\"0f8e4a52-6d1c-4c0e-9b8a-%012d\",\"controller\":true}]},"
				 "\"spec\":{\"tasks\":[{\"name\":\"master\",\"replicas\":1},"
				 "{\"name\":\"worker\",\"replicas\":3}]},"
				 "\"status\":{\"state\":{\"phase\":\"%s\"},\"taskStatusCount\":%s}}",
				 i, i, i, i, round ? "Running" : "Pending",
				 round ? "{\"master\":{\"phase\":{\"Running\":1}},"
					 "\"worker\":{\"phase\":{\"Running\":2,\"Pending\":1}}}"
				       : "{}");
			assert_int_equal(volcano_put(&c, parse(json)), 0);
		}
	assert_int_equal(aj_cache_ajjob_count(&c), N);
	/* 3,801,088 bytes: blocks and tables (4,456,448 before uids were packed, docs/benchmarks.md) */
	full = bytes_within(&c, N, 225);
	assert_submitted(&c, "training/job-4321", "0f8e4a52-6d1c-4c0e-9b8a-000000004321", "14421");
	assert_int_equal(aj_cache_owned_get(&c, VOLCANO, "training/job-9999", &vv), 1);
	assert_string_equal(vv.owner_name, "job-9999");
	assert_string_equal(vv.phase, "Running");
	assert_int_equal(vv.nr_tasks, 2);
	assert_string_equal(vv.tasks[1].name, "worker");
	assert_int_equal(vv.tasks[1].replicas, 3);
	assert_int_equal(vv.tasks[1].running, 2);
	assert_int_equal(vv.tasks[1].pending, 1);
	aj_owned_view_release(&vv);

	/* The even ones are listed again; the odd ones were deleted meanwhile. */
	aj_strmap_init(&keep);
	for (i = 0; i < N; i += 2) {
		snprintf(key, sizeof(key), "training/job-%d", i);
		assert_int_equal(aj_strmap_put(&keep, key, NULL, NULL), 0);
	}
	assert_int_equal(aj_cache_sweep(&c, AJ_CACHE_AJJOBS, &keep), N / 2);
	assert_int_equal(aj_cache_sweep(&c, AJ_CACHE_OWNED + VOLCANO, &keep), N / 2);
	aj_strmap_release(&keep);
	assert_int_equal(aj_cache_ajjob_count(&c), N / 2);
	assert_int_equal(aj_cache_ajjob_get(&c, "training/job-4321", &v), 0);
	assert_int_equal(aj_cache_owned_get(&c, VOLCANO, "training/job-4321", &vv), 0);
	assert_int_equal(aj_cache_ajjob_get(&c, "training/job-4320", &v), 1);
	assert_string_equal(v.job, "job-4320");
	aj_ajjob_view_release(&v);

	/* New AjJobs take the room the deleted ones left. */
	for (i = N; i < N + N / 2; i++) {
		snprintf(json, sizeof(json),
			 "{\"metadata\":{\"namespace\":\"training\",\"name\":\"job-%d\","
			 "\"uid\":\"0f8e4a52-6d1c-4c0e-9b8a-%012d\",\"resourceVersion\":\"9\","
			 "\"generation\":1},\"status\":{\"phase\":\"Succeeded\",\"observedGeneration\":1,"
			 "\"volcano\":{\"jobName\":\"job-%d\"}}}", i, i, i);
		assert_int_equal(aj_cache_ajjob_put(&c, parse(json)), 0);
	}
	assert_int_equal(aj_cache_ajjob_count(&c), N);
	assert_true(aj_cache_bytes(&c) <= full);
	assert_int_equal(aj_cache_ajjob_get(&c, "training/job-14999", &v), 1);
	assert_int_equal(v.phase, AJ_PHASE_SUCCEEDED);
	aj_ajjob_view_release(&v);
	aj_cache_release(&c);
}

/*
 * An AjJob of the bundled Volcano example as kube-apiserver returns it
 * (`aj run -t volcano -- python train.py`): as created (status 0), with the
 * status the controller writes when it created the Volcano Job (1), and with
 * the one it writes once the Volcano Job is seen waiting (2). Written by hand
 * from examples/.azure_jobs, src/core/ajjob.c and controller/status.c.
 */
static void realistic_ajjob(char *out, size_t size, int i, int status)
{
	static const char cond[] =
		"{\"type\":\"%s\",\"status\":\"%s\",\"observedGeneration\":1,"
		"\"lastTransitionTime\":\"2026-12-01T16:21:07Z\",\"reason\":\"%s\","
		"\"message\":\"%s\"}";
	static const char status_fields[] =
		",{\"manager\":\"aj\",\"operation\":\"Update\",\"apiVersion\":\"aj.dev/v1alpha1\","
		"\"time\":\"2026-12-01T16:21:07Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{"
		"\"f:status\":{\".\":{},\"f:backend\":{},\"f:conditions\":{},\"f:message\":{},"
		"\"f:observedGeneration\":{},\"f:phase\":{},\"f:tasks\":{},\"f:tasksSummary\":{},"
		"\"f:volcano\":{\".\":{},\"f:jobName\":{}}}},\"subresource\":\"status\"}";
	static const char tasks[] =
		"\"tasks\":[{\"name\":\"master\",\"replicas\":1,\"pending\":1,\"running\":0,"
		"\"succeeded\":0,\"failed\":0},{\"name\":\"worker\",\"replicas\":1,\"pending\":1,"
		"\"running\":0,\"succeeded\":0,\"failed\":0}],\"tasksSummary\":\"0/2 running, 2 pending\",";
	const char *reason = status == 1 ? "VolcanoJobCreated" : "VolcanoJobPending";
	char msg[64], conds[2048], st[3072] = "", when[32];
	size_t len = 0;
	int k;

	snprintf(msg, sizeof(msg), status == 1 ? "Volcano Job job-%d submitted"
		 : "Volcano Job job-%d is Pending", i);
	snprintf(when, sizeof(when), "2026-12-01T16:%02d:%02dZ", 20 + i / 60 % 40, i % 60);
	for (k = 0; k < AJ_STATUS_CONDITIONS; k++) {
		len += (size_t)snprintf(conds + len, sizeof(conds) - len, "%s", k ? "," : "");
		len += (size_t)snprintf(conds + len, sizeof(conds) - len, cond,
					aj_status_conditions[k], k ? "False" : "True", reason,
					k ? "" : msg);
		assert_true(len < sizeof(conds));
	}
	if (status)
		assert_true(snprintf(st, sizeof(st),
			",\"status\":{\"phase\":\"Submitted\",\"backend\":\"volcano\",\"observedGeneration\":1,"
			"\"message\":\"%s\",%s\"conditions\":[%s],\"volcano\":{\"jobName\":\"job-%d\"}}",
			msg, status == 2 ? tasks : "", conds, i) < (int)sizeof(st));
	assert_true(snprintf(out, size,
		"{\"apiVersion\":\"aj.dev/v1alpha1\",\"kind\":\"AjJob\","
		"\"metadata\":{\"name\":\"job-%d\",\"namespace\":\"training\","
		"\"uid\":\"3b9f6c2e-8d41-4a7b-9e15-%012d\",\"resourceVersion\":\"%d\","
		"\"generation\":1,\"creationTimestamp\":\"%s\",\"managedFields\":["
		"{\"manager\":\"aj\",\"operation\":\"Update\",\"apiVersion\":\"aj.dev/v1alpha1\","
		"\"time\":\"%s\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:spec\":{\".\":{},"
		"\"f:code\":{\".\":{},\"f:digest\":{}},\"f:command\":{},\"f:components\":{\".\":{},"
		"\"f:environment/base\":{\".\":{},\"f:base\":{},\"f:config\":{\".\":{},\"f:jobs\":{}}},"
		"\"f:environment/volcano\":{\".\":{},\"f:base\":{},\"f:config\":{\".\":{},"
		"\"f:environment\":{\".\":{},\"f:image\":{},\"f:setup\":{}}}},"
		"\"f:template/base\":{\".\":{},\"f:base\":{},\"f:config\":{\".\":{},\"f:code\":{\".\":{},"
		"\"f:ignore\":{}}}}},\"f:name\":{},\"f:nodes\":{},\"f:processes\":{},"
		"\"f:processesPerNode\":{},\"f:template\":{\".\":{},\"f:base\":{},\"f:config\":{\".\":{},"
		"\"f:jobs\":{},\"f:target\":{\".\":{},\"f:context\":{},\"f:cpus_per_node\":{},"
		"\"f:gpus_per_node\":{},\"f:memory\":{},\"f:namespace\":{},\"f:queue\":{},\"f:rdma\":{},"
		"\"f:service\":{}}}}}}}%s]},"
		"\"spec\":{\"name\":\"template/volcano\",\"template\":{\"base\":[\"base\","
		"\"environment.volcano\"],\"config\":{\"target\":{\"service\":\"volcano\","
		"\"namespace\":\"training\",\"queue\":\"default\",\"context\":\"gpu-westus3\","
		"\"gpus_per_node\":8,\"cpus_per_node\":96,\"memory\":\"512Gi\",\"rdma\":true},"
		"\"jobs\":[{\"name\":\"train\",\"sku\":\"{nodes}xG{processes}\",\"instance_count\":2,"
		"\"submit_args\":{\"env\":{\"AMLT_PERSISTENT_VOLUME_NAME\":\"training-shared\","
		"\"AMLT_PERSISTENT_VOLUME_MOUNT_DIR\":\"/mnt/shared\"}}}]}},"
		"\"components\":{\"template/base\":{\"base\":[],\"config\":{\"code\":{\"ignore\":"
		"[\"data/\",\"outputs/\",\"checkpoints/\",\"*.ckpt\",\"wandb/\"]}}},"
		"\"environment/volcano\":{\"base\":[\"base\"],\"config\":{\"environment\":{"
		"\"image\":\"nvcr.io/nvidia/pytorch:24.05-py3\",\"setup\":[\"python -m pip install -e .\"]}}},"
		"\"environment/base\":{\"base\":[],\"config\":{\"jobs\":[{\"submit_args\":{\"env\":{"
		"\"PYTHONUNBUFFERED\":\"1\",\"NCCL_DEBUG\":\"WARN\"}}}]}}},"
		"\"command\":[\"python\",\"train.py\"],\"code\":{\"digest\":"
		"\"9f2c4e7a1b3d5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8\"},"
		"\"nodes\":2,\"processes\":8,\"processesPerNode\":1}%s}",
		i, i, 1840000 + 3 * i + status, when, when, status ? status_fields : "", st) < (int)size);
}

/*
 * Its Volcano Job as Volcano has it while the pods wait (the pod templates
 * shortened to what the builder writes besides command and env).
 */
static void realistic_volcano_job(char *out, size_t size, int i)
{
	static const char task[] =
		"{\"name\":\"%s\",\"replicas\":1,\"minAvailable\":1,\"template\":{\"metadata\":{"
		"\"labels\":{\"app\":\"job-%d\",\"role\":\"%s\",\"aj.dev/ajjob\":\"job-%d\","
		"\"aj.dev/task\":\"%s\"}},\"spec\":{\"schedulerName\":\"volcano\","
		"\"restartPolicy\":\"Never\",\"volumes\":[{\"name\":\"dshm\",\"emptyDir\":{"
		"\"medium\":\"Memory\"}},{\"name\":\"shared\",\"persistentVolumeClaim\":{"
		"\"claimName\":\"training-shared\"}},{\"name\":\"code\",\"emptyDir\":{}}],"
		"\"containers\":[{\"name\":\"%s\",\"image\":\"nvcr.io/nvidia/pytorch:24.05-py3\","
		"\"workingDir\":\"/aj/code\",\"resources\":{\"requests\":{\"cpu\":\"96\","
		"\"memory\":\"512Gi\",\"nvidia.com/gpu\":\"8\"},\"limits\":{\"cpu\":\"96\","
		"\"memory\":\"512Gi\",\"nvidia.com/gpu\":\"8\"}}}]}}}";
	char master[1024], worker[1024];

	snprintf(master, sizeof(master), task, "master", i, "master", i, "master", "master");
	snprintf(worker, sizeof(worker), task, "worker", i, "worker", i, "worker", "worker");
	assert_true(snprintf(out, size,
		"{\"apiVersion\":\"batch.volcano.sh/v1alpha1\",\"kind\":\"Job\",\"metadata\":{"
		"\"name\":\"job-%d\",\"namespace\":\"training\","
		"\"uid\":\"c4a1e8d2-5b7f-4e93-a06c-%012d\",\"resourceVersion\":\"%d\","
		"\"generation\":1,\"creationTimestamp\":\"2026-12-01T16:21:07Z\","
		"\"labels\":{\"app\":\"job-%d\"},\"ownerReferences\":[{\"apiVersion\":\"aj.dev/v1alpha1\","
		"\"kind\":\"AjJob\",\"name\":\"job-%d\",\"uid\":\"3b9f6c2e-8d41-4a7b-9e15-%012d\","
		"\"controller\":true,\"blockOwnerDeletion\":true}],\"managedFields\":["
		"{\"manager\":\"aj\",\"operation\":\"Update\",\"apiVersion\":\"batch.volcano.sh/v1alpha1\","
		"\"time\":\"2026-12-01T16:21:07Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{"
		"\"f:metadata\":{\"f:labels\":{\".\":{},\"f:app\":{}},\"f:ownerReferences\":{\".\":{},"
		"\"k:{\\\"uid\\\":\\\"3b9f6c2e-8d41-4a7b-9e15-%012d\\\"}\":{}}},\"f:spec\":{\".\":{},"
		"\"f:maxRetry\":{},\"f:minAvailable\":{},\"f:plugins\":{},\"f:policies\":{},"
		"\"f:queue\":{},\"f:schedulerName\":{},\"f:tasks\":{}}}},"
		"{\"manager\":\"vc-controller-manager\",\"operation\":\"Update\","
		"\"apiVersion\":\"batch.volcano.sh/v1alpha1\",\"time\":\"2026-12-01T16:21:08Z\","
		"\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:status\":{\".\":{},\"f:conditions\":{},"
		"\"f:minAvailable\":{},\"f:pending\":{},\"f:state\":{\".\":{},"
		"\"f:lastTransitionTime\":{},\"f:phase\":{}},\"f:taskStatusCount\":{}}},"
		"\"subresource\":\"status\"}]},"
		"\"spec\":{\"schedulerName\":\"volcano\",\"queue\":\"default\",\"minAvailable\":2,"
		"\"maxRetry\":3,\"policies\":[{\"event\":\"PodEvicted\",\"action\":\"RestartJob\"},"
		"{\"event\":\"PodFailed\",\"action\":\"RestartJob\"}],\"plugins\":{\"ssh\":[],\"svc\":[],"
		"\"env\":[]},\"tasks\":[%s,%s]},"
		"\"status\":{\"state\":{\"phase\":\"Pending\",\"lastTransitionTime\":\"2026-12-01T16:21:08Z\"},"
		"\"minAvailable\":2,\"pending\":2,\"taskStatusCount\":{\"master\":{\"phase\":{\"Pending\":1}},"
		"\"worker\":{\"phase\":{\"Pending\":1}}},\"conditions\":[{\"status\":\"Pending\","
		"\"lastTransitionTime\":\"2026-12-01T16:21:08Z\"}]}}",
		i, i, 1870000 + i, i, i, i, i, master, worker) < (int)size);
}

static void realistic_records_stay_small(void **state)
{
	enum { N = 10000 };
	static char json[16384];
	struct aj_cache c;
	struct aj_ajjob_view v;
	struct aj_owned_view vv;
	int i;

	(void)state;
	assert_int_equal(aj_cache_init(&c), 0);
	/*
	 * As in bench/controller.sh: all created before the controller starts
	 * (its list), then their Volcano Jobs, then the statuses (written at a
	 * lower queue level than creates), first on creating, then on seeing
	 * each Volcano Job wait.
	 */
	for (i = 0; i < N; i++) {
		realistic_ajjob(json, sizeof(json), i, 0);
		assert_int_equal(aj_cache_ajjob_put(&c, parse(json)), 0);
	}
	for (i = 0; i < N; i++) {
		realistic_volcano_job(json, sizeof(json), i);
		assert_int_equal(volcano_put(&c, parse(json)), 0);
	}
	for (i = 0; i < N; i++) {
		realistic_ajjob(json, sizeof(json), i, 1);
		assert_int_equal(aj_cache_ajjob_put(&c, parse(json)), 0);
	}
	for (i = 0; i < N; i++) {
		realistic_ajjob(json, sizeof(json), i, 2);
		assert_int_equal(aj_cache_ajjob_put(&c, parse(json)), 0);
	}
	/*
	 * 4,259,840 bytes: 3,997,696 of blocks (429,136 of them freed records
	 * below the compaction threshold) and 262,144 of tables. Before uids
	 * and condition times were packed and blocks compacted at an eighth
	 * free: 6,684,672, of which 2,080,496 the freed records of the AjJobs
	 * as created (docs/benchmarks.md).
	 */
	bytes_within(&c, N, 220);
	assert_submitted(&c, "training/job-4321", "3b9f6c2e-8d41-4a7b-9e15-000000004321", "1852965");
	assert_int_equal(aj_cache_ajjob_get(&c, "training/job-4321", &v), 1);
	assert_int_equal(v.conditions, 1u << AJ_COND_SUBMITTED);
	aj_ajjob_view_release(&v);
	assert_int_equal(aj_cache_owned_get(&c, VOLCANO, "training/job-4321", &vv), 1);
	assert_string_equal(vv.uid, "c4a1e8d2-5b7f-4e93-a06c-000000004321");
	assert_string_equal(vv.owner_uid, "3b9f6c2e-8d41-4a7b-9e15-000000004321");
	assert_string_equal(vv.owner_name, "job-4321");
	assert_string_equal(vv.phase, "Pending");
	assert_int_equal(vv.nr_tasks, 2);
	assert_int_equal(vv.tasks[1].pending, 1);
	aj_owned_view_release(&vv);
	/* packed or not (no lowercase UUID), a uid comes back as it was */
	for (i = 0; i < 3; i++) {
		static const char *const uids[] = { "3B9F6C2E-8D41-4A7B-9E15-FFFFFFFFFFFF",
						    "ffffffff-ffff-ffff-ffff-fffffffffff0",
						    "00000000-0000-0000-0000-00000000000g" };

		snprintf(json, sizeof(json), "{\"metadata\":{\"namespace\":\"training\","
			 "\"name\":\"job-1\",\"uid\":\"%s\"}}", uids[i]);
		assert_int_equal(aj_cache_ajjob_put(&c, parse(json)), 0);
		assert_int_equal(aj_cache_ajjob_get(&c, "training/job-1", &v), 1);
		assert_string_equal(v.uid, uids[i]);
		aj_ajjob_view_release(&v);
	}
	aj_cache_release(&c);
}

/*
 * Records outgrowing their size class leave freed ones behind until the
 * blocks are compacted; running out of memory at any point of that (the
 * compaction included) loses no record that was stored and breaks none.
 */
static void fill_small(struct aj_cache *c, cJSON **grown, int n)
{
	char json[512];
	int i;

	assert_int_equal(aj_cache_init(c), 0);
	for (i = 0; i < n; i++) {
		snprintf(json, sizeof(json), "{\"metadata\":{\"namespace\":\"t\",\"name\":\"j%d\","
			 "\"uid\":\"small-%d\",\"generation\":1},\"status\":{\"phase\":\"Running\","
			 "\"observedGeneration\":1}}", i, i);
		assert_int_equal(aj_cache_ajjob_put(c, parse(json)), 0);
		snprintf(json, sizeof(json), "{\"metadata\":{\"namespace\":\"t\",\"name\":\"j%d\","
			 "\"uid\":\"grown-%d-0f8e4a52-6d1c-4c0e-9b8a\",\"generation\":1},"
			 "\"status\":{\"phase\":\"Running\",\"observedGeneration\":1,"
			 "\"volcano\":{\"jobName\":\"j%d\"}}}", i, i, i);
		grown[i] = parse(json);
	}
}

/*
 * Records outgrowing their size class leave freed ones behind until the
 * blocks are compacted; running out of memory at any point of that
 * compaction loses no record that was stored and breaks none.
 */
static void compaction_survives_running_out_of_memory(void **state)
{
	enum { N = 1200 };
	static cJSON *grown[N];
	struct aj_cache c;
	struct aj_ajjob_view v;
	char key[64], uid[64];
	long n, from = -1, to = -1;
	size_t before;
	int i, stored, moved;

	(void)state;
	/* Find the put that compacts: the bytes held drop by blocks. */
	fill_small(&c, grown, N);
	aj_alloc_fail_after(-1);
	for (i = 0; i < N; i++) {
		long at = aj_alloc_count();

		before = aj_cache_bytes(&c);
		assert_int_equal(aj_cache_ajjob_put(&c, grown[i]), 0);
		if (aj_cache_bytes(&c) + 64 * 1024 <= before) {
			from = at;
			to = aj_alloc_count();
		}
	}
	assert_int_equal(aj_cache_ajjob_count(&c), N);
	aj_cache_release(&c);
	assert_true(from >= 0);

	for (n = from; n <= to; n++) {
		fill_small(&c, grown, N);
		aj_alloc_fail_after(n);
		for (i = 0, stored = 0; i < N; i++)
			stored += !aj_cache_ajjob_put(&c, grown[i]);
		aj_alloc_fail_after(-1);
		assert_true(stored < N);
		for (i = 0, moved = 0; i < N; i++) {
			snprintf(key, sizeof(key), "t/j%d", i);
			snprintf(uid, sizeof(uid), "grown-%d-0f8e4a52-6d1c-4c0e-9b8a", i);
			if (aj_cache_ajjob_get(&c, key, &v) != 1)
				continue;
			if (strcmp(v.uid, uid)) {
				snprintf(uid, sizeof(uid), "small-%d", i);
				assert_string_equal(v.uid, uid);
			} else {
				assert_string_equal(v.job, key + 2);
				moved++;
			}
			aj_ajjob_view_release(&v);
		}
		assert_true(moved > 0);
		aj_cache_release(&c);
	}
}

static void out_of_memory_drops_the_entry_instead_of_keeping_a_stale_one(void **state)
{
	struct aj_cache c;
	struct aj_ajjob_view v;
	cJSON *obj;
	long n;

	(void)state;
	/* The full object and status.azure (kept whole) are printed through cJSON. */
	aj_alloc_hook_cjson();
	assert_int_equal(aj_cache_init(&c), 0);
	c.whole[0] = "azure";
	for (n = 0;; n++) {
		int r;

		assert_int_equal(aj_cache_ajjob_put(&c, parse(
			"{\"metadata\":{\"namespace\":\"ml\",\"name\":\"a\",\"uid\":\"old\"}}")), 0);
		obj = parse("{\"metadata\":{\"namespace\":\"ml\",\"name\":\"a\",\"uid\":\"new\"},"
			    "\"status\":{\"phase\":\"Running\",\"azure\":{\"run\":\"r1\"}}}");
		aj_alloc_fail_after(n);
		r = aj_cache_ajjob_put(&c, obj);
		aj_alloc_fail_after(-1);
		if (!r) {
			assert_int_equal(aj_cache_ajjob_get(&c, "ml/a", &v), 1);
			assert_string_equal(v.uid, "new");
			aj_ajjob_view_release(&v);
			break;
		}
		assert_int_equal(aj_cache_ajjob_get(&c, "ml/a", &v), 0);
	}
	assert_true(n > 0);
	aj_cache_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_submitted_ajjob_keeps_only_its_summary),
		cmocka_unit_test(the_storage_due_time_follows_the_ajjob_not_its_name),
		cmocka_unit_test(the_storage_renewal_time_stays_in_the_status),
		cmocka_unit_test(volcano_jobs_remember_their_controlling_ajjob),
		cmocka_unit_test(volcano_jobs_remember_whether_they_mount_the_storage_secret),
		cmocka_unit_test(ajtemplates_of_one_namespace_form_a_source),
		cmocka_unit_test(the_status_is_kept_as_what_the_next_status_is_computed_from),
		cmocka_unit_test(the_json_hash_ignores_member_order_only),
		cmocka_unit_test(an_unchanged_status_is_recognised_and_a_changed_one_is_not),
		cmocka_unit_test(the_lifecycle_status_comes_back_from_the_cache),
		cmocka_unit_test(every_ajjob_is_counted_by_backend_and_phase_with_its_creation_time),
		cmocka_unit_test(many_records_stay_small_and_freed_ones_are_reused),
		cmocka_unit_test(realistic_records_stay_small),
		cmocka_unit_test(compaction_survives_running_out_of_memory),
		cmocka_unit_test(out_of_memory_drops_the_entry_instead_of_keeping_a_stale_one),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
