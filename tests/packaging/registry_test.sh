#!/usr/bin/env bash
# Images as a cluster gets them: starts a real registry on loopback (Debian's
# docker-registry), pushes the images there with `scripts/build-images.sh
# --push`, renders the Kubernetes manifests for that registry
# (scripts/render-manifests.sh), pulls every image they name (and the
# batch-size server's) into an empty container storage, and runs the pulled
# images (tests/packaging/images_test.sh). Needs root.
#
#   tests/packaging/registry_test.sh 'EXPORTER_COMMAND_JSON'
set -euo pipefail
cd "$(dirname "$0")/../.."

fail() { echo "registry_test: FAIL: $*" >&2; exit 1; }
# shellcheck source=tests/packaging/checks.sh
. tests/packaging/checks.sh
step() { echo "== registry: $*"; }
[ $# -eq 1 ] || fail "usage: registry_test.sh EXPORTER_COMMAND_JSON"
command -v docker-registry >/dev/null || fail "docker-registry is missing (scripts/setup.sh installs it)"
version="$(dpkg-deb -f "$(ls dist/zeus_*.deb | head -1)" Version)"
work="$(mktemp -d /var/tmp/zeus-registry.XXXXXX)"
registry_pid=""
cleanup() {
  [ -z "$registry_pid" ] || { kill "$registry_pid" 2>/dev/null; wait "$registry_pid" 2>/dev/null; } || true
  # The pulled images' layers are mounted by the empty storage's driver.
  CONTAINERS_STORAGE_CONF="$work/storage.conf" buildah rm --all >/dev/null 2>&1 || true
  CONTAINERS_STORAGE_CONF="$work/storage.conf" buildah rmi --all --force >/dev/null 2>&1 || true
  umount -R "$work/storage" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

step "docker-registry on loopback"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
cat >"$work/registry.yml" <<YAML
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: $work/registry
http:
  addr: 127.0.0.1:$port
YAML
docker-registry serve "$work/registry.yml" >"$work/registry.log" 2>&1 &
registry_pid=$!
wait_for "the registry" curl -sf "http://127.0.0.1:$port/v2/"
registry="127.0.0.1:$port/zeus-native"

step "scripts/build-images.sh --push $registry"
scripts/build-images.sh --push "$registry" --tls-verify=false
curl -sf "http://127.0.0.1:$port/v2/_catalog" | grep -q '"zeus-native/zeusd"' || fail "the registry's catalog has no zeus-native/zeusd"

step "the manifests rendered for $registry name only pushed images"
scripts/render-manifests.sh --image-prefix "$registry" >"$work/manifests.yaml"
mapfile -t images < <(sed -n 's/^[[:space:]]*image:[[:space:]]*//p' "$work/manifests.yaml" | sort -u)
[ "${#images[@]}" -ge 2 ] || fail "the rendered manifests name ${#images[@]} images: ${images[*]}"

step "pulled into an empty container storage, then run"
cat >"$work/storage.conf" <<CONF
[storage]
driver = "overlay"
graphroot = "$work/storage"
runroot = "$work/run"
CONF
export CONTAINERS_STORAGE_CONF="$work/storage.conf"
[ -z "$(buildah images --quiet)" ] || fail "the new container storage is not empty"
for image in "${images[@]}" "$registry/zeus-bso-server:$version"; do
  case "$image" in "$registry"/*) ;; *) fail "the rendered manifests name $image, which is not from $registry" ;; esac
  buildah pull --quiet --tls-verify=false "$image" >/dev/null || fail "cannot pull $image"
done
tests/packaging/images_test.sh "$version" "$1" "$registry"
echo "registry_test: OK"
