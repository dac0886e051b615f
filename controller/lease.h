/*
 * lease.h - leader election on a coordination.k8s.io/v1 Lease, with
 * client-go's rules: a holder renews every retry period; another candidate
 * takes over only after it has seen the same record unchanged for a whole
 * lease duration (measured on its own monotonic clock, so clock skew
 * between machines does not matter); a leader that cannot renew within the
 * renew deadline must stop acting; a leader that shuts down releases the
 * lease so a successor takes over at once.
 *
 * Defaults: 15 s lease, 10 s renew deadline, 2 s retry.
 *
 * Ownership: the lease copies its names; aj_lease_release() frees them.
 * The client is borrowed and must be used by one thread at a time.
 */
#ifndef AJ_LEASE_H
#define AJ_LEASE_H

struct aj_errors;
struct aj_kube;

struct aj_lease {
	struct aj_kube *k;
	char *ns;
	char *name;
	char *identity;
	double duration;          /* seconds */
	double renew_deadline;
	double retry;
	double (*now)(void *ctx); /* monotonic seconds; NULL for the real clock */
	void *clock_ctx;

	char *observed;           /* holder + renewTime last seen */
	double observed_at;       /* when it last changed, local clock */
	int leader;
	double renewed_at;        /* our last successful renewal */
};

int aj_lease_init(struct aj_lease *l, struct aj_kube *k, const char *ns,
		  const char *name, const char *identity);
void aj_lease_release(struct aj_lease *l);

/*
 * One attempt to acquire or renew. Returns 1 while we lead, 0 when another
 * holder does, -1 on an API error (err filled; the caller retries, and
 * aj_lease_lost() tells whether leadership has lapsed meanwhile).
 */
int aj_lease_try(struct aj_lease *l, struct aj_errors *err);
/* We led, and have not renewed within the renew deadline. */
int aj_lease_lost(struct aj_lease *l);
/* Give the lease up (holder cleared) if we hold it. 0 / -1. */
int aj_lease_give_up(struct aj_lease *l, struct aj_errors *err);

#endif
