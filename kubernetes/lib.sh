# Shared by the test bed's scripts: pinned versions, the cache location and small helpers.
# Sourced, never run.

KUBERNETES_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPOSITORY_ROOT="$(cd "$KUBERNETES_DIR/.." && pwd)"
# shellcheck source=versions.env
source "$KUBERNETES_DIR/versions.env"

# Everything built or downloaded lives outside the repository so that clean clones and
# `mvn clean` reuse it. QE_K8S_CACHE overrides the location.
if [[ -z "${QE_K8S_CACHE:-}" ]]; then
  if [[ $EUID -eq 0 ]]; then
    QE_K8S_CACHE=/var/cache/queue-enterprise/k8s
  else
    QE_K8S_CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/queue-enterprise/k8s"
  fi
fi
export QE_K8S_CACHE
BIN_DIR="$QE_K8S_CACHE/bin"
IMAGES_DIR="$QE_K8S_CACHE/images"

KUBERNETES_BINARIES=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl)
HELPER_BINARIES=(qe-pause qe-podresources)

log() { printf '[k8s-testbed %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { printf '[k8s-testbed] ERROR: %s\n' "$*" >&2; exit 1; }

# A stamp is the hash of everything an output was built from; a differing or missing stamp means
# "build again". Keeps the scripts idempotent without trusting file times.
inputs_hash() { cat "$@" | sha256sum | cut -d' ' -f1; }
stamp_matches() { [[ -f "$1" && "$(cat "$1")" == "$2" ]]; }
