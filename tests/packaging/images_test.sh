#!/usr/bin/env bash
# Runs each image of scripts/build-images.sh with `buildah run
# --isolation=chroot` on the GPU simulator, through the image's own
# entrypoint: the exporter (with the Kubernetes DaemonSet's command line)
# serves /metrics on loopback, zeusd answers /discover on its socket, the
# batch-size server registers a job. Needs root.
#
#   tests/packaging/images_test.sh VERSION 'EXPORTER_COMMAND_JSON' [IMAGE_PREFIX]
#
# IMAGE_PREFIX: where the images are (default localhost/zeus-native, as
# scripts/build-images.sh names them; tests/packaging/registry_test.sh gives
# the registry it pulled them from).
set -euo pipefail
cd "$(dirname "$0")/../.."

fail() { echo "images_test: FAIL: $*" >&2; exit 1; }
# shellcheck source=tests/packaging/checks.sh
. tests/packaging/checks.sh
step() { echo "== images: $*"; }
[ $# -eq 2 ] || [ $# -eq 3 ] || fail "usage: images_test.sh VERSION EXPORTER_COMMAND_JSON [IMAGE_PREFIX]"
version="$1" daemonset_command="$2" prefix="${3:-localhost/zeus-native}"
work="$(mktemp -d /var/tmp/zeus-images.XXXXXX)"
chmod 755 "$work"  # the socket test connects as other users
containers=() pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  for ctr in "${containers[@]}"; do buildah rm "$ctr" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# image_config IMAGE FIELD: a field of the image's OCI config (Entrypoint, Cmd: as words).
image_config() {
  buildah inspect --type image "$1" | python3 -c '
import json, sys
value = json.load(sys.stdin)["OCIv1"]["config"].get(sys.argv[1], "")
print(*value) if isinstance(value, list) else print(value)' "$2"
}
entrypoint() { image_config "$1" Entrypoint; }
# Starts the image's entrypoint with ARGS (and -e/-v options before --) in the background.
start() {  # start NAME IMAGE LOG [buildah run options] -- ARGS...
  local name="$1" image="$2" log="$3"; shift 3
  local opts=()
  while [ "$1" != "--" ]; do opts+=("$1"); shift; done
  shift
  local ctr
  ctr="$(buildah from --quiet "$image")"
  containers+=("$ctr")
  # shellcheck disable=SC2046
  buildah run --isolation=chroot "${opts[@]}" "$ctr" -- $(entrypoint "$image") "$@" >"$log" 2>&1 &
  pids+=($!)
}
sim=(-e ZEUS_SIM_STATE=/tmp/zeus-sim-state)

step "zeus-exporter: the DaemonSet's command line, on the simulator"
image="$prefix/zeus-exporter:$version"
read -r -a words < <(python3 -c 'import json,sys; print(*json.loads(sys.argv[1]))' "$daemonset_command")
[ "${words[*]:0:2}" = "$(entrypoint "$image")" ] \
  || fail "the DaemonSet runs '${words[*]:0:2}', the image's entrypoint is '$(entrypoint "$image")'"
args=()
for w in "${words[@]:2}"; do
  case "$w" in
    0.0.0.0:9466) args+=("127.0.0.1:0") ;;        # loopback and a port the kernel picks, here
    '$(NODE_NAME)') args+=("image-test-node") ;;  # what Kubernetes substitutes
    *) args+=("$w") ;;
  esac
done
start exporter "$image" "$work/exporter.log" "${sim[@]}" -- "${args[@]}" --simulate --cpus none
listening_port port "$work/exporter.log" "zeus exporter: serving http://" "${pids[-1]}"
wait_for "the exporter image" curl -sf "http://127.0.0.1:$port/metrics"
curl -sf "http://127.0.0.1:$port/metrics" >"$work/metrics.txt"
grep -q '^zeus_gpu_energy_joules_total{.*hostname="image-test-node".*simulated="true"' "$work/metrics.txt" \
  || { cat "$work/exporter.log"; fail "the exporter image serves no simulated GPU energy for image-test-node"; }
user="$(image_config "$image" User)"
[ "${user%%:*}" != 0 ] && [ -n "$user" ] || fail "the exporter image runs as root ($user)"

step "zeusd: answers /discover on its socket"
image="$prefix/zeusd:$version"
mkdir "$work/zeusd"
cmd="$(image_config "$image" Cmd)"
# shellcheck disable=SC2086
start zeusd "$image" "$work/zeusd.log" "${sim[@]}" -e ZEUS_SIMULATE=1 -v "$work/zeusd:/run/zeusd" -- $cmd --enable gpu-read
wait_for "the zeusd image" test -S "$work/zeusd/zeusd.sock"
expect_discover "$work/zeusd/zeusd.sock" "$work/zeusd.log"
step "zeusd: its socket is root:9466 (the zeus group), mode 660: a stranger cannot connect, a member can"
[ "$(stat -c '%a %u %g' "$work/zeusd/zeusd.sock")" = "660 0 9466" ] \
  || fail "the zeusd image's socket is $(stat -c '%a %u %g' "$work/zeusd/zeusd.sock"), not mode 660 root:9466"
as_user() { setpriv --reuid 65534 --regid 65534 "$@"; }
if as_user --clear-groups curl -sf --unix-socket "$work/zeusd/zeusd.sock" http://zeusd/discover >/dev/null 2>&1; then
  fail "a user outside the zeus group (gid 9466) can use the zeusd image's socket"
fi
as_user --groups 9466 curl -sf --unix-socket "$work/zeusd/zeusd.sock" http://zeusd/discover >/dev/null \
  || fail "a member of the zeus group (gid 9466) cannot use the zeusd image's socket"
grep -q "who may use zeusd: 'root' (uid 0) and members of group 'zeus' (gid 9466)" "$work/zeusd.log" \
  || { cat "$work/zeusd.log"; fail "zeusd's log does not say who may use it"; }

step "zeus-bso-server: registers a job (POST /jobs) on SQLite in its volume"
image="$prefix/zeus-bso-server:$version"
start bso "$image" "$work/bso.log" -- --listen 127.0.0.1:0 --database /var/lib/zeus-bso/zeus-bso.db
listening_port port "$work/bso.log" "zeus bso-server: listening on " "${pids[-1]}"
wait_for "the bso-server image" curl -s "http://127.0.0.1:$port/jobs"
expect_bso_registration "http://127.0.0.1:$port" "$work/bso.log"
echo "images_test: OK"
