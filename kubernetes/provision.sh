#!/usr/bin/env bash
# Everything the test bed needs, idempotent and cached in $QE_K8S_CACHE: Debian packages (etcd,
# containerd, runc, CNI plugins), the Kubernetes binaries and kwok built from Go modules, and the
# pause image. The node image needs the project's jars: build-image.sh node (the Maven build runs it).
# A warm run takes about a second.
set -euo pipefail
here="$(dirname "$0")"
"$here/install-packages.sh"
"$here/build-binaries.sh"
"$here/build-image.sh" pause >/dev/null
