/*
 * code_bench - figures for bench/code.sh.
 *
 *   code_bench gen DIR FILES BYTES   write a tree of FILES files totalling
 *                                    BYTES (half text-like, half random)
 *   code_bench archive DIR           archive DIR (gzip level 1, built-in
 *                                    rules), print seconds, MB/s and digest
 *   code_bench match PATHS           match PATHS generated paths against 50
 *                                    patterns, print checks per CPU second
 *
 * Everything generated comes from a fixed seed, so runs are comparable.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "code/archive.h"
#include "code/ignore.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"

static unsigned long long rng = 0x2545f4914f6cdd1dull;

static unsigned long long next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/* CPU time of this process: less disturbed by a busy machine than wall time. */
static double cpu(void)
{
	return clock_s(CLOCK_PROCESS_CPUTIME_ID);
}

static void die_errors(const struct aj_errors *e)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);

	aj_errors_format_all(e, &b);
	fprintf(stderr, "%s", aj_buf_cstr(&b));
	exit(1);
}

static const char *const words[] = {
	"def", "return", "self", "import", "torch", "for", "in", "range", "if",
	"else:", "loss", "model", "batch", "=", "(x)", "0.5", "optimizer.step()",
	"\n", "\n    ", "# comment", "print(", ")", "np.array", "config",
};

static void fill_text(char *buf, size_t len)
{
	size_t i = 0;

	while (i < len) {
		const char *w = words[next() % (sizeof(words) / sizeof(words[0]))];
		size_t n = strlen(w);

		if (n + 1 > len - i)
			n = len - i - 1 < n ? len - i - 1 : n;
		memcpy(buf + i, w, n);
		i += n;
		if (i < len)
			buf[i++] = ' ';
	}
}

static void fill_random(char *buf, size_t len)
{
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		unsigned long long x = next();

		memcpy(buf + i, &x, 8);
	}
	for (; i < len; i++)
		buf[i] = (char)next();
}

static int gen(const char *dir, long files, long long bytes)
{
	long long base = bytes / files, left = bytes, delta = 0;
	char *buf = malloc((size_t)(base * 2 + bytes % files) + 1);
	long i;

	if (!buf)
		return 1;
	for (i = 0; i < files; i++) {
		char path[4096];
		long long size;
		int fd;

		/* Sizes vary around the mean in pairs, so the total is exact. */
		if (i % 2 == 0)
			delta = (long long)(next() % (unsigned long long)(base / 2 + 1));
		size = i == files - 1 ? left : i % 2 ? base - delta : base + delta;
		snprintf(path, sizeof(path), "%s/d%02ld", dir, i % 50);
		mkdir(path, 0755);
		snprintf(path, sizeof(path), "%s/d%02ld/s%ld", dir, i % 50, (i / 50) % 10);
		mkdir(path, 0755);
		snprintf(path, sizeof(path), "%s/d%02ld/s%ld/f%06ld.%s", dir, i % 50,
			 (i / 50) % 10, i, i % 2 ? "bin" : "py");
		if (i % 2)
			fill_random(buf, (size_t)size);
		else
			fill_text(buf, (size_t)size);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || write(fd, buf, (size_t)size) != (ssize_t)size) {
			fprintf(stderr, "%s: %s\n", path, strerror(errno));
			return 1;
		}
		close(fd);
		left -= size;
	}
	free(buf);
	return 0;
}

static int archive(const char *dir)
{
	struct aj_ignore ig = AJ_IGNORE_INIT;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_archive_result res;
	double t0, c0, t;

	if (aj_ignore_setup(&ig, dir, NULL, &e))
		die_errors(&e);
	t0 = now();
	c0 = cpu();
	if (aj_archive_create(dir, &ig, 1, NULL, NULL, &res, &e))
		die_errors(&e);
	t = now() - t0;
	printf("cpu_seconds %.3f\n", cpu() - c0);
	printf("seconds %.3f\ninput_bytes %llu\narchive_bytes %llu\nMBps %.1f\nsha256 %s\n",
	       t, (unsigned long long)res.content_bytes, (unsigned long long)res.size,
	       (double)res.content_bytes / t / 1e6, res.sha256_hex);
	aj_ignore_release(&ig);
	return 0;
}

static const char bench_rules[] =
	"*.pyc\n*.pyo\n*.log\n!keep.log\n*.ckpt\n*.pt\n*.pth\n*.safetensors\n"
	"*.egg-info/\nbuild/\n/dist/\n**/checkpoints/\n**/wandb/\noutputs/\n"
	"data/**/*.bin\nlogs/*.txt\n[Tt]emp*\n*~\n.DS_Store\n*.swp\n.idea/\n"
	".vscode/\n*.so\n*.o\n*.a\n/tmp/\n.mypy_cache/\n.pytest_cache/\n"
	".ipynb_checkpoints/\n*.tar.gz\n*.zip\nruns/*/events.*\n/scratch/\n"
	"**/cache/**\n*.npy\n*.npz\n*.h5\n!configs/**/*.h5\nmlruns/\n"
	"lightning_logs/\n/secrets/\n*.key\n*.pem\ncore.[0-9]*\nnohup.out\n"
	"*.tmp\n*.bak\n/notebooks/**/*.html\nsrc/**/generated/\n.env\n";

static const char *const parts[] = {
	"src", "model", "data", "utils", "tests", "configs", "logs", "runs",
	"checkpoints", "train", "eval", "layers", "scripts", "docs", "build",
	"cache", "notebooks", "tmp", "generated", "io",
};
static const char *const exts[] = {
	".py", ".py", ".py", ".json", ".yaml", ".md", ".txt", ".log", ".ckpt",
	".pt", ".h5", ".sh", ".c", ".npy", "", ".pyc",
};

static int match(long n)
{
	struct aj_ignore ig = AJ_IGNORE_INIT;
	struct aj_errors e = AJ_ERRORS_INIT;
	char **paths = malloc((size_t)n * sizeof(*paths));
	size_t *lens = malloc((size_t)n * sizeof(*lens));
	long i, excluded = 0;
	double t0, t1, t2;

	if (!paths || !lens)
		return 1;
	if (aj_ignore_add_text(&ig, bench_rules, sizeof(bench_rules) - 1, ".codeignore", &e))
		die_errors(&e);
	for (i = 0; i < n; i++) {
		char p[512];
		int depth = 1 + (int)(next() % 6), d, len = 0;

		for (d = 0; d < depth - 1; d++)
			len += snprintf(p + len, sizeof(p) - (size_t)len, "%s/",
					parts[next() % (sizeof(parts) / sizeof(parts[0]))]);
		snprintf(p + len, sizeof(p) - (size_t)len, "file_%llu%s", next() % 1000,
			 exts[next() % (sizeof(exts) / sizeof(exts[0]))]);
		paths[i] = strdup(p);
		lens[i] = strlen(p);
	}
	t0 = cpu();
	for (i = 0; i < n; i++)
		excluded += aj_ignore_excludes(aj_ignore_match(&ig, paths[i], lens[i], 0));
	t1 = cpu();
	for (i = 0; i < n; i++)
		excluded += aj_ignore_excludes(aj_ignore_check(&ig, paths[i], lens[i], 0));
	t2 = cpu();
	printf("rules %zu\npaths %ld\nexcluded %ld\nmatch_per_s %.0f\ncheck_per_s %.0f\n",
	       ig.nr, n, excluded / 2, (double)n / (t1 - t0), (double)n / (t2 - t1));
	for (i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	free(lens);
	aj_ignore_release(&ig);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "gen"))
		return gen(argv[2], strtol(argv[3], NULL, 10), strtoll(argv[4], NULL, 10));
	if (argc == 3 && !strcmp(argv[1], "archive"))
		return archive(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "match"))
		return match(strtol(argv[2], NULL, 10));
	fprintf(stderr, "usage: code_bench gen DIR FILES BYTES | archive DIR | match PATHS\n");
	return 2;
}
