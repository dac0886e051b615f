/*
 * support.h - helpers shared by the unit tests.
 *
 * aj_test_yaml() parses a YAML literal into a tree (failing the test on a
 * parse error); aj_test_errors_contain() checks that some formatted entry of
 * an error list contains a fragment. Trees returned are the caller's.
 */
#ifndef AJ_TEST_SUPPORT_H
#define AJ_TEST_SUPPORT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

struct aj_errors;
struct aj_node;

struct aj_node *aj_test_yaml(const char *text);
int aj_test_errors_contain(const struct aj_errors *e, const char *fragment);
/* All entries formatted, one per line (static buffer, for failure messages). */
const char *aj_test_errors_text(const struct aj_errors *e);

#endif
