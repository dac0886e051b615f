/*
 * place/read/azure.h - the Azure part of the views (place/views.h) read
 * from ARM: the I/O edge of placement for Azure candidates, shared by the
 * controller's placer (with the controller's identity) and `aj place`
 * (with the user's credential): the caller gives the ARM client.
 *
 * One read is one list of the workspace's computes (GET .../computes and
 * its next pages) and the virtual clusters the identity sees (the
 * subscriptions, one Resource Graph query, one GET per VC for its quotas),
 * whatever the number of jobs judged against it. A part that cannot be
 * read keeps why: no answer ("Azure is unreachable: ..."), the workspace
 * not found, a refusal (ARM's words and the role the identity lacks); its
 * candidates are then UNKNOWN with that reason.
 *
 * Ownership: the scope is borrowed; the Azure part is the caller's
 * (zeroed by it, filled here, aj_views_azure_release).
 */
#ifndef AJ_PLACE_READ_AZURE_H
#define AJ_PLACE_READ_AZURE_H

#include "azure/aml.h"

struct aj_arm;
struct aj_place_workspace;
struct aj_vc;
struct aj_views_azure;

struct aj_views_azure_scope {
	struct aj_aml_workspace workspace;   /* whose computes are read */
	const char *subscription;            /* VCs of this one; NULL: every one the identity sees */
	/* keep a VC (NULL: every one): those no namespace may use are not read */
	int (*vc_wanted)(const void *ctx, const struct aj_vc *vc);
	const void *ctx;
	int computes_only;   /* the VCs not read (another workspace's read has them) */
};

/* Read the Azure part into a (a->read set). 0 / -1 (out of memory). */
int aj_views_read_azure(struct aj_arm *arm, const struct aj_views_azure_scope *s,
			struct aj_views_azure *a);

/*
 * The parts of nr workspaces (parts[i] of ws[i], each zeroed by the
 * caller): each one's computes, the VCs with the first only (they are the
 * identity's, whatever the workspace); VCs kept as vc_wanted(ctx) says.
 * 0 / -1 (out of memory).
 */
int aj_views_read_azure_each(struct aj_arm *arm, const struct aj_place_workspace *ws, size_t nr,
			     int (*vc_wanted)(const void *ctx, const struct aj_vc *vc),
			     const void *ctx, struct aj_views_azure *parts);

#endif
