/*
 * source_dir.h - templates read from a directory (the CLI's template home).
 *
 * Canonical name "template/gpu" is the file <home>/template/gpu.yaml. Only
 * regular files are read (a symbolic link to one is fine); anything else, a
 * file larger than AJ_YAML_MAX_BYTES or a read error is a clear error naming
 * the file as the user knows it: <display_home>/template/gpu.yaml, where
 * display_home is the home as the user wrote it (".azure_jobs").
 *
 * Ownership: the source copies both paths; aj_source_release() frees them.
 */
#ifndef AJ_SOURCE_DIR_H
#define AJ_SOURCE_DIR_H

struct aj_errors;
struct aj_source;

int aj_source_dir_init(struct aj_source *s, const char *home,
		       const char *display_home, struct aj_errors *err);

#endif
