#!/usr/bin/env bash
# Runs a command in a private mount namespace whose debugfs/tracefs mounts are in one of the
# states users' hosts have, so tests see what vperf does there:
#   systemd         debugfs at /sys/kernel/debug, tracefs at /sys/kernel/tracing and below
#                   debugfs at /sys/kernel/debug/tracing (systemd's sys-kernel-{debug,tracing}.mount)
#   debugfs-only    debugfs at /sys/kernel/debug with tracefs only at /sys/kernel/debug/tracing
#                   (older hosts, and tools that mount debugfs themselves)
#   tracefs-only    tracefs at /sys/kernel/tracing, no debugfs (these machines, CI)
#   none            neither mounted
# Usage: in_mount_state.sh STATE COMMAND [ARG...]
# Exits 77 (CTest's skip code, with the reason on stderr) where a private mount namespace cannot
# be made (not root, no unshare); otherwise exits with COMMAND's status. The host's mounts are
# never touched: every mount and unmount happens inside the namespace.
set -euo pipefail
state=${1:?usage: in_mount_state.sh STATE COMMAND [ARG...]}
shift
case "$state" in systemd | debugfs-only | tracefs-only | none) ;; *)
  echo "in_mount_state.sh: unknown state '$state' (systemd, debugfs-only, tracefs-only, none)" >&2
  exit 2 ;;
esac
if [ -z "${VPERF_IN_MOUNT_STATE:-}" ]; then
  if [ "$(id -u)" -ne 0 ] || ! unshare -m --propagation private true 2>/dev/null; then
    echo "SKIP: a private mount namespace needs root and unshare(CLONE_NEWNS)" >&2
    exit 77
  fi
  VPERF_IN_MOUNT_STATE=$state exec unshare -m --propagation private "$0" "$state" "$@"
fi

mounted() { awk -v m="$1" -v t="$2" '$5 == m && $0 ~ (" - " t " ") { found = 1 } END { exit !found }' /proc/self/mountinfo; }
unmount_all() {  # every mount stacked on $1, innermost first
  while grep -q " $1 " /proc/self/mountinfo; do umount -l "$1"; done
}

unmount_all /sys/kernel/debug/tracing 2>/dev/null || true
unmount_all /sys/kernel/debug
unmount_all /sys/kernel/tracing
case "$state" in
  systemd)
    mount -t debugfs debugfs /sys/kernel/debug
    mount -t tracefs tracefs /sys/kernel/tracing
    mount -t tracefs tracefs /sys/kernel/debug/tracing ;;
  debugfs-only)
    mount -t debugfs debugfs /sys/kernel/debug
    mount -t tracefs tracefs /sys/kernel/debug/tracing ;;
  tracefs-only)
    mount -t tracefs tracefs /sys/kernel/tracing ;;
  none) ;;
esac

# The state is checked, not assumed: a kernel without debugfs or tracefs fails here, loudly.
want_debugfs=no want_tracefs=no want_debug_tracing=no
case "$state" in
  systemd) want_debugfs=yes want_tracefs=yes want_debug_tracing=yes ;;
  debugfs-only) want_debugfs=yes want_debug_tracing=yes ;;
  tracefs-only) want_tracefs=yes ;;
esac
check() {
  local want=$1 where=$2 type=$3 have=no
  if mounted "$where" "$type"; then have=yes; fi
  if [ "$have" != "$want" ]; then
    echo "in_mount_state.sh: state $state wants $type at $where: $want, has: $have" >&2
    exit 1
  fi
}
check "$want_debugfs" /sys/kernel/debug debugfs
check "$want_tracefs" /sys/kernel/tracing tracefs
check "$want_debug_tracing" /sys/kernel/debug/tracing tracefs
exec "$@"
