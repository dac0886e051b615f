/*
 * Virtual cluster quotas and the choice among them. The first line is a
 * request: "SKU NODES PROCESSES TIER VC" (missing words: none); the rest is
 * up to four VC resources as ARM returns them, split on "\n---\n". Each is
 * read with aj_vc_read_quotas (a failure must say why; rows come out sorted
 * and unique, limits -1 or more, usage not negative), then the request is
 * chosen among the VCs read, and again with the VCs in reverse order: the
 * ranking is total, so both must choose the same VC, family and tier. A
 * choice must fit: it names a series and instance type of one of the VCs
 * and leaves no negative quota; a refusal must say why.
 */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "azure/vcselect.h"
#include "core/alloc.h"
#include "core/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_VCS 4
#define WORDS 5

/* A whole number in [min, max], else dflt. */
static long word_number(const char *s, long min, long max, long dflt)
{
	char *end;
	long v;

	if (!s)
		return dflt;
	v = strtol(s, &end, 10);
	return end != s && !*end && v >= min && v <= max ? v : dflt;
}

static void check_quotas(const struct aj_vc *vc)
{
	size_t i;
	int t;

	for (i = 0; i < vc->quotas_nr; i++) {
		const struct aj_vc_quota *q = &vc->quotas[i];

		if (i && strcmp(vc->quotas[i - 1].series, q->series) >= 0)
			abort();
		for (t = 0; t < AJ_TIERS; t++)
			if (q->limit[t] < -1 || q->used[t] < 0 ||
			    aj_vc_quota_free(q, (enum aj_tier)t) < -1)
				abort();
		if (q->user_limit < -1 || q->user_used < 0)
			abort();
	}
}

/* Choose; the result is checked, *out kept for the caller to compare. */
static int choose(const struct aj_vc_request *req, const struct aj_vc *vcs, size_t nr,
		  struct aj_vc_choice *out)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	int r = aj_vc_select(req, vcs, nr, out, &err);
	const struct aj_vc_candidate *c = &out->chosen;
	size_t i;

	if (r == 0) {
		if (!c->vc || c->vc < vcs || c->vc >= vcs + nr || !c->series ||
		    !c->instance_type || c->units <= 0 || c->remaining < 0)
			abort();
	} else if (r != -1 || c->vc || (!err.oom && aj_errors_empty(&err))) {
		abort();
	}
	for (i = 0; i < out->others_nr; i++)
		if (!out->others[i].vc || (!out->others[i].why && !err.oom))
			abort();
	aj_errors_release(&err);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text, *line, *rest, *words[WORDS] = { NULL }, *save = NULL, *w;
	struct aj_vc vcs[MAX_VCS], rev[MAX_VCS];
	struct aj_vc_request req;
	struct aj_vc_choice a, b;
	size_t nr = 0, i, n;
	long nodes, procs;
	int ra, rb;

	aj_alloc_hook_cjson();
	text = aj_strndup((const char *)data, size);
	if (!text)
		return 0;
	line = text;
	rest = strchr(text, '\n');
	if (rest)
		*rest++ = '\0';
	for (n = 0, w = strtok_r(line, " \t", &save); w && n < WORDS; w = strtok_r(NULL, " \t", &save))
		words[n++] = w;
	/* what a JobSpec allows for -n and -p */
	nodes = word_number(words[1], 0, INT_MAX, 1);
	procs = word_number(words[2], 0, INT_MAX, 1);

	while (rest && nr < MAX_VCS) {
		char *next = strstr(rest, "\n---\n");
		struct aj_errors err = AJ_ERRORS_INIT;
		char name[8] = "vc0";
		cJSON *res;

		if (next) {
			*next = '\0';
			next += 5;
		}
		name[2] = (char)('0' + nr);
		aj_vc_init(&vcs[nr]);
		if (aj_vc_set(&vcs[nr], "sub", "rg", name)) {
			aj_vc_release(&vcs[nr]);
			break;
		}
		res = cJSON_Parse(rest);
		if (aj_vc_read_quotas(&vcs[nr], res, &err)) {
			if (!err.oom && aj_errors_empty(&err))
				abort();
		} else {
			check_quotas(&vcs[nr]);
		}
		cJSON_Delete(res);
		aj_errors_release(&err);
		nr++;
		rest = next;
	}

	memset(&req, 0, sizeof(req));
	req.sku = words[0] ? words[0] : "G1";
	req.nodes = (int)nodes;
	req.processes = (int)procs;
	req.tier = words[3];
	req.vc = words[4];
	ra = choose(&req, vcs, nr, &a);
	for (i = 0; i < nr; i++)
		rev[i] = vcs[nr - 1 - i];
	rb = choose(&req, rev, nr, &b);
	if (ra != rb)
		abort();
	if (ra == 0 && !a.chosen.vc == !b.chosen.vc &&
	    (strcmp(a.chosen.vc->name, b.chosen.vc->name) || strcmp(a.chosen.series, b.chosen.series) ||
	     strcmp(a.chosen.instance_type, b.chosen.instance_type) || a.chosen.tier != b.chosen.tier ||
	     a.chosen.remaining != b.chosen.remaining))
		abort();
	aj_vc_choice_release(&a);
	aj_vc_choice_release(&b);
	for (i = 0; i < nr; i++)
		aj_vc_release(&vcs[i]);
	aj_free(text);
	return 0;
}
