#include "cache.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/json.h"
#include "core/node.h"
#include "core/source.h"
#include "core/timestamp.h"

/*
 * Every record starts with this head; its key is the first string of the
 * record's text, and `key` points there.
 */
struct aj_cache_rec {
	uint32_t size;            /* bytes allocated for the record */
	uint32_t hash;            /* of the key */
	const char *key;
};

#define FLAG_HAS_PHASE 1u
#define FLAG_DELETING 2u
#define FLAG_CANCEL 4u
#define FLAG_HAS_STATUS 8u
#define MEMBER_SHIFT 4
#define MEMBER_OF(e) ((e)->flags >> MEMBER_SHIFT)

/* A condition's status: absent, "True", "False", anything else. */
enum { COND_NONE, COND_TRUE, COND_FALSE, COND_OTHER };
/* Beside it: its lastTransitionTime is text, not written as Kubernetes writes times. */
#define COND_TIME_TEXT 4u
#define COND_OF(e, i) ((e)->cond[i] & 3u)

/* Offsets into text; 0 is "none" (the key is at 0). */
struct ajjob_rec {
	struct aj_cache_rec h;
	long long generation;
	long long observed_generation;
	uint64_t status_hash;
	long long storage_due;
	/* 32 bits each, so the record stays in its size class */
	uint32_t reason_due;      /* Unix seconds */
	int32_t ttl;              /* spec.ttlSecondsAfterFinished, -1 when absent */
	int32_t retry_count;      /* status.retryCount, 0 when absent */
	uint32_t created;         /* metadata.creationTimestamp (Unix seconds), 0 when unknown */
	char *object;             /* compact JSON while not submitted, else NULL */
	char *detail;             /* {member: value, ...} of the status members kept whole (compact JSON), or NULL */
	uint32_t uid, resource_version, backend;
	uint32_t job;             /* status.<member>.jobName: the owned object */
	uint32_t renew_after;     /* its storageRenewAfter */
	uint32_t unschedulable;   /* the Unschedulable condition's message */
	/* lastTransitionTime: Unix seconds, or with COND_TIME_TEXT its offset in text */
	uint32_t since[AJ_STATUS_CONDITIONS];
	unsigned char cond[AJ_STATUS_CONDITIONS];  /* COND_*, COND_TIME_TEXT */
	/* FLAG_*; the high nibble: 1 + the index into aj_cache.members of the
	 * status member naming the owned object, 0 for none (no byte of its
	 * own: records sit in 16-byte size classes) */
	unsigned char flags;
	unsigned char phase;
	char text[];
};

struct owned_rec {
	struct aj_cache_rec h;
	/* 32 bits each (the runners' counters are): room for the tasks */
	int32_t n[AJ_OWNED_NUMBERS];
	uint32_t uid, owner_uid, owner_name, phase;
	/* the tasks after the strings, each its name and pod counts (tasks_encode) */
	uint16_t tasks;           /* their offset in text, 0: none */
	unsigned char nr_tasks;
	unsigned char flags;      /* aj_owned_facts.flags */
	unsigned char deleting;
	char text[];
};

#define POOL_BLOCK (64 * 1024)
#define POOL_GRAIN 16
/* Room at the start of a block for its link, keeping records aligned. */
#define POOL_HEAD POOL_GRAIN
/* How many classes larger a reused record may be. */
#define POOL_SLACK 3

/* Blocks and freed records are linked through their first word. */
struct pool_link {
	struct pool_link *next;
};

static size_t class_of(size_t size)
{
	return (size + POOL_GRAIN - 1) / POOL_GRAIN;
}

static void *pool_alloc(struct aj_cache_pool *p, size_t size)
{
	size_t i, cls = class_of(size);
	void *r;

	if (cls > AJ_CACHE_CLASSES) {
		r = aj_malloc(size);
		if (r)
			p->bytes += size;
		return r;
	}
	/* A freed record of this size or a little larger (sizes drift by a few bytes). */
	for (i = cls; i <= cls + POOL_SLACK && i <= AJ_CACHE_CLASSES; i++)
		if ((r = p->free[i - 1])) {
			p->free[i - 1] = ((struct pool_link *)r)->next;
			p->free_bytes -= i * POOL_GRAIN;
			return r;
		}
	if (p->tail_left < cls * POOL_GRAIN) {
		struct pool_link *b = aj_malloc(POOL_BLOCK);

		if (!b)
			return NULL;
		b->next = p->blocks;
		p->blocks = b;
		p->tail = (char *)b + POOL_HEAD;
		p->tail_left = POOL_BLOCK - POOL_HEAD;
		p->bytes += POOL_BLOCK;
		p->block_bytes += POOL_BLOCK;
	}
	r = p->tail;
	p->tail += cls * POOL_GRAIN;
	p->tail_left -= cls * POOL_GRAIN;
	return r;
}

static void pool_free(struct aj_cache_pool *p, void *r, size_t size)
{
	size_t cls = class_of(size);

	if (!r)
		return;
	if (cls > AJ_CACHE_CLASSES) {
		p->bytes -= size;
		aj_free(r);
		return;
	}
	((struct pool_link *)r)->next = p->free[cls - 1];
	p->free[cls - 1] = r;
	p->free_bytes += cls * POOL_GRAIN;
}

/* Free a chain of blocks. */
static void blocks_free(struct pool_link *b)
{
	struct pool_link *next;

	while (b) {
		next = b->next;
		aj_free(b);
		b = next;
	}
}

static void pool_release(struct aj_cache_pool *p)
{
	blocks_free(p->blocks);
	memset(p, 0, sizeof(*p));
}

/* --- tables --- */

static struct aj_cache_rec tombstone;

static uint32_t key_hash(const char *key)
{
	uint64_t h = 1469598103934665603ull;

	while (*key)
		h = (h ^ (unsigned char)*key++) * 1099511628211ull;
	return (uint32_t)(h ^ (h >> 32));
}

/* The slot holding key, or the free slot where it would go. */
static size_t table_find(const struct aj_cache_table *t, const char *key, uint32_t hash)
{
	size_t mask = t->cap - 1, i = hash & mask, free_at = t->cap;

	for (;; i = (i + 1) & mask) {
		struct aj_cache_rec *r = t->slots[i];

		if (!r)
			return free_at < t->cap ? free_at : i;
		if (r == &tombstone) {
			if (free_at == t->cap)
				free_at = i;
		} else if (r->hash == hash && !strcmp(r->key, key)) {
			return i;
		}
	}
}

static int table_grow(struct aj_cache_table *t)
{
	struct aj_cache_table n = { NULL, t->cap ? t->cap : 16, t->nr, t->nr };
	size_t i;

	/* Double when full of live records; otherwise just drop the tombstones. */
	while ((n.nr + 1) * 3 > n.cap * 2)
		n.cap *= 2;
	n.slots = aj_calloc(n.cap, sizeof(*n.slots));
	if (!n.slots)
		return -1;
	for (i = 0; i < t->cap; i++) {
		struct aj_cache_rec *r = t->slots[i];
		size_t j;

		if (!r || r == &tombstone)
			continue;
		for (j = r->hash & (n.cap - 1); n.slots[j]; j = (j + 1) & (n.cap - 1))
			;
		n.slots[j] = r;
	}
	aj_free(t->slots);
	*t = n;
	return 0;
}

static struct aj_cache_rec *table_get(const struct aj_cache_table *t, const char *key)
{
	struct aj_cache_rec *r;

	if (!t->cap)
		return NULL;
	r = t->slots[table_find(t, key, key_hash(key))];
	return r == &tombstone ? NULL : r;
}

/* Insert or replace; *old receives a replaced record. 0 / -1. */
static int table_put(struct aj_cache_table *t, struct aj_cache_rec *rec,
		     struct aj_cache_rec **old)
{
	size_t i;

	*old = NULL;
	if ((t->used + 1) * 4 > t->cap * 3 && table_grow(t))
		return -1;
	i = table_find(t, rec->key, rec->hash);
	if (t->slots[i] && t->slots[i] != &tombstone) {
		*old = t->slots[i];
	} else {
		if (!t->slots[i])
			t->used++;
		t->nr++;
	}
	t->slots[i] = rec;
	return 0;
}

static struct aj_cache_rec *table_take(struct aj_cache_table *t, const char *key)
{
	struct aj_cache_rec *r;
	size_t i;

	if (!t->cap)
		return NULL;
	i = table_find(t, key, key_hash(key));
	r = t->slots[i];
	if (!r || r == &tombstone)
		return NULL;
	t->slots[i] = &tombstone;
	t->nr--;
	return r;
}

/* The records of a kind: 0 the AjJobs, then the owned objects by slot. */
static struct aj_cache_table *table_of(struct aj_cache *c, size_t t)
{
	return t == 0 ? &c->ajjobs : &c->owned[t - 1];
}

static struct aj_cache_table *kind_table(struct aj_cache *c, enum aj_cache_kind kind)
{
	return kind == AJ_CACHE_AJJOBS ? &c->ajjobs : &c->owned[kind - AJ_CACHE_OWNED];
}

/*
 * Move every record into fresh blocks once an eighth of the blocks is freed
 * records: sizes drift as an AjJob goes through its phases, and a freed
 * record serves only one of about its size or a little smaller. (At a
 * third, AjJobs listed before they were submitted left their first records
 * freed beside the later ones for good: a third of the blocks.) A move
 * copies the live records, at most eight bytes per byte freed. Table slots
 * are the only references to records, so moving is copying and repointing
 * the slot. Called with the lock held.
 */
static void pool_compact(struct aj_cache *c)
{
	struct aj_cache_pool *p = &c->pool, n;
	struct pool_link *last;
	size_t t, i;

	if (p->free_bytes < POOL_BLOCK || p->free_bytes * 8 < p->block_bytes)
		return;
	memset(&n, 0, sizeof(n));
	for (t = 0; t <= AJ_RUNNERS_MAX; t++)
		for (i = 0; i < table_of(c, t)->cap; i++) {
			struct aj_cache_rec *r = table_of(c, t)->slots[i], *m;

			if (!r || r == &tombstone || class_of(r->size) > AJ_CACHE_CLASSES)
				continue;
			if (!(m = pool_alloc(&n, r->size)))
				goto keep_both;
			memcpy(m, r, r->size);
			m->key = (char *)m + ((const char *)r->key - (const char *)r);
			table_of(c, t)->slots[i] = m;
			pool_free(p, r, r->size);
		}
	blocks_free(p->blocks);
	n.bytes += p->bytes - p->block_bytes;   /* records outside the blocks stay */
	*p = n;
	return;
keep_both:
	/* Out of memory part way: both sets of blocks stay; moved records left free room. */
	if (!n.blocks)
		return;
	for (last = n.blocks; last->next; last = last->next)
		;
	last->next = p->blocks;
	p->blocks = n.blocks;
	p->bytes += n.block_bytes;
	p->block_bytes += n.block_bytes;
}

/* --- records --- */

int aj_cache_init(struct aj_cache *c)
{
	memset(c, 0, sizeof(*c));
	aj_strmap_init(&c->templates);
	return pthread_mutex_init(&c->lock, NULL) ? -1 : 0;
}

/* Free a record of either kind (the AjJob's own allocations too). */
static void rec_free(struct aj_cache *c, enum aj_cache_kind kind, struct aj_cache_rec *r)
{
	if (!r)
		return;
	if (kind == AJ_CACHE_AJJOBS) {
		struct ajjob_rec *e = (struct ajjob_rec *)r;

		if (e->object)
			c->object_bytes -= strlen(e->object) + 1;
		aj_free(e->object);
		aj_free(e->detail);
	}
	pool_free(&c->pool, r, r->size);
}

static void table_release(struct aj_cache *c, enum aj_cache_kind kind, struct aj_cache_table *t)
{
	size_t i;

	for (i = 0; i < t->cap; i++)
		if (t->slots[i] && t->slots[i] != &tombstone)
			rec_free(c, kind, t->slots[i]);
	aj_free(t->slots);
	memset(t, 0, sizeof(*t));
}

void aj_cache_release(struct aj_cache *c)
{
	size_t pos = 0, i;
	const char *k;
	void *v;

	table_release(c, AJ_CACHE_AJJOBS, &c->ajjobs);
	for (i = 0; i < AJ_RUNNERS_MAX; i++)
		table_release(c, AJ_CACHE_OWNED + i, &c->owned[i]);
	pool_release(&c->pool);
	while (aj_strmap_next(&c->templates, &pos, &k, &v))
		cJSON_Delete(v);
	aj_strmap_release(&c->templates);
	pthread_mutex_destroy(&c->lock);
}

/* NULL stays NULL; otherwise a copy, with *oom set when it fails. */
static char *dup_or_null(const char *s, int *oom)
{
	char *r;

	if (!s)
		return NULL;
	r = aj_strdup(s);
	if (!r)
		*oom = 1;
	return r;
}

int aj_cache_key(const cJSON *obj, char *out, size_t size)
{
	const cJSON *meta = aj_json_get(obj, "metadata");
	const char *ns = aj_json_str(meta, "namespace"), *name = aj_json_str(meta, "name");
	int n;

	if (!name)
		return -1;
	n = snprintf(out, size, "%s/%s", ns ? ns : "", name);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

/*
 * A uid as Kubernetes makes them (a lowercase UUID) is kept in 21 bytes of
 * text instead of 37: UID_PACKED, then its 128 bits 7 to a byte with the
 * high bit set, so no byte is NUL and it is one string like the others
 * (the API server's uids are UUIDs; none starts with UID_PACKED).
 */
#define UID_PACKED '\x01'
#define UID_SIZE 37
#define UID_PACKED_SIZE 21

/*
 * A record's strings, laid out after its fixed part: measure with out NULL,
 * then copy. Equal strings are stored once.
 */
struct text {
	char *out;
	size_t len;
	/* an AjJob's key, uid, resourceVersion, job, renewal, backend, reason, condition times */
	const char *s[8 + AJ_STATUS_CONDITIONS];
	uint32_t at[8 + AJ_STATUS_CONDITIONS];
	char uid[8 + AJ_STATUS_CONDITIONS][UID_PACKED_SIZE];   /* packed uids, by index in s */
	size_t n;
};

/* Bit i (from the most significant) of a 16-byte value. */
static unsigned uid_bit(const unsigned char v[16], size_t i)
{
	return i < 128 ? (v[i / 8] >> (7 - i % 8)) & 1u : 0;
}

/* s packed into out, or NULL when s is not a lowercase UUID. */
static const char *uid_pack(const char *s, char out[UID_PACKED_SIZE])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char v[16] = { 0 };
	const char *d;
	size_t i, n = 0, j;

	if (!s || strlen(s) != UID_SIZE - 1)
		return NULL;
	for (i = 0; i < UID_SIZE - 1; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return NULL;
		} else if (!(d = strchr(hex, s[i])) || !s[i]) {
			return NULL;
		} else {
			v[n / 2] |= (unsigned char)((d - hex) << (n % 2 ? 0 : 4));
			n++;
		}
	}
	out[0] = UID_PACKED;
	for (i = 0; i < UID_PACKED_SIZE - 2; i++) {
		unsigned b = 0;

		for (j = 0; j < 7; j++)
			b = b << 1 | uid_bit(v, i * 7 + j);
		out[i + 1] = (char)(0x80 | b);
	}
	out[UID_PACKED_SIZE - 1] = 0;
	return out;
}

/* A uid as stored (packed or not) as its text, in out when packed. */
static const char *uid_text(const char *s, char out[UID_SIZE])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char v[16] = { 0 };
	size_t i, n = 0;

	if (!s || s[0] != UID_PACKED || strlen(s) != UID_PACKED_SIZE - 1)
		return s;
	for (i = 0; i < 128; i++)
		if (((unsigned char)s[1 + i / 7] >> (6 - i % 7)) & 1u)
			v[i / 8] |= (unsigned char)(0x80u >> (i % 8));
	for (i = 0; i < UID_SIZE - 1; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			out[i] = '-';
			continue;
		}
		out[i] = hex[n % 2 ? v[n / 2] & 15 : v[n / 2] >> 4];
		n++;
	}
	out[UID_SIZE - 1] = 0;
	return out;
}

/* A copy of a stored uid's text (NULL stays NULL), with *oom set when it fails. */
static char *uid_dup(const char *s, int *oom)
{
	char buf[UID_SIZE];

	return dup_or_null(uid_text(s, buf), oom);
}

/* Offset of s in the text (0 for NULL). */
static uint32_t text_add(struct text *t, const char *s)
{
	size_t i, n;

	if (!s)
		return 0;
	for (i = 0; i < t->n; i++)
		if (!strcmp(t->s[i], s))
			return t->at[i];
	n = strlen(s) + 1;
	if (t->out)
		memcpy(t->out + t->len, s, n);
	t->s[t->n] = s;
	t->at[t->n++] = (uint32_t)t->len;
	t->len += n;
	return t->at[t->n - 1];
}

/* text_add() for a uid, packed when it is a lowercase UUID. */
static uint32_t text_add_uid(struct text *t, const char *uid)
{
	const char *packed = t->n < sizeof(t->uid) / sizeof(t->uid[0])
			     ? uid_pack(uid, t->uid[t->n]) : NULL;

	return text_add(t, packed ? packed : uid);
}

/* A record whose text starts at `head`, with room for `len` bytes of it. */
/*
 * A record being built, whose text starts at `head`, with room for `len`
 * bytes of it. It is built in memory of its own and copied into the blocks
 * by store(), under the lock: blocks may move while it is being built.
 */
static struct aj_cache_rec *rec_new(size_t head, size_t len, const char *key)
{
	struct aj_cache_rec *r;
	size_t size = head + len;

	if (len > UINT32_MAX / 2 || !(r = aj_malloc(size)))
		return NULL;
	memset(r, 0, head);
	r->size = (uint32_t)size;
	r->hash = key_hash(key);
	r->key = (char *)r + head;
	return r;
}

/* What the controller noted on the record an update replaces, if same AjJob. */
static void keep_notes(struct ajjob_rec *e, const struct ajjob_rec *old)
{
	if (e->uid && old->uid && !strcmp(e->text + e->uid, old->text + old->uid)) {
		e->storage_due = old->storage_due;
		e->reason_due = old->reason_due;
	}
}

/*
 * Store a freshly built record (freed here). A missing one (out of memory)
 * drops the old record too: a missing entry is refetched by the next event,
 * a stale one would be trusted.
 */
static int store(struct aj_cache *c, enum aj_cache_kind kind, const char *key,
		 struct aj_cache_rec *built)
{
	struct aj_cache_table *t = kind_table(c, kind);
	struct aj_cache_rec *old = NULL, *rec = NULL;
	int r = -1;

	pthread_mutex_lock(&c->lock);
	if (built && (rec = pool_alloc(&c->pool, built->size))) {
		memcpy(rec, built, built->size);
		rec->key = (char *)rec + ((const char *)built->key - (const char *)built);
		if (kind == AJ_CACHE_AJJOBS && ((struct ajjob_rec *)rec)->object)
			c->object_bytes += strlen(((struct ajjob_rec *)rec)->object) + 1;
		r = table_put(t, rec, &old);
		if (!r && old && kind == AJ_CACHE_AJJOBS)
			keep_notes((struct ajjob_rec *)rec, (const struct ajjob_rec *)old);
	} else if (built && kind == AJ_CACHE_AJJOBS) {
		/* Its own allocations go with it. */
		aj_free(((struct ajjob_rec *)built)->object);
		aj_free(((struct ajjob_rec *)built)->detail);
	}
	if (r) {
		old = table_take(t, key);
		rec_free(c, kind, rec);
	}
	rec_free(c, kind, old);
	pool_compact(c);
	pthread_mutex_unlock(&c->lock);
	aj_free(built);
	return r;
}

static void remove_rec(struct aj_cache *c, enum aj_cache_kind kind, const char *key)
{
	pthread_mutex_lock(&c->lock);
	rec_free(c, kind, table_take(kind_table(c, kind), key));
	pool_compact(c);
	pthread_mutex_unlock(&c->lock);
}

/* The first condition of each type aj_status_next() writes. */
static void conditions_of(const cJSON *status, const cJSON *found[AJ_STATUS_CONDITIONS])
{
	const cJSON *cond;
	size_t i;

	memset(found, 0, sizeof(*found) * AJ_STATUS_CONDITIONS);
	cJSON_ArrayForEach(cond, aj_json_get(status, "conditions")) {
		const char *type = aj_json_str(cond, "type");

		for (i = 0; type && i < AJ_STATUS_CONDITIONS; i++)
			if (!found[i] && !strcmp(type, aj_status_conditions[i]))
				found[i] = cond;
	}
}

/* Is status member `name` one the cache keeps whole (aj_cache.whole)? */
static int kept_whole(const struct aj_cache *c, const char *name)
{
	size_t i;

	for (i = 0; i < AJ_RUNNERS_MAX && c->whole[i]; i++)
		if (!strcmp(c->whole[i], name))
			return 1;
	return 0;
}

/*
 * The status member naming the object the AjJob owns: the first object with
 * a jobName, except those kept whole (they say more).
 */
static const cJSON *owned_member(const struct aj_cache *c, const cJSON *status)
{
	const cJSON *m;

	cJSON_ArrayForEach(m, status)
		if (cJSON_IsObject(m) && m->string && !kept_whole(c, m->string) &&
		    aj_json_str(m, "jobName"))
			return m;
	return NULL;
}

/* The status members kept whole, as {name: value, ...} in compact JSON; NULL when none (*oom). */
static char *whole_member(const struct aj_cache *c, const cJSON *status, int *oom)
{
	const cJSON *m;
	cJSON *wrap = NULL, *copy;
	char *text;

	cJSON_ArrayForEach(m, status) {
		if (!m->string || !kept_whole(c, m->string))
			continue;
		if (!wrap && !(wrap = cJSON_CreateObject()))
			goto oom;
		copy = cJSON_Duplicate(m, 1);
		if (!copy || !cJSON_AddItemToObject(wrap, m->string, copy)) {
			cJSON_Delete(copy);
			goto oom;
		}
	}
	if (!wrap)
		return NULL;
	text = cJSON_PrintUnformatted(wrap);
	cJSON_Delete(wrap);
	*oom |= !text;
	return text;
oom:
	cJSON_Delete(wrap);
	*oom = 1;
	return NULL;
}

/* 1 + the index of status member `name` in c->members, added if new; 0 when full. */
static unsigned char member_index(struct aj_cache *c, const char *name)
{
	size_t i;
	unsigned char r = 0;

	pthread_mutex_lock(&c->lock);
	for (i = 0; i < AJ_CACHE_MEMBERS && c->members[i][0]; i++)
		if (!strcmp(c->members[i], name))
			break;
	if (i < AJ_CACHE_MEMBERS && (c->members[i][0] || strlen(name) < sizeof(c->members[i]))) {
		if (!c->members[i][0])
			memcpy(c->members[i], name, strlen(name) + 1);
		r = (unsigned char)(i + 1);
	}
	pthread_mutex_unlock(&c->lock);
	return r;
}

/*
 * A time as Kubernetes writes it (metav1.Time: "YYYY-MM-DDThh:mm:ssZ") as
 * Unix seconds, which aj_timestamp_format() gives back alike; 0 for any
 * other text.
 */
static uint32_t kube_time(const char *s)
{
	char back[AJ_TIMESTAMP_SIZE];
	long long t = aj_timestamp_parse(s, 0);

	if (t <= 0 || t > UINT32_MAX)
		return 0;
	aj_timestamp_format((time_t)t, back);
	return strcmp(back, s) ? 0 : (uint32_t)t;
}

/* Lay out an AjJob's strings (measure when t->out is NULL); sets COND_TIME_TEXT alone in cond. */
static void ajjob_text(struct text *t, struct ajjob_rec *e, const char *key, const cJSON *member,
		       const cJSON *meta, const cJSON *status, const cJSON *const conds[AJ_STATUS_CONDITIONS])
{
	size_t i;

	t->len = 0;
	t->n = 0;
	text_add(t, key);
	e->uid = text_add_uid(t, aj_json_str(meta, "uid"));
	e->resource_version = text_add(t, aj_json_str(meta, "resourceVersion"));
	e->job = text_add(t, aj_json_str(member, "jobName"));
	e->renew_after = text_add(t, aj_json_str(member, AJ_STATUS_RENEW));
	e->backend = text_add(t, aj_json_str(status, "backend"));
	e->unschedulable = text_add(t, aj_json_str(conds[AJ_COND_UNSCHEDULABLE], "message"));
	for (i = 0; i < AJ_STATUS_CONDITIONS; i++) {
		const char *since = aj_json_str(conds[i], "lastTransitionTime");

		e->since[i] = kube_time(since);
		e->cond[i] = e->since[i] ? 0 : COND_TIME_TEXT;
		if (!e->since[i])
			e->since[i] = text_add(t, since);
	}
}

int aj_cache_ajjob_put(struct aj_cache *c, cJSON *obj)
{
	const cJSON *meta = aj_json_get(obj, "metadata"), *status = aj_json_get(obj, "status");
	const cJSON *gen = aj_json_get(meta, "generation");
	const cJSON *obs = aj_json_get(status, "observedGeneration");
	const cJSON *conds[AJ_STATUS_CONDITIONS], *owned;
	const char *cancel = aj_json_str(aj_json_get(meta, "annotations"), "aj.dev/cancel");
	struct ajjob_rec probe, *e;
	struct text t;
	enum aj_phase phase = AJ_PHASE_PENDING;
	char key[320];
	size_t i;
	unsigned member;
	long long created;
	int oom = 0;

	if (aj_cache_key(obj, key, sizeof(key))) {
		cJSON_Delete(obj);
		return -1;
	}
	if (!cJSON_IsObject(status))
		status = NULL;
	owned = owned_member(c, status);
	conditions_of(status, conds);
	memset(&t, 0, sizeof(t));
	ajjob_text(&t, &probe, key, owned, meta, status, conds);
	e = (struct ajjob_rec *)rec_new(offsetof(struct ajjob_rec, text), t.len, key);
	if (e) {
		t.out = e->text;
		ajjob_text(&t, e, key, owned, meta, status, conds);
		/* whole numbers a double holds exactly */
		e->generation = aj_json_whole(gen, 9007199254740992.0, 0);
		e->observed_generation = aj_json_whole(obs, 9007199254740992.0, -1);
		e->storage_due = AJ_CACHE_DUE_UNKNOWN;
		e->retry_count = (int32_t)aj_json_whole(aj_json_get(status, "retryCount"),
							2147483647.0, 0);
		created = aj_timestamp_parse(aj_json_str(meta, "creationTimestamp"), 0);
		e->created = created > 0 && created <= UINT32_MAX ? (uint32_t)created : 0;
		e->ttl = (int32_t)aj_json_whole(aj_json_get(aj_json_get(obj, "spec"), AJ_AJJOB_TTL),
						2147483647.0, -1);
		member = e->job ? member_index(c, owned->string) : 0;
		if (!member)
			e->job = 0;   /* no room to say where it was: as if not submitted */
		e->flags |= (unsigned char)(member << MEMBER_SHIFT);
		if (!aj_phase_parse(aj_json_str(status, "phase"), &phase)) {
			e->flags |= FLAG_HAS_PHASE;
			e->phase = (unsigned char)phase;
		}
		if (aj_json_str(meta, "deletionTimestamp"))
			e->flags |= FLAG_DELETING;
		if (cancel && !strcmp(cancel, "true"))
			e->flags |= FLAG_CANCEL;
		for (i = 0; i < AJ_STATUS_CONDITIONS; i++) {
			const char *cs = aj_json_str(conds[i], "status");

			e->cond[i] |= !conds[i] ? COND_NONE : !cs ? COND_OTHER
				     : !strcmp(cs, "True") ? COND_TRUE
				     : !strcmp(cs, "False") ? COND_FALSE : COND_OTHER;
		}
		if (status) {
			e->flags |= FLAG_HAS_STATUS;
			e->status_hash = aj_cache_json_hash(status);
			e->detail = whole_member(c, status, &oom);
		}
		/* Once submitted for this generation only the summary is needed. */
		if (!(e->flags & FLAG_HAS_PHASE) || phase == AJ_PHASE_PENDING ||
		    e->observed_generation != e->generation) {
			e->object = cJSON_PrintUnformatted(obj);
			oom |= !e->object;
		}
	}
	cJSON_Delete(obj);
	if (e && oom) {
		aj_free(e->object);
		aj_free(e->detail);
		aj_free(e);
		e = NULL;
	}
	return store(c, AJ_CACHE_AJJOBS, key, e ? &e->h : NULL);
}

void aj_cache_ajjob_delete(struct aj_cache *c, const char *key)
{
	remove_rec(c, AJ_CACHE_AJJOBS, key);
}

/* Set the storage note (or the reason one) of the AjJob's record. */
static int set_note(struct aj_cache *c, const char *key, int reason, long long due)
{
	struct ajjob_rec *e;

	pthread_mutex_lock(&c->lock);
	e = (struct ajjob_rec *)table_get(&c->ajjobs, key);
	if (e && reason)
		e->reason_due = due > 0 && due <= UINT32_MAX ? (uint32_t)due : 0;
	else if (e)
		e->storage_due = due;
	pthread_mutex_unlock(&c->lock);
	return e != NULL;
}

int aj_cache_ajjob_set_storage_due(struct aj_cache *c, const char *key, long long due)
{
	return set_note(c, key, 0, due);
}

int aj_cache_ajjob_set_reason_due(struct aj_cache *c, const char *key, long long due)
{
	return set_note(c, key, 1, due);
}

void aj_ajjob_view_release(struct aj_ajjob_view *v)
{
	aj_free(v->ns);
	aj_free(v->name);
	aj_free(v->uid);
	aj_free(v->resource_version);
	aj_free(v->job);
	aj_free(v->unschedulable);
	cJSON_Delete(v->object);
	cJSON_Delete(v->status);
	memset(v, 0, sizeof(*v));
}

static const char *at(const char *text, uint32_t off)
{
	return off ? text + off : NULL;
}

/* The parts of the status aj_status_next() reads, rebuilt from the record. */
static cJSON *status_basis(const struct aj_cache *c, const struct ajjob_rec *e)
{
	static const char *const cond_status[] = { NULL, "True", "False", "Unknown" };
	cJSON *s = cJSON_CreateObject(), *list, *cond, *member, *whole, *m;
	char when[AJ_TIMESTAMP_SIZE];
	const char *since;
	size_t i;

	if (!s || ((e->flags & FLAG_HAS_PHASE) &&
		   !cJSON_AddStringToObject(s, "phase", aj_phase_name((enum aj_phase)e->phase))) ||
	    (e->backend && !cJSON_AddStringToObject(s, "backend", e->text + e->backend)) ||
	    (e->observed_generation >= 0 &&
	     !cJSON_AddNumberToObject(s, "observedGeneration", (double)e->observed_generation)) ||
	    (e->retry_count > 0 &&
	     !cJSON_AddNumberToObject(s, "retryCount", (double)e->retry_count)) ||
	    !(list = cJSON_AddArrayToObject(s, "conditions")))
		goto fail;
	for (i = 0; i < AJ_STATUS_CONDITIONS; i++) {
		if (COND_OF(e, i) == COND_NONE)
			continue;
		since = e->cond[i] & COND_TIME_TEXT ? at(e->text, e->since[i]) : when;
		if (!(e->cond[i] & COND_TIME_TEXT))
			aj_timestamp_format((time_t)e->since[i], when);
		cond = cJSON_CreateObject();
		if (!cond || !cJSON_AddItemToArray(list, cond)) {
			cJSON_Delete(cond);
			goto fail;
		}
		if (!cJSON_AddStringToObject(cond, "type", aj_status_conditions[i]) ||
		    !cJSON_AddStringToObject(cond, "status", cond_status[COND_OF(e, i)]) ||
		    (since && !cJSON_AddStringToObject(cond, "lastTransitionTime", since)) ||
		    (i == AJ_COND_UNSCHEDULABLE && e->unschedulable &&
		     !cJSON_AddStringToObject(cond, "message", e->text + e->unschedulable)))
			goto fail;
	}
	if (e->job && (!(member = cJSON_AddObjectToObject(s, c->members[MEMBER_OF(e) - 1])) ||
		       !cJSON_AddStringToObject(member, "jobName", e->text + e->job) ||
		       (e->renew_after &&
			!cJSON_AddStringToObject(member, AJ_STATUS_RENEW, e->text + e->renew_after))))
		goto fail;
	if (e->detail) {
		/* {member: value}: the member moves into s */
		if (!(whole = cJSON_Parse(e->detail)))
			goto fail;
		while ((m = whole->child)) {
			cJSON_DetachItemViaPointer(whole, m);
			if (!cJSON_AddItemToObject(s, m->string, m)) {
				cJSON_Delete(m);
				cJSON_Delete(whole);
				goto fail;
			}
		}
		cJSON_Delete(whole);
	}
	return s;
fail:
	cJSON_Delete(s);
	return NULL;
}

int aj_cache_ajjob_get(struct aj_cache *c, const char *key, struct aj_ajjob_view *v)
{
	const struct ajjob_rec *e;
	const char *slash = strchr(key, '/');
	int oom = 0, found;
	size_t i;

	memset(v, 0, sizeof(*v));
	if (!slash)
		return 0;
	pthread_mutex_lock(&c->lock);
	e = (const struct ajjob_rec *)table_get(&c->ajjobs, key);
	found = e != NULL;
	if (found) {
		v->ns = aj_strndup(key, (size_t)(slash - key));
		v->name = aj_strdup(slash + 1);
		oom = !v->ns || !v->name;
		v->uid = uid_dup(at(e->text, e->uid), &oom);
		v->resource_version = dup_or_null(at(e->text, e->resource_version), &oom);
		v->generation = e->generation;
		v->observed_generation = e->observed_generation;
		v->has_phase = !!(e->flags & FLAG_HAS_PHASE);
		v->phase = (enum aj_phase)e->phase;
		v->deleting = !!(e->flags & FLAG_DELETING);
		v->cancel = !!(e->flags & FLAG_CANCEL);
		v->job = dup_or_null(at(e->text, e->job), &oom);
		v->storage_due = e->storage_due;
		v->reason_due = e->reason_due;
		v->created = e->created;
		v->ttl = e->ttl;
		v->unschedulable = dup_or_null(at(e->text, e->unschedulable), &oom);
		for (i = 0; i < AJ_STATUS_CONDITIONS; i++)
			if (COND_OF(e, i) == COND_TRUE)
				v->conditions |= 1u << i;
		if (e->object && !(v->object = cJSON_Parse(e->object)))
			oom = 1;
		if (e->flags & FLAG_HAS_STATUS) {
			v->status_hash = e->status_hash;
			if (!(v->status = status_basis(c, e)))
				oom = 1;
		}
	}
	pthread_mutex_unlock(&c->lock);
	if (oom) {
		aj_ajjob_view_release(v);
		return -1;
	}
	return found;
}

void aj_cache_ajjob_phases(struct aj_cache *c,
			   void (*fn)(void *ctx, const char *backend, enum aj_phase phase), void *ctx)
{
	size_t i;

	pthread_mutex_lock(&c->lock);
	for (i = 0; i < c->ajjobs.cap; i++) {
		const struct ajjob_rec *e = (const struct ajjob_rec *)c->ajjobs.slots[i];

		if (!e || (const struct aj_cache_rec *)e == &tombstone)
			continue;
		fn(ctx, at(e->text, e->backend),
		   (e->flags & FLAG_HAS_PHASE) ? (enum aj_phase)e->phase : AJ_PHASE_PENDING);
	}
	pthread_mutex_unlock(&c->lock);
}

int aj_cache_ajjob_ended(struct aj_cache *c, const char *key)
{
	const struct ajjob_rec *e;
	int ended;

	pthread_mutex_lock(&c->lock);
	e = (const struct ajjob_rec *)table_get(&c->ajjobs, key);
	ended = e && (e->flags & FLAG_HAS_PHASE) && aj_phase_terminal((enum aj_phase)e->phase);
	pthread_mutex_unlock(&c->lock);
	return ended;
}

size_t aj_cache_ajjob_count(struct aj_cache *c)
{
	size_t n;

	pthread_mutex_lock(&c->lock);
	n = c->ajjobs.nr;
	pthread_mutex_unlock(&c->lock);
	return n;
}

size_t aj_cache_bytes(struct aj_cache *c)
{
	size_t n, i;

	pthread_mutex_lock(&c->lock);
	n = c->pool.bytes + c->object_bytes +
	    c->ajjobs.cap * sizeof(struct aj_cache_rec *);
	for (i = 0; i < AJ_RUNNERS_MAX; i++)
		n += c->owned[i].cap * sizeof(struct aj_cache_rec *);
	pthread_mutex_unlock(&c->lock);
	return n;
}

static uint64_t mix(uint64_t h)
{
	/* splitmix64's finaliser: every input bit reaches every output bit. */
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebull;
	return h ^ (h >> 31);
}

static uint64_t str_hash(const char *s, uint64_t h)
{
	while (s && *s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return mix(h);
}

uint64_t aj_cache_json_hash(const cJSON *v)
{
	const cJSON *c;
	uint64_t h, bits;
	double d;

	if (!v)
		return 0;
	switch (v->type & 0xff) {
	case cJSON_False:
		return mix(1);
	case cJSON_True:
		return mix(2);
	case cJSON_NULL:
		return mix(3);
	case cJSON_Number:
		d = v->valuedouble == 0 ? 0 : v->valuedouble;   /* -0 is 0 */
		memcpy(&bits, &d, sizeof(bits));
		return mix(bits ^ 4);
	case cJSON_String:
	case cJSON_Raw:
		return str_hash(v->valuestring, 5);
	case cJSON_Array:
		h = mix(6);
		cJSON_ArrayForEach(c, v)
			h = mix(h + aj_cache_json_hash(c));
		return h;
	case cJSON_Object:
		/* A sum of member hashes: the same whatever the members' order. */
		h = mix(7);
		cJSON_ArrayForEach(c, v)
			h += mix(str_hash(c->string, 8) ^ aj_cache_json_hash(c));
		return h;
	default:
		return mix(9);
	}
}

/* The ownerReference with controller: true and kind AjJob, if any. */
static const cJSON *controller_ref(const cJSON *obj)
{
	const cJSON *ref;

	cJSON_ArrayForEach(ref, aj_json_get(aj_json_get(obj, "metadata"), "ownerReferences")) {
		const char *kind = aj_json_str(ref, "kind");

		if (cJSON_IsTrue(aj_json_get(ref, "controller")) && kind && !strcmp(kind, "AjJob"))
			return ref;
	}
	return NULL;
}

/* v as 7 bits a byte, low first, into out (NULL: measure). Its length. */
static size_t varint_put(unsigned char *out, unsigned long long v)
{
	size_t n = 0;

	do {
		if (out)
			out[n] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		n++;
		v >>= 7;
	} while (v);
	return n;
}

/* A varint from *p (before end) into *v; 0, or -1 when it runs past end. */
static int varint_get(const unsigned char **p, const unsigned char *end, long long *v)
{
	unsigned long long r = 0;
	unsigned shift = 0;

	while (*p < end && shift < 63) {
		unsigned char b = *(*p)++;

		r |= (unsigned long long)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = (long long)r;
			return 0;
		}
		shift += 7;
	}
	return -1;
}

/*
 * The tasks of f into out (NULL: measure), each its name, NUL, a byte with
 * bit j set for each of replicas to failed that is not 0, and those as
 * varints (most are 0: a task's pods are mostly in one state). Its length.
 */
static size_t tasks_encode(char *out, const struct aj_owned_facts *f)
{
	size_t i, j, len = 0;

	for (i = 0; i < f->nr_tasks; i++) {
		const struct aj_task_pods *t = &f->tasks[i];
		const long long v[5] = { t->replicas, t->pending, t->running, t->succeeded,
					 t->failed };
		size_t n = strlen(t->name) + 1, mask_at;
		unsigned char mask = 0;

		if (out)
			memcpy(out + len, t->name, n);
		len += n;
		mask_at = len++;
		for (j = 0; j < 5; j++)
			if (v[j] > 0) {
				mask |= (unsigned char)(1u << j);
				len += varint_put(out ? (unsigned char *)out + len : NULL,
						  (unsigned long long)v[j]);
			}
		if (out)
			out[mask_at] = (char)mask;
	}
	return len;
}

static void owned_text(struct text *t, struct owned_rec *e, const char *key, const cJSON *obj,
		       const struct aj_owned_facts *f)
{
	const cJSON *ref = controller_ref(obj);
	size_t i, nr = f->nr_tasks < AJ_TASKS_MAX ? f->nr_tasks : AJ_TASKS_MAX;

	t->len = 0;
	t->n = 0;
	text_add(t, key);
	e->uid = text_add_uid(t, aj_json_str(aj_json_get(obj, "metadata"), "uid"));
	e->owner_uid = text_add_uid(t, aj_json_str(ref, "uid"));
	e->owner_name = text_add(t, aj_json_str(ref, "name"));
	e->phase = text_add(t, f->phase);
	e->flags = (unsigned char)f->flags;
	e->deleting = aj_json_str(aj_json_get(obj, "metadata"), "deletionTimestamp") != NULL;
	for (i = 0; i < AJ_OWNED_NUMBERS; i++)
		e->n[i] = (int32_t)(f->n[i] < INT32_MIN ? INT32_MIN :
				    f->n[i] > INT32_MAX ? INT32_MAX : f->n[i]);
	e->tasks = 0;
	e->nr_tasks = 0;
	if (nr && t->len <= UINT16_MAX) {
		e->tasks = (uint16_t)t->len;
		e->nr_tasks = (unsigned char)nr;
		t->len += tasks_encode(t->out ? t->out + t->len : NULL, f);
	}
}

/* The record's tasks as a view's: one allocation, names inside. 0 / -1 (OOM). */
static int tasks_decode(const struct owned_rec *e, struct aj_owned_view *v)
{
	size_t area = e->h.size - offsetof(struct owned_rec, text) - e->tasks, i, j, n;
	const unsigned char *p, *end;
	unsigned char mask;
	char *names;

	if (!e->nr_tasks)
		return 0;
	v->tasks = aj_malloc(e->nr_tasks * sizeof(*v->tasks) + area);
	if (!v->tasks)
		return -1;
	names = (char *)(v->tasks + e->nr_tasks);
	memcpy(names, e->text + e->tasks, area);
	p = (const unsigned char *)names;
	end = p + area;
	for (i = 0; i < e->nr_tasks; i++) {
		struct aj_task_pods *t = &v->tasks[i];
		long long *f[5] = { &t->replicas, &t->pending, &t->running, &t->succeeded,
				    &t->failed };

		memset(t, 0, sizeof(*t));
		n = strnlen((const char *)p, (size_t)(end - p));
		if (n == (size_t)(end - p))
			break;   /* cannot be: the record was written by tasks_encode */
		t->name = (const char *)p;
		p += n + 1;
		mask = p < end ? *p++ : 0;
		for (j = 0; j < 5; j++)
			if ((mask & (1u << j)) && varint_get(&p, end, f[j]))
				break;
		if (j < 5)
			break;
	}
	v->nr_tasks = i;
	return 0;
}

int aj_cache_owned_put(struct aj_cache *c, size_t slot, cJSON *obj,
		       const struct aj_owned_facts *f)
{
	struct owned_rec probe, *e;
	struct text t;
	char key[320];

	if (slot >= AJ_RUNNERS_MAX || aj_cache_key(obj, key, sizeof(key))) {
		cJSON_Delete(obj);
		return -1;
	}
	memset(&t, 0, sizeof(t));
	owned_text(&t, &probe, key, obj, f);
	e = (struct owned_rec *)rec_new(offsetof(struct owned_rec, text), t.len, key);
	if (e) {
		t.out = e->text;
		owned_text(&t, e, key, obj, f);
	}
	cJSON_Delete(obj);
	return store(c, AJ_CACHE_OWNED + slot, key, e ? &e->h : NULL);
}

void aj_cache_owned_delete(struct aj_cache *c, size_t slot, const char *key)
{
	if (slot < AJ_RUNNERS_MAX)
		remove_rec(c, AJ_CACHE_OWNED + slot, key);
}

void aj_owned_view_release(struct aj_owned_view *v)
{
	aj_free(v->uid);
	aj_free(v->owner_uid);
	aj_free(v->owner_name);
	aj_free(v->phase);
	aj_free(v->tasks);
	memset(v, 0, sizeof(*v));
}

int aj_cache_owned_get(struct aj_cache *c, size_t slot, const char *key, struct aj_owned_view *v)
{
	const struct owned_rec *e;
	int oom = 0;
	size_t i;

	memset(v, 0, sizeof(*v));
	if (slot >= AJ_RUNNERS_MAX)
		return 0;
	pthread_mutex_lock(&c->lock);
	e = (const struct owned_rec *)table_get(&c->owned[slot], key);
	if (e) {
		v->uid = uid_dup(at(e->text, e->uid), &oom);
		v->owner_uid = uid_dup(at(e->text, e->owner_uid), &oom);
		v->owner_name = dup_or_null(at(e->text, e->owner_name), &oom);
		v->phase = dup_or_null(at(e->text, e->phase), &oom);
		v->flags = e->flags;
		v->deleting = e->deleting;
		for (i = 0; i < AJ_OWNED_NUMBERS; i++)
			v->n[i] = e->n[i];
		if (tasks_decode(e, v))
			oom = 1;
	}
	pthread_mutex_unlock(&c->lock);
	if (oom) {
		aj_owned_view_release(v);
		return -1;
	}
	return e != NULL;
}

int aj_cache_template_put(struct aj_cache *c, cJSON *obj)
{
	char key[320];
	cJSON *spec;
	void *old = NULL;

	if (aj_cache_key(obj, key, sizeof(key))) {
		cJSON_Delete(obj);
		return -1;
	}
	spec = cJSON_DetachItemFromObjectCaseSensitive(obj, "spec");
	cJSON_Delete(obj);
	if (!spec)
		spec = cJSON_CreateObject();
	pthread_mutex_lock(&c->lock);
	if (spec && aj_strmap_put(&c->templates, key, spec, &old)) {
		cJSON_Delete(spec);
		spec = NULL;
	}
	/* Keep nothing stale: a missing entry is refetched by the next event. */
	if (!spec)
		old = aj_strmap_remove(&c->templates, key, NULL);
	pthread_mutex_unlock(&c->lock);
	cJSON_Delete(old);
	return spec ? 0 : -1;
}

void aj_cache_template_delete(struct aj_cache *c, const char *key)
{
	cJSON *old;

	pthread_mutex_lock(&c->lock);
	old = aj_strmap_remove(&c->templates, key, NULL);
	pthread_mutex_unlock(&c->lock);
	cJSON_Delete(old);
}

/* AjTemplate "storage.default" names canonical "storage/default". */
static char *canonical_of(const char *name)
{
	char *r = aj_strdup(name), *dot;

	if (r && (dot = strchr(r, '.')))
		*dot = '/';
	return r;
}

int aj_cache_template_source(struct aj_cache *c, const char *ns,
			     struct aj_source *out, struct aj_errors *err)
{
	size_t pos = 0, nslen = strlen(ns);
	const char *key;
	void *spec;
	int r = 0;

	if (aj_source_memory_init(out, "AjTemplate"))
		return aj_errors_oom(err);
	pthread_mutex_lock(&c->lock);
	while (!r && aj_strmap_next(&c->templates, &pos, &key, &spec)) {
		struct aj_buf origin = AJ_BUF_INIT(AJ_BUF_SMALL);
		struct aj_node *doc = NULL;
		char *canonical;

		if (strncmp(key, ns, nslen) || key[nslen] != '/')
			continue;
		canonical = canonical_of(key + nslen + 1);
		aj_buf_addf(&origin, "AjTemplate %s", key);
		if (!canonical || origin.failed) {
			r = aj_errors_oom(err);
		} else if (aj_canonical_valid(canonical)) {
			/* A malformed AjTemplate fails the jobs that use it, not others. */
			struct aj_errors ignored = AJ_ERRORS_INIT;

			if (!aj_node_from_cjson(spec, aj_buf_cstr(&origin), &doc, &ignored) &&
			    aj_source_memory_add(out, canonical, doc))
				r = aj_errors_oom(err);
			if (ignored.oom)
				r = aj_errors_oom(err);
			aj_errors_release(&ignored);
		}
		aj_node_free(doc);
		aj_free(canonical);
		aj_buf_release(&origin);
	}
	pthread_mutex_unlock(&c->lock);
	if (r)
		aj_source_release(out);
	return r;
}

size_t aj_cache_sweep(struct aj_cache *c, enum aj_cache_kind kind,
		      const struct aj_strmap *keep)
{
	struct aj_cache_table *t = kind == AJ_CACHE_TEMPLATES ? NULL : kind_table(c, kind);
	size_t i, pos = 0, gone = 0;
	const char *key;
	void *v;
	int found;

	pthread_mutex_lock(&c->lock);
	if (kind == AJ_CACHE_TEMPLATES) {
		while (aj_strmap_next(&c->templates, &pos, &key, &v)) {
			aj_strmap_get(keep, key, &found);
			if (found)
				continue;
			/* Removing the current key during iteration is allowed. */
			cJSON_Delete(aj_strmap_remove(&c->templates, key, NULL));
			gone++;
		}
	} else {
		for (i = 0; i < t->cap; i++) {
			struct aj_cache_rec *r = t->slots[i];

			if (!r || r == &tombstone)
				continue;
			aj_strmap_get(keep, r->key, &found);
			if (found)
				continue;
			t->slots[i] = &tombstone;
			t->nr--;
			rec_free(c, kind, r);
			gone++;
		}
		pool_compact(c);
	}
	pthread_mutex_unlock(&c->lock);
	return gone;
}
