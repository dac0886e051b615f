# Azurite fixture (sourced): azurite_start brings up the blob emulator on a
# free loopback port with HTTPS (a throw-away self-signed certificate; OAuth
# needs HTTPS) and exports
#   AJ_AZURITE_ENDPOINT  https://127.0.0.1:PORT/devstoreaccount1
#   AJ_AZURITE_CA        the certificate, for the client's CA bundle
# azurite_stop ends the process it started and removes its files; callers
# install it with `trap azurite_stop EXIT`.

azurite_dir=
azurite_pid=

azurite_free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

azurite_start() {
  local here bin port
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  bin=$("$here/install-azurite.sh") || return 1
  azurite_dir=$(mktemp -d "${TMPDIR:-/tmp}/aj-azurite.XXXXXX") || return 1
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
    -addext subjectAltName=IP:127.0.0.1 \
    -keyout "$azurite_dir/key.pem" -out "$azurite_dir/cert.pem" >/dev/null 2>&1 || return 1
  port=$(azurite_free_port) || return 1
  "$bin" --blobHost 127.0.0.1 --blobPort "$port" --oauth basic \
    --cert "$azurite_dir/cert.pem" --key "$azurite_dir/key.pem" \
    --skipApiVersionCheck --disableTelemetry --location "$azurite_dir/data" \
    --debug "$azurite_dir/debug.log" >"$azurite_dir/out.log" 2>&1 &
  azurite_pid=$!
  for _ in $(seq 1 100); do
    if curl -s -o /dev/null --cacert "$azurite_dir/cert.pem" "https://127.0.0.1:$port/devstoreaccount1?comp=list"; then
      export AJ_AZURITE_ENDPOINT="https://127.0.0.1:$port/devstoreaccount1"
      export AJ_AZURITE_CA="$azurite_dir/cert.pem"
      return 0
    fi
    kill -0 "$azurite_pid" 2>/dev/null || break
    sleep 0.2
  done
  echo "azurite did not start; its output:" >&2
  cat "$azurite_dir/out.log" >&2
  return 1
}

azurite_stop() {
  if [[ -n $azurite_pid ]]; then
    kill "$azurite_pid" 2>/dev/null
    wait "$azurite_pid" 2>/dev/null
    azurite_pid=
  fi
  if [[ -n $azurite_dir ]]; then
    rm -rf "$azurite_dir"
    azurite_dir=
  fi
}
