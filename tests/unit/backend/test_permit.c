/*
 * The controller's security rule (permit.c): capabilities and storage mounts
 * only in the namespaces its configuration lists, none by default; the
 * list's syntax. Messages name the template key, the namespace and the
 * setting.
 */
#include "support.h"

#include "backend/backend.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/jobspec.h"

static const struct aj_shape_args one = { 1, 0, 0 };

#define PLAIN "config: {target: {service: volcano, gpus_per_node: 0}, environment: {image: x}, jobs: [{sku: C1}]}"
#define CAPS "config: {target: {service: volcano, gpus_per_node: 0}, environment: {image: x}, " \
	"jobs: [{sku: C1, submit_args: {container_args: {capabilities: [SYS_ADMIN]}}}]}"
#define STORAGE "config: {target: {service: volcano, gpus_per_node: 0}, environment: {image: x}, " \
	"storage: {data: {storage_account_name: a, container_name: c, mount_dir: /mnt/data}}, jobs: [{sku: C1}]}"

/* permit() on yaml in ns under list: 0 or -1, with fragment among the messages */
static int permit(const char *yaml, const char *ns, const char *list, const char *fragment)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_jobspec s;
	int rc;

	aj_test_spec(yaml, &one, NULL, 0, &s);
	rc = aj_backend_permit(&s, ns, list, &err);
	if (fragment && !aj_test_errors_contain(&err, fragment))
		fail_msg("want \"%s\", got:\n%s", fragment, aj_test_errors_text(&err));
	if (!rc)
		assert_int_equal(aj_errors_count(&err), 0);
	aj_errors_release(&err);
	aj_jobspec_release(&s);
	return rc;
}

static void plain_jobs_run_anywhere(void **state)
{
	(void)state;
	assert_int_equal(permit(PLAIN, "team-a", NULL, NULL), 0);
	assert_int_equal(permit(PLAIN, "team-a", "", NULL), 0);
	assert_int_equal(permit(PLAIN, "team-a", "other", NULL), 0);
}

static void default_permits_none(void **state)
{
	(void)state;
	assert_int_equal(permit(CAPS, "team-a", NULL,
				"config.jobs[0].submit_args.container_args.capabilities: adding capabilities "
				"is not permitted in namespace \"team-a\": the controller's "
				"--privileged-namespaces (AJ_PRIVILEGED_NAMESPACES) permits none by default"),
			 -1);
	assert_int_equal(permit(CAPS, "team-a", "", "permits none by default"), -1);
	assert_int_equal(permit(STORAGE, "team-a", NULL,
				"config.storage.data: storage mounts run privileged pods, not permitted in "
				"namespace \"team-a\""), -1);
}

static void listed_namespaces(void **state)
{
	(void)state;
	assert_int_equal(permit(CAPS, "team-a", "team-a", NULL), 0);
	assert_int_equal(permit(CAPS, "team-a", "build, team-a ,x", NULL), 0);
	assert_int_equal(permit(STORAGE, "x", "build, team-a ,x", NULL), 0);
	assert_int_equal(permit(CAPS, "team-b", "*", NULL), 0);
	/* whole names only */
	assert_int_equal(permit(CAPS, "team", "team-a", "namespace \"team\": the controller's "
				"--privileged-namespaces (AJ_PRIVILEGED_NAMESPACES) does not list it"), -1);
	assert_int_equal(permit(CAPS, "team-ab", "team-a", "does not list it"), -1);
	assert_int_equal(permit(CAPS, "team-a", "team-a*", "does not list it"), -1);
	assert_int_equal(permit(CAPS, NULL, "team-a", "namespace \"\""), -1);
}

static void list_syntax(void **state)
{
	struct aj_errors err = AJ_ERRORS_INIT;

	(void)state;
	assert_int_equal(aj_backend_permit_list_check(NULL, &err), 0);
	assert_int_equal(aj_backend_permit_list_check("", &err), 0);
	assert_int_equal(aj_backend_permit_list_check("*", &err), 0);
	assert_int_equal(aj_backend_permit_list_check("a, b-1,c", &err), 0);
	assert_int_equal(aj_errors_count(&err), 0);
	assert_int_equal(aj_backend_permit_list_check("a,Team_B,,*x", &err), -1);
	assert_true(aj_test_errors_contain(&err, "\"Team_B\" is not a namespace name or \"*\""));
	assert_true(aj_test_errors_contain(&err, "\"\" is not a namespace"));
	assert_true(aj_test_errors_contain(&err, "\"*x\" is not"));
	assert_int_equal(aj_errors_count(&err), 3);
	aj_errors_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(plain_jobs_run_anywhere),
		cmocka_unit_test(default_permits_none),
		cmocka_unit_test(listed_namespaces),
		cmocka_unit_test(list_syntax),
	};

	aj_alloc_hook_cjson();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
