#!/usr/bin/env bash
# Blob upload throughput against Azurite on loopback (HTTPS, bearer token):
# a MIB-MiB random file (default 512) uploaded, best of REPEAT (default 3),
# alternately
#   - by aj's blob client in 8 MiB blocks (Put Block x N + Put Block List,
#     MD5 off), as `aj run` sends a code archive: 4 blocks in flight (the
#     default) and, for comparison, one at a time;
#   - by one streamed Put Blob with curl (the plain single-request upload).
# Azurite itself (Node.js, writing to a temp dir) bounds both.
#
#   bash bench/blob.sh              # builds into build-bench/ (Release)
set -euo pipefail
cd "$(dirname "$0")/.."

mib=${MIB:-512}
repeat=${REPEAT:-3}
build=${BUILD_DIR:-build-bench}

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
cmake --build "$build" --target ajazure ajcore >/dev/null

tmp=$(mktemp -d)
# shellcheck source=../tests/integration/azure/azurite.sh
source tests/integration/azure/azurite.sh
trap 'azurite_stop; rm -rf "$tmp"' EXIT

# shellcheck disable=SC2046
cc -O2 -std=gnu11 -Isrc bench/blob_bench.c -o "$tmp/blob_bench" \
	"$build/src/libajazure.a" "$build/src/libajcore.a" \
	$(pkg-config --libs libcurl openssl libcjson yaml-0.1) -lpthread -lm

azurite_start
# Azurite's "basic" OAuth checks issuer, audience and expiry, not the signature.
AJ_BENCH_TOKEN=$(python3 - <<'PY'
import base64, json, time
b = lambda o: base64.urlsafe_b64encode(json.dumps(o).encode()).decode().rstrip("=")
now = int(time.time())
print(b({"alg": "RS256", "typ": "JWT"}) + "." + b({"aud": "https://storage.azure.com",
      "iss": "https://sts.windows.net/72f988bf-86f1-41af-91ab-2d7cd011db47/", "iat": now - 60,
      "nbf": now - 60, "exp": now + 7200}) + ".unsigned")
PY
)
export AJ_BENCH_TOKEN
hdr=(-H "Authorization: Bearer $AJ_BENCH_TOKEN" -H "x-ms-version: 2024-11-04")
curl -sf --cacert "$AJ_AZURITE_CA" -X PUT "${hdr[@]}" -H "Content-Length: 0" \
	"$AJ_AZURITE_ENDPOINT/bench?restype=container" >/dev/null
head -c $((mib * 1024 * 1024)) /dev/urandom >"$tmp/data"
cat "$tmp/data" >/dev/null

best_aj= best_one= best_curl=
for i in $(seq "$repeat"); do
	t=$("$tmp/blob_bench" "$AJ_AZURITE_ENDPOINT" "$AJ_AZURITE_CA" bench "aj-$i" "$tmp/data" 8 4 |
		sed -n 's/^seconds //p')
	if [ -z "$best_aj" ] || awk "BEGIN{exit !($t < $best_aj)}"; then best_aj=$t; fi
	t=$("$tmp/blob_bench" "$AJ_AZURITE_ENDPOINT" "$AJ_AZURITE_CA" bench "one-$i" "$tmp/data" 8 1 |
		sed -n 's/^seconds //p')
	if [ -z "$best_one" ] || awk "BEGIN{exit !($t < $best_one)}"; then best_one=$t; fi
	t=$(curl -sf --cacert "$AJ_AZURITE_CA" -T "$tmp/data" "${hdr[@]}" -H "x-ms-blob-type: BlockBlob" \
		-o /dev/null -w '%{time_total}' "$AJ_AZURITE_ENDPOINT/bench/curl-$i")
	if [ -z "$best_curl" ] || awk "BEGIN{exit !($t < $best_curl)}"; then best_curl=$t; fi
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v m="$mib" -v a="$best_aj" -v o="$best_one" -v c="$best_curl" 'BEGIN{
	printf "%d MiB, best of runs\n", m
	printf "aj, 4 blocks in flight  %.2f s  %.0f MiB/s\n", a, m / a
	printf "aj, 1 block at a time   %.2f s  %.0f MiB/s\n", o, m / o
	printf "curl one Put Blob       %.2f s  %.0f MiB/s\n", c, m / c
	printf "ratio aj / curl         %.2fx (1 block: %.2fx)\n", c / a, c / o }'
