package io.queueenterprise.operator.model;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.ContainerPortBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.PodSecurityContextBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodSpecBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.SecurityContextBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.VolumeMountBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyIngressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyIngressRuleBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeerBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.queueenterprise.operator.api.AuthorizedClients;
import io.queueenterprise.operator.api.NetworkMode;
import io.queueenterprise.operator.api.NodePool;
import io.queueenterprise.operator.api.QueueCluster;
import io.queueenterprise.operator.api.QueueClusterSpec;

/**
 * A QueueCluster as Kubernetes manifests (Strimzi's model-layer shape): pure functions of the resource and the
 * operator's settings, no client, no I/O. The dependent resources apply what these return.
 */
public final class QueueClusterModel {
    /**
     * The startup probe asks each second, so a started node is seen within a second (5 s apart, a pod start waited
     * 2.5 s on average for nobody, and a three-replica rollout restarts three in turn); 180 failures allow 180 s,
     * above the node's own 120 s start bound.
     */
    static final int STARTUP_PROBE_PERIOD_SECONDS = 1;
    static final int STARTUP_PROBE_FAILURES = 180;
    /** Readiness, asked every 2 s once started: a rollout's next step waits on it; three failures (6 s) to unready. */
    static final int READINESS_PROBE_PERIOD_SECONDS = 2;

    public static final String CONFIG_HASH_ANNOTATION = "queue-enterprise.io/config-hash";
    public static final String CONTAINER = "node";
    /** Secrets are readable by their owner only; with fsGroup the kubelet adds group read for the node's group. */
    public static final int SECRET_MODE = 0400;
    static final long NODE_USER = 10001;
    private static final int CONFIG_MODE = 0444;
    private static final int CREDENTIAL_BYTES = 32;

    private final QueueCluster cluster;
    private final QueueClusterSpec spec;
    private final ClusterNames names;
    private final OperatorSettings settings;

    public QueueClusterModel(QueueCluster cluster, OperatorSettings settings) {
        this.cluster = cluster;
        this.spec = cluster.getSpec();
        this.names = ClusterNames.of(cluster);
        this.settings = settings;
    }

    public ClusterNames names() {
        return names;
    }

    private ObjectMeta metadata(String name) {
        return new ObjectMetaBuilder().withName(name).withNamespace(names.namespace()).withLabels(names.labels()).build();
    }

    public ConfigMap configMap() {
        return new ConfigMapBuilder().withMetadata(metadata(names.configMap()))
            .withData(NodeConfigModel.configMapData(cluster, settings)).build();
    }

    /** The headless Service: stable DNS names for peers; addresses published before readiness so peers find each other. */
    public Service headlessService() {
        ServiceBuilder service = new ServiceBuilder().withMetadata(metadata(names.headlessService()))
            .withNewSpec()
                .withClusterIP("None")
                .withPublishNotReadyAddresses(true)
                .withSelector(names.selectorLabels())
                .addNewPort().withName("replication").withProtocol("UDP").withPort(NodePaths.REPLICATION_PORT)
                    .withTargetPort(new IntOrString(NodePaths.REPLICATION_PORT)).endPort()
                .addNewPort().withName("admin").withProtocol("TCP").withPort(NodePaths.ADMIN_PORT)
                    .withTargetPort(new IntOrString(NodePaths.ADMIN_PORT)).endPort()
                .addNewPort().withName("metrics").withProtocol("TCP").withPort(NodePaths.METRICS_PORT)
                    .withTargetPort(new IntOrString(NodePaths.METRICS_PORT)).endPort()
            .endSpec();
        if (servesClients()) {
            service.editSpec().addNewPort().withName("client").withProtocol("UDP").withPort(NodePaths.CLIENT_PORT)
                .withTargetPort(new IntOrString(NodePaths.CLIENT_PORT)).endPort().endSpec();
        }
        return service.build();
    }

    /** Remote clients are served when the QueueCluster names their credential's Secret. */
    private boolean servesClients() {
        return spec.getClientCredentialSecret() != null;
    }

    /**
     * Remote clients may append when the cluster serves them and names the write-key Secret (the CRD refuses the
     * Secret without the client credential; the node would refuse its writeKeyDirectory too).
     */
    private boolean takesRemoteAppends() {
        return servesClients() && spec.getWriteKeySecret() != null;
    }

    /** A voluntary disruption (drain, upgrade) never takes the cluster below a majority. */
    public PodDisruptionBudget podDisruptionBudget() {
        return new PodDisruptionBudgetBuilder().withMetadata(metadata(names.statefulSet()))
            .withNewSpec()
                .withMinAvailable(new IntOrString(majority(spec.getReplicas())))
                .withSelector(selector())
            .endSpec().build();
    }

    public static int majority(int replicas) {
        return replicas / 2 + 1;
    }

    /**
     * Ingress to the nodes from their own replicas (all ports), the operator (admin port), authorised clients
     * (the client port, where remote clients' Aeron traffic arrives, when the cluster serves them) and anyone for
     * metrics (no data there).
     * Host-network pods are outside NetworkPolicy's reach (docs/operator.md).
     */
    public NetworkPolicy networkPolicy() {
        List<NetworkPolicyIngressRule> rules = new ArrayList<>();
        rules.add(new NetworkPolicyIngressRuleBuilder().withFrom(new NetworkPolicyPeerBuilder().withPodSelector(selector()).build())
            .build());
        rules.add(new NetworkPolicyIngressRuleBuilder()
            .withFrom(new NetworkPolicyPeerBuilder()
                .withNamespaceSelector(new LabelSelectorBuilder()
                    .withMatchLabels(Map.of("kubernetes.io/metadata.name", settings.operatorNamespace())).build())
                .withPodSelector(new LabelSelectorBuilder().withMatchLabels(settings.operatorPodLabels()).build())
                .build())
            .addNewPort().withProtocol("TCP").withPort(new IntOrString(NodePaths.ADMIN_PORT)).endPort()
            .build());
        AuthorizedClients clients = spec.getAuthorizedClients();
        if (servesClients() && clients != null && !clients.getPodSelector().isEmpty()) {
            NetworkPolicyPeerBuilder peer = new NetworkPolicyPeerBuilder()
                .withPodSelector(new LabelSelectorBuilder().withMatchLabels(clients.getPodSelector()).build());
            if (!clients.getNamespaceSelector().isEmpty()) {
                peer.withNamespaceSelector(new LabelSelectorBuilder().withMatchLabels(clients.getNamespaceSelector()).build());
            }
            rules.add(new NetworkPolicyIngressRuleBuilder().withFrom(peer.build())
                .addNewPort().withProtocol("UDP").withPort(new IntOrString(NodePaths.CLIENT_PORT)).endPort()
                .build());
        }
        rules.add(new NetworkPolicyIngressRuleBuilder().withFrom(new NetworkPolicyPeer[0])
            .addNewPort().withProtocol("TCP").withPort(new IntOrString(NodePaths.METRICS_PORT)).endPort().build());
        return new NetworkPolicyBuilder().withMetadata(metadata(names.statefulSet()))
            .withNewSpec().withPodSelector(selector()).withPolicyTypes("Ingress").withIngress(rules).endSpec().build();
    }

    /** A Prometheus Operator PodMonitor (no Java model for it here: a generic resource). */
    public GenericKubernetesResource podMonitor() {
        Map<String, Object> endpoint = new LinkedHashMap<>();
        endpoint.put("port", "metrics");
        endpoint.put("path", "/metrics");
        Map<String, Object> podMonitorSpec = new LinkedHashMap<>();
        podMonitorSpec.put("selector", Map.of("matchLabels", names.selectorLabels()));
        podMonitorSpec.put("podMetricsEndpoints", List.of(endpoint));
        return new GenericKubernetesResourceBuilder().withApiVersion("monitoring.coreos.com/v1").withKind("PodMonitor")
            .withMetadata(metadata(names.statefulSet()))
            .addToAdditionalProperties("spec", podMonitorSpec).build();
    }

    /** A new random credential (admin token or peer credential); created once, never rewritten. */
    public Secret credentialSecret(String name, String key, SecureRandom random) {
        byte[] credential = new byte[CREDENTIAL_BYTES];
        random.nextBytes(credential);
        return new SecretBuilder().withMetadata(metadata(name)).withType("Opaque")
            .addToStringData(key, Base64.getUrlEncoder().withoutPadding().encodeToString(credential)).build();
    }

    public StatefulSet statefulSet() {
        String image = spec.getImage() != null ? spec.getImage() : settings.defaultNodeImage();
        return new StatefulSetBuilder().withMetadata(metadata(names.statefulSet()))
            .withNewSpec()
                .withReplicas(spec.getReplicas())
                .withServiceName(names.headlessService())
                // every replica at once: a failover needs the others up, not waiting for their predecessors
                .withPodManagementPolicy("Parallel")
                // the operator restarts pods itself: followers first, the leader last after a switchover
                .withNewUpdateStrategy().withType("OnDelete").endUpdateStrategy()
                .withSelector(selector())
                .withNewTemplate()
                    .withNewMetadata()
                        .withLabels(names.labels())
                        .withAnnotations(Map.of(CONFIG_HASH_ANNOTATION, configHash()))
                    .endMetadata()
                    .withSpec(podSpec(image))
                .endTemplate()
                .withVolumeClaimTemplates(dataClaim())
            .endSpec().build();
    }

    private PodSpec podSpec(String image) {
        boolean hostNetwork = spec.getNetworkMode() == NetworkMode.HOST;
        NodePool pool = spec.getNodePool() != null ? spec.getNodePool() : new NodePool();
        PodSpecBuilder pod = new PodSpecBuilder()
            .withHostNetwork(hostNetwork)
            // host-network pods still resolve the headless Service's names
            .withDnsPolicy(hostNetwork ? "ClusterFirstWithHostNet" : "ClusterFirst")
            .withAutomountServiceAccountToken(false)
            .withEnableServiceLinks(false)
            .withNodeSelector(nodeSelector(pool))
            .withTolerations(pool.getTolerations())
            .withSecurityContext(new PodSecurityContextBuilder()
                .withRunAsNonRoot(true).withRunAsUser(NODE_USER).withRunAsGroup(NODE_USER).withFsGroup(NODE_USER)
                .withNewSeccompProfile().withType("RuntimeDefault").endSeccompProfile()
                .build())
            .withContainers(container(image))
            .withVolumes(volumes());
        if (CalibrationJobModel.atFirstStart(spec)) {
            // measured before the node starts, on the cores the node then gets (the Pinned CEL rule: whole cores)
            pod.withInitContainers(CalibrationJobModel.firstStartContainer(spec, settings, resources()));
        }
        LabelSelector sameCluster = selector();
        if (hostNetwork) {
            // host-network replicas share the node's ports: two on one node cannot both bind
            pod.withNewAffinity().withNewPodAntiAffinity()
                .addNewRequiredDuringSchedulingIgnoredDuringExecution()
                    .withTopologyKey("kubernetes.io/hostname").withLabelSelector(sameCluster)
                .endRequiredDuringSchedulingIgnoredDuringExecution()
                .endPodAntiAffinity().endAffinity();
        } else {
            pod.withNewAffinity().withNewPodAntiAffinity()
                .addNewPreferredDuringSchedulingIgnoredDuringExecution().withWeight(100)
                    .withNewPodAffinityTerm().withTopologyKey("kubernetes.io/hostname").withLabelSelector(sameCluster).endPodAffinityTerm()
                .endPreferredDuringSchedulingIgnoredDuringExecution()
                .endPodAntiAffinity().endAffinity();
        }
        return pod.build();
    }

    /** The pool's selector; when pinned, only nodes labelled as running the static CPU manager policy. */
    public Map<String, String> nodeSelector(NodePool pool) {
        Map<String, String> selector = new LinkedHashMap<>(pool.getNodeSelector());
        if (Boolean.TRUE.equals(spec.getPinned())) {
            selector.put(ClusterNames.TUNED_NODE_LABEL, ClusterNames.TUNED_NODE_VALUE);
        }
        return selector;
    }

    public Map<String, String> nodeSelector() {
        return nodeSelector(spec.getNodePool() != null ? spec.getNodePool() : new NodePool());
    }

    /**
     * Pinned: Guaranteed QoS, limits = requests with whole CPUs (the CEL rule enforces it), which the static CPU
     * manager turns into exclusive cores. Unpinned: the memory limit only. A fractional CPU limit is a CFS quota, and a
     * JVM that bursts past it (a GC, the JIT, a start) is stalled for the rest of each 100 ms period: heartbeats late,
     * failovers for nothing, a start ten times slower at 100m. The CPU request still reserves the replica's share.
     */
    private Map<String, Quantity> limits(Map<String, Quantity> requests) {
        if (Boolean.TRUE.equals(spec.getPinned())) {
            return requests;
        }
        Map<String, Quantity> limits = new LinkedHashMap<>(requests);
        limits.remove("cpu");
        return limits;
    }

    /** What a replica requests: its cores and memory. */
    private Map<String, Quantity> resources() {
        Map<String, Quantity> resources = new LinkedHashMap<>();
        resources.put("cpu", new Quantity(spec.getCoresPerReplica()));
        resources.put("memory", new Quantity(spec.getMemory()));
        return resources;
    }

    private Container container(String image) {
        Map<String, Quantity> resources = resources();
        List<ContainerPort> ports = new ArrayList<>(List.of(
            new ContainerPortBuilder().withName("replication").withProtocol("UDP").withContainerPort(NodePaths.REPLICATION_PORT).build(),
            new ContainerPortBuilder().withName("admin").withProtocol("TCP").withContainerPort(NodePaths.ADMIN_PORT).build(),
            new ContainerPortBuilder().withName("metrics").withProtocol("TCP").withContainerPort(NodePaths.METRICS_PORT).build()));
        if (servesClients()) {
            ports.add(new ContainerPortBuilder().withName("client").withProtocol("UDP").withContainerPort(NodePaths.CLIENT_PORT).build());
        }
        return new ContainerBuilder()
            .withName(CONTAINER)
            .withImage(image)
            .withImagePullPolicy(settings.imagePullPolicy())
            .withArgs(settings.nodeArguments())
            .addNewEnv().withName("POD_NAME").withNewValueFrom().withNewFieldRef().withFieldPath("metadata.name").endFieldRef()
                .endValueFrom().endEnv()
            .withPorts(ports)
            .withNewResources().withRequests(resources).withLimits(limits(resources)).endResources()
            .withSecurityContext(new SecurityContextBuilder()
                .withAllowPrivilegeEscalation(false)
                .withReadOnlyRootFilesystem(true)
                .withRunAsNonRoot(true)
                .withNewCapabilities().withDrop("ALL").endCapabilities()
                .withNewSeccompProfile().withType("RuntimeDefault").endSeccompProfile()
                .build())
            .withNewReadinessProbe().withNewHttpGet().withPath("/readyz").withPort(new IntOrString("metrics")).endHttpGet()
                .withPeriodSeconds(READINESS_PROBE_PERIOD_SECONDS).endReadinessProbe()
            // A node restarted after SIGKILL may take up to 120 s to start (Chronicle's recovery of an excerpt the
            // killed writer left incomplete): the liveness probe waits for the startup probe, which allows 180 s.
            .withNewStartupProbe().withNewHttpGet().withPath("/healthz").withPort(new IntOrString("metrics")).endHttpGet()
                .withPeriodSeconds(STARTUP_PROBE_PERIOD_SECONDS).withFailureThreshold(STARTUP_PROBE_FAILURES).endStartupProbe()
            .withNewLivenessProbe().withNewHttpGet().withPath("/healthz").withPort(new IntOrString("metrics")).endHttpGet()
                .withPeriodSeconds(10).withFailureThreshold(6).endLivenessProbe()
            .withVolumeMounts(volumeMounts())
            .build();
    }

    private List<VolumeMount> volumeMounts() {
        List<VolumeMount> mounts = new ArrayList<>(List.of(
            mount("data", NodePaths.DATA_DIRECTORY, false),
            mount("config", NodePaths.CONFIG_DIRECTORY, true),
            mount("admin-token", NodePaths.ADMIN_DIRECTORY, true),
            mount("peer-credential", NodePaths.PEER_DIRECTORY, true),
            // the whole directory, never subPath: the kubelet updates it in place, the node re-reads it every second
            mount("node-identities", NodePaths.PEER_IDENTITIES_DIRECTORY, true),
            mount("shm", "/dev/shm", false),
            // the root filesystem is read-only: the JVM's temporary files go here
            mount("tmp", "/tmp", false)));
        if (spec.getClientCredentialSecret() != null) {
            mounts.add(mount("client-credential", NodePaths.CLIENT_DIRECTORY, true));
        }
        if (takesRemoteAppends()) {
            mounts.add(mount("write-keys", NodePaths.WRITE_KEY_DIRECTORY, true));
        }
        if (new ClientIdentityModel(cluster).namesClients()) {
            // the whole directory, never subPath: the kubelet updates it in place, the node re-reads it every second
            mounts.add(mount("authorised-clients", NodePaths.AUTHORISED_CLIENTS_DIRECTORY, true));
        }
        return mounts;
    }

    private static VolumeMount mount(String volume, String path, boolean readOnly) {
        return new VolumeMountBuilder().withName(volume).withMountPath(path).withReadOnly(readOnly).build();
    }

    private List<Volume> volumes() {
        List<Volume> volumes = new ArrayList<>(List.of(
            new VolumeBuilder().withName("config").withNewConfigMap().withName(names.configMap()).withDefaultMode(CONFIG_MODE)
                .endConfigMap().build(),
            secretVolume("admin-token", names.adminTokenSecret()),
            secretVolume("peer-credential", names.peerCredentialSecret()),
            // not in the config hash: a pin added or rotated changes this ConfigMap alone, and no pod restarts; optional,
            // so that pods start before the operator's first write of it (no file: no pins yet)
            new VolumeBuilder().withName("node-identities").withNewConfigMap().withName(names.nodeIdentitiesConfigMap())
                .withDefaultMode(CONFIG_MODE).withOptional(true).endConfigMap().build(),
            // Aeron's log buffers: memory-backed, sized, counted against the pod's memory limit
            new VolumeBuilder().withName("shm").withNewEmptyDir().withMedium("Memory")
                .withSizeLimit(new Quantity(spec.getSharedMemory())).endEmptyDir().build(),
            new VolumeBuilder().withName("tmp").withNewEmptyDir().withSizeLimit(new Quantity("64Mi")).endEmptyDir().build()));
        if (spec.getClientCredentialSecret() != null) {
            volumes.add(secretVolume("client-credential", spec.getClientCredentialSecret()));
        }
        if (takesRemoteAppends()) {
            volumes.add(secretVolume("write-keys", spec.getWriteKeySecret()));
        }
        if (new ClientIdentityModel(cluster).namesClients()) {
            // not in the config hash: a client added or removed changes this ConfigMap alone, and no pod restarts
            volumes.add(new VolumeBuilder().withName("authorised-clients").withNewConfigMap()
                .withName(names.authorisedClientsConfigMap()).withDefaultMode(CONFIG_MODE).endConfigMap().build());
        }
        if (CalibrationJobModel.atFirstStart(spec)) {
            volumes.add(CalibrationJobModel.firstStartQueuesVolume());
        }
        return volumes;
    }

    private static Volume secretVolume(String volume, String secret) {
        return new VolumeBuilder().withName(volume).withNewSecret().withSecretName(secret).withDefaultMode(SECRET_MODE)
            .endSecret().build();
    }

    private PersistentVolumeClaim dataClaim() {
        PersistentVolumeClaimBuilder claim = new PersistentVolumeClaimBuilder()
            .withNewMetadata().withName("data").withLabels(names.selectorLabels()).endMetadata()
            .withNewSpec()
                .withAccessModes("ReadWriteOnce")
                .withNewResources().addToRequests("storage", new Quantity(spec.getStorage().getSize())).endResources()
            .endSpec();
        if (spec.getStorage().getStorageClassName() != null) {
            claim.editSpec().withStorageClassName(spec.getStorage().getStorageClassName()).endSpec();
        }
        return claim.build();
    }

    private LabelSelector selector() {
        return new LabelSelectorBuilder().withMatchLabels(names.selectorLabels()).build();
    }

    /** Changes when any replica's document changes, so that the pods restart onto the new configuration. */
    private String configHash() {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            NodeConfigModel.configMapData(cluster, settings).forEach((key, value) -> {
                digest.update(key.getBytes(StandardCharsets.UTF_8));
                digest.update(value.getBytes(StandardCharsets.UTF_8));
            });
            return HexFormat.of().formatHex(digest.digest(), 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JDK", e);
        }
    }
}
