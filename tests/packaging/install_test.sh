#!/usr/bin/env bash
# Installs dist/*.deb (scripts/build-packages.sh) into a clean Debian 12 root
# (scripts/debian-root.sh bookworm: mmdebstrap minbase, Debian's archive only)
# with apt-get, dependencies from Debian, and checks that what they install
# works there: zeus show-env and demo on the simulator, zeusd answering
# /discover on its socket, the exporter answering /metrics, the batch-size
# server registering a job on SQLite; the systemd units (systemd-analyze
# verify and security, no less hardened than the original zeusd unit); then
# that `apt-get purge` leaves no file and no group behind. Needs root (chroot).
# Run by scripts/test-packages.sh after scripts/build-packages.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."

fail() { echo "install_test: FAIL: $*" >&2; exit 1; }
# shellcheck source=tests/packaging/checks.sh
. tests/packaging/checks.sh
step() { echo "== packages: $*"; }
[ "$(id -u)" = 0 ] || fail "needs root (chroot into the clean root)"
packages=(libzeus libzeus-dev zeus zeusd zeus-exporter)
for p in "${packages[@]}"; do ls dist/"${p}"_*.deb >/dev/null 2>&1 || fail "dist/ has no ${p} package"; done

# The original zeusd unit's `systemd-analyze security --offline=true` exposure
# (zeusd/packaging/systemd/zeusd.service, measured with systemd 252): ours may
# not be more exposed.
original_exposure=3.6

# systemd in the root, as on a real node: the maintainer scripts take their
# systemd paths (sysusers, deb-systemd-helper) and must still start nothing in
# a chroot, and systemd-analyze verifies the units against the root's systemd.
tarball="$(scripts/debian-root.sh bookworm systemd)"
work="$(mktemp -d /var/tmp/zeus-packages.XXXXXX)"
root="$work/root"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
scripts/debian-root.sh --enter "$tarball" "$root" >/dev/null
in_root() { scripts/in-root.sh "$root" "$@"; }
# Servers start as `scripts/in-root.sh ... &`, not through in_root, so that
# $! is the server itself (in-root.sh execs down to it) and kill reaches it.
processes_in_root() {
  for proc in /proc/[0-9]*; do
    [ "$(readlink "$proc/root" 2>/dev/null)" = "$root" ] && echo "${proc#/proc/}"
  done
  return 0
}

# Every file of the root but the package manager's own state and caches.
snapshot() {
  (cd "$root" && find . -xdev \( -path ./proc -o -path ./sys -o -path ./dev -o -path ./tmp -o -path ./run \
     -o -path ./var/cache -o -path ./var/lib/apt -o -path ./var/lib/dpkg -o -path ./var/log -o -path ./debs \) -prune \
     -o -print | sort)
}
snapshot >"$work/before"
grep -q '^zeus:' "$root/etc/group" && fail "the clean root already has a zeus group"

step "apt-get install ./*.deb into a clean Debian 12 root"
mkdir "$root/debs"
cp dist/*.deb "$root/debs/"
in_root apt-get update -qq
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
  $(for p in "${packages[@]}"; do ls "$root"/debs/"${p}"_*.deb | sed "s|^$root||"; done) >"$work/install.log" 2>&1 \
  || { cat "$work/install.log"; fail "apt-get install of the packages failed"; }
for p in "${packages[@]}"; do in_root dpkg -s "$p" >/dev/null || fail "$p is not installed"; done
grep -q '^zeus:' "$root/etc/group" || fail "no zeus group after install (sysusers.d)"
# The maintainer scripts started no service in the chroot.
[ -z "$(processes_in_root)" ] || fail "processes $(processes_in_root) run in the root after install"
for f in /usr/bin/zeus /usr/bin/zeus-sim /usr/sbin/zeusd /usr/lib/libzeus.so.0 /usr/lib/zeus-sim/libnvidia-ml.so.1; do
  file_out="$(file -bL "$root$f")"
  case "$file_out" in *", stripped"*) ;; *) fail "$f is not stripped: $file_out" ;; esac
done

step "libzeus-dev: find_package(zeus) from the packages' files builds and runs a consumer"
mkdir "$work/extracted"
for p in libzeus libzeus-dev zeus; do dpkg-deb -x dist/"${p}"_*.deb "$work/extracted"; done
cmake -S tests/install/consumer -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/extracted/usr" >/dev/null
cmake --build "$work/consumer" >/dev/null
env -u CUDA_VISIBLE_DEVICES -u ZEUS_SIM_CONFIG -u ZEUS_SIM_LIBRARY ZEUS_SIMULATE=1 ZEUS_SIM_STATE="$work/consumer/state" \
  LD_LIBRARY_PATH="$work/extracted/usr/lib" "$work/consumer/consumer" | grep -q "GPU 1 NVIDIA A100-SXM4-40GB" \
  || fail "the consumer built against libzeus-dev does not see the simulated GPUs"

sim_env=(env ZEUS_SIM_STATE=/var/tmp/zeus-sim-state)
step "zeus show-env --simulate"
in_root "${sim_env[@]}" zeus show-env --simulate --format json >"$work/show-env.json"
grep -q '"simulated": true' "$work/show-env.json" || fail "show-env: no simulated GPU: $(cat "$work/show-env.json")"
step "zeus demo --simulate"
in_root "${sim_env[@]}" zeus demo --simulate --seconds 2 >"$work/demo.txt" 2>&1 || { cat "$work/demo.txt"; fail "zeus demo failed"; }
grep -qi "J" "$work/demo.txt" || fail "zeus demo printed no energy: $(cat "$work/demo.txt")"


step "zeusd serve, as the packaged service runs it (/etc/default/zeusd), answers /discover on its socket"
# The unit's RuntimeDirectory=zeusd (mode 0755) and ExecStart=zeusd serve $ZEUSD_ARGS.
mkdir -p -m 0755 "$root/run/zeusd"
# shellcheck disable=SC1091
zeusd_args="$(. "$root/etc/default/zeusd" && echo "$ZEUSD_ARGS")"
# shellcheck disable=SC2086
scripts/in-root.sh "$root" "${sim_env[@]}" ZEUS_SIMULATE=1 zeusd serve $zeusd_args >"$work/zeusd.log" 2>&1 &
pids+=($!)
wait_for "zeusd" test -S "$root/run/zeusd/zeusd.sock"
expect_discover "$root/run/zeusd/zeusd.sock" "$work/zeusd.log"
head -1 "$work/zeusd.log" | grep -q "who may use zeusd: 'root' (uid 0) and members of group 'zeus'" \
  || { cat "$work/zeusd.log"; fail "zeusd's first log line does not say that root and the zeus group may use it"; }

step "the packaged zeusd: a member of the zeus group may use it, another user may not"
in_root useradd --no-create-home --groups zeus alice
in_root useradd --no-create-home bob
zeusd_seen_by() {  # USER: `zeus show-env` run as USER with ZEUSD_SOCK_PATH set, its zeusd section
  in_root runuser -u "$1" -- env ZEUSD_SOCK_PATH=/run/zeusd/zeusd.sock ZEUS_SIM_STATE="/tmp/zeus-sim-$1" \
    zeus show-env --simulate --format json >"$work/show-env-$1.json" 2>&1 || true
  python3 -c 'import json, sys; z = json.load(open(sys.argv[1]))["zeusd"]; print(z["reachable"], json.dumps(z.get("error")))' \
    "$work/show-env-$1.json"
}
alice="$(zeusd_seen_by alice)"
[ "${alice%% *}" = True ] || fail "alice (group zeus) cannot use the packaged zeusd: $alice"
bob="$(zeusd_seen_by bob)"
[ "${bob%% *}" = False ] || fail "bob (not in group zeus) can use the packaged zeusd: $bob"
case "$bob" in *ermission*) ;; *) fail "bob's show-env does not say that permission was refused: $bob" ;; esac

step "zeus exporter answers /metrics"
scripts/in-root.sh "$root" "${sim_env[@]}" zeus exporter --simulate --cpus none --listen 127.0.0.1:0 >"$work/exporter.log" 2>&1 &
pids+=($!)
listening_port port "$work/exporter.log" "zeus exporter: serving http://" "$!"
wait_for "zeus exporter" curl -sf "http://127.0.0.1:$port/metrics"
curl -sf "http://127.0.0.1:$port/metrics" | grep -q '^zeus_gpu_energy_joules_total{.*simulated="true"' \
  || { cat "$work/exporter.log"; fail "exporter /metrics has no simulated GPU energy"; }

step "zeus bso-server on SQLite registers a job (POST /jobs, the original's route)"
scripts/in-root.sh "$root" zeus bso-server --database /var/tmp/zeus-bso.db --listen 127.0.0.1:0 >"$work/bso.log" 2>&1 &
pids+=($!)
listening_port port "$work/bso.log" "zeus bso-server: listening on " "$!"
wait_for "zeus bso-server" curl -s "http://127.0.0.1:$port/jobs"
expect_bso_registration "http://127.0.0.1:$port" "$work/bso.log"

for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
pids=()
[ -z "$(processes_in_root)" ] || fail "processes $(processes_in_root) still run in the root after the servers were stopped"

step "systemd units: systemd-analyze verify and security (exposure <= the original zeusd's $original_exposure)"
for unit in zeusd.service zeus-exporter.service; do
  path="$root/lib/systemd/system/$unit"
  [ -f "$path" ] || fail "$unit is not installed in /lib/systemd/system"
  grep -q "^ExecStart=/usr/s\?bin/zeus" "$path" || fail "$unit: ExecStart does not name the installed prefix: $(grep ExecStart "$path")"
  systemd-analyze verify --root="$root" "$unit" 2>&1 | tee "$work/verify.txt" | grep -v "^$" || true
  grep -qi "error\|fail\|unknown" "$work/verify.txt" && fail "systemd-analyze verify $unit"
  for directive in SystemCallFilter ProtectKernelLogs ProtectKernelModules ProtectControlGroups KeyringMode RemoveIPC \
                   RestrictNamespaces RestrictSUIDSGID NoNewPrivileges ProtectSystem=strict CapabilityBoundingSet; do
    grep -q "^$directive" "$path" || fail "$unit lacks $directive (the original zeusd unit has it)"
  done
  exposure="$(systemd-analyze security --offline=true --root="$root" "$unit" 2>&1 | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')"
  [ -n "$exposure" ] || fail "systemd-analyze security gave no exposure for $unit"
  awk -v a="$exposure" -v b="$original_exposure" 'BEGIN { exit !(a <= b) }' \
    || fail "$unit: exposure $exposure is above the original zeusd unit's $original_exposure"
  echo "$unit: exposure $exposure (original zeusd: $original_exposure)"
done

step "apt-get purge leaves nothing behind"
in_root env DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "${packages[@]}" >"$work/purge.log" 2>&1 \
  || { cat "$work/purge.log"; fail "apt-get purge failed"; }
in_root env DEBIAN_FRONTEND=noninteractive apt-get autoremove --purge -y -qq >>"$work/purge.log" 2>&1 \
  || { cat "$work/purge.log"; fail "apt-get autoremove --purge failed"; }
in_root userdel alice
in_root userdel bob
# useradd's backups of the subordinate id files, which the clean root did not have.
for backup in etc/subuid- etc/subgid-; do grep -qx "./$backup" "$work/before" || rm -f "${root:?}/$backup"; done
rm -rf "$root/debs" "$root/run/zeusd" "$root"/var/tmp/zeus-bso.db* "$root/var/tmp/zeus-sim-state"
snapshot >"$work/after"
if ! diff "$work/before" "$work/after" >"$work/left.diff"; then
  cat "$work/left.diff"
  fail "files left behind (or removed) after purge"
fi
grep -q '^zeus:' "$root/etc/group" && fail "the zeus group is left after purge"
echo "install_test: OK"
