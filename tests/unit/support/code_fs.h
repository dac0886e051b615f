/*
 * code_fs.h - file-system helpers for the code tree tests (ignore rules,
 * walk, archive): temporary directories, writing files, removing trees and
 * running a program with an argument list (never a shell string).
 *
 * Ownership: strings returned are the caller's (free()).
 */
#ifndef AJ_TEST_CODE_FS_H
#define AJ_TEST_CODE_FS_H

#include <stddef.h>
#include <sys/types.h>

/* A fresh empty directory under $TMPDIR (or /tmp); fails the test on error. */
char *aj_test_mkdtemp(void);
/* Remove a tree without following symlinks; 0 / -1. */
int aj_test_rm_rf(const char *path);
/* "dir/rel" as a new string. */
char *aj_test_join(const char *dir, const char *rel);
/* Write dir/rel (creating parent directories) with the given mode. */
void aj_test_write(const char *dir, const char *rel, const void *data,
		   size_t len, mode_t mode);
void aj_test_mkdir(const char *dir, const char *rel);
/* The whole file (NUL-terminated; *len without the NUL); fails the test on error. */
char *aj_test_read(const char *path, size_t *len);

/*
 * Run argv[0] (searched in PATH) with stdin from in_path (NULL: /dev/null),
 * envp (NULL: this process's), stdout captured into *out (NUL-terminated,
 * caller frees; out may be NULL to discard) and stderr passed through.
 * Returns the exit status, or -1 if it could not run.
 */
int aj_test_spawn(char *const argv[], const char *in_path,
		char *const envp[], char **out, size_t *out_len);

#endif
