#!/usr/bin/env bash
# Installs the Debian packages the test suite needs outside Kubernetes (strace, for NoOutboundCallsTest; iproute2,
# for the network-namespace fault tests' NetworkLab), only when missing; idempotent. Needs root for apt-get.
# Usage: scripts/install-test-packages.sh [package ...]   (no argument: all of them)
set -euo pipefail
if (($#)); then packages=("$@"); else packages=(strace iproute2); fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qx installed || missing+=("$p")
done
((${#missing[@]})) || exit 0
[[ $EUID -eq 0 ]] || { echo "install-test-packages: ${missing[*]} missing and installing needs root" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive
apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${missing[@]}" >&2 \
  || { apt-get -o DPkg::Lock::Timeout=600 update >&2 \
       && apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${missing[@]}" >&2; }
