/* The decisions every runner shares, and the generic ones (runner.h): pure. */
#include "runner.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cache.h"

/* A failed renewal of the storage Secret is tried again after this long. */
#define STORAGE_RETRY_SECONDS 60
/* Pods of a cancelled job still there: look again after this many seconds. */
#define PODS_RECHECK 2

void aj_plan_event(struct aj_plan *p, int warning, const char *reason, const char *action,
		   const char *note, int once)
{
	struct aj_plan_event *e;

	if (p->nr_events >= AJ_PLAN_EVENTS)
		return;
	e = &p->events[p->nr_events++];
	e->warning = warning;
	e->reason = reason;
	e->action = action;
	e->note = note;
	e->once = once;
}

/* reason_prefix + what, kept in the plan. */
static const char *prefixed(const struct aj_runner *r, struct aj_plan *p, const char *what)
{
	snprintf(p->reason_buf, sizeof(p->reason_buf), "%s%s", r->reason_prefix, what);
	return p->reason_buf;
}

void aj_plan_fail(struct aj_plan *p, const char *reason, const char *action, const char *message)
{
	p->act |= AJ_DO_STATUS;
	p->phase = AJ_PHASE_FAILED;
	p->reason = reason;
	snprintf(p->message, sizeof(p->message), "%s", message);
	aj_plan_event(p, 1, reason, action, p->message, 0);
}

void aj_plan_cancelled(struct aj_plan *p)
{
	p->act |= AJ_DO_STATUS;
	p->phase = AJ_PHASE_CANCELLED;
	p->reason = "Cancelled";
	snprintf(p->message, sizeof(p->message),
		 "cancelled by request (aj.dev/cancel) before submission");
	aj_plan_event(p, 0, "Cancelled", "Cancel", p->message, 0);
}

/* Built: the Secret, the create, and what its answer means. Always 1. */
static int built(const struct aj_runner *r, const struct aj_seen *s, struct aj_plan *p)
{
	/* The Secret first: the object refers to it. */
	if (s->storage_on && !(s->done & AJ_DO_STORAGE)) {
		p->act |= AJ_DO_STORAGE;
		return 1;
	}
	if (s->storage_error) {
		if (!s->storage_retry) {
			aj_plan_fail(p, "InvalidTemplate", "Resolve", s->storage_error);
			return 1;
		}
		aj_plan_event(p, 1, "StorageSecretFailed", "Mint", s->storage_error, 0);
		p->act |= AJ_DO_RETRY;
		return 1;
	}
	if (s->storage_written) {
		p->act |= AJ_DO_STORAGE_NOTE;
		p->storage_due = s->storage_written;
	}
	if (!(s->done & AJ_DO_CREATE)) {
		p->act |= AJ_DO_CREATE;
		return 1;
	}
	switch (s->create) {
	case AJ_CREATE_REJECTED:
		snprintf(p->note, sizeof(p->note), "%s %s was rejected: %s", r->kind, s->job,
			 s->create_error ? s->create_error : "(no message)");
		aj_plan_fail(p, prefixed(r, p, "Rejected"), "Resolve", p->note);
		break;
	case AJ_CREATE_EXISTS:
		/* not in the cache: ask the server whose it is (then adopt or refuse) */
		if (!(s->have & AJ_NEED_OBJECT))
			p->need |= AJ_NEED_OBJECT;
		else
			p->act |= AJ_DO_RETRY;   /* gone again in between: start over */
		break;
	default:
		/*
		 * Created: the status is written on the next turn, once no AjJob
		 * waits for its create, so a burst of new AjJobs spends the API
		 * budget on creates first.
		 */
		p->requeue_low = 1;
		break;
	}
	return 1;
}

long long aj_decide_reason_due(const struct aj_seen *s)
{
	long long waited = s->now - s->submitted_at;

	return s->now + (waited < AJ_REASON_EVERY ? AJ_REASON_EVERY
			 : waited > AJ_REASON_MAX ? AJ_REASON_MAX : waited);
}

void aj_decide_waiting(const struct aj_runner *r, const struct aj_seen *s, unsigned need,
		       const char *state, struct aj_plan *p)
{
	unsigned unschedulable = AJ_STATUS_FLAG(AJ_COND_UNSCHEDULABLE);
	long long from = s->submitted_at + AJ_REASON_GRACE, due = s->reason_due, next;
	int asked = (s->have & need) == need;
	const char *why = asked ? s->reason : s->prev_reason;

	if (why && !*why)
		why = NULL;   /* a False condition's empty message is no reason */
	/*
	 * Submitted before this controller started: the status keeps the last
	 * look, so the next waits for a timed turn, behind every status write.
	 */
	if (!asked && !due && s->now >= from)
		due = p->reason_due = s->now + 1;
	if (!asked && s->now >= from && s->now >= due) {
		p->need |= need;
		return;
	}
	if (asked)
		p->reason_due = aj_decide_reason_due(s);
	next = asked ? p->reason_due : (due > from ? due : from);
	p->requeue_after = next > s->now ? next - s->now : 1;
	p->requeue_idle = 1;
	if (!why)
		return;
	/* aj's fact after the scheduler's words, both as one reason (told again when either changes) */
	if (asked && s->never && *s->never) {
		snprintf(p->note, sizeof(p->note), "%s; aj: can never fit: %s", why, s->never);
		why = p->note;
	}
	p->reason = "Unschedulable";
	p->flags |= unschedulable;
	p->unschedulable = why;
	/* a cut message still starts with the kind, the job and the scheduler's words */
	if (snprintf(p->message, sizeof(p->message), "%s %s is %s: %s", r->kind, s->job, state,
		     why) < 0)
		p->message[0] = '\0';
	/* told when it appears or changes, not on every look */
	if (!(s->prev_flags & unschedulable) || !s->prev_reason || strcmp(s->prev_reason, why))
		aj_plan_event(p, 1, "Unschedulable", "Observe", why, 0);
}

int aj_decide_submit(const struct aj_runner *r, const struct aj_seen *s, struct aj_plan *p)
{
	if (s->submitted)
		return 0;
	if (s->exists && s->ours) {
		/* Created, in this reconcile's turn before or before a crash: record it. */
		p->act |= AJ_DO_STATUS;
		p->phase = AJ_PHASE_SUBMITTED;
		p->submitted = 1;
		p->job = s->job;
		p->reason = prefixed(r, p, "Created");
		p->storage_renew_after = s->storage_due > 0 ? s->storage_due : 0;
		snprintf(p->message, sizeof(p->message), "%s %s submitted", r->kind, s->job);
		snprintf(p->note, sizeof(p->note), "created %s %s", r->kind, s->job);
		aj_plan_event(p, 0, p->reason, "Create", p->note, 1);
		/* a job that stays Pending changes nothing the watch would tell: look then */
		p->requeue_after = AJ_REASON_GRACE + 1;
		p->requeue_idle = 1;
		p->reason_due = s->now + AJ_REASON_GRACE;
		return 1;
	}
	if (s->cancel) {
		aj_plan_cancelled(p);
		return 1;
	}
	if (s->exists) {
		snprintf(p->note, sizeof(p->note),
			 "a %s named %s already exists and does not belong to this AjJob", r->kind,
			 s->job);
		aj_plan_fail(p, "NameConflict", "Resolve", p->note);
		return 1;
	}
	if (!(s->have & AJ_NEED_BUILD)) {
		p->need |= AJ_NEED_BUILD;
		return 1;
	}
	if (s->build_error) {
		aj_plan_fail(p, "InvalidTemplate", "Resolve", s->build_error);
		return 1;
	}
	return built(r, s, p);
}

int aj_decide_storage(const struct aj_seen *s, struct aj_plan *p)
{
	long long due = s->storage_due;
	int now_due;

	if (!s->storage_on || s->cancel || !s->exists)
		return 0;
	if (due == AJ_CACHE_DUE_UNKNOWN) {
		/* after a restart the status says when; a job mounting no Secret needs none */
		due = s->o.flags & AJ_OWNED_MOUNTS_STORAGE ? s->storage_renew : 0;
		now_due = (s->o.flags & AJ_OWNED_MOUNTS_STORAGE) && due <= s->now;
		if (!now_due) {
			p->act |= AJ_DO_STORAGE_NOTE;
			p->storage_due = due;
			p->storage_requeue = due ? due - s->now : 0;
		}
	} else {
		now_due = due && due <= s->now;
		/* every reconcile asks for the renewal again: the queue keeps the earliest */
		if (!now_due && due > 0)
			p->storage_requeue = due - s->now;
	}
	if (!now_due)
		return 0;
	if (!(s->have & AJ_NEED_BUILD)) {
		p->need |= AJ_NEED_BUILD;
		return 1;
	}
	if (!(s->done & AJ_DO_STORAGE) && !s->build_error) {
		p->act |= AJ_DO_STORAGE;
		return 1;
	}
	if (s->build_error || s->storage_error) {
		/* the Secret keeps the old SAS until they expire: mirror on, try again later */
		aj_plan_event(p, 1, "StorageRenewalFailed", "Mint",
			      s->build_error ? s->build_error : s->storage_error, 0);
		p->act |= AJ_DO_STORAGE_NOTE;
		p->storage_due = s->now + STORAGE_RETRY_SECONDS;
		p->storage_requeue = STORAGE_RETRY_SECONDS;
		return 0;
	}
	p->act |= AJ_DO_STORAGE_NOTE;
	p->storage_due = s->storage_written;
	p->storage_renew_after = s->storage_written;
	p->storage_requeue = s->storage_written > s->now ? s->storage_written - s->now : 0;
	return 0;
}

void aj_decide_cancel(const struct aj_runner *r, const struct aj_seen *s, struct aj_plan *p)
{
	p->act |= AJ_DO_STATUS;
	p->submitted = 1;
	p->phase = AJ_PHASE_CANCELLING;
	p->reason = "Cancelling";
	if (s->exists) {
		if (!s->deleting)
			p->act |= AJ_DO_DELETE;
		snprintf(p->message, sizeof(p->message),
			 "cancelling (aj.dev/cancel): %s %s is being deleted with its pods", r->kind,
			 s->job);
	} else if (!(s->have & AJ_NEED_PODS)) {
		p->need |= AJ_NEED_PODS;
		return;
	} else if (s->pods_left > 0) {
		snprintf(p->message, sizeof(p->message),
			 "cancelling (aj.dev/cancel): %lld pod%s of %s %s still there",
			 s->pods_left, s->pods_left == 1 ? "" : "s", r->kind, s->job);
		p->requeue_after = PODS_RECHECK;
		p->requeue_idle = 1;
	} else {
		p->phase = AJ_PHASE_CANCELLED;
		p->reason = "Cancelled";
		snprintf(p->message, sizeof(p->message), "cancelled by request (aj.dev/cancel)");
		snprintf(p->note, sizeof(p->note), "cancelled: %s %s and its pods are gone",
			 r->kind, s->job);
		aj_plan_event(p, 0, "Cancelled", "Observe", p->note, 1);
		return;
	}
	if (s->prev != AJ_PHASE_CANCELLING)
		aj_plan_event(p, 0, "Cancelling", "Delete", p->message, 0);
}

void aj_decide_gone(const struct aj_runner *r, const struct aj_seen *s, struct aj_plan *p)
{
	p->act |= AJ_DO_STATUS;
	p->submitted = 1;
	p->phase = AJ_PHASE_FAILED;
	p->reason = prefixed(r, p, "Deleted");
	snprintf(p->message, sizeof(p->message), "%s %s was deleted before it finished", r->kind,
		 s->job);
	aj_plan_event(p, 1, p->reason, "Observe", p->message, 1);
}

void aj_runner_object_name(const char *ajjob, size_t max, char *out, size_t size)
{
	char clean[256];
	size_t i, n = 0;
	uint64_t h = 1469598103934665603ull;

	if (!(ajjob[0] >= 'a' && ajjob[0] <= 'z')) {
		clean[n++] = 'j';
		clean[n++] = '-';
	}
	for (i = 0; ajjob[i] && n < sizeof(clean) - 1; i++) {
		char c = ajjob[i];

		h = (h ^ (unsigned char)c) * 1099511628211ull;
		clean[n++] = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ? c : '-';
	}
	clean[n] = '\0';
	if (n <= max) {
		snprintf(out, size, "%s", clean);
		return;
	}
	/* Too long: keep a readable prefix and make it unique with a hash. */
	n = max > 9 ? max - 9 : 0;
	while (n > 0 && clean[n - 1] == '-')
		n--;
	snprintf(out, size, "%.*s-%08x", (int)n, clean, (unsigned)(h ^ (h >> 32)));
}

int aj_decide_ttl(long long ttl, long long dflt, long long finished, long long now,
		  long long *wait)
{
	long long due;

	*wait = 0;
	if (ttl < 0)
		ttl = dflt;
	if (ttl <= 0 || finished <= 0)
		return AJ_TTL_KEEP;
	due = finished + ttl;
	if (due <= now)
		return AJ_TTL_DELETE;
	*wait = due - now;
	return AJ_TTL_WAIT;
}

void aj_owned_tasks_settle(struct aj_owned_facts *f, int ended)
{
	long long counted = 0;
	size_t i;

	for (i = 0; i < f->nr_tasks; i++) {
		struct aj_task_pods *t = &f->tasks[i];
		long long left = t->replicas - t->running - t->succeeded - t->failed;

		counted += t->pending + t->running + t->succeeded + t->failed;
		if (!ended && left > t->pending)
			t->pending = left;
	}
	if (ended && !counted)
		f->nr_tasks = 0;
}

/* After a mirror: what every cluster runner says alike (aj_decide_owned). */
static void mirrored(const struct aj_runner *r, const struct aj_seen *s, struct aj_plan *p)
{
	unsigned suspended = AJ_STATUS_FLAG(AJ_COND_SUSPENDED);

	if ((s->prev_flags & suspended) && !(p->flags & suspended)) {
		snprintf(p->reason_more[0], sizeof(p->reason_more[0]), "%sResumed", r->reason_prefix);
		aj_plan_event(p, 0, p->reason_more[0], "Observe", p->message, 0);
	}
	/* never back: a restarted, aborted or suspended job that ran is still Running */
	if (aj_phase_rank(p->phase) < aj_phase_rank(s->prev))
		p->phase = s->prev;
	if (p->phase == AJ_PHASE_RUNNING && s->prev != AJ_PHASE_RUNNING) {
		snprintf(p->reason_more[1], sizeof(p->reason_more[1]), "%sRunning", r->reason_prefix);
		aj_plan_event(p, 0, p->reason_more[1], "Observe", p->message, 0);
	}
}

int aj_decide_owned(const struct aj_runner *r, const struct aj_seen *s, int ended,
		     void (*finished)(const struct aj_seen *s, struct aj_plan *p),
		     void (*mirror)(const struct aj_seen *s, struct aj_plan *p), struct aj_plan *p)
{
	memset(p, 0, sizeof(*p));
	/* every status written about our object says its tasks */
	if (s->exists && s->ours) {
		p->tasks = s->o.tasks;
		p->nr_tasks = s->o.nr_tasks;
	}
	if (aj_decide_submit(r, s, p) || aj_decide_storage(s, p))
		return 1;
	p->act |= AJ_DO_STATUS;
	p->submitted = 1;
	if ((s->cancel && !ended) || s->prev == AJ_PHASE_CANCELLING)
		aj_decide_cancel(r, s, p);
	else if (!s->exists)
		aj_decide_gone(r, s, p);
	else if (ended)
		finished(s, p);
	else {
		mirror(s, p);
		if (!p->need)
			mirrored(r, s, p);
	}
	return 0;
}

void aj_decide_finished(const struct aj_seen *s, struct aj_plan *p)
{
	long long wait, ttl = s->ttl >= 0 ? s->ttl : s->ttl_default;

	memset(p, 0, sizeof(*p));
	switch (aj_decide_ttl(s->ttl, s->ttl_default, s->finished_at, s->now, &wait)) {
	case AJ_TTL_WAIT:
		p->requeue_after = (double)wait;
		break;
	case AJ_TTL_DELETE:
		p->act |= AJ_DO_EXPIRE;
		snprintf(p->note, sizeof(p->note), "Deleted after ttlSecondsAfterFinished: %lld s "
			 "after it finished", ttl);
		aj_plan_event(p, 0, "Expired", "Delete", p->note, 0);
		break;
	default:
		break;
	}
}

void aj_decide_unresolved(const struct aj_seen *s, struct aj_plan *p)
{
	memset(p, 0, sizeof(*p));
	if (s->cancel)
		aj_plan_cancelled(p);
	else
		aj_plan_fail(p, "InvalidTemplate", "Resolve", s->build_error ? s->build_error : "");
}

/* Is (after, level) sooner than a, or as soon at a higher level? */
static int sooner(double after, enum aj_action_level level, const struct aj_action *a)
{
	return a->kind == AJ_ACTION_DONE || after < a->after ||
	       (after == a->after && level < a->level);
}

static void again(struct aj_action *a, double after, enum aj_action_level level)
{
	if (sooner(after, level, a)) {
		a->kind = AJ_ACTION_AGAIN;
		a->after = after;
		a->level = level;
	}
}

struct aj_action aj_plan_action(const struct aj_plan *p)
{
	struct aj_action a = { AJ_ACTION_DONE, 0, AJ_ACTION_NORMAL };

	if (p->act & AJ_DO_RETRY) {
		a.kind = AJ_ACTION_RETRY;
		return a;
	}
	if (p->requeue_low)
		again(&a, 0, AJ_ACTION_LOW);
	if (p->requeue_after > 0)
		again(&a, p->requeue_after, p->requeue_idle ? AJ_ACTION_IDLE : AJ_ACTION_NORMAL);
	if (p->storage_requeue > 0)
		again(&a, (double)p->storage_requeue, AJ_ACTION_NORMAL);
	return a;
}

int aj_create_rejected(long code)
{
	return code >= 400 && code < 500 && code != 401 && code != 404 && code != 409 &&
	       code != 429;
}
