/*
 * Kubeconfig parsing. The input is split on "\n---\n" into two files named
 * by a KUBECONFIG list, so merging is exercised too; the second part, when
 * present, may also carry a context name on its first line ("#ctx NAME").
 * A successful load must give a server and a namespace; a failure must say
 * why. Each input loads as the controller does (insecure-skip-tls-verify
 * refused) and as the CLI does (honoured): what the first accepts the second
 * accepts the same, and an insecure result never carries a CA. The base64
 * decoder of the inline *-data fields runs on the raw input too.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/base64.h"
#include "core/error.h"
#include "kube/kubeconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];
static char file_a[96], file_b[96], list[200];

static void cleanup(void)
{
	unlink(file_a);
	unlink(file_b);
	rmdir(dir);
}

/* tmpfs: rewriting a file there costs no disk work. */
static void setup(void)
{
	snprintf(dir, sizeof(dir), "/dev/shm/aj-fuzz-kc-XXXXXX");
	if (!mkdtemp(dir))
		abort();
	snprintf(file_a, sizeof(file_a), "%s/a", dir);
	snprintf(file_b, sizeof(file_b), "%s/b", dir);
	snprintf(list, sizeof(list), "%s:%s", file_a, file_b);
	atexit(cleanup);
}

static void put(const char *path, const uint8_t *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (!f)
		abort();
	if (n && fwrite(p, 1, n, f) != n)
		abort();
	fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct aj_kube_config_opts o = { 0 };
	struct aj_kube_config cfg;
	unsigned char *raw;
	size_t raw_len;
	struct aj_errors err = AJ_ERRORS_INIT;
	const uint8_t *sep = NULL, *q;
	char ctx[64];
	int ok = 0;

	aj_alloc_hook_cjson();
	if (!*dir)
		setup();
	for (q = data; q + 5 <= data + size; q++)
		if (!memcmp(q, "\n---\n", 5)) {
			sep = q;
			break;
		}
	put(file_a, data, sep ? (size_t)(sep - data) : size);
	if (sep) {
		put(file_b, sep + 5, size - (size_t)(sep + 5 - data));
		if (size - (size_t)(sep + 5 - data) > 5 && !memcmp(sep + 5, "#ctx ", 5)) {
			const uint8_t *s = sep + 10, *e = s;

			while (e < data + size && *e != '\n' && *e && e - s < (long)sizeof(ctx) - 1)
				e++;
			memcpy(ctx, s, (size_t)(e - s));
			ctx[e - s] = '\0';
			o.context = ctx;
		}
	} else {
		unlink(file_b);
	}
	o.kubeconfig_env = list;
	for (o.allow_insecure = 0; o.allow_insecure < 2; o.allow_insecure++) {
		int strict_ok = ok;

		ok = !aj_kube_config_load(&cfg, &o, &err);
		if (!ok && aj_errors_empty(&err))
			abort();
		if (ok && (!cfg.server || !cfg.namespace ||
			   (cfg.insecure && (cfg.ca_file || cfg.ca.data)) ||
			   (cfg.insecure && !o.allow_insecure)))
			abort();
		if (o.allow_insecure && strict_ok && (!ok || cfg.insecure))
			abort();
		if (ok)
			aj_kube_config_release(&cfg);
		aj_errors_release(&err);
	}

	raw = aj_malloc(AJ_BASE64_DECODED_MAX(size));
	if (raw && !aj_base64_decode((const char *)data, size, raw, &raw_len) &&
	    raw_len > size * 3 / 4)
		abort();
	aj_free(raw);
	return 0;
}
