/*
 * bundle.h - reading the template bundle an AjJob carries.
 *
 * `aj run` embeds in spec the leaf template as written (spec.template, named
 * spec.name) and every other file its base chain read (spec.components,
 * keyed by canonical name), plus the command and the resolved shape. Read
 * back here, they form a template source that resolves exactly as the CLI
 * did; the controller may chain it with AjTemplate objects for bases the
 * bundle lacks (AjJobs written by hand).
 *
 * Ownership: aj_bundle owns its source, leaf name and command;
 * aj_bundle_release() frees them.
 */
#ifndef AJ_BUNDLE_H
#define AJ_BUNDLE_H

#include "jobspec.h"
#include "source.h"
#include "strlist.h"

struct aj_errors;
struct aj_node;

struct aj_bundle {
	struct aj_source source;   /* leaf + components */
	int has_source;
	char *leaf;                /* canonical leaf name (spec.name) */
	struct aj_shape_args args; /* spec.nodes / processes / processesPerNode */
	struct aj_strlist command; /* spec.command */
};

void aj_bundle_init(struct aj_bundle *b);
void aj_bundle_release(struct aj_bundle *b);

/*
 * Read an AjJob's spec (a tree, e.g. from aj_node_from_cjson). `origin`
 * names the object in messages ("AjJob training/bert-1"). Collects every
 * problem with its key path (spec.components["x"]: invalid name); -1 if any.
 */
int aj_bundle_read(struct aj_bundle *b, const struct aj_node *spec,
		   const char *origin, struct aj_errors *err);

#endif
