package io.queueenterprise.operator.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.dsl.ExecWatch;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.queueenterprise.kubernetes.testbed.KubernetesTestbed;
import io.queueenterprise.kubernetes.testbed.Testbed;
import io.queueenterprise.operator.QueueEnterpriseOperator;
import io.queueenterprise.operator.api.AckMode;
import io.queueenterprise.operator.api.Encryption;
import io.queueenterprise.operator.api.FailoverStatus;
import io.queueenterprise.operator.api.LastFailover;
import io.queueenterprise.operator.api.QueueCluster;
import io.queueenterprise.operator.api.QueueClusterSpec;
import io.queueenterprise.operator.api.QueueClusterStatus;
import io.queueenterprise.operator.api.QueueDefinition;
import io.queueenterprise.operator.api.QueueProgress;
import io.queueenterprise.operator.api.ReplicaStatus;
import io.queueenterprise.operator.api.RollCycle;
import io.queueenterprise.operator.api.StorageSpec;
import io.queueenterprise.operator.failover.AdminClient;
import io.queueenterprise.operator.failover.AdminException;
import io.queueenterprise.operator.failover.NodeStatusView;
import io.queueenterprise.operator.model.NodeIdentityModel;
import io.queueenterprise.operator.model.NodePaths;
import io.queueenterprise.operator.model.OperatorSettings;

/**
 * The REAL queue node in pods on the test bed's real kubelet, driven by the operator running in this JVM: a three-replica
 * quorum QueueCluster whose pods run the node image ({@code qe node --config ...} from the operator's ConfigMap) on the
 * pod network, finding each other by their StatefulSet DNS names (the test bed's cluster DNS). In order:
 * <ol>
 *   <li>the operator bootstraps a leader under term 1 and records it; a client in the leader's pod appends with quorum
 *   acknowledgements; every replica's durable index (the operator's status, read from the nodes) reaches the last
 *   acknowledged index, and a follower's copy holds every acknowledged excerpt at its index;</li>
 *   <li>the leader's pod is deleted with grace 0 (its JVM is SIGKILLed): the operator records a new term, promotes a
 *   survivor, re-points the others (the restarted former leader included); every acknowledged excerpt is on the new
 *   leader, which takes appends again;</li>
 *   <li>the operator "dies" right after its term write reached the API server (its client drops every later request,
 *   so it never promotes); a fresh operator takes over: it does not reuse that term, it issues a higher one.</li>
 * </ol>
 * The pods have no exclusive cores (the test bed has one; three replicas share the rest: {@code pinned: false},
 * 300m each). Bounded: every wait has a limit; everything is deleted at the end.
 */
@KubernetesTestbed
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@org.junit.jupiter.api.Tag("kubernetes")
@org.junit.jupiter.api.Tag("slow")
class NodeInPodsIT {
    private static final String CLUSTER = "trio";
    private static final String QUEUE = "orders";
    /** The encrypted queue: only its clients hold its data key (a Secret the nodes never mount). */
    private static final String VAULT = "vault";
    private static final String VAULT_KEY_SECRET = CLUSTER + "-vault-key";
    private static final String CLIENT_SECRET = CLUSTER + "-clients";
    /** The vault's write keys for the nodes ({@code qe write-keys} from its data key): the remote client appends. */
    private static final String WRITE_KEY_SECRET = CLUSTER + "-write-keys";
    private static final String CLIENT_LABEL = "queue-enterprise.io/client";
    private static final String ROLL_CYCLE = "FAST_HOURLY";
    private static final String CONTAINER = "node";
    private static final Duration WAIT = Duration.ofMinutes(8);   // three JVMs starting on 2 shared cores, 300m each
    private static final int NODE_UID = TestbedFixtures.NODE_UID;

    private final Testbed testbed;
    private final KubernetesClient client;
    private String namespace;
    private String storageClass;
    private ReplicaVolumes volumes;
    private QueueEnterpriseOperator operator;
    private KubernetesClient operatorClient;
    /** index → text of every append a majority acknowledged, in order. */
    private final Map<Long, String> acknowledged = new TreeMap<>();
    /** The vault queue's data key (id 1), 64 hex characters: in the clients' Secret, handed to key-holder probes on stdin. */
    private final String vaultKey = java.util.HexFormat.of().formatHex(TestbedFixtures.randomBytes(32));

    NodeInPodsIT(Testbed testbed) {
        this.testbed = testbed;
        this.client = testbed.client();
    }

    @BeforeAll
    void setUp() throws IOException {
        assumeTrue(testbed.clusterDnsServed(), "the test bed's cluster DNS is not running (port 53 on the node IP taken?):"
            + " the node pods could not resolve each other");
        TestbedFixtures.installCrd(client);
        String suffix = UUID.randomUUID().toString().substring(0, 8);
        namespace = "node-in-pods-" + suffix;
        storageClass = "qe-it-pods-" + suffix;
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build()).create();
        client.serviceAccounts().inNamespace(namespace).withName("default").waitUntilCondition(account -> account != null, 1, TimeUnit.MINUTES);
        // what whoever deploys the clients provides: the cluster's client credential, and the vault queue's data key
        client.secrets().inNamespace(namespace).resource(new io.fabric8.kubernetes.api.model.SecretBuilder()
            .withNewMetadata().withName(CLIENT_SECRET).endMetadata()
            .addToStringData("credential", java.util.HexFormat.of().formatHex(TestbedFixtures.randomBytes(32))).build()).create();
        client.secrets().inNamespace(namespace).resource(new io.fabric8.kubernetes.api.model.SecretBuilder()
            .withNewMetadata().withName(VAULT_KEY_SECRET).endMetadata()
            .addToStringData("1.key", vaultKey).addToStringData("active", "1").build()).create();
        // and, derived one way from the vault's key, the nodes' write keys: the remote client pod appends (step 4)
        client.secrets().inNamespace(namespace).resource(TestbedFixtures.writeKeySecret(WRITE_KEY_SECRET, 1, vaultKey, VAULT))
            .create();
        volumes = new ReplicaVolumes(testbed, storageClass, TestbedFixtures.workDirectory());
        for (int replica = 0; replica < 3; replica++) {
            volumes.add();
        }
    }

    @AfterAll
    void tearDown() throws IOException {
        stopOperator();
        if (namespace != null) {
            TestbedFixtures.deleteNamespace(client, namespace);
        }
        if (volumes != null) {
            volumes.delete();
        }
        TestbedFixtures.removeCrd(client);
    }

    @Test
    @Order(1)
    void theOperatorBootstrapsALeaderAndFollowersHoldEveryAcknowledgedExcerpt() throws Exception {
        startOperator(null);
        client.resources(QueueCluster.class).inNamespace(namespace).resource(trio()).create();
        QueueCluster ready = waitFor("a leader and every replica following it (Ready)", NodeInPodsIT::ready);
        String leader = ready.getStatus().getLeader();
        assertEquals(1L, ready.getStatus().getTerm(), "the first term the operator issues: " + ready.getStatus().getTerm());
        assertNodesAgree(ready.getStatus().getTerm(), leader);

        append(leader, 40, "first");
        long lastAcknowledged = lastAcknowledged();
        QueueCluster caughtUp = waitFor("every replica's durable index at the last acknowledged index " + lastAcknowledged,
            cluster -> everyReplicaHolds(cluster, lastAcknowledged));
        assertEquals(3, caughtUp.getStatus().getReplicas().size());
        String follower = caughtUp.getStatus().getReplicas().stream().map(ReplicaStatus::getName)
            .filter(name -> !name.equals(leader)).findFirst().orElseThrow();
        assertHoldsEveryAcknowledged(follower);

        // the real nodes' own health report reaches the status: every replica reports its transport (the operator
        // read the node's JSON field), none reports a problem once each has addressed its peers, none holds a quarantine
        QueueClusterStatus healthy = waitFor("ReplicasHealthy True, with every replica's transport reported", cluster ->
            conditionIs(cluster, "ReplicasHealthy", "True")
                && cluster.getStatus().getReplicas().stream().allMatch(r -> r.getTransportRestarts() != null)).getStatus();
        assertTrue(conditionIs(current(), "Quarantined", "False"), client.getKubernetesSerialization().asJson(healthy));

        // per-node identities (issue 19 §2): each node drew its key on its data volume and reports it; the operator
        // pinned the first report of each in status and in the pins ConfigMap, which the kubelet syncs into every pod
        // (about a minute) and the nodes reload: every node then holds every peer pinned, to the key that peer reports
        awaitIdentitiesPinned(Duration.ofSeconds(120));

        // rotating a node's key, as docs/operator.md tells a user to: annotate, `qe node forget-identity` in the pod
        // (kubectl exec; the image has no shell), restart the pod. It draws a new key; the operator re-pins that replica once
        // (the annotation) and removes the annotation; every node then holds the new pin, and nothing is mismatched
        String oldKey = replicaStatus(current(), follower).getIdentityKey();
        client.resources(QueueCluster.class).inNamespace(namespace).withName(CLUSTER).edit(cluster -> {
            cluster.getMetadata().setAnnotations(new java.util.HashMap<>(cluster.getMetadata().getAnnotations() == null
                ? Map.of() : cluster.getMetadata().getAnnotations()));
            cluster.getMetadata().getAnnotations().put(NodeIdentityModel.ROTATE_ANNOTATION, follower);
            return cluster;
        });
        String forgot = execInNode(follower, null, List.of("/opt/java/bin/java", "@/opt/queue-enterprise/bin/jvm.args", "-Xmx64m",
            "-XX:TieredStopAtLevel=1", "-cp", "/opt/queue-enterprise/lib/*", "io.queueenterprise.cli.QeCommand", "node",
            "forget-identity", "--config", NodePaths.CONFIG_DIRECTORY + "/" + follower + ".yaml"));
        assertTrue(forgot.startsWith("deleted " + NodePaths.IDENTITY_KEY_FILE), forgot);
        client.pods().inNamespace(namespace).withName(follower).delete();
        QueueCluster rotated = waitFor(follower + " re-pinned to a new key, the annotation removed, Ready", cluster -> {
            ReplicaStatus replica = replicaStatus(cluster, follower);
            return replica != null && replica.getIdentityKey() != null && !replica.getIdentityKey().equals(oldKey)
                && (cluster.getMetadata().getAnnotations() == null
                    || !cluster.getMetadata().getAnnotations().containsKey(NodeIdentityModel.ROTATE_ANNOTATION))
                && ready(cluster);
        });
        assertFalse(conditionIs(rotated, "NodeIdentityMismatch", "True"), client.getKubernetesSerialization().asJson(rotated.getStatus()));
        awaitIdentitiesPinned(Duration.ofSeconds(120));
    }

    private static ReplicaStatus replicaStatus(QueueCluster cluster, String name) {
        return cluster.getStatus() == null || cluster.getStatus().getReplicas() == null ? null
            : cluster.getStatus().getReplicas().stream().filter(r -> name.equals(r.getName())).findFirst().orElse(null);
    }

    /**
     * Within {@code bound}: every replica's {@code status.replicas[].identityKey} equals the {@code identity.publicKey}
     * its node reports, and every node reports each of its peers {@code identityPinned: true}, wherever its status
     * lists peers.
     */
    private void awaitIdentitiesPinned(Duration bound) throws InterruptedException {
        long deadline = System.nanoTime() + bound.toNanos();
        String last = "nothing asked yet";
        while (System.nanoTime() < deadline) {
            last = identitiesNotPinned();
            if (last == null) {
                return;
            }
            Thread.sleep(2_000);
        }
        throw new AssertionError("identities not pinned within " + bound + ": " + last);
    }

    /** Null when every node is pinned as {@link #awaitIdentitiesPinned} asks; otherwise what is not. */
    private String identitiesNotPinned() {
        QueueCluster cluster = current();
        if (cluster.getStatus() == null || cluster.getStatus().getReplicas() == null || cluster.getStatus().getReplicas().size() != 3) {
            return "status lists no three replicas";
        }
        String token = adminToken();
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build();
        com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
        for (ReplicaStatus replica : cluster.getStatus().getReplicas()) {
            Pod pod = client.pods().inNamespace(namespace).withName(replica.getName()).get();
            if (pod == null || pod.getStatus().getPodIP() == null) {
                return replica.getName() + " has no pod IP";
            }
            com.fasterxml.jackson.databind.JsonNode status;
            try {
                String body = http.send(java.net.http.HttpRequest.newBuilder(
                        URI.create("http://" + pod.getStatus().getPodIP() + ":" + NodePaths.ADMIN_PORT + "/v1/status"))
                    .timeout(Duration.ofSeconds(5)).header("Authorization", "Bearer " + token).GET().build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8)).body();
                status = json.readTree(body);
            } catch (IOException e) {
                return replica.getName() + " did not answer: " + e;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return "interrupted";
            }
            String reported = status.path("identity").path("publicKey").asText(null);
            if (reported == null || !reported.equals(replica.getIdentityKey())) {
                return replica.getName() + " reports identity " + reported + ", status pins " + replica.getIdentityKey();
            }
            List<com.fasterxml.jackson.databind.JsonNode> peers = status.findParents("identityPinned");
            if (peers.size() < 2 || !peers.stream().allMatch(peer -> peer.path("identityPinned").asBoolean(false))) {
                return replica.getName() + "'s peers not all pinned: " + peers;
            }
        }
        return null;
    }

    /** Messages of the Events regarding the QueueCluster with {@code reason}, oldest first. */
    private List<String> clusterEvents(String reason) {
        return client.v1().events().inNamespace(namespace).list().getItems().stream()
            .filter(e -> CLUSTER.equals(e.getInvolvedObject().getName()) && "QueueCluster".equals(e.getInvolvedObject().getKind())
                && reason.equals(e.getReason()))
            .sorted(Comparator.comparing(e -> e.getFirstTimestamp())).map(e -> e.getMessage()).toList();
    }

    private static boolean conditionIs(QueueCluster cluster, String type, String value) {
        return cluster.getStatus() != null && cluster.getStatus().getConditions() != null
            && cluster.getStatus().getConditions().stream().anyMatch(c -> type.equals(c.getType()) && value.equals(c.getStatus()));
    }

    @Test
    @Order(2)
    void afterTheLeadersPodIsKilledTheOperatorPromotesASurvivorAndNoAcknowledgedExcerptIsLost() throws Exception {
        QueueCluster before = current();
        String formerLeader = before.getStatus().getLeader();
        long formerTerm = before.getStatus().getTerm();
        assertFalse(acknowledged.isEmpty(), "the first test appended");

        long deleted = System.nanoTime();
        client.pods().inNamespace(namespace).withName(formerLeader).withGracePeriod(0).delete();   // SIGKILL, no goodbye

        QueueCluster failedOver = waitFor("a new leader under a term above " + formerTerm, cluster -> cluster.getStatus() != null
            && cluster.getStatus().getTerm() != null && cluster.getStatus().getTerm() > formerTerm
            && cluster.getStatus().getLeader() != null && !formerLeader.equals(cluster.getStatus().getLeader()));
        QueueClusterStatus status = failedOver.getStatus();
        FailoverStatus failover = status.getFailover();
        assertNotNull(failover, "the failover is recorded");
        assertEquals(status.getTerm(), failover.getTerm(), "the term the failover issued is the recorded term");
        assertEquals(formerLeader, failover.getFormerLeader());
        assertEquals(status.getLeader(), failover.getCandidate());
        String newLeader = status.getLeader();
        double seenInStatus = (System.nanoTime() - deleted) / 1e9;   // polled once a second: an upper bound
        // the operator's own measure, written with the new leader (docs/operator.md: failover time)
        LastFailover last = status.getLastFailover();
        assertNotNull(last, "status.lastFailover is written with the new leader");
        assertEquals(List.of(formerLeader, newLeader, status.getTerm()), List.of(last.getFrom(), last.getTo(), last.getTerm()));
        assertNotNull(last.getDurationSeconds(), "the failover is timed");
        // not a performance bound: a reconcile that began just before the delete may time from its own start
        assertTrue(last.getDurationSeconds() > 0 && last.getDurationSeconds() < seenInStatus + 30,
            "a duration, not a clock mix-up: " + last.getDurationSeconds() + " s, seen in status after " + seenInStatus + " s");

        // the restarted former leader is re-pointed: every replica follows the new leader at the new term
        QueueCluster ready = waitFor("the cluster Ready again under the new leader", cluster -> ready(cluster)
            && newLeader.equals(cluster.getStatus().getLeader()));
        assertNodesAgree(ready.getStatus().getTerm(), newLeader);
        assertHoldsEveryAcknowledged(newLeader);
        // kubectl describe shows it: one LeaderElected Event for the new term, naming whom it replaced
        assertEquals(List.of(newLeader + " leads at term " + ready.getStatus().getTerm() + ", taking over from " + formerLeader),
            clusterEvents("LeaderElected").stream().filter(m -> m.contains(" at term " + ready.getStatus().getTerm() + ",")).toList());

        append(newLeader, 20, "second");
        double acknowledgedAfter = (System.nanoTime() - deleted) / 1e9;
        System.err.printf("[NodeInPodsIT] failover: %s -> %s at term %d: status.lastFailover.durationSeconds %.3f s (leader found"
                + " lost -> new leader in status); the test saw it in status within %.1f s of the pod delete (polled each second);"
                + " 20 writes acknowledged by the new leader %.1f s after the delete (kubectl exec and the client's JVM start"
                + " included)%n", formerLeader, newLeader, last.getTerm(), last.getDurationSeconds(), seenInStatus, acknowledgedAfter);
        long lastAcknowledged = lastAcknowledged();
        waitFor("every replica's durable index at " + lastAcknowledged, cluster -> everyReplicaHolds(cluster, lastAcknowledged));
        assertHoldsEveryAcknowledged(formerLeader);   // the killed leader's pod, back as a follower
    }

    @Test
    @Order(3)
    void anOperatorThatDiesRightAfterRecordingATermIsSucceededByOneThatNeverReusesIt() throws Exception {
        stopOperator();
        QueueCluster before = current();
        String formerLeader = before.getStatus().getLeader();
        long formerTerm = before.getStatus().getTerm();
        DiesAfterRecordingTerm death = new DiesAfterRecordingTerm(client);
        startOperator(death);

        client.pods().inNamespace(namespace).withName(formerLeader).withGracePeriod(0).delete();
        assertTrue(death.died.await(WAIT.toMinutes(), TimeUnit.MINUTES), "the operator recorded no new term within " + WAIT);
        stopOperator();
        long abandonedTerm = death.recordedTerm;
        assertTrue(abandonedTerm > formerTerm, abandonedTerm + " above " + formerTerm);
        QueueCluster abandoned = current();
        assertEquals(abandonedTerm, abandoned.getStatus().getTerm(), "the term reached the API server before any node heard of it");
        assertEquals(FailoverStatus.Phase.PROMOTING, abandoned.getStatus().getFailover().getPhase());
        for (Map.Entry<String, NodeStatusView> node : answeringNodes().entrySet()) {
            assertTrue(node.getValue().term() < abandonedTerm, node.getKey() + " never heard of the abandoned term "
                + abandonedTerm + ": " + node.getValue());
        }

        startOperator(null);
        QueueCluster recovered = waitFor("a leader under a term above the abandoned " + abandonedTerm, cluster -> ready(cluster)
            && cluster.getStatus().getTerm() > abandonedTerm);
        assertNotEquals(abandonedTerm, recovered.getStatus().getTerm());
        assertNodesAgree(recovered.getStatus().getTerm(), recovered.getStatus().getLeader());
        assertHoldsEveryAcknowledged(recovered.getStatus().getLeader());
    }

    @Test
    @Order(4)
    void anEncryptedQueueTakesSealedAppendsFromARemoteClientPodAndTheReplicasHoldOnlyEnvelopes() throws Exception {
        QueueCluster before = waitFor("the cluster Ready", NodeInPodsIT::ready);
        String leader = before.getStatus().getLeader();
        String vaultDirectory = NodePaths.DATA_DIRECTORY + "/" + VAULT;
        // a key holder's first write records the key in the queue's descriptor (a remote writer cannot create a queue):
        // a probe in the leader's pod, handed the key on stdin; the key never lies on a node's file system
        String created = queueClientWithKey(leader, "create-encrypted", vaultDirectory, ROLL_CYCLE, "created-by-a-key-holder", "10000");
        assertTrue(created.startsWith("ACKED "), created);

        // the remote client: a pod of its own holding the data key (its Secret, 0400 + fsGroup) and the client
        // credential; it seals each excerpt and appends through the nodes' client port, finding the leader itself
        String marker = "PLAINTEXT-" + UUID.randomUUID().toString().substring(0, 8);
        Pod writer = client.pods().inNamespace(namespace).resource(remoteWriter(marker, 25)).create();
        Pod finished = client.pods().inNamespace(namespace).withName(writer.getMetadata().getName()).waitUntilCondition(
            pod -> pod != null && pod.getStatus() != null && List.of("Succeeded", "Failed").contains(pod.getStatus().getPhase()),
            WAIT.toMinutes(), TimeUnit.MINUTES);
        String log = client.pods().inNamespace(namespace).withName(writer.getMetadata().getName()).getLog();
        assertEquals("Succeeded", finished.getStatus().getPhase(), "the remote client: " + log);
        Map<Long, String> sealed = new TreeMap<>();
        for (String line : log.split("\n")) {
            if (line.startsWith("ACKED ")) {
                String[] parts = line.split(" ", 3);
                sealed.put(Long.parseLong(parts[1]), parts[2]);
            }
        }
        assertEquals(25, sealed.size(), "every remote append acknowledged by a majority: " + log);
        assertTrue(log.contains("CONNECTED "), log);

        // the kubelet wrote the client's data key 0440 root:fsGroup (defaultMode 0400 + group read), as the client saw
        // it (its volumes are gone once it completed): the crypto module accepts exactly that from a Secret volume
        assertTrue(log.contains("KEY_FILE 1.key r--r----- 0:" + NODE_UID), log);

        long last = ((TreeMap<Long, String>) sealed).lastKey();
        waitFor("every replica's vault durable index at " + last, cluster -> everyReplicaHolds(cluster, VAULT, last));
        for (Pod pod : client.pods().inNamespace(namespace).withLabel(io.queueenterprise.operator.model.ClusterNames.LABEL_INSTANCE, CLUSTER)
                .list().getItems()) {
            String name = pod.getMetadata().getName();
            // envelopes only: no replica's files hold the marker the client wrote in every excerpt...
            String vaultScan = queueClient(name, "scan", vaultDirectory, marker);
            assertTrue(vaultScan.matches("(?s)SCANNED [1-9][0-9]* [1-9][0-9]* MATCHES 0\\s*"), name + " vault: " + vaultScan);
            // ...while the scan does find a plain queue's text (it can see what is there)
            String plainScan = queueClient(name, "scan", queueDirectory(), "first-");
            assertTrue(plainScan.matches("(?s)SCANNED [1-9][0-9]* [1-9][0-9]* MATCHES [1-9][0-9]*\\s*"), name + " orders: " + plainScan);
        }
        // a key holder reads every sealed excerpt back from a follower's copy, at the index the client was given
        String follower = before.getStatus().getReplicas().stream().map(ReplicaStatus::getName).filter(n -> !n.equals(leader))
            .findFirst().orElseThrow();
        Map<Long, String> opened = new TreeMap<>();
        for (String line : queueClientWithKey(follower, "read-encrypted", vaultDirectory, ROLL_CYCLE).split("\n")) {
            if (line.startsWith("EXCERPT ")) {
                String[] parts = line.split(" ", 3);
                opened.put(Long.parseLong(parts[1]), parts[2]);
            }
        }
        for (Map.Entry<Long, String> excerpt : sealed.entrySet()) {
            assertEquals(excerpt.getValue(), opened.get(excerpt.getKey()), follower + " at index " + excerpt.getKey());
        }
        client.pods().inNamespace(namespace).withName(writer.getMetadata().getName()).delete();
    }

    @Test
    @Order(5)
    void aConfigurationChangeRollsTheFollowersFirstAndTheLeaderLastThroughASwitchoverLosingNothing() throws Exception {
        QueueCluster before = waitFor("the cluster Ready", NodeInPodsIT::ready);
        String formerLeader = before.getStatus().getLeader();
        long formerTerm = before.getStatus().getTerm();
        Map<String, String> originalUids = nodePodUids();
        assertEquals(3, originalUids.size(), originalUids.toString());

        // a new node document (the orders queue's ack timeout): a new config hash, a new StatefulSet revision; the
        // StatefulSet is OnDelete, so only the operator replaces pods: followers first, the leader after a switchover
        client.resources(QueueCluster.class).inNamespace(namespace).withName(CLUSTER).edit(cluster -> {
            cluster.getSpec().getQueues().get(0).setAckTimeout("12s");
            return cluster;
        });

        // the former leader's ORIGINAL pod, watched on its own address every 20 ms (a loop over every pod and the API
        // server can take seconds here, longer than the fence-to-delete window): it answers stepped down (fenced, then
        // re-pointed) at a term above the one it led before the operator restarts it. Its replacement gets another pod
        // address, so nothing the new pod says is counted.
        FormerLeaderWatch watch = new FormerLeaderWatch(formerLeader, formerTerm);
        Duration rollout = Duration.ofMinutes(15);
        long deadline = System.nanoTime() + rollout.toNanos();
        QueueCluster rolled = null;
        try {
            while (System.nanoTime() < deadline) {
                Map<String, String> uids = nodePodUids();
                QueueCluster cluster = current();
                if (ready(cluster) && cluster.getStatus().getTerm() > formerTerm && allReplaced(originalUids, uids) && atUpdateRevision()) {
                    rolled = cluster;
                    break;
                }
                Thread.sleep(1_000);
            }
        } finally {
            watch.close();
        }
        assertNotNull(rolled, "no rolled-out, Ready cluster within " + rollout + "; status: "
            + client.getKubernetesSerialization().asJson(current().getStatus()) + "\npods: " + podSummary());
        System.err.println("[NodeInPodsIT] rolling update: " + formerLeader + " seen as " + watch.seen() + " before its restart");
        assertTrue(watch.demoted(), formerLeader + " was never seen stepped down while its original pod answered; seen as " + watch.seen());

        // the switchover is recorded: the former leader handed over to a follower at a new term
        FailoverStatus switchover = rolled.getStatus().getFailover();
        assertEquals(formerLeader, switchover.getFormerLeader());
        assertEquals(FailoverStatus.Phase.COMPLETED, switchover.getPhase());
        String newLeader = rolled.getStatus().getLeader();
        assertNotEquals(formerLeader, newLeader, "leadership moved off the pod that was restarted last");
        // followers first, the leader last: the former leader's new pod is the youngest
        Map<String, java.time.Instant> created = new TreeMap<>();
        for (Pod pod : nodePods()) {
            created.put(pod.getMetadata().getName(), java.time.Instant.parse(pod.getMetadata().getCreationTimestamp()));
        }
        for (Map.Entry<String, java.time.Instant> pod : created.entrySet()) {
            if (!pod.getKey().equals(formerLeader)) {
                assertTrue(pod.getValue().isBefore(created.get(formerLeader)) || pod.getValue().equals(created.get(formerLeader)),
                    "the leader's pod is replaced last: " + created);
            }
        }
        assertNodesAgree(rolled.getStatus().getTerm(), newLeader);
        assertHoldsEveryAcknowledged(newLeader);
        List<String> restarts = clusterEvents("RollingRestart");
        assertEquals(3, restarts.size(), "one RollingRestart Event per pod: " + restarts);
        assertTrue(restarts.get(2).startsWith("restarting " + formerLeader + " "), "the leader last: " + restarts);
        append(newLeader, 10, "rolled");
        long lastAcknowledged = lastAcknowledged();
        waitFor("every replica's durable index at " + lastAcknowledged, cluster -> everyReplicaHolds(cluster, lastAcknowledged));
        assertHoldsEveryAcknowledged(formerLeader);
    }

    @Test
    @Order(6)
    void aPodStuckOnABrokenConfigurationIsRestartedByTheRolloutOnceTheConfigurationIsFixed() throws Exception {
        QueueCluster before = waitFor("the cluster Ready", NodeInPodsIT::ready);
        String goodRevision = updateRevision();
        int restartsBefore = clusterEvents("RollingRestart").size();

        // a client credential Secret that does not exist: the kubelet cannot mount it, so the first pod the rollout
        // replaces stays Pending at the new revision, and the rollout waits (one disruption at a time)
        client.resources(QueueCluster.class).inNamespace(namespace).withName(CLUSTER).edit(cluster -> {
            cluster.getSpec().setClientCredentialSecret("missing-" + CLIENT_SECRET);
            return cluster;
        });
        Pod stuck = waitForPod("a node pod stuck Pending at the broken revision", pod -> !goodRevision.equals(revision(pod))
            && "Pending".equals(pod.getStatus().getPhase()));
        String brokenRevision = revision(stuck);
        Thread.sleep(15_000);
        assertEquals(1, nodePods().stream().filter(pod -> brokenRevision.equals(revision(pod))).count(),
            "the rollout waits while a replaced pod is not back: " + podSummary());

        // the user puts the Secret's name back: the StatefulSet's update revision is the good one again, the stuck pod
        // is the only outdated one, and it is out already: the rollout restarts it (nobody deletes a pod by hand)
        client.resources(QueueCluster.class).inNamespace(namespace).withName(CLUSTER).edit(cluster -> {
            cluster.getSpec().setClientCredentialSecret(CLIENT_SECRET);
            return cluster;
        });
        QueueCluster mended = waitFor("the cluster Ready again with every pod at the good revision", cluster -> ready(cluster)
            && goodRevision.equals(updateRevision()) && atUpdateRevision() && !nodePodUids().containsValue(stuck.getMetadata().getUid()));
        List<String> restarts = clusterEvents("RollingRestart");
        assertEquals(restartsBefore + 2, restarts.size(), "one restart into the broken revision, one out of it: " + restarts);
        assertTrue(restarts.get(restarts.size() - 1).startsWith("restarting " + stuck.getMetadata().getName() + " "), restarts.toString());
        assertEquals(before.getStatus().getLeader(), mended.getStatus().getLeader(), "only a follower was touched");
        assertHoldsEveryAcknowledged(stuck.getMetadata().getName());
    }

    private static String revision(Pod pod) {
        return pod.getMetadata().getLabels().get("controller-revision-hash");
    }

    private String updateRevision() {
        var set = client.apps().statefulSets().inNamespace(namespace).withName(CLUSTER).get();
        return set == null || set.getStatus() == null ? null : set.getStatus().getUpdateRevision();
    }

    private Pod waitForPod(String what, Predicate<Pod> condition) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            for (Pod pod : nodePods()) {
                if (pod.getMetadata().getDeletionTimestamp() == null && condition.test(pod)) {
                    return pod;
                }
            }
            Thread.sleep(1_000);
        }
        throw new AssertionError("no " + what + " within " + WAIT + "\npods: " + podSummary());
    }

    // ---------------------------------------------------------------------------------------------------------------

    private List<Pod> nodePods() {
        return client.pods().inNamespace(namespace).withLabel(io.queueenterprise.operator.model.ClusterNames.LABEL_INSTANCE, CLUSTER)
            .list().getItems();
    }

    /** pod name → uid of the node pods that exist and are not being deleted. */
    private Map<String, String> nodePodUids() {
        Map<String, String> uids = new TreeMap<>();
        for (Pod pod : nodePods()) {
            if (pod.getMetadata().getDeletionTimestamp() == null) {
                uids.put(pod.getMetadata().getName(), pod.getMetadata().getUid());
            }
        }
        return uids;
    }

    private static boolean allReplaced(Map<String, String> original, Map<String, String> now) {
        return now.size() == original.size() && now.entrySet().stream().noneMatch(pod -> pod.getValue().equals(original.get(pod.getKey())));
    }

    /** Every node pod runs the StatefulSet's update revision (the new template). */
    private boolean atUpdateRevision() {
        String revision = updateRevision();
        List<Pod> pods = nodePods();
        return revision != null && pods.size() == 3 && pods.stream()
            .allMatch(pod -> revision.equals(pod.getMetadata().getLabels().get("controller-revision-hash")));
    }

    /**
     * The remote client's pod: the node image running the RemoteAppend probe, restricted like the nodes, the data key
     * and client credential Secrets mounted read-only with {@code defaultMode: 0400} and {@code fsGroup}, Aeron's files
     * in a memory volume.
     */
    private Pod remoteWriter(String marker, int count) {
        List<String> arguments = new ArrayList<>(List.of("io.queueenterprise.kubernetes.probe.RemoteAppend", VAULT,
            Integer.toString(count), marker, NodePaths.CLIENT_CREDENTIAL_FILE, "/etc/queue-enterprise/keys", "10000"));
        for (int replica = 0; replica < 3; replica++) {
            arguments.add(CLUSTER + "-" + replica + "." + CLUSTER + "-nodes." + namespace + ".svc.cluster.local:" + NodePaths.CLIENT_PORT);
        }
        // 100m requested and no CPU limit: the three replicas hold 900m of the test bed's one allocatable CPU
        Map<String, Quantity> requests = Map.of("cpu", new Quantity("100m"), "memory", new Quantity("512Mi"));
        Map<String, Quantity> limits = Map.of("memory", new Quantity("512Mi"));
        return new io.fabric8.kubernetes.api.model.PodBuilder()
            .withNewMetadata().withName("vault-writer").withLabels(Map.of(CLIENT_LABEL, CLUSTER)).endMetadata()
            .withNewSpec()
                .withRestartPolicy("Never")
                .withAutomountServiceAccountToken(false)
                .withNewSecurityContext().withRunAsNonRoot(true).withRunAsUser((long) NODE_UID).withRunAsGroup((long) NODE_UID)
                    .withFsGroup((long) NODE_UID).withNewSeccompProfile().withType("RuntimeDefault").endSeccompProfile().endSecurityContext()
                .addNewContainer().withName("writer").withImage(testbed.nodeImage()).withImagePullPolicy("Never")
                    .withArgs(arguments)
                    .withNewResources().withRequests(requests).withLimits(limits).endResources()
                    .withNewSecurityContext().withAllowPrivilegeEscalation(false).withReadOnlyRootFilesystem(true)
                        .withNewCapabilities().withDrop("ALL").endCapabilities().endSecurityContext()
                    .addNewVolumeMount().withName("vault-key").withMountPath("/etc/queue-enterprise/keys").withReadOnly(true).endVolumeMount()
                    .addNewVolumeMount().withName("client-credential").withMountPath(NodePaths.CLIENT_DIRECTORY).withReadOnly(true).endVolumeMount()
                    .addNewVolumeMount().withName("shm").withMountPath("/dev/shm").endVolumeMount()
                    .addNewVolumeMount().withName("tmp").withMountPath("/tmp").endVolumeMount()
                .endContainer()
                .addNewVolume().withName("vault-key").withNewSecret().withSecretName(VAULT_KEY_SECRET).withDefaultMode(0400).endSecret().endVolume()
                .addNewVolume().withName("client-credential").withNewSecret().withSecretName(CLIENT_SECRET).withDefaultMode(0400).endSecret().endVolume()
                .addNewVolume().withName("shm").withNewEmptyDir().withMedium("Memory").withSizeLimit(new Quantity("128Mi")).endEmptyDir().endVolume()
                .addNewVolume().withName("tmp").withNewEmptyDir().withSizeLimit(new Quantity("64Mi")).endEmptyDir().endVolume()
            .endSpec().build();
    }

    private QueueCluster trio() {
        QueueDefinition orders = new QueueDefinition();
        orders.setName(QUEUE);
        orders.setRollCycle(RollCycle.FAST_HOURLY);
        orders.setEncryption(Encryption.NONE);
        orders.setAckTimeout("10s");   // generous: three JVMs share two busy cores
        QueueDefinition vault = new QueueDefinition();
        vault.setName(VAULT);
        vault.setRollCycle(RollCycle.FAST_HOURLY);
        vault.setEncryption(Encryption.AES_128_CTR_POLY1305);
        vault.setDataKeySecret(VAULT_KEY_SECRET);
        vault.setAckTimeout("10s");
        QueueClusterSpec spec = new QueueClusterSpec();
        spec.setQueues(new ArrayList<>(List.of(orders, vault)));
        spec.setClientCredentialSecret(CLIENT_SECRET);   // the nodes serve remote clients on 40120/UDP
        spec.setWriteKeySecret(WRITE_KEY_SECRET);        // and take their appends to the vault
        io.queueenterprise.operator.api.AuthorizedClients clients = new io.queueenterprise.operator.api.AuthorizedClients();
        clients.setPodSelector(Map.of(CLIENT_LABEL, CLUSTER));
        spec.setAuthorizedClients(clients);
        spec.setReplicas(3);
        spec.setAckMode(AckMode.QUORUM);
        spec.setPinned(false);           // the test bed has one exclusive core; three replicas share the others
        spec.setCoresPerReplica("300m");
        spec.setMemory("1Gi");
        spec.setSharedMemory("256Mi");   // Aeron's embedded driver: ~50 MiB per node
        StorageSpec storage = new StorageSpec();
        storage.setSize("1Gi");
        storage.setStorageClassName(storageClass);
        spec.setStorage(storage);
        QueueCluster cluster = new QueueCluster();
        cluster.setMetadata(new ObjectMetaBuilder().withName(CLUSTER).build());
        cluster.setSpec(spec);
        return cluster;
    }

    private void startOperator(DiesAfterRecordingTerm death) throws IOException {
        Config config = Config.fromKubeconfig(Files.readString(testbed.kubeconfig()));
        KubernetesClientBuilder builder = new KubernetesClientBuilder().withConfig(config);
        if (death != null) {
            config.setRequestRetryBackoffLimit(0);   // a dead operator does not retry
            builder.withHttpClientBuilderConsumer(http -> http.addOrReplaceInterceptor("dies-after-recording-term", death));
        }
        operatorClient = builder.build();
        OperatorSettings settings = new OperatorSettings(testbed.nodeImage(), "Never", OperatorSettings.DEFAULT_NODE_ARGUMENTS,
            "cluster.local", namespace, Map.of("app.kubernetes.io/name", "queue-enterprise-operator"));
        operator = new QueueEnterpriseOperator(operatorClient, settings, Set.of(namespace), null, new PrometheusRegistry(), false);
        operator.start();
    }

    private void stopOperator() {
        if (operator != null) {
            operator.close();
            operator = null;
        }
        if (operatorClient != null) {
            operatorClient.close();
            operatorClient = null;
        }
    }

    private QueueCluster current() {
        return client.resources(QueueCluster.class).inNamespace(namespace).withName(CLUSTER).get();
    }

    private QueueCluster waitFor(String what, Predicate<QueueCluster> condition) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        QueueCluster cluster = null;
        while (System.nanoTime() < deadline) {
            cluster = current();
            if (cluster != null && condition.test(cluster)) {
                return cluster;
            }
            Thread.sleep(1_000);
        }
        throw new AssertionError("no " + what + " within " + WAIT + "; status: "
            + (cluster == null ? null : client.getKubernetesSerialization().asJson(cluster.getStatus()))
            + "\npods: " + podSummary());
    }

    private String podSummary() {
        StringBuilder summary = new StringBuilder();
        for (Pod pod : client.pods().inNamespace(namespace).list().getItems()) {
            summary.append("\n").append(pod.getMetadata().getName()).append(" ").append(pod.getStatus().getPhase())
                .append(" ").append(pod.getStatus().getPodIP()).append(" ").append(pod.getStatus().getContainerStatuses());
            try {
                String log = client.pods().inNamespace(namespace).withName(pod.getMetadata().getName()).inContainer(CONTAINER).tailingLines(15).getLog();
                summary.append("\n  log: ").append(log.replace("\n", "\n  log: "));
            } catch (RuntimeException e) {
                summary.append("\n  (no log: ").append(e.getMessage()).append(")");
            }
        }
        return summary.toString();
    }

    private static boolean ready(QueueCluster cluster) {
        QueueClusterStatus status = cluster.getStatus();
        return status != null && status.getLeader() != null && status.getTerm() != null && status.getConditions() != null
            && status.getConditions().stream().anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    }

    private static boolean everyReplicaHolds(QueueCluster cluster, long index) {
        return everyReplicaHolds(cluster, QUEUE, index);
    }

    private static boolean everyReplicaHolds(QueueCluster cluster, String queue, long index) {
        QueueClusterStatus status = cluster.getStatus();
        if (status == null || status.getReplicas() == null || status.getReplicas().size() != 3) {
            return false;
        }
        for (ReplicaStatus replica : status.getReplicas()) {
            QueueProgress progress = replica.getQueues() == null ? null
                : replica.getQueues().stream().filter(q -> queue.equals(q.getName())).findFirst().orElse(null);
            if (progress == null || progress.getDurableIndex() == null || progress.getDurableIndex() < index) {
                return false;
            }
        }
        return true;
    }

    /** Runs the test bed's queue client in {@code pod}, beside its node: quorum-acknowledged appends. */
    private void append(String pod, int count, String prefix) {
        String output = queueClient(pod, "append", queueDirectory(), ROLL_CYCLE, Integer.toString(count), prefix, "10000");
        int acked = 0;
        for (String line : output.split("\n")) {
            if (line.startsWith("ACKED ")) {
                String[] parts = line.split(" ", 3);
                acknowledged.put(Long.parseLong(parts[1]), parts[2]);
                acked++;
            }
        }
        assertEquals(count, acked, "every append acknowledged by a majority: " + output);
    }

    private long lastAcknowledged() {
        return ((TreeMap<Long, String>) acknowledged).lastKey();
    }

    /** Every acknowledged excerpt is in {@code pod}'s copy of the queue, at its index, with its bytes. */
    private void assertHoldsEveryAcknowledged(String pod) {
        Map<Long, String> held = new LinkedHashMap<>();
        String output = queueClient(pod, "read", queueDirectory(), ROLL_CYCLE);
        for (String line : output.split("\n")) {
            if (line.startsWith("EXCERPT ")) {
                String[] parts = line.split(" ", 3);
                held.put(Long.parseLong(parts[1]), parts[2]);
            }
        }
        for (Map.Entry<Long, String> excerpt : acknowledged.entrySet()) {
            assertEquals(excerpt.getValue(), held.get(excerpt.getKey()), pod + " lost acknowledged excerpt at index "
                + excerpt.getKey() + " (holds " + held.size() + " excerpts)");
        }
    }

    private static String queueDirectory() {
        return NodePaths.DATA_DIRECTORY + "/" + QUEUE;
    }

    /** {@code QueueClient} in an encrypted mode: the vault's data key on its standard input, nowhere else in the pod. */
    private String queueClientWithKey(String pod, String... arguments) {
        return execQueueClient(pod, vaultKey + "\n", arguments);
    }

    /** {@code QueueClient} (the node image's probe) run with {@code kubectl exec} in the node's container, as the node's user. */
    private String queueClient(String pod, String... arguments) {
        return execQueueClient(pod, null, arguments);
    }

    private String execQueueClient(String pod, String stdin, String... arguments) {
        List<String> command = new ArrayList<>(List.of("/opt/java/bin/java", "@/opt/queue-enterprise/bin/jvm.args", "-Xmx64m",
            "-XX:TieredStopAtLevel=1", "-cp", "/opt/queue-enterprise/lib/*", "io.queueenterprise.kubernetes.probe.QueueClient"));
        command.addAll(List.of(arguments));
        return execInNode(pod, stdin, command);
    }

    /** {@code command} run with {@code kubectl exec} in the node's container, {@code stdin} (or none) on its input; exit 0 asserted. */
    private String execInNode(String pod, String stdin, List<String> command) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Integer exitCode;
        var container = client.pods().inNamespace(namespace).withName(pod).inContainer(CONTAINER);
        try (ExecWatch watch = (stdin == null ? container
                : container.readingInput(new java.io.ByteArrayInputStream(stdin.getBytes(StandardCharsets.US_ASCII))))
                .writingOutput(out).writingError(err).exec(command.toArray(String[]::new))) {
            exitCode = watch.exitCode().get(5, TimeUnit.MINUTES);
        } catch (Exception e) {
            throw new AssertionError(command.get(command.size() - 1) + " in " + pod + " did not finish: " + e + "\nstderr: " + err.toString(StandardCharsets.UTF_8), e);
        }
        String stdout = out.toString(StandardCharsets.UTF_8);
        assertEquals(Integer.valueOf(0), exitCode, command.get(command.size() - 1) + " in " + pod + ": " + stdout + "\nstderr: " + err.toString(StandardCharsets.UTF_8));
        return stdout;
    }

    /**
     * Each node answers on its admin endpoint: the leader leads at {@code term}, the others follow it at {@code term}
     * (waited for: a restarted pod answers once its JVM is up).
     */
    private void assertNodesAgree(long term, String leader) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        Map<String, NodeStatusView> nodes = Map.of();
        while (System.nanoTime() < deadline) {
            nodes = answeringNodes();
            if (nodes.size() == 3 && nodes.entrySet().stream().allMatch(node -> node.getKey().equals(leader)
                ? node.getValue().isLeaderAt(term) : node.getValue().isFollowing(leader, term))) {
                return;
            }
            Thread.sleep(1_000);
        }
        throw new AssertionError("not every replica answers with " + leader + " leading at term " + term + " within " + WAIT
            + ": " + nodes + "\npods: " + podSummary());
    }

    /**
     * Asks one node's original pod for its status every 20 ms on a thread of its own, from its pod address at the
     * start, and remembers each role and term it answered with. Stops on {@link #close()}.
     */
    private final class FormerLeaderWatch implements AutoCloseable {
        private final long formerTerm;
        private final Thread thread;
        private final Set<String> seen = java.util.concurrent.ConcurrentHashMap.newKeySet();
        private volatile boolean demoted;
        private volatile boolean closed;

        FormerLeaderWatch(String replica, long formerTerm) {
            this.formerTerm = formerTerm;
            String ip = client.pods().inNamespace(namespace).withName(replica).get().getStatus().getPodIP();
            AdminClient admin = new AdminClient(HttpClient.newBuilder().connectTimeout(Duration.ofMillis(500)).build(), replica,
                URI.create("http://" + ip + ":" + NodePaths.ADMIN_PORT), adminToken(), Duration.ofSeconds(1));
            thread = new Thread(() -> {
                while (!closed) {
                    try {
                        record(admin.status());
                    } catch (AdminException e) {
                        // not answering (stopping): its replacement answers on another address
                    }
                    try {
                        Thread.sleep(20);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "former-leader-watch");
            thread.setDaemon(true);
            thread.start();
        }

        private void record(NodeStatusView view) {
            seen.add(view.role() + "@" + view.term());
            if (view.term() > formerTerm && !view.isLeaderAt(view.term())) {
                demoted = true;
            }
        }

        boolean demoted() {
            return demoted;
        }

        String seen() {
            return new java.util.TreeSet<>(seen).toString();
        }

        @Override
        public void close() throws InterruptedException {
            closed = true;
            thread.interrupt();
            thread.join(5_000);
        }
    }

    private String adminToken() {
        return new String(Base64.getDecoder().decode(client.secrets().inNamespace(namespace).withName(CLUSTER + "-admin-token")
            .get().getData().values().iterator().next()), StandardCharsets.UTF_8).trim();
    }

    /** The nodes' own status, asked as the operator asks: the pod's IP, the admin port, the cluster's bearer token. */
    private Map<String, NodeStatusView> answeringNodes() {
        String token = adminToken();
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build();
        Map<String, NodeStatusView> nodes = new TreeMap<>();
        for (Pod pod : client.pods().inNamespace(namespace).list().getItems()) {
            String ip = pod.getStatus().getPodIP();
            if (ip == null || pod.getMetadata().getDeletionTimestamp() != null) {
                continue;
            }
            try {
                nodes.put(pod.getMetadata().getName(), new AdminClient(http, pod.getMetadata().getName(),
                    URI.create("http://" + ip + ":" + NodePaths.ADMIN_PORT), token, Duration.ofSeconds(5)).status());
            } catch (AdminException e) {
                // not answering (starting, or gone): not counted
            }
        }
        return nodes;
    }

    /**
     * An operator that dies at the worst moment of a failover: its write of the new term reaches the API server, and it
     * hears nothing back, ever (every later request of its client fails), so it never fences, promotes or re-points. The
     * write is made with the test's own client, with the operator's very body (resourceVersion guard included), so the
     * API server holds exactly what the operator sent; then the operator's request is sent nowhere.
     */
    static final class DiesAfterRecordingTerm implements Interceptor {
        private static final URI NOWHERE = URI.create("https://127.0.0.1:1/");
        private final KubernetesClient writer;
        final CountDownLatch died = new CountDownLatch(1);
        volatile long recordedTerm;

        DiesAfterRecordingTerm(KubernetesClient writer) {
            this.writer = writer;
        }

        @Override
        public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
            if (died.getCount() == 0) {
                builder.uri(NOWHERE);
                return;
            }
            String path = request.uri().getPath();
            if ("PUT".equals(request.method()) && path.contains("/queueclusters/") && path.endsWith("/status")) {
                String body = request.bodyString();
                if (body != null && body.contains("\"" + FailoverStatus.Phase.PROMOTING + "\"")) {
                    QueueCluster recorded = writer.getKubernetesSerialization().unmarshal(body, QueueCluster.class);
                    writer.resource(recorded).updateStatus();
                    recordedTerm = recorded.getStatus().getTerm();
                    died.countDown();
                    builder.uri(NOWHERE);
                }
            }
        }
    }
}
