#!/usr/bin/env bash
# Installs etcd, containerd, runc and the CNI plugins from Debian, only when missing, and checks
# that their upstream versions are the ones pinned in versions.env. Needs root (apt-get).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

declare -A pinned=(
  [etcd-server]="$ETCD_VERSION"
  [containerd]="$CONTAINERD_VERSION"
  [runc]="$RUNC_VERSION"
  [containernetworking-plugins]="$CNI_PLUGINS_VERSION"
)

installed_version() { dpkg-query -W -f='${db:Status-Status} ${Version}' "$1" 2>/dev/null | sed -n 's/^installed //p'; }
# Debian version "1:1.6.20~ds1-1+deb12u3" -> upstream "1.6.20"
upstream_of() { local v="${1#*:}"; v="${v%%[-~+]*}"; echo "$v"; }

missing=()
for package in "${!pinned[@]}"; do
  [[ -n "$(installed_version "$package")" ]] || missing+=("$package")
done

if ((${#missing[@]})); then
  [[ $EUID -eq 0 ]] || die "packages ${missing[*]} are missing and installing them needs root"
  # The packages ship services; on a machine whose init would start them, stop what appeared
  # (by PID) so that nothing listens on etcd's default port outside the test bed's control.
  before="$(pgrep -x 'etcd|containerd' || true)"
  log "apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${missing[@]}" >&2 \
    || { apt-get -o DPkg::Lock::Timeout=600 update >&2 \
         && apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${missing[@]}" >&2; }
  for pid in $(pgrep -x 'etcd|containerd' || true); do
    grep -qx "$pid" <<<"$before" || { log "stopping service started by the package: pid $pid"; kill "$pid" || true; }
  done
fi

for package in "${!pinned[@]}"; do
  actual="$(upstream_of "$(installed_version "$package")")"
  [[ "$actual" == "${pinned[$package]}" ]] \
    || die "$package is at upstream version $actual, versions.env pins ${pinned[$package]}"
done
for tool in etcd containerd runc ctr; do command -v "$tool" >/dev/null || die "$tool not found after installing packages"; done
[[ -x /usr/lib/cni/bridge && -x /usr/lib/cni/host-local && -x /usr/lib/cni/loopback ]] \
  || die "CNI plugins bridge/host-local/loopback missing under /usr/lib/cni"
log "packages present: etcd ${ETCD_VERSION}, containerd ${CONTAINERD_VERSION}, runc ${RUNC_VERSION}, CNI plugins ${CNI_PLUGINS_VERSION}"
