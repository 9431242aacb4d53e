#!/usr/bin/env bash
# Builds an OCI image as a `docker save`-format tar (manifest.json + config + layer tars) without
# a registry or a container engine: layers are deterministic tars (sorted, mtime 0, root-owned),
# so the same inputs always give the same image digest. `ctr images import` loads the result;
# a CI pushes the very same file with `skopeo copy docker-archive:...` (docs/kubernetes-testbed.md).
#
#   build-image.sh pause                                  -> $IMAGES_DIR/pause.tar
#   build-image.sh node --app-dir DIR --tag TAG [--output FILE]
#                                                         -> FILE, default $IMAGES_DIR/node-<content hash>.tar
#       DIR holds lib/*.jar (the runtime classpath) and bin/jvm.args
#   build-image.sh bench --app-dir DIR --tag TAG [--output FILE]
#                                                         -> FILE, default $IMAGES_DIR/bench-<content hash>.tar
#       DIR holds the bench module's runtime classpath in lib/*.jar and bin/jvm.args; the entrypoint is
#       `qe calibrate` (BenchTool calibrate), its default arguments production's; a Job passes its own bounds
#   build-image.sh operator --app-dir DIR --tag TAG [--output FILE]
#                                                         -> FILE, default $IMAGES_DIR/operator-<content hash>.tar
#       DIR holds the operator module's runtime classpath in lib/*.jar and bin/jvm.args (operator/target/operator-image-app);
#       the command runs io.queueenterprise.operator.QueueEnterpriseOperator (the chart's Deployment passes the same)
#   build-image.sh remote-client-example --app-dir DIR --tag TAG [--output FILE]
#                                                         -> FILE, default $IMAGES_DIR/remote-client-example-<content hash>.tar
#       DIR holds examples/remote-client's jar and runtime classpath in lib/*.jar and bin/jvm.args: an application
#       team's producer and consumer, built by Maven coordinates; a pod's args name the main class and its options
#
# Prints the path of the image tar on stdout. Idempotent: the default output is named by the hash of
# every input (jars, flag file, JDK, this script, the tag), so unchanged inputs rebuild nothing, and
# two branches' images never overwrite each other (tars not used for 3 days are pruned).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

PAUSE_IMAGE="queue-enterprise.local/pause:${KUBERNETES_VERSION}"
NODE_IMAGE_REPOSITORY="queue-enterprise.local/node"
BENCH_IMAGE_REPOSITORY="queue-enterprise.local/bench"
OPERATOR_IMAGE_REPOSITORY="queue-enterprise.local/operator"
REMOTE_CLIENT_EXAMPLE_IMAGE_REPOSITORY="queue-enterprise.local/remote-client-example"
BASE_PACKAGES=(libc6 libgcc-s1 libstdc++6 zlib1g)   # what the jlink runtime's libjvm/libzip link
# Modules of the node runtime: what the project's runtime jars need, per
#   jdeps --multi-release 17 --ignore-missing-deps --print-module-deps lib/*.jar
# (java.base,java.compiler,java.desktop,java.management,java.net.http,java.sql,jdk.httpserver,
#  jdk.security.auth,jdk.unsupported: the node's admin endpoint is the JDK's HttpServer, its admin client
#  the JDK's HttpClient),
# plus jdk.compiler (Chronicle compiles at run time; bin/jvm.args exports from it), java.instrument,
# jdk.jfr and jdk.management (diagnosing a pod), jdk.crypto.ec (TLS). The operator's jars need a subset
# (java.base,java.compiler,java.desktop,java.naming,java.net.http,java.sql,jdk.httpserver,jdk.unsupported), so
# every image shares this one runtime layer (jlinked once, stored once by containerd). Every image build runs jdeps
# on its jars (the bench image's excepted, below) and refuses, naming the module, when one they need is missing here
# (require_runtime_covers).
RUNTIME_MODULES=java.base,java.compiler,java.desktop,java.instrument,java.logging,java.management,java.naming,java.net.http,java.sql,java.xml,jdk.compiler,jdk.crypto.ec,jdk.httpserver,jdk.jfr,jdk.management,jdk.security.auth,jdk.unsupported

# A machine whose JDK 17 lives elsewhere points QE_K8S_IMAGE_JDK_HOME at it.
IMAGE_JDK_HOME="${QE_K8S_IMAGE_JDK_HOME:-$IMAGE_JDK_HOME}"

usage() { echo "usage: build-image.sh pause | node|bench|operator|remote-client-example --app-dir DIR --tag TAG [--output FILE]" >&2; exit 2; }

# The node image's user: a fixed non-root uid/gid (the operator's pods run as it and set it as fsGroup).
NODE_USER=10001:10001

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# make_layer ROOTFS_DIR OUT_TAR: a reproducible layer tar of the directory's content.
make_layer() {
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --format=posix \
    --pax-option='exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime' -C "$1" -cf "$2" .
}

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

json_array() { local first=true; printf '['; for item in "$@"; do $first || printf ','; first=false; printf '"%s"' "$item"; done; printf ']'; }

# write_image OUT_TAR REFERENCE ENTRYPOINT_JSON CMD_JSON ENV_JSON USER LAYER_TAR...
write_image() {
  local out="$1" reference="$2" entrypoint="$3" cmd="$4" env="$5" user="$6"; shift 6
  local archive="$work/archive" diff_ids=() layer_paths=()
  rm -rf "$archive"; mkdir -p "$archive"
  for layer in "$@"; do
    local digest; digest="$(sha256_of "$layer")"
    mkdir -p "$archive/$digest"
    cp "$layer" "$archive/$digest/layer.tar"
    diff_ids+=("sha256:$digest"); layer_paths+=("$digest/layer.tar")
  done
  local config="$work/config.json"
  printf '{"architecture":"amd64","os":"linux","created":"1970-01-01T00:00:00Z","config":{"User":"%s","Entrypoint":%s,"Cmd":%s,"Env":%s,"WorkingDir":"/"},"rootfs":{"type":"layers","diff_ids":%s}}' \
    "$user" "$entrypoint" "$cmd" "$env" "$(json_array "${diff_ids[@]}")" > "$config"
  local config_digest; config_digest="$(sha256_of "$config")"
  mv "$config" "$archive/$config_digest.json"
  printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":%s}]' \
    "$config_digest" "$reference" "$(json_array "${layer_paths[@]}")" > "$archive/manifest.json"
  make_layer "$archive" "$out.partial"
  mv "$out.partial" "$out"
}

build_pause() {
  local out="$IMAGES_DIR/pause.tar" stamp_file="$IMAGES_DIR/pause.stamp"
  [[ -x "$BIN_DIR/qe-pause" ]] || die "$BIN_DIR/qe-pause is missing: run build-binaries.sh first"
  local stamp; stamp="$(inputs_hash "$KUBERNETES_DIR/versions.env" "$0" "$BIN_DIR/qe-pause")"
  if [[ -f "$out" ]] && stamp_matches "$stamp_file" "$stamp"; then echo "$out"; return; fi
  mkdir -p "$work/rootfs" "$IMAGES_DIR"
  install -m 0755 "$BIN_DIR/qe-pause" "$work/rootfs/pause"
  make_layer "$work/rootfs" "$work/pause-layer.tar"
  write_image "$out" "$PAUSE_IMAGE" '["/pause"]' '[]' '[]' "" "$work/pause-layer.tar"
  echo "$stamp" > "$stamp_file"
  log "pause image $PAUSE_IMAGE -> $out"
  echo "$out"
}

# The Debian userland the runtime links against, at the host's versions (the runtime is jlinked
# from the host's JDK, built against exactly these). Cached per version set.
base_layer() {
  local versions=() package
  for package in "${BASE_PACKAGES[@]}"; do
    versions+=("$package=$(dpkg-query -W -f='${Version}' "$package:amd64" 2>/dev/null || dpkg-query -W -f='${Version}' "$package")")
  done
  local key; key="$(printf '%s\n' "${versions[@]}" | sha256sum | cut -c1-16)"
  local layer="$IMAGES_DIR/layers/base-$key.tar"
  if [[ ! -f "$layer" ]]; then
    local debs="$work/debs" rootfs="$work/base-rootfs"
    mkdir -p "$debs" "$rootfs/tmp" "$IMAGES_DIR/layers"
    log "downloading ${versions[*]} from Debian"
    (cd "$debs" && apt-get -o APT::Sandbox::User=root download "${versions[@]}" >&2) \
      || (apt-get update >&2 && cd "$debs" && apt-get -o APT::Sandbox::User=root download "${versions[@]}" >&2)
    for deb in "$debs"/*.deb; do dpkg-deb -x "$deb" "$rootfs"; done
    rm -rf "$rootfs/usr/share/doc" "$rootfs/usr/share/man" "$rootfs/usr/share/locale" "$rootfs/usr/share/lintian"
    chmod 1777 "$rootfs/tmp"   # JNA unpacks its native library to java.io.tmpdir
    make_layer "$rootfs" "$layer.partial" && mv "$layer.partial" "$layer"
  fi
  echo "$layer"
}

runtime_layer() {
  [[ -x "$IMAGE_JDK_HOME/bin/jlink" ]] || die "no jlink at $IMAGE_JDK_HOME (versions.env IMAGE_JDK_HOME)"
  local key; key="$( (cat "$IMAGE_JDK_HOME/release"; echo "$RUNTIME_MODULES") | sha256sum | cut -c1-16)"
  local layer="$IMAGES_DIR/layers/runtime-$key.tar"
  if [[ ! -f "$layer" ]]; then
    local rootfs="$work/runtime-rootfs"
    mkdir -p "$rootfs/opt" "$IMAGES_DIR/layers"
    log "jlink runtime from $IMAGE_JDK_HOME"
    "$IMAGE_JDK_HOME/bin/jlink" --add-modules "$RUNTIME_MODULES" --strip-debug --no-header-files \
      --no-man-pages --compress=2 --output "$rootfs/opt/java" >&2
    make_layer "$rootfs" "$layer.partial" && mv "$layer.partial" "$layer"
  fi
  echo "$layer"
}

# require_runtime_covers APP_DIR: the modules jdeps says the jars need are all in RUNTIME_MODULES (a jar added to
# an image that needs, say, java.scripting would otherwise fail only when a pod runs it). Run only when the image's
# inputs changed (jdeps takes ~10 s on ~70 jars).
require_runtime_covers() {
  local needed module missing=()
  needed="$("$IMAGE_JDK_HOME/bin/jdeps" --multi-release 17 --ignore-missing-deps --print-module-deps "$1"/lib/*.jar 2>/dev/null)" \
    || die "jdeps failed on $1/lib/*.jar (run it by hand to see why)"
  for module in ${needed//,/ }; do
    [[ ",$RUNTIME_MODULES," == *",$module,"* ]] || missing+=("$module")
  done
  ((${#missing[@]} == 0)) || die "the jars in $1/lib need JDK modules the image runtime lacks: ${missing[*]} (add them to RUNTIME_MODULES)"
}

# build_app KIND REPOSITORY REQUIRED_JAR_GLOB ENTRYPOINT_JSON CMD_JSON --app-dir DIR --tag TAG [--output FILE]
build_app() {
  local kind="$1" repository="$2" required_jar="$3" entrypoint="$4" cmd="$5"; shift 5
  local app_dir="" tag="" out=""
  while (($#)); do
    case "$1" in
      --app-dir) app_dir="${2:?}"; shift 2 ;;
      --tag) tag="${2:?}"; shift 2 ;;
      --output) out="${2:?}"; shift 2 ;;
      *) usage ;;
    esac
  done
  [[ -n "$app_dir" && -n "$tag" ]] || usage
  [[ -f "$app_dir/bin/jvm.args" ]] || die "$app_dir/bin/jvm.args is missing (package the kubernetes-testbed module first)"
  compgen -G "$app_dir/lib/*.jar" >/dev/null || die "no jars in $app_dir/lib (package the kubernetes-testbed module first)"
  compgen -G "$app_dir/lib/$required_jar" >/dev/null \
    || die "no $required_jar in $app_dir/lib: the $kind image would not run its entrypoint"
  local reference="$repository:$tag" stamp
  stamp="$( (inputs_hash "$KUBERNETES_DIR/versions.env" "$0" "$IMAGE_JDK_HOME/release"; echo "$reference";
             cd "$app_dir" && find . -type f | LC_ALL=C sort | xargs sha256sum) | sha256sum | cut -d' ' -f1)"
  mkdir -p "$IMAGES_DIR"
  local stamp_file
  if [[ -z "$out" ]]; then
    out="$IMAGES_DIR/$kind-${stamp:0:16}.tar"
    # content-addressed: other inputs' images (other branches, older builds) stay until unused for 3 days
    find "$IMAGES_DIR" -maxdepth 1 \( -name "$kind-*.tar" -o -name "$kind-*.stamp" -o -name "$kind.tar" -o -name "$kind.stamp" \) \
      -mtime +3 -delete 2>/dev/null || true
  fi
  stamp_file="$out.stamp"
  if [[ -f "$out" ]] && stamp_matches "$stamp_file" "$stamp"; then touch "$out" "$stamp_file"; echo "$out"; return; fi
  # not the bench image: jdeps cannot resolve its module graph (progressbar requires a module name that its jline
  # jar does not declare) and stops; its modules were checked by hand (docs/kubernetes-testbed.md)
  [[ "$kind" == bench ]] || require_runtime_covers "$app_dir"
  local base runtime
  base="$(base_layer)"
  runtime="$(runtime_layer)"
  local app_rootfs="$work/app-rootfs/opt/queue-enterprise"
  mkdir -p "$app_rootfs/lib" "$app_rootfs/bin"
  cp "$app_dir"/lib/*.jar "$app_rootfs/lib/"
  cp "$app_dir/bin/jvm.args" "$app_rootfs/bin/jvm.args"
  make_layer "$work/app-rootfs" "$work/app-layer.tar"
  write_image "$out" "$reference" "$entrypoint" "$cmd" \
    '["PATH=/opt/java/bin:/usr/bin:/bin","JAVA_HOME=/opt/java"]' \
    "$NODE_USER" "$base" "$runtime" "$work/app-layer.tar"
  echo "$stamp" > "$stamp_file"
  log "$kind image $reference -> $out"
  echo "$out"
}

# The entrypoint is the JVM with the project's ONE flag file and classpath; the command is the main
# class and its arguments. Default: the node (`qe node --help`); the operator's pods pass
# `io.queueenterprise.cli.QeCommand node --config /etc/queue-enterprise/config/$(POD_NAME).yaml`, the
# test bed's probes their own main class. It runs as uid/gid 10001 and writes nothing outside its
# mounted volumes (data, /dev/shm for Aeron, /tmp for the JVM), so a read-only root file system holds.
build_node() {
  build_app node "$NODE_IMAGE_REPOSITORY" 'queue-enterprise-cli-*.jar' \
    '["/opt/java/bin/java","@/opt/queue-enterprise/bin/jvm.args","-cp","/opt/queue-enterprise/lib/*"]' \
    '["io.queueenterprise.cli.QeCommand","node","--help"]' "$@"
}

# The bench image: `qe calibrate` is the entrypoint; its arguments (the command) default to production's
# (calibrate's own defaults: a 300 s time limit); a calibration Job passes its bounds and --output
# /dev/termination-log. qe.jvm.args.file lets the harness start each subject's JVM with the same flags.
# Same user and read-only root as the node: queues go to /dev/shm, the JVM's files to /tmp.
build_bench() {
  build_app bench "$BENCH_IMAGE_REPOSITORY" 'queue-enterprise-bench-*.jar' \
    '["/opt/java/bin/java","@/opt/queue-enterprise/bin/jvm.args","-Dqe.jvm.args.file=/opt/queue-enterprise/bin/jvm.args","-cp","/opt/queue-enterprise/lib/*","io.queueenterprise.bench.cli.BenchTool","calibrate"]' \
    '[]' "$@"
}

# The operator image: the same entrypoint as the node (the JVM with the one flag file and the classpath), the command
# the operator's main class; the chart's Deployment passes the same as args. Same non-root user and read-only root:
# the operator writes only to /tmp (an emptyDir: the JVM's temporary files).
build_operator() {
  build_app operator "$OPERATOR_IMAGE_REPOSITORY" 'queue-enterprise-operator-*.jar' \
    '["/opt/java/bin/java","@/opt/queue-enterprise/bin/jvm.args","-cp","/opt/queue-enterprise/lib/*"]' \
    '["io.queueenterprise.operator.QueueEnterpriseOperator"]' "$@"
}

# The remote-client example (examples/remote-client): an application outside the queue's pods, on the same base and
# runtime layers, entrypoint and user as the node; the command names the producer or the consumer and its options
# (default: the producer's --help). It writes only to /dev/shm (its embedded Aeron driver) and /tmp.
build_remote_client_example() {
  build_app remote-client-example "$REMOTE_CLIENT_EXAMPLE_IMAGE_REPOSITORY" 'remote-client-example-*.jar' \
    '["/opt/java/bin/java","@/opt/queue-enterprise/bin/jvm.args","-cp","/opt/queue-enterprise/lib/*"]' \
    '["com.example.remote.Producer","--help"]' "$@"
}

case "${1:-}" in
  pause) shift; (($# == 0)) || usage; build_pause ;;
  node) shift; build_node "$@" ;;
  bench) shift; build_bench "$@" ;;
  operator) shift; build_operator "$@" ;;
  remote-client-example) shift; build_remote_client_example "$@" ;;
  *) usage ;;
esac
