#!/usr/bin/env bash
# Builds, once, the linearizability checker (Porcupine, a Go module, against the queue's log model) and prints the
# binary's path. Idempotent and cached outside the repository (clean clones and `mvn clean` reuse it): a stamp of
# the sources and the Go version decides whether to build again. Its own Go tests run before a build is kept.
# Needs the Go toolchain and the Go module proxy (first build only). QE_TOOLS_CACHE overrides the location.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [[ -z "${QE_TOOLS_CACHE:-}" ]]; then
  if [[ $EUID -eq 0 ]]; then QE_TOOLS_CACHE=/var/cache/queue-enterprise/tools; else QE_TOOLS_CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/queue-enterprise/tools"; fi
fi
command -v go >/dev/null || { echo "linearizability checker: the Go toolchain (go) is not on PATH" >&2; exit 1; }
binary="$QE_TOOLS_CACHE/qe-linearizability"
stamp="$(cd "$here" && cat go.mod go.sum $(ls *.go | sort) build.sh | sha256sum | cut -d' ' -f1) $(go env GOVERSION)"
if [[ -x "$binary" && -f "$binary.stamp" && "$(cat "$binary.stamp")" == "$stamp" ]]; then
  echo "$binary"
  exit 0
fi
mkdir -p "$QE_TOOLS_CACHE"
(
  cd "$here"
  export CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false -trimpath"
  go vet ./... >&2
  go test -count=1 ./... >&2
  go build -o "$binary.new" .
)
mv -f "$binary.new" "$binary"
echo "$stamp" > "$binary.stamp"
echo "$binary"
