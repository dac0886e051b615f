#!/usr/bin/env bash
# `aj render` of the bundled four-level template chain, against the floor of
# starting a trivial program linked to the same shared libraries as aj. Both are
# started RUNS times (default 200) with posix_spawn from a small C harness;
# the p50 and p90 wall times and the ratio of the p50s are printed.
#
#   bash bench/render.sh            # builds into build-bench/ (Release)
#   RUNS=1000 bash bench/render.sh
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${RUNS:-200}
build=${BUILD_DIR:-build-bench}

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
cmake --build "$build" --target aj >/dev/null
aj="$build/src/aj"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The floor: an empty main() linked to exactly the shared libraries aj
# needs (its DT_NEEDED entries), so the loader does the same work for both.
printf 'int main(void) { return 0; }\n' >"$tmp/floor.c"
needed=$(readelf -d "$aj" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -v '^libc\.so')
libs=()
for lib in $needed; do libs+=("-l:$lib"); done

# The harness: spawn argv RUNS times with stdout on /dev/null, print
# "p50_us p90_us" of the wall times.
cat >"$tmp/harness.c" <<'EOF'
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	long runs = strtol(argv[1], NULL, 10), i;
	double *t = calloc((size_t)runs, sizeof(*t));
	posix_spawn_file_actions_t fa;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	for (i = 0; i < runs; i++) {
		struct timespec a, b;
		pid_t pid;
		int st;

		clock_gettime(CLOCK_MONOTONIC, &a);
		if (posix_spawn(&pid, argv[2], &fa, NULL, argv + 2, environ) ||
		    waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "run %ld of %s failed\n", i, argv[2]);
			return 1;
		}
		clock_gettime(CLOCK_MONOTONIC, &b);
		t[i] = (double)(b.tv_sec - a.tv_sec) * 1e6 + (double)(b.tv_nsec - a.tv_nsec) / 1e3;
	}
	qsort(t, (size_t)runs, sizeof(*t), cmp);
	printf("%.0f %.0f\n", t[runs / 2], t[runs * 9 / 10]);
	return 0;
}
EOF

cc -O2 -o "$tmp/floor" "$tmp/floor.c" -Wl,--no-as-needed "${libs[@]}"
cc -O2 -o "$tmp/harness" "$tmp/harness.c"

export AJ_HOME=examples/.azure_jobs
cmd=("$aj" render -t pretrain --name bench python train.py --config configs/pretrain.yaml)
"${cmd[@]}" >/dev/null    # fails loudly here rather than inside the harness

# Warm the page cache, then measure.
"$tmp/harness" 20 "${cmd[@]}" >/dev/null
"$tmp/harness" 20 "$tmp/floor" >/dev/null
read -r aj_p50 aj_p90 < <("$tmp/harness" "$runs" "${cmd[@]}")
read -r fl_p50 fl_p90 < <("$tmp/harness" "$runs" "$tmp/floor")

echo "runs: $runs; libraries: $(echo $needed)"
echo "aj render -t pretrain  p50 ${aj_p50} us  p90 ${aj_p90} us"
echo "floor (same libraries) p50 ${fl_p50} us  p90 ${fl_p90} us"
awk -v a="$aj_p50" -v f="$fl_p50" 'BEGIN { printf "ratio (p50): %.2fx\n", a / f }'
