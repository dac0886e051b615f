/*
 * amllogs.c - the choice, order and prefixes of an Azure ML job's log
 * files, and the judgement of a ranged read (see amllogs.h). Pure.
 */
#include "azure/amllogs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"

#define USER_DIR "user_logs/"
#define USER_STEM "std_log"
#define RUNTIME_DIR "azureml-logs/"
#define SUFFIX ".txt"

static int has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

static int all_digits(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return n > 0;
}

int aj_amllogs_is_user_log(const char *name)
{
	return !strncmp(name, USER_DIR USER_STEM, strlen(USER_DIR USER_STEM)) &&
	       !strchr(name + strlen(USER_DIR), '/') && has_suffix(name, SUFFIX);
}

int aj_amllogs_is_runtime_log(const char *name)
{
	const char *base = name + strlen(RUNTIME_DIR);

	return !strncmp(name, RUNTIME_DIR, strlen(RUNTIME_DIR)) && all_digits(base, 2) &&
	       !strchr(base, '/') && strlen(base) > 2 + strlen(SUFFIX) && has_suffix(base, SUFFIX);
}

/* The part of the name that tells the process apart: [start, start+len). */
static void role(const char *name, const char **start, size_t *len)
{
	const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
	size_t n = strlen(base);

	if (has_suffix(base, SUFFIX))
		n -= strlen(SUFFIX);
	if (aj_amllogs_is_user_log(name)) {
		base += strlen(USER_STEM);
		n -= strlen(USER_STEM);
		while (n && *base == '_') {
			base++;
			n--;
		}
	}
	*start = base;
	*len = n;
}

long aj_amllogs_rank(const char *name)
{
	static const char *const rank_words[] = { "process_", "rank_" };
	const char *s;
	size_t n, i;

	role(name, &s, &n);
	if (!n)
		return aj_amllogs_is_user_log(name) ? 0 : -1;   /* std_log.txt: the one process */
	for (i = 0; i < sizeof(rank_words) / sizeof(*rank_words); i++) {
		size_t w = strlen(rank_words[i]);

		if (n > w && !strncmp(s, rank_words[i], w) && all_digits(s + w, n - w) && n - w < 10)
			return strtol(s + w, NULL, 10);
	}
	return -1;
}

int aj_amllogs_label(const char *name, struct aj_buf *out)
{
	long rank = aj_amllogs_rank(name);
	const char *s;
	size_t n, i;

	if (rank >= 0)
		return aj_buf_addf(out, "%ld", rank);
	role(name, &s, &n);
	if (!aj_amllogs_is_user_log(name))
		return aj_buf_add(out, s, n);
	for (i = 0; i < n; i++)
		aj_buf_addch(out, s[i] == '_' ? '-' : s[i]);
	return out->failed ? -1 : 0;
}

int aj_amllogs_cmp(const char *a, const char *b)
{
	long ra = aj_amllogs_rank(a), rb = aj_amllogs_rank(b);

	if ((ra >= 0) != (rb >= 0))
		return ra >= 0 ? -1 : 1;
	if (ra != rb)
		return ra < rb ? -1 : 1;
	return strcmp(a, b);
}

void aj_amllogs_init(struct aj_amllogs *s, long rank)
{
	memset(s, 0, sizeof(*s));
	s->rank = rank;
}

static void file_release(struct aj_amllogs_file *f)
{
	aj_free(f->name);
	aj_free(f->prefix);
	aj_logline_release(&f->lines);
}

void aj_amllogs_release(struct aj_amllogs *s)
{
	size_t i;

	for (i = 0; i < s->nr; i++)
		file_release(&s->files[i]);
	aj_free(s->files);
	memset(s, 0, sizeof(*s));
}

struct aj_amllogs_file *aj_amllogs_find(struct aj_amllogs *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->nr; i++)
		if (!strcmp(s->files[i].name, name))
			return &s->files[i];
	return NULL;
}

static int wanted(const struct aj_amllogs *s, const char *name, int runtime)
{
	if (!(runtime ? aj_amllogs_is_runtime_log(name) : aj_amllogs_is_user_log(name)))
		return 0;
	return s->rank < 0 || aj_amllogs_rank(name) == s->rank;
}

static int add(struct aj_amllogs *s, const char *name)
{
	struct aj_buf prefix = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_amllogs_file *f;
	size_t at;

	if (s->nr == s->alloc) {
		size_t n = s->alloc ? s->alloc * 2 : 8;
		struct aj_amllogs_file *grown = aj_realloc(s->files, n * sizeof(*grown));

		if (!grown)
			return -1;
		s->files = grown;
		s->alloc = n;
	}
	for (at = 0; at < s->nr && aj_amllogs_cmp(s->files[at].name, name) < 0; at++)
		;
	aj_buf_addch(&prefix, '[');
	aj_amllogs_label(name, &prefix);
	aj_buf_addstr(&prefix, "] ");
	memmove(&s->files[at + 1], &s->files[at], (s->nr - at) * sizeof(*f));
	f = &s->files[at];
	memset(f, 0, sizeof(*f));
	aj_logline_init(&f->lines, 0);
	s->nr++;
	f->prefix = aj_buf_detach(&prefix, NULL);
	f->name = aj_strdup(name);
	return f->prefix && f->name ? 0 : -1;
}

int aj_amllogs_update(struct aj_amllogs *s, const cJSON *log_files, struct aj_errors *err)
{
	const cJSON *e;
	int users = 0;

	cJSON_ArrayForEach(e, log_files)
		if (e->string && aj_amllogs_is_user_log(e->string))
			users = 1;
	/* the older runtime's files are shown only until the user's appear */
	if (users && s->runtime) {
		size_t i;

		for (i = 0; i < s->nr; i++)
			file_release(&s->files[i]);
		s->nr = 0;
		s->runtime = 0;
	} else if (!users && !s->nr) {
		s->runtime = 1;
	}
	cJSON_ArrayForEach(e, log_files) {
		if (!e->string || !cJSON_IsString(e) || !wanted(s, e->string, s->runtime) ||
		    aj_amllogs_find(s, e->string))
			continue;
		if (add(s, e->string))
			return aj_errors_oom(err);
	}
	return 0;
}

enum aj_amllogs_answer aj_amllogs_judge(long status, size_t body_len, int64_t offset,
					size_t chunk, size_t *skip, int64_t *new_offset,
					int *more)
{
	*skip = 0;
	*new_offset = offset;
	*more = 0;
	switch (status) {
	case 206:
		*new_offset = offset + (int64_t)body_len;
		*more = body_len >= chunk;
		return body_len ? AJ_AMLLOGS_DATA : AJ_AMLLOGS_NOTHING;
	case 200:
		/* the whole file: what was shown is skipped; a shorter file was rewritten */
		if ((int64_t)body_len <= offset)
			return AJ_AMLLOGS_NOTHING;
		*skip = (size_t)offset;
		*new_offset = (int64_t)body_len;
		return AJ_AMLLOGS_DATA;
	case 416:
		return AJ_AMLLOGS_NOTHING;
	case 404:
		return AJ_AMLLOGS_MISSING;
	default:
		return AJ_AMLLOGS_REFUSED;
	}
}

int64_t aj_amllogs_poll_ms(int64_t elapsed_ms)
{
	/* _wait_before_polling: 60 s / (1 + 100 e^(-t/20 s)), at least 2 s */
	double ms = 60000.0 / (1.0 + 100.0 * exp(-(double)elapsed_ms / 20000.0));

	return ms < 2000.0 ? 2000 : (int64_t)ms;
}
