#!/usr/bin/env bash
# Runs a command inside an unpacked Debian root (scripts/debian-root.sh) with
# /proc, /sys, /dev and /tmp of its own, as a user of that system would:
#
#   scripts/in-root.sh DIR COMMAND [ARG...]
#
# The mounts are private to this invocation (a new mount namespace), so they go
# away with it even if the command is killed. /sys is the host's, read-only: the
# tests use fake sysfs trees and the GPU simulator, never the host's devices.
set -euo pipefail

[ $# -ge 2 ] || { echo "in-root: usage: in-root.sh DIR COMMAND [ARG...]" >&2; exit 2; }
dir="$(cd "$1" && pwd)"; shift
[ -x "$dir/bin/sh" ] || { echo "in-root: '$dir' is not an unpacked root (no bin/sh)" >&2; exit 2; }

exec unshare --mount --propagation private -- /bin/bash -c '
  set -euo pipefail
  dir="$1"; shift
  mount -t proc proc "$dir/proc"
  mount --rbind -o ro /sys "$dir/sys" 2>/dev/null || mount --bind /sys "$dir/sys"
  mount --rbind /dev "$dir/dev"
  mount -t tmpfs tmpfs "$dir/tmp"
  cp /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true
  exec chroot "$dir" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" "$@"
' in-root "$dir" "$@"
