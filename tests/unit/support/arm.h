/*
 * arm.h - an ARM client on the loopback Azure peer for the tests of the
 * calls built on it: a client-secret identity (tenant-x, client-1) whose
 * tokens the peer's Entra endpoint issues, and the client at the peer's
 * base URL with the given hooks (a fake clock) and retries.
 *
 * Ownership: the fixture owns its token cache and client until
 * aj_test_arm_close().
 */
#ifndef AJ_TEST_ARM_H
#define AJ_TEST_ARM_H

#include "azure/arm.h"
#include "azure/credential.h"

struct aj_test_arm {
	struct aj_token_cache *tokens;
	struct aj_arm arm;
};

/* 0 / -1. */
int aj_test_arm_open(struct aj_test_arm *f, const char *base, const struct aj_azure_hooks *hooks,
		     int max_retries);
void aj_test_arm_close(struct aj_test_arm *f);

#endif
