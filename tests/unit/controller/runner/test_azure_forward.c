/*
 * The Azure forwarder's configuration: the default workspace and the
 * namespace rules (which workspaces and virtual clusters a namespace may
 * use), and every malformed setting's message. The runner's decisions are
 * test_runner_azure.c's; the forwarding itself runs against a real API
 * server and the Azure peer in tests/integration/test-azure-controller.sh.
 */
#include "support.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "runner/azure_forward.h"

static struct aj_azure_forwarder *make(const char *workspace, const char *allow)
{
	struct aj_azure_opts o = { workspace, allow, NULL, NULL, NULL, 0 };
	struct aj_azure_forwarder *f = NULL;
	struct aj_errors err = AJ_ERRORS_INIT;

	if (aj_azure_forwarder_new(&o, NULL, &f, &err))
		fail_msg("%s", aj_test_errors_text(&err));
	aj_errors_release(&err);
	return f;
}

static void refused(const char *workspace, const char *allow, const char *fragment)
{
	struct aj_azure_opts o = { workspace, allow, NULL, NULL, NULL, 0 };
	struct aj_azure_forwarder *f = NULL;
	struct aj_errors err = AJ_ERRORS_INIT;

	assert_int_equal(aj_azure_forwarder_new(&o, NULL, &f, &err), -1);
	assert_null(f);
	if (!aj_test_errors_contain(&err, fragment))
		fail_msg("want \"%s\", got: %s", fragment, aj_test_errors_text(&err));
	aj_errors_release(&err);
}

static void rules(void **state)
{
	struct aj_azure_forwarder *f = make("s/rg/ws",
		"team-a=workspace:s/rg/ws,vc:s/sing/*;team-b=workspace:*/*/ws-b;"
		"*=workspace:s/rg/shared");

	(void)state;
	assert_true(aj_azure_allowed(f, "team-a", 0, "s", "rg", "ws"));
	assert_true(aj_azure_allowed(f, "team-a", 0, "S", "RG", "WS"));    /* ARM is case-insensitive */
	assert_false(aj_azure_allowed(f, "team-a", 0, "s", "rg", "ws-b"));
	/* a namespace's own rules replace the "*" rules */
	assert_false(aj_azure_allowed(f, "team-a", 0, "s", "rg", "shared"));
	assert_true(aj_azure_allowed(f, "team-a", 1, "s", "sing", "any-vc"));
	assert_false(aj_azure_allowed(f, "team-a", 1, "s", "other", "vc"));
	/* a workspace entry does not allow a VC of that name, nor the reverse */
	assert_false(aj_azure_allowed(f, "team-a", 1, "s", "rg", "ws"));
	assert_false(aj_azure_allowed(f, "team-a", 0, "s", "sing", "x"));
	assert_true(aj_azure_allowed(f, "team-b", 0, "x", "y", "ws-b"));
	assert_false(aj_azure_allowed(f, "team-b", 1, "x", "y", "ws-b"));
	assert_true(aj_azure_allowed(f, "other", 0, "s", "rg", "shared"));
	assert_false(aj_azure_allowed(f, "other", 0, "s", "rg", "ws"));
	aj_azure_forwarder_free(f);

	/* No rules: nothing is allowed. */
	f = make("s/rg/ws", NULL);
	assert_false(aj_azure_allowed(f, "team-a", 0, "s", "rg", "ws"));
	aj_azure_forwarder_free(f);
}

static void bad_settings(void **state)
{
	(void)state;
	refused(NULL, NULL, "--azure-workspace: \"\": expected SUBSCRIPTION/RESOURCE_GROUP/NAME");
	refused("s/rg", NULL, "--azure-workspace: \"s/rg\": expected SUBSCRIPTION/RESOURCE_GROUP/NAME");
	refused("s/rg/ws/x", NULL, "expected SUBSCRIPTION/RESOURCE_GROUP/NAME");
	refused("s//ws", NULL, "expected SUBSCRIPTION/RESOURCE_GROUP/NAME");
	refused("s/rg/ws", "team-a", "--azure-allow: \"team-a\": expected NS=ENTRY[,ENTRY...]");
	refused("s/rg/ws", "=workspace:s/rg/ws", "expected NS=ENTRY[,ENTRY...]");
	refused("s/rg/ws", "team-a=cluster:s/rg/c",
		"--azure-allow: \"cluster:s/rg/c\": expected workspace:SUB/RG/NAME or vc:SUB/RG/NAME");
	refused("s/rg/ws", "team-a=workspace:s/rg/ws,vc:s/rg",
		"--azure-allow: \"vc:s/rg\": expected SUB/RG/NAME after the kind");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rules),
		cmocka_unit_test(bad_settings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
