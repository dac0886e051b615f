/*
 * placement.h - a leaf template that names candidate templates instead of
 * a target:
 *
 *   base: []
 *   config:
 *     placement:
 *       candidates: [template/volcano, template/kube, template/sing]
 *       max_wait: 15m
 *
 * Each candidate is a leaf template resolved on its own, exactly as
 * `aj run -t CANDIDATE` would (pipeline/placement.h loads them); the leaf
 * itself holds nothing else, so nothing in it is silently ignored. The
 * controller ranks the candidates and submits to the first (docs/placement.md).
 *
 * Rules checked here, each at its own file:line:column:
 *   - placement is a mapping; candidates a non-empty list of at most
 *     AJ_PLACEMENT_MAX_CANDIDATES template names ("volcano" or
 *     "template/volcano"), none twice;
 *   - max_wait is a duration (core/duration.h) or whole seconds, at least
 *     AJ_PLACEMENT_MIN_WAIT; absent means no fail-over;
 *   - the merged config holds no key besides placement (a target or any
 *     other key is refused at that key).
 *
 * Ownership: struct aj_placement owns its candidates' names and file names;
 * aj_placement_release() frees them. Pure: no I/O.
 */
#ifndef AJ_PLACEMENT_H
#define AJ_PLACEMENT_H

#include <stddef.h>

struct aj_errors;
struct aj_node;

#define AJ_PLACEMENT_MAX_CANDIDATES 16
#define AJ_PLACEMENT_MIN_WAIT 30

struct aj_placement_candidate {
	char *name;       /* canonical, "template/kube" */
	char *file;       /* where the entry was written (NULL: unknown) */
	int line;
	int column;
};

struct aj_placement {
	struct aj_placement_candidate *items;  /* in the user's order of preference */
	size_t nr;
	long max_wait;    /* seconds; 0: no fail-over */
};

void aj_placement_init(struct aj_placement *pl);
void aj_placement_release(struct aj_placement *pl);

/*
 * Read config.placement of a resolved leaf's config into pl (initialised).
 * 1 when the leaf places among candidates, 0 when it has no placement key
 * (pl untouched), -1 with every problem in err.
 */
int aj_placement_read(const struct aj_node *config, struct aj_placement *pl,
		      struct aj_errors *err);

/* Does this resolved config declare a placement? (no checks) */
int aj_placement_declared(const struct aj_node *config);

#endif
