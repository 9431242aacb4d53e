#!/usr/bin/env bash
# Runs the single-node test cluster: etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
# containerd and a kubelet with the static CPU manager, bound to 127.0.0.1 (the kubelet to the node
# IP on a bridge of the run's own), all state under $QE_K8S_STATE. Needs root and what
# provision.sh provides.
#
#   node.sh up [--for-tests]    start (after cleaning what a crashed run left); waits for Ready.
#                               Prints "started", or "reused" when a cluster started by a person
#                               (without --for-tests) is already healthy; one that a test run
#                               started is a crashed run's leftover: torn down and started afresh.
#                               One started by a person that is not healthy is never torn down
#                               implicitly (its volumes may hold queues): up exits 1 naming the
#                               part that is down; `node.sh down` removes it.
#                               Started by a person (without --for-tests), it also starts the
#                               cluster services, one JVM (kubernetes-testbed's ClusterServices, from
#                               $QE_K8S_SERVICES_APP_DIR, default kubernetes-testbed/target/cluster-services-app:
#                               `./mvnw -pl kubernetes-testbed -am package` stages it): the cluster DNS
#                               on $NODE_IP:53 that the tests otherwise serve from their own JVM, and a
#                               local volume provisioner, the default StorageClass qe-local (a directory
#                               per claim under $STATE/volumes), so that a QueueCluster's pods resolve
#                               each other and get their volumes
#   node.sh down                stop everything by recorded PID (the cluster services included),
#                               unmount, remove netns, bridges and /kubepods cgroups, restore host
#                               sysctls, delete the state (the provisioned volumes with it), then
#                               check that nothing is left (exit 1 naming what is)
#   node.sh status              exit 0 when a cluster started by this script is healthy
#   node.sh import-image TAR    load an image tar into the node's containerd (k8s.io namespace)
#   node.sh env                 print KUBECONFIG=..., POD_RESOURCES_SOCKET=..., ... for tools
set -euo pipefail
source "$(dirname "$0")/lib.sh"

STATE="${QE_K8S_STATE:-/var/lib/qe-k8s-testbed}"
PIDS="$STATE/pids"; LOGS="$STATE/logs"; PKI="$STATE/pki"
NODE_NAME=qe-node
ETCD_CLIENT_PORT="${QE_K8S_ETCD_PORT:-23791}"
ETCD_PEER_PORT="${QE_K8S_ETCD_PEER_PORT:-23801}"
APISERVER_PORT="${QE_K8S_APISERVER_PORT:-16443}"
KUBELET_PORT="${QE_K8S_KUBELET_PORT:-20250}"
KUBELET_HEALTHZ_PORT="${QE_K8S_KUBELET_HEALTHZ_PORT:-20248}"
CONTROLLER_MANAGER_PORT="${QE_K8S_CONTROLLER_MANAGER_PORT:-20257}"
SCHEDULER_PORT="${QE_K8S_SCHEDULER_PORT:-20259}"
CONTAINERD_SOCKET="$STATE/containerd/containerd.sock"
KUBELET_ROOT="$STATE/kubelet"
CNI_BRIDGE=qe-cni0
# The kubelet refuses a loopback node IP, so the node gets its own address on a bridge this run
# creates: local to this machine, reachable from nowhere else (no dummy links on this kernel).
NODE_BRIDGE=qe-node0
NODE_IP="${QE_K8S_NODE_IP:-10.87.0.1}"
CLUSTER_DOMAIN=cluster.local
PAUSE_IMAGE="queue-enterprise.local/pause:${KUBERNETES_VERSION}"
# What the kubelet (and the CNI bridge's ip_forward) change on the host; saved once per run and
# restored by `down`. The saved file survives a crash, so the next run restores the originals.
HOST_SYSCTLS=(vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops
              kernel.keys.root_maxkeys kernel.keys.root_maxbytes net.ipv4.ip_forward)
SYSCTLS_SAVED="${QE_K8S_SYSCTLS_SAVED:-/var/lib/qe-k8s-testbed.sysctls}"
COMPONENTS=(etcd containerd kube-apiserver kube-controller-manager kube-scheduler kubelet)
SERVICES_APP_DIR="${QE_K8S_SERVICES_APP_DIR:-$REPOSITORY_ROOT/kubernetes-testbed/target/cluster-services-app}"
SERVICES_JAVA="${QE_K8S_IMAGE_JDK_HOME:-$IMAGE_JDK_HOME}/bin/java"

require_root() { [[ $EUID -eq 0 ]] || die "node.sh $1 needs root (it runs a kubelet and containerd)"; }

kubectl_() { "$BIN_DIR/kubectl" --kubeconfig "$STATE/admin.kubeconfig" "$@"; }

# ---------------------------------------------------------------------------------------------
# processes

binary_of() {
  case "$1" in
    etcd) command -v etcd ;; containerd) command -v containerd ;; cluster-services) echo "$SERVICES_JAVA" ;;
    *) echo "$BIN_DIR/$1" ;;
  esac
}

# The recorded PID, only if that process still runs the component's binary (PIDs get reused).
live_pid() {
  local pid_file="$PIDS/$1.pid" pid exe
  [[ -f "$pid_file" ]] || return 1
  pid="$(cat "$pid_file")"
  exe="$(readlink "/proc/$pid/exe" 2>/dev/null)" || return 1
  [[ "${exe% (deleted)}" == "$(readlink -f "$(binary_of "$1")")" ]] || return 1
  echo "$pid"
}

start_component() {
  local name="$1"; shift
  mkdir -p "$PIDS" "$LOGS"
  # setsid: own session, so the JVM or shell that started the cluster can exit independently.
  setsid "$(binary_of "$name")" "$@" >>"$LOGS/$name.log" 2>&1 </dev/null &
  echo $! > "$PIDS/$name.pid"
}

# SIGTERM to all the given components at once, then wait for each; SIGKILL after the grace time
# (default 10 s; `--grace N` first).
stop_components() {
  local grace=10
  [[ "$1" == --grace ]] && { grace="$2"; shift 2; }
  local name pid names=() pids=()
  for name in "$@"; do
    if pid="$(live_pid "$name")"; then
      kill -TERM "$pid" 2>/dev/null && { names+=("$name"); pids+=("$pid"); }
    fi
    rm -f "$PIDS/$name.pid"
  done
  local deadline=$((SECONDS + grace)) i
  for i in "${!pids[@]}"; do
    while [[ -d "/proc/${pids[$i]}" ]] && ((SECONDS < deadline)); do sleep 0.05; done
    if [[ -d "/proc/${pids[$i]}" ]]; then
      log "${names[$i]} (pid ${pids[$i]}) still runs ${grace} s after SIGTERM: SIGKILL"
      kill -KILL "${pids[$i]}" 2>/dev/null || true
      while [[ -d "/proc/${pids[$i]}" ]]; do sleep 0.05; done
    fi
    log "stopped ${names[$i]} (pid ${pids[$i]})"
  done
}

wait_until() {
  local seconds="$1" what="$2"; shift 2
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || die "$what not reached within ${seconds} s (logs: $LOGS)"
    sleep 0.2
  done
}

# ---------------------------------------------------------------------------------------------
# configuration

make_pki() {
  mkdir -p "$PKI"; cd "$PKI"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 -subj "/CN=qe-k8s-testbed-ca" 2>/dev/null
  openssl genrsa -out sa.key 2048 2>/dev/null
  openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
  # name subject SAN-list
  issue() {
    openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "$2" 2>/dev/null
    local ext="extendedKeyUsage=serverAuth,clientAuth"
    [[ -n "${3:-}" ]] && ext+=$'\n'"subjectAltName=$3"
    openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -out "$1.crt" \
      -extfile <(echo "$ext") 2>/dev/null
    rm -f "$1.csr"
  }
  issue apiserver "/CN=kube-apiserver" "IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc"
  issue admin "/O=system:masters/CN=qe-k8s-testbed-admin"
  issue apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client"
  issue controller-manager "/CN=system:kube-controller-manager"
  issue scheduler "/CN=system:kube-scheduler"
  issue kubelet-client "/O=system:nodes/CN=system:node:$NODE_NAME"
  issue kubelet-serving "/CN=$NODE_NAME" "IP:$NODE_IP,IP:127.0.0.1,DNS:$NODE_NAME,DNS:localhost"
  cd - >/dev/null
}

write_kubeconfig() {
  cat > "$STATE/$1.kubeconfig" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
- name: qe-k8s-testbed
  cluster:
    server: https://127.0.0.1:$APISERVER_PORT
    certificate-authority: $PKI/ca.crt
users:
- name: $1
  user:
    client-certificate: $PKI/$2.crt
    client-key: $PKI/$2.key
contexts:
- name: qe-k8s-testbed
  context: {cluster: qe-k8s-testbed, user: $1}
current-context: qe-k8s-testbed
KUBECONFIG
}

write_configs() {
  mkdir -p "$STATE/containerd" "$STATE/cni/net.d" "$STATE/cni/ipam" "$KUBELET_ROOT" "$STATE/pod-logs"
  write_kubeconfig admin admin
  write_kubeconfig controller-manager controller-manager
  write_kubeconfig scheduler scheduler
  write_kubeconfig kubelet kubelet-client

  cat > "$STATE/containerd/config.toml" <<TOML
version = 2
root = "$STATE/containerd/root"
state = "$STATE/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
                    "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper",
                    "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]
[grpc]
  address = "$CONTAINERD_SOCKET"
[ttrpc]
  address = "$STATE/containerd/containerd.sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$STATE/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  # This machine's capability bounding set lacks CAP_SYS_RESOURCE: without this every sandbox
  # fails with "runc create failed: ... can't get final child's PID from pipe: EOF".
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$STATE/containerd/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$STATE/cni/net.d"
TOML

  # The node turns Ready only with a CNI config. Pods that do not use hostNetwork get an address on
  # the run's own bridge and one route beyond it: to the node IP (the cluster DNS answers there),
  # through the bridge's gateway address on this host. No default route, no masquerading.
  cat > "$STATE/cni/net.d/10-qe-bridge.conflist" <<JSON
{"cniVersion": "0.4.0", "name": "qe-pods", "plugins": [
  {"type": "bridge", "bridge": "$CNI_BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": "$STATE/cni/ipam", "ranges": [[{"subnet": "10.88.0.0/24"}]],
            "routes": [{"dst": "$NODE_IP/32"}]}}
]}
JSON

  cat > "$STATE/kubelet-config.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
tlsCertFile: $PKI/kubelet-serving.crt
tlsPrivateKeyFile: $PKI/kubelet-serving.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: Webhook}
containerRuntimeEndpoint: unix://$CONTAINERD_SOCKET
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
cpuManagerPolicy: static
reservedSystemCPUs: "0"
# Mounted ConfigMaps and Secrets are refreshed when the kubelet syncs the pod: every syncFrequency (default 1m,
# plus jitter). The nodes read their authorised clients and pinned peer identities from such mounts, so a
# revocation reaches them within one sync; 10 s here keeps the tests that watch it short (production: ~1-2 min).
syncFrequency: 10s
# Pods resolve cluster names (<pod>.<headless service>.<namespace>.svc.cluster.local) through the test
# run's own DNS responder on the node IP (the kubernetes-testbed module's ClusterDns, answered from the API
# server; nothing is forwarded). Without it running, lookups of those names fail.
clusterDNS: ["$NODE_IP"]
clusterDomain: $CLUSTER_DOMAIN
podLogsDir: $STATE/pod-logs
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
YAML
}

# ---------------------------------------------------------------------------------------------
# cleanup: works from whatever a previous (possibly crashed) run left behind

# containerd-shim processes serving OUR containerd (they outlive containerd by design).
our_shims() {
  local proc command_line
  for proc in /proc/[0-9]*; do
    command_line="$(tr '\0' ' ' < "$proc/cmdline" 2>/dev/null)" || continue
    [[ "$command_line" == *containerd-shim*" -address $CONTAINERD_SOCKET "* ]] && echo "${proc#/proc/}"
  done
  return 0
}

delete_containers() {
  local ctr_=(ctr --address "$CONTAINERD_SOCKET" -n k8s.io) id
  for id in $("${ctr_[@]}" containers list -q 2>/dev/null); do
    "${ctr_[@]}" tasks kill --all --signal SIGKILL "$id" >/dev/null 2>&1 || true
    "${ctr_[@]}" tasks delete --force "$id" >/dev/null 2>&1 || true
    "${ctr_[@]}" containers delete "$id" >/dev/null 2>&1 || true
  done
}

# containerd 1.6 puts shim sockets in the fixed /run/containerd/s; a SIGKILLed shim leaves its
# socket. Remove those that appeared during this run and that nothing listens on any more.
remove_stale_shim_sockets() {
  local socket
  for socket in /run/containerd/s/*; do
    [[ -S "$socket" ]] || continue
    grep -qx "$socket" "$STATE/shim-sockets-before-up" 2>/dev/null && continue
    grep -q " $socket\$" /proc/net/unix && continue
    rm -f "$socket"
  done
  rmdir /run/containerd/s /run/containerd 2>/dev/null || true
}

# The kubelet links every container's log into the fixed /var/log/containers; ours point into the state dir.
remove_container_log_links() {
  local link
  for link in /var/log/containers/*.log; do
    [[ -L "$link" && "$(readlink "$link")" == "$STATE/"* ]] && rm -f "$link"
  done
  [[ -f "$STATE/created-var-log-containers" ]] && { rmdir /var/log/containers 2>/dev/null || true; }
  return 0
}

# Every process in the /kubepods cgroups: containers our kubelet created.
pod_processes() {
  find /sys/fs/cgroup/*/kubepods -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u
}

remove_kubepods_cgroups() {
  local controller
  for controller in /sys/fs/cgroup/*/; do
    [[ -d "$controller/kubepods" ]] || continue
    find "$controller/kubepods" -depth -type d -exec rmdir {} \; 2>/dev/null || true
    [[ -d "$controller/kubepods" ]] && log "could not remove $controller/kubepods (processes left?)"
  done
  return 0
}

unmount_state() {
  local mount_point
  # deepest first; findmnt escapes blanks as \x20, which our paths do not contain
  findmnt -rn -o TARGET | { grep -E "^$STATE(/|$)" || true; } | sort -r | while read -r mount_point; do
    umount "$mount_point" 2>/dev/null || umount -l "$mount_point" || log "could not unmount $mount_point"
  done
}

remove_network() {
  # containerd names pod network namespaces cni-<uuid>; those listed at `up` were not ours
  local netns
  for netns in /run/netns/cni-*; do
    [[ -e "$netns" ]] || continue
    grep -qx "$(basename "$netns")" "$STATE/netns-before-up" 2>/dev/null && continue
    ip netns delete "$(basename "$netns")" 2>/dev/null || { umount "$netns" 2>/dev/null; rm -f "$netns"; }
    log "removed network namespace $(basename "$netns")"
  done
  [[ -f "$STATE/created-run-netns" ]] && { rmdir /run/netns 2>/dev/null || true; }
  local bridge
  for bridge in "$CNI_BRIDGE" "$NODE_BRIDGE"; do
    if ip link show "$bridge" >/dev/null 2>&1; then
      ip link delete "$bridge" && log "removed bridge $bridge"
    fi
  done
}

save_sysctls() {
  [[ -f "$SYSCTLS_SAVED" ]] && return 0   # a crashed run's file holds the true originals
  local key
  for key in "${HOST_SYSCTLS[@]}"; do echo "$key=$(sysctl -n "$key")"; done > "$SYSCTLS_SAVED.partial"
  mv "$SYSCTLS_SAVED.partial" "$SYSCTLS_SAVED"
}

restore_sysctls() {
  [[ -f "$SYSCTLS_SAVED" ]] || return 0
  local line failed=false
  while read -r line; do
    [[ "$(sysctl -n "${line%%=*}")" == "${line#*=}" ]] && continue
    if sysctl -q -w "$line"; then log "restored $line"; else log "could not restore $line"; failed=true; fi
  done < "$SYSCTLS_SAVED"
  $failed || rm -f "$SYSCTLS_SAVED"   # kept, so the next down tries again (verify_clean reports it)
}

cmd_down() {
  require_root down
  # every step is idempotent and looks at the host, not only at the state dir: a run that crashed
  # half-way through `up` or `down` is cleaned all the same
  stop_components cluster-services
  stop_components kubelet kube-scheduler kube-controller-manager
  # The kubelet is gone, so nothing restarts containers: kill their processes, let containerd
  # delete its tasks (their shims then exit and remove their sockets), kill shims that remain.
  local pid
  for pid in $(pod_processes); do kill -KILL "$pid" 2>/dev/null || true; done
  live_pid containerd >/dev/null && delete_containers
  stop_components containerd
  for pid in $(our_shims); do kill -KILL "$pid" 2>/dev/null && log "killed containerd-shim pid $pid"; done
  remove_stale_shim_sockets
  remove_container_log_links
  # its graceful shutdown drains requests for a minute; nothing of a test cluster needs that
  stop_components --grace 3 kube-apiserver
  stop_components etcd
  unmount_state
  remove_network
  for pid in $(pod_processes); do kill -KILL "$pid" 2>/dev/null || true; done
  sleep 0.2
  remove_kubepods_cgroups
  restore_sysctls
  if [[ -n "${QE_K8S_KEEP_LOGS_IN:-}" && -d "$LOGS" ]]; then
    mkdir -p "$QE_K8S_KEEP_LOGS_IN" && cp -r "$LOGS/." "$QE_K8S_KEEP_LOGS_IN/"
  fi
  [[ -z "$(findmnt -rn -o TARGET | grep -E "^$STATE(/|$)")" ]] || die "mounts remain under $STATE; not deleting it"
  rm -rf "$STATE"
  verify_clean
  log "torn down"
}

# The cleanup contract, checked: a leftover is an error, not a log line nobody reads.
verify_clean() {
  local leftovers=() controller bridge name
  for controller in /sys/fs/cgroup/*/; do
    [[ -d "$controller/kubepods" ]] && leftovers+=("cgroup ${controller}kubepods")
  done
  for bridge in "$CNI_BRIDGE" "$NODE_BRIDGE"; do
    ip link show "$bridge" >/dev/null 2>&1 && leftovers+=("bridge $bridge")
  done
  [[ -n "$(our_shims)" ]] && leftovers+=("containerd-shim processes $(our_shims | tr '\n' ' ')")
  [[ -f "$SYSCTLS_SAVED" ]] && leftovers+=("unrestored sysctls in $SYSCTLS_SAVED")
  # a cluster services JVM of this state dir whose PID file was lost (found by its arguments; only reported)
  local services
  services="$(pgrep -f "io.queueenterprise.kubernetes.testbed.ClusterServices $STATE/admin.kubeconfig" || true)"
  [[ -n "$services" ]] && leftovers+=("cluster services JVM pid $(echo $services)")
  ((${#leftovers[@]} == 0)) || die "teardown left: ${leftovers[*]}"
}

# ---------------------------------------------------------------------------------------------

apiserver_ready() { kubectl_ get --raw /readyz; }
node_ready() {
  [[ "$(kubectl_ get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" == True ]]
}

# The first part of a cluster that is not running or not ready, for a message.
unhealthy_part() {
  local name
  for name in "${COMPONENTS[@]}"; do live_pid "$name" >/dev/null || { echo "$name is not running"; return; }; done
  live_pid cluster-services >/dev/null || { echo "the cluster services (DNS, volumes) are not running"; return; }
  apiserver_ready >/dev/null 2>&1 || { echo "the API server is not ready"; return; }
  echo "the node is not Ready"
}

cmd_status() {
  local name
  for name in "${COMPONENTS[@]}"; do live_pid "$name" >/dev/null || return 1; done
  if [[ "$(cat "$STATE/owner" 2>/dev/null)" == person ]]; then live_pid cluster-services >/dev/null || return 1; fi
  apiserver_ready >/dev/null 2>&1 && node_ready
}

# The cluster DNS and the local volume provisioner for a cluster started by hand (ClusterServices); the tests serve
# the DNS from their own JVM and make their volumes themselves.
start_cluster_services() {
  compgen -G "$SERVICES_APP_DIR/lib/queue-enterprise-kubernetes-testbed-*.jar" >/dev/null \
    || die "no cluster services in $SERVICES_APP_DIR (package them first: ./mvnw -B -pl kubernetes-testbed -am package -DskipTests)"
  start_component cluster-services @"$SERVICES_APP_DIR/bin/jvm.args" -Xmx128m -cp "$SERVICES_APP_DIR/lib/*" \
    io.queueenterprise.kubernetes.testbed.ClusterServices "$STATE/admin.kubeconfig" "$CLUSTER_DOMAIN" "$NODE_IP" "$NODE_NAME" "$STATE/volumes"
  local deadline=$((SECONDS + 60))
  until grep -q "cluster DNS on" "$LOGS/cluster-services.log" 2>/dev/null; do
    live_pid cluster-services >/dev/null || die "the cluster services stopped: $(grep -m1 -E 'Exception|Error' "$LOGS/cluster-services.log")"
    ((SECONDS < deadline)) || die "the cluster services did not start within 60 s (log $LOGS/cluster-services.log)"
    sleep 0.2
  done
}

cmd_import_image() {
  require_root import-image
  [[ -f "${1:-}" ]] || die "import-image: no image tar '${1:-}'"
  ctr --address "$CONTAINERD_SOCKET" -n k8s.io images import "$1" >&2
}

cmd_up() {
  require_root up
  local owner=person
  [[ "${1:-}" == --for-tests ]] && owner=tests
  if [[ "$(cat "$STATE/owner" 2>/dev/null)" == person ]]; then
    if cmd_status; then
      log "cluster started by hand already running (state $STATE): reusing it"
      echo reused
      return 0
    fi
    # Never torn down implicitly: its volumes ($STATE/volumes) may hold a person's queues.
    die "the cluster started by hand (state $STATE) is not healthy ($(unhealthy_part)); it is left as it is, volumes" \
        "included: look at $LOGS, then remove it with 'kubernetes/node.sh down' (which deletes $STATE) and start again"
  fi
  for binary in "${KUBERNETES_BINARIES[@]}"; do
    [[ -x "$BIN_DIR/$binary" ]] || die "$BIN_DIR/$binary is missing: run kubernetes/provision.sh first"
  done
  [[ -f "$IMAGES_DIR/pause.tar" ]] || die "$IMAGES_DIR/pause.tar is missing: run kubernetes/provision.sh first"
  cmd_down   # whatever a crashed run left, including its saved sysctls
  local started=$SECONDS
  mkdir -p "$STATE" "$PIDS" "$LOGS"
  ls /run/netns 2>/dev/null | grep '^cni-' > "$STATE/netns-before-up" || true
  ls -d /run/containerd/s/* > "$STATE/shim-sockets-before-up" 2>/dev/null || true
  [[ -d /var/log/containers ]] || touch "$STATE/created-var-log-containers"
  [[ -d /run/netns ]] || touch "$STATE/created-run-netns"
  save_sysctls
  ip link add "$NODE_BRIDGE" type bridge
  ip addr add "$NODE_IP/32" dev "$NODE_BRIDGE"
  ip link set "$NODE_BRIDGE" up
  make_pki
  write_configs

  start_component etcd --name qe --data-dir "$STATE/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_CLIENT_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_CLIENT_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "qe=http://127.0.0.1:$ETCD_PEER_PORT"
  start_component containerd --config "$STATE/containerd/config.toml"
  start_component kube-apiserver \
    --etcd-servers "http://127.0.0.1:$ETCD_CLIENT_PORT" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$APISERVER_PORT" \
    --endpoint-reconciler-type none \
    --tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
    --client-ca-file "$PKI/ca.crt" \
    --service-account-issuer https://kubernetes.default.svc \
    --service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
    --service-cluster-ip-range 10.96.0.0/24 \
    --authorization-mode Node,RBAC \
    --kubelet-client-certificate "$PKI/apiserver-kubelet-client.crt" --kubelet-client-key "$PKI/apiserver-kubelet-client.key" \
    --kubelet-preferred-address-types InternalIP,Hostname \
    --allow-privileged=true --profiling=false
  wait_until 60 "kube-apiserver /readyz" apiserver_ready
  wait_until 30 "containerd socket" test -S "$CONTAINERD_SOCKET"
  cmd_import_image "$IMAGES_DIR/pause.tar"

  start_component kube-controller-manager \
    --kubeconfig "$STATE/controller-manager.kubeconfig" \
    --authentication-kubeconfig "$STATE/controller-manager.kubeconfig" \
    --authorization-kubeconfig "$STATE/controller-manager.kubeconfig" \
    --bind-address 127.0.0.1 --secure-port "$CONTROLLER_MANAGER_PORT" --leader-elect=false \
    --service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" \
    --use-service-account-credentials=true --profiling=false
  start_component kube-scheduler \
    --kubeconfig "$STATE/scheduler.kubeconfig" \
    --authentication-kubeconfig "$STATE/scheduler.kubeconfig" \
    --authorization-kubeconfig "$STATE/scheduler.kubeconfig" \
    --bind-address 127.0.0.1 --secure-port "$SCHEDULER_PORT" --leader-elect=false --profiling=false
  start_component kubelet \
    --config "$STATE/kubelet-config.yaml" --kubeconfig "$STATE/kubelet.kubeconfig" \
    --root-dir "$KUBELET_ROOT" --hostname-override "$NODE_NAME" --node-ip "$NODE_IP"

  wait_until 120 "node $NODE_NAME Ready" node_ready
  # Pods wait for the default service account, which the controller-manager creates.
  wait_until 60 "default service account" kubectl_ get serviceaccount default
  [[ "$owner" == person ]] && start_cluster_services
  echo "$owner" > "$STATE/owner"
  log "cluster up in $((SECONDS - started)) s (state $STATE)"
  echo started
}

cmd_env() {
  echo "KUBECONFIG=$STATE/admin.kubeconfig"
  echo "POD_RESOURCES_SOCKET=$KUBELET_ROOT/pod-resources/kubelet.sock"
  echo "NODE_NAME=$NODE_NAME"
  echo "NODE_IP=$NODE_IP"
  echo "CLUSTER_DOMAIN=$CLUSTER_DOMAIN"
  echo "BIN_DIR=$BIN_DIR"
  echo "LOGS=$LOGS"
  if live_pid cluster-services >/dev/null; then echo "CLUSTER_SERVICES=running"; else echo "CLUSTER_SERVICES=none"; fi
}

case "${1:-}" in
  up) shift; cmd_up "$@" ;;
  down) cmd_down ;;
  status) cmd_status ;;
  import-image) shift; cmd_import_image "$@" ;;
  env) cmd_env ;;
  *) echo "usage: node.sh up | down | status | import-image TAR | env" >&2; exit 2 ;;
esac
