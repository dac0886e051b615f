#!/usr/bin/env bash
# `aj render` of the bundled four-level template chain, against the floor of
# starting a trivial program linked to the same shared libraries as aj. Both
# are started RUNS times (default 200), alternately, with posix_spawn from a
# small C harness; the p50 and p90 wall times and the ratio of the p50s are
# printed.
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

# The harness: run the floor and the command alternately RUNS times each
# (so load from elsewhere on the machine hits both alike), stdout on
# /dev/null, and print "cmd_p50 cmd_p90 floor_p50 floor_p90" in microseconds.
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

static double once(char **argv, posix_spawn_file_actions_t *fa)
{
	struct timespec a, b;
	pid_t pid;
	int st;

	clock_gettime(CLOCK_MONOTONIC, &a);
	if (posix_spawn(&pid, argv[0], fa, NULL, argv, environ) ||
	    waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "%s failed\n", argv[0]);
		exit(1);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (double)(b.tv_sec - a.tv_sec) * 1e6 + (double)(b.tv_nsec - a.tv_nsec) / 1e3;
}

int main(int argc, char **argv)
{
	long runs = strtol(argv[1], NULL, 10), i;
	char *floor_argv[] = { argv[2], NULL };
	double *t = calloc((size_t)runs, sizeof(*t)), *f = calloc((size_t)runs, sizeof(*f));
	posix_spawn_file_actions_t fa;

	(void)argc;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	for (i = 0; i < runs; i++) {
		f[i] = once(floor_argv, &fa);
		t[i] = once(argv + 3, &fa);
	}
	qsort(t, (size_t)runs, sizeof(*t), cmp);
	qsort(f, (size_t)runs, sizeof(*f), cmp);
	printf("%.0f %.0f %.0f %.0f\n", t[runs / 2], t[runs * 9 / 10], f[runs / 2], f[runs * 9 / 10]);
	return 0;
}
EOF

cc -O2 -o "$tmp/floor" "$tmp/floor.c" -Wl,--no-as-needed "${libs[@]}"
cc -O2 -o "$tmp/harness" "$tmp/harness.c"

export AJ_HOME=examples/.azure_jobs
cmd=("$aj" render -t pretrain --name bench python train.py --config configs/pretrain.yaml)
"${cmd[@]}" >/dev/null    # fails loudly here rather than inside the harness

# Warm the page cache, then measure.
"$tmp/harness" 20 "$tmp/floor" "${cmd[@]}" >/dev/null
read -r aj_p50 aj_p90 fl_p50 fl_p90 < <("$tmp/harness" "$runs" "$tmp/floor" "${cmd[@]}")

echo "runs: $runs each, alternating; libraries: $(echo $needed)"
echo "aj render -t pretrain  p50 ${aj_p50} us  p90 ${aj_p90} us"
echo "floor (same libraries) p50 ${fl_p50} us  p90 ${fl_p90} us"
awk -v a="$aj_p50" -v f="$fl_p50" 'BEGIN { printf "ratio (p50): %.2fx\n", a / f }'

# Instruction counts do not depend on what else the machine is doing.
if command -v valgrind >/dev/null 2>&1; then
	irs() {
		valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
			sed -n 's/.*refs: *//p' | tr -d ,
	}
	aj_ir=$(irs "${cmd[@]}")
	fl_ir=$(irs "$tmp/floor")
	echo "instructions: aj render ${aj_ir}, floor ${fl_ir}"
fi
