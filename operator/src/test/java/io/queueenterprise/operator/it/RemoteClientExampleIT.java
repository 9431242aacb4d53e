package io.queueenterprise.operator.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.dsl.ExecWatch;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.queueenterprise.kubernetes.testbed.KubernetesTestbed;
import io.queueenterprise.kubernetes.testbed.Testbed;
import io.queueenterprise.operator.QueueEnterpriseOperator;
import io.queueenterprise.operator.api.AckMode;
import io.queueenterprise.operator.api.AuthorizedClients;
import io.queueenterprise.operator.api.ClientIdentity;
import io.queueenterprise.operator.api.Encryption;
import io.queueenterprise.operator.api.LastFailover;
import io.queueenterprise.operator.api.QueueCluster;
import io.queueenterprise.operator.api.QueueClusterSpec;
import io.queueenterprise.operator.api.QueueClusterStatus;
import io.queueenterprise.operator.api.QueueDefinition;
import io.queueenterprise.operator.api.RollCycle;
import io.queueenterprise.operator.api.StorageSpec;
import io.queueenterprise.operator.model.NodePaths;
import io.queueenterprise.operator.model.OperatorSettings;

/**
 * An application team's day against a real QueueCluster: {@code examples/remote-client} (a producer and a consumer that
 * know Queue Enterprise only by Maven coordinates) is built outside this reactor from the artifacts {@code install}
 * publishes (a private repository, as {@code ConsumerBuildIT} does), packaged as an image ({@code build-image.sh
 * remote-client-example}) and run in pods of its own, configured only from what the operator creates and the team
 * provides: the cluster's name and namespace (the replicas' DNS names under the operator's headless Service), the client
 * credential Secret and the queue's data key Secret, mounted read-only; the nodes get the queue's write keys
 * ({@code qe write-keys}'s derivation from the data key) through the QueueCluster's {@code writeKeySecret}.
 *
 * <ol>
 *   <li>The operator (in this JVM) runs three replicas of the real node (QUORUM, an encrypted queue); a key holder's
 *   first write creates the queue's descriptor (a remote writer cannot).</li>
 *   <li>The producer appends a numbered stream; while it runs, the leader's pod is deleted with grace 0. The producer
 *   follows the new leader by itself and ends with every order acknowledged, in order.</li>
 *   <li>Each client has its own identity ({@code spec.clients}: the operator's key pair Secret, mounted). An auditor
 *   reading the queue is removed from {@code spec.clients}: the nodes close its session and refuse it
 *   ({@code UNKNOWN_CLIENT}) once the kubelet has refreshed their authorised-clients mount; the others go on.</li>
 *   <li>A consumer served by one replica reads part of the queue and stops; a second one, served by another replica,
 *   resumes after the index the first reported. Together they read every acknowledged excerpt exactly once, in
 *   order, at the index its write returned: no gap, no duplicate, nothing else.</li>
 * </ol>
 * Bounded: every wait has a limit; the namespace, volumes and CRD are deleted at the end.
 */
@KubernetesTestbed
@Tag("kubernetes")
@Tag("slow")
@Timeout(value = 30, unit = TimeUnit.MINUTES)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RemoteClientExampleIT {
    private static final Path ROOT = Path.of(System.getProperty("qe.project.root"));
    private static final Path CONSUMER_REPO = Path.of(System.getProperty("qe.consumer.repo"));
    private static final Path REAL_REPO = Path.of(System.getProperty("qe.real.repo"));
    private static final String CLUSTER = "shop";
    private static final String QUEUE = "orders";
    private static final String DATA_KEY_SECRET = "orders-data-key";
    private static final String CLIENT_SECRET = "shop-clients";
    /** The nodes' write keys ({@code qe write-keys} from the data key): without them every remote append is refused. */
    private static final String WRITE_KEY_SECRET = "shop-write-keys";
    private static final String CLIENT_LABEL = "queue-enterprise.io/client";
    private static final Duration WAIT = Duration.ofMinutes(8);   // three JVMs starting on 2 shared cores, 300m each
    private static final int ORDERS = 120;
    private static final int KILL_AFTER = 30;
    private static final int FIRST_CONSUMER_COUNT = 70;
    private static final String PRODUCER = "producer";
    private static final String CONSUMER = "consumer";
    private static final String AUDITOR = "auditor";

    private final Testbed testbed;
    private final KubernetesClient client;
    private final String dataKey = HexFormat.of().formatHex(TestbedFixtures.randomBytes(32));
    private String namespace;
    private String storageClass;
    private ReplicaVolumes volumes;
    /** The example's build and image import, under way while the cluster starts (both mostly wait on other things). */
    private final ExecutorService imageBuilder = Executors.newSingleThreadExecutor(runnable -> new Thread(runnable, "example-image-build"));
    private Future<String> exampleImage;
    private String builtImage;
    private QueueEnterpriseOperator operator;
    private KubernetesClient operatorClient;
    private Path work;

    RemoteClientExampleIT(Testbed testbed) {
        this.testbed = testbed;
        this.client = testbed.client();
    }

    @BeforeAll
    void setUp() throws Exception {
        assumeTrue(testbed.clusterDnsServed(), "the test bed's cluster DNS is not running (port 53 on the node IP taken?):"
            + " the pods could not resolve the replicas' names");
        work = Files.createTempDirectory(TestbedFixtures.workDirectory(), "remote-client-example-");
        exampleImage = imageBuilder.submit(this::buildExampleImage);

        TestbedFixtures.installCrd(client);
        String suffix = UUID.randomUUID().toString().substring(0, 8);
        namespace = "remote-example-" + suffix;
        storageClass = "qe-it-example-" + suffix;
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build()).create();
        client.serviceAccounts().inNamespace(namespace).withName("default").waitUntilCondition(account -> account != null, 1, TimeUnit.MINUTES);
        // what the team that deploys the clients provides: the cluster's client credential and the queue's data key
        client.secrets().inNamespace(namespace).resource(new SecretBuilder().withNewMetadata().withName(CLIENT_SECRET).endMetadata()
            .addToStringData("credential", HexFormat.of().formatHex(TestbedFixtures.randomBytes(32))).build()).create();
        client.secrets().inNamespace(namespace).resource(new SecretBuilder().withNewMetadata().withName(DATA_KEY_SECRET).endMetadata()
            .addToStringData("1.key", dataKey).addToStringData("active", "1").build()).create();
        // and, from the data key, the nodes' write keys (the producer appends remotely)
        client.secrets().inNamespace(namespace).resource(TestbedFixtures.writeKeySecret(WRITE_KEY_SECRET, 1, dataKey, QUEUE))
            .create();
        volumes = new ReplicaVolumes(testbed, storageClass, work);
        for (int replica = 0; replica < 3; replica++) {
            volumes.add();
        }
    }

    @AfterAll
    void tearDown() throws IOException, InterruptedException {
        if (exampleImage != null) {
            exampleImage.cancel(true);   // a build still running is interrupted, and its Maven process destroyed
        }
        imageBuilder.shutdownNow();
        imageBuilder.awaitTermination(1, TimeUnit.MINUTES);
        if (operator != null) {
            operator.close();
        }
        if (operatorClient != null) {
            operatorClient.close();
        }
        if (namespace != null) {
            TestbedFixtures.deleteNamespace(client, namespace);
        }
        if (volumes != null) {
            volumes.delete();
        }
        if (work != null) {
            TestbedFixtures.deleteTree(work);
        }
        TestbedFixtures.removeCrd(client);
    }

    @Test
    void theProducerRidesALeaderKillAndTheConsumerResumesOnAnotherReplicaReadingEveryAcknowledgedOrderOnce() throws Exception {
        Config config = Config.fromKubeconfig(Files.readString(testbed.kubeconfig()));
        operatorClient = new KubernetesClientBuilder().withConfig(config).build();
        operator = new QueueEnterpriseOperator(operatorClient, new OperatorSettings(testbed.nodeImage(), "Never",
            OperatorSettings.DEFAULT_NODE_ARGUMENTS, "cluster.local", namespace, Map.of("app.kubernetes.io/name", "queue-enterprise-operator")),
            Set.of(namespace), null, new PrometheusRegistry(), false);
        operator.start();
        client.resources(QueueCluster.class).inNamespace(namespace).resource(shop()).create();
        QueueCluster ready = waitFor("a leader and every replica following it (Ready)", RemoteClientExampleIT::ready);
        String leader = ready.getStatus().getLeader();

        // a key holder's first write records the key in the queue's descriptor (a remote writer cannot create a queue)
        List<String[]> expected = new ArrayList<>();
        String created = keyHolderWrite(leader, "opened-by-a-key-holder");
        assertTrue(created.startsWith("ACKED "), created);
        expected.add(created.trim().split(" ", 3));

        awaitExampleImage();
        // the producer: its own pod, the Secrets mounted, the replicas found by the cluster's name and namespace
        Pod producer = client.pods().inNamespace(namespace).resource(examplePod("producer", PRODUCER, List.of("com.example.remote.Producer",
            "--cluster", CLUSTER, "--queue", QUEUE, "--count", Integer.toString(ORDERS), "--interval", "100ms", "--ack-timeout", "60s"))).create();
        String producerName = producer.getMetadata().getName();
        String logBeforeKill = waitForLog(producerName, log -> acked(log).size() >= KILL_AFTER, "the producer's first " + KILL_AFTER + " acknowledgements");
        client.pods().inNamespace(namespace).withName(leader).withGracePeriod(0).delete();   // SIGKILL, no goodbye
        int ackedBeforeKill = acked(logBeforeKill).size();
        assertTrue(ackedBeforeKill < ORDERS, "the leader was killed while the producer ran: " + ackedBeforeKill + " of " + ORDERS);

        Pod produced = waitForPodToFinish(producerName);
        String producerLog = client.pods().inNamespace(namespace).withName(producerName).getLog();
        System.err.println("[RemoteClientExampleIT] producer:\n" + tail(producerLog, 6));
        if (!"Succeeded".equals(produced.getStatus().getPhase())) {
            // the replicas' side of it (the namespace and its logs go with the test): roles, terms, quarantines
            for (int r = 0; r < 3; r++) {
                String replica = CLUSTER + "-" + r;
                try {
                    System.err.println("[RemoteClientExampleIT] " + replica + " (" + (replica.equals(leader) ? "the killed leader, restarted" : "a follower then")
                        + "):\n" + tail(client.pods().inNamespace(namespace).withName(replica).getLog(), 80));
                } catch (RuntimeException e) {
                    System.err.println("[RemoteClientExampleIT] " + replica + ": no log (" + e.getMessage() + ")");
                }
            }
        }
        assertEquals("Succeeded", produced.getStatus().getPhase(), "the producer: " + producerLog);
        List<String[]> orders = acked(producerLog);
        assertEquals(ORDERS, orders.size(), "every order acknowledged: " + producerLog);
        for (int i = 0; i < orders.size(); i++) {
            assertEquals("order-" + i, orders.get(i)[2], "the producer's order " + i);
            assertTrue(i == 0 || Long.parseLong(orders.get(i)[1]) > Long.parseLong(orders.get(i - 1)[1]), "indexes go up: " + producerLog);
        }
        assertTrue(producerLog.contains("PRODUCED " + ORDERS + " acknowledged"), producerLog);
        expected.addAll(orders);
        client.pods().inNamespace(namespace).withName(producerName).delete();

        // revocation, one client at a time: the auditor reads, is removed from spec.clients, and the nodes close its
        // session and refuse it once the kubelet has updated their authorised-clients mount; the others go on
        client.pods().inNamespace(namespace).resource(examplePod("auditor", AUDITOR, List.of("com.example.remote.Consumer",
            "--cluster", CLUSTER, "--queue", QUEUE, "--idle-timeout", "5m", "--duration", "5m"))).create();
        waitForLog("auditor", log -> read(log).size() >= ORDERS, "the auditor reading every order");
        client.resources(QueueCluster.class).inNamespace(namespace).withName(CLUSTER).edit(cluster -> {
            cluster.getSpec().setClients(new ArrayList<>(List.of(new ClientIdentity(PRODUCER), new ClientIdentity(CONSUMER))));
            return cluster;
        });
        Pod audited = waitForPodToFinish("auditor");
        String auditorLog = client.pods().inNamespace(namespace).withName("auditor").getLog();
        System.err.println("[RemoteClientExampleIT] auditor after its revocation:\n" + tail(auditorLog, 2));
        assertEquals("Failed", audited.getStatus().getPhase(), "the revoked auditor stopped with its reason: " + auditorLog);
        assertTrue(auditorLog.contains("UNKNOWN_CLIENT"), "the nodes refuse the revoked client by name: " + tail(auditorLog, 3));
        assertTrue(client.secrets().inNamespace(namespace).withName(CLUSTER + "-client-" + AUDITOR).get() == null,
            "the revoked client's key pair Secret is deleted");
        client.pods().inNamespace(namespace).withName("auditor").delete();

        // the operator replaced the killed leader while the producer wrote
        QueueCluster failedOver = waitFor("the cluster Ready under a new leader", cluster -> ready(cluster)
            && !leader.equals(cluster.getStatus().getLeader()));
        LastFailover last = failedOver.getStatus().getLastFailover();
        assertNotNull(last, "status.lastFailover");
        assertEquals(leader, last.getFrom());

        // the consumer, served by one replica, stops after part of the queue; the next run resumes on another replica
        int firstReplica = ordinal(failedOver.getStatus().getLeader());
        int secondReplica = (firstReplica + 1) % 3;
        String firstLog = runConsumer("consumer-1", List.of("--prefer-replica", Integer.toString(firstReplica),
            "--count", Integer.toString(FIRST_CONSUMER_COUNT)));
        List<String[]> firstRead = read(firstLog);
        assertEquals(FIRST_CONSUMER_COUNT, firstRead.size(), firstLog);
        String resumeAfter = firstRead.get(firstRead.size() - 1)[1];
        assertTrue(firstLog.contains("served by " + CLUSTER + "-" + firstReplica + "."), "served by replica " + firstReplica + ": " + firstLog);
        assertTrue(firstLog.contains("resume with --after-index " + resumeAfter), firstLog);
        String secondLog = runConsumer("consumer-2", List.of("--prefer-replica", Integer.toString(secondReplica),
            "--after-index", resumeAfter, "--idle-timeout", "15s"));
        assertTrue(secondLog.contains("served by " + CLUSTER + "-" + secondReplica + "."), "served by replica " + secondReplica + ": " + secondLog);
        System.err.println("[RemoteClientExampleIT] consumers:\n" + tail(firstLog, 2) + "\n" + tail(secondLog, 2));

        List<String> consumed = new ArrayList<>();
        firstRead.forEach(line -> consumed.add(line[1] + " " + line[2]));
        read(secondLog).forEach(line -> consumed.add(line[1] + " " + line[2]));
        List<String> written = expected.stream().map(line -> line[1] + " " + line[2]).toList();
        assertEquals(written, consumed, "every acknowledged excerpt read exactly once, in order, at its index");
    }

    private String runConsumer(String name, List<String> options) throws InterruptedException {
        List<String> arguments = new ArrayList<>(List.of("com.example.remote.Consumer", "--cluster", CLUSTER, "--queue", QUEUE));
        arguments.addAll(options);
        client.pods().inNamespace(namespace).resource(examplePod(name, CONSUMER, arguments)).create();
        Pod finished = waitForPodToFinish(name);
        String log = client.pods().inNamespace(namespace).withName(name).getLog();
        assertEquals("Succeeded", finished.getStatus().getPhase(), name + ": " + log);
        client.pods().inNamespace(namespace).withName(name).delete();
        return log;
    }

    /** {@code ACKED index text} lines, in order. */
    private static List<String[]> acked(String log) {
        return lines(log, "ACKED ");
    }

    /** {@code READ index text} lines, in order. */
    private static List<String[]> read(String log) {
        return lines(log, "READ ");
    }

    private static List<String[]> lines(String log, String prefix) {
        return log.lines().filter(line -> line.startsWith(prefix)).map(line -> line.split(" ", 3)).toList();
    }

    private static String tail(String log, int lines) {
        List<String> all = log.lines().toList();
        return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    }

    private static int ordinal(String pod) {
        return Integer.parseInt(pod.substring(pod.lastIndexOf('-') + 1));
    }

    /**
     * A pod of the example's image, as an application team writes it: restricted like the nodes, the client credential
     * and data key Secrets mounted read-only ({@code defaultMode: 0400} and {@code fsGroup}), the namespace from the
     * downward API, Aeron's files in a memory volume, the label the cluster's NetworkPolicy admits.
     */
    private Pod examplePod(String name, String clientName, List<String> clientArguments) {
        List<String> arguments = new ArrayList<>(clientArguments);
        arguments.addAll(List.of("--client-name", clientName));   // its own identity: the operator's Secret, mounted
        // 100m requested and no CPU limit: the three replicas hold 900m of the test bed's one allocatable CPU
        Map<String, Quantity> requests = Map.of("cpu", new Quantity("100m"), "memory", new Quantity("512Mi"));
        return new PodBuilder()
            .withNewMetadata().withName(name).withLabels(Map.of(CLIENT_LABEL, CLUSTER)).endMetadata()
            .withNewSpec()
                .withRestartPolicy("Never")
                .withAutomountServiceAccountToken(false)
                .withNewSecurityContext().withRunAsNonRoot(true).withRunAsUser((long) TestbedFixtures.NODE_UID)
                    .withRunAsGroup((long) TestbedFixtures.NODE_UID).withFsGroup((long) TestbedFixtures.NODE_UID).withNewSeccompProfile().withType("RuntimeDefault").endSeccompProfile().endSecurityContext()
                .addNewContainer().withName("app").withImage(builtImage).withImagePullPolicy("Never")
                    .withArgs(arguments)
                    .addNewEnv().withName("POD_NAMESPACE").withNewValueFrom().withNewFieldRef().withFieldPath("metadata.namespace")
                        .endFieldRef().endValueFrom().endEnv()
                    .withNewResources().withRequests(requests).withLimits(Map.of("memory", new Quantity("512Mi"))).endResources()
                    .withNewSecurityContext().withAllowPrivilegeEscalation(false).withReadOnlyRootFilesystem(true)
                        .withNewCapabilities().withDrop("ALL").endCapabilities().endSecurityContext()
                    .addNewVolumeMount().withName("data-key").withMountPath("/etc/queue-enterprise/keys").withReadOnly(true).endVolumeMount()
                    .addNewVolumeMount().withName("client-credential").withMountPath("/etc/queue-enterprise/client").withReadOnly(true).endVolumeMount()
                    .addNewVolumeMount().withName("identity").withMountPath("/etc/queue-enterprise/identity").withReadOnly(true).endVolumeMount()
                    .addNewVolumeMount().withName("shm").withMountPath("/dev/shm").endVolumeMount()
                    .addNewVolumeMount().withName("tmp").withMountPath("/tmp").endVolumeMount()
                .endContainer()
                .addNewVolume().withName("data-key").withNewSecret().withSecretName(DATA_KEY_SECRET).withDefaultMode(0400).endSecret().endVolume()
                .addNewVolume().withName("client-credential").withNewSecret().withSecretName(CLIENT_SECRET).withDefaultMode(0400).endSecret().endVolume()
                .addNewVolume().withName("identity").withNewSecret().withSecretName(CLUSTER + "-client-" + clientName).withDefaultMode(0400).endSecret().endVolume()
                .addNewVolume().withName("shm").withNewEmptyDir().withMedium("Memory").withSizeLimit(new Quantity("128Mi")).endEmptyDir().endVolume()
                .addNewVolume().withName("tmp").withNewEmptyDir().withSizeLimit(new Quantity("64Mi")).endEmptyDir().endVolume()
            .endSpec().build();
    }

    /** The image built in the background since set-up; its build's failure fails the test here, with its log. */
    private void awaitExampleImage() throws Exception {
        try {
            builtImage = exampleImage.get(6, TimeUnit.MINUTES);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Error error) {
                throw error;
            }
            throw (Exception) e.getCause();
        }
    }

    private QueueCluster shop() {
        QueueDefinition orders = new QueueDefinition();
        orders.setName(QUEUE);
        orders.setRollCycle(RollCycle.FAST_HOURLY);
        orders.setEncryption(Encryption.AES_128_CTR_POLY1305);
        orders.setDataKeySecret(DATA_KEY_SECRET);
        orders.setAckTimeout("10s");   // generous: three JVMs share two busy cores
        QueueClusterSpec spec = new QueueClusterSpec();
        spec.setQueues(new ArrayList<>(List.of(orders)));
        spec.setClientCredentialSecret(CLIENT_SECRET);
        spec.setWriteKeySecret(WRITE_KEY_SECRET);
        AuthorizedClients clients = new AuthorizedClients();
        clients.setPodSelector(Map.of(CLIENT_LABEL, CLUSTER));
        spec.setAuthorizedClients(clients);
        // each client its own identity: the operator makes a key pair Secret per name, the nodes take only these
        spec.setClients(new ArrayList<>(List.of(new ClientIdentity(PRODUCER), new ClientIdentity(CONSUMER), new ClientIdentity(AUDITOR))));
        spec.setReplicas(3);
        spec.setAckMode(AckMode.QUORUM);
        spec.setPinned(false);           // the test bed has one exclusive core; three replicas share the others
        spec.setCoresPerReplica("300m");
        spec.setMemory("1Gi");
        spec.setSharedMemory("256Mi");
        StorageSpec storage = new StorageSpec();
        storage.setSize("1Gi");
        storage.setStorageClassName(storageClass);
        spec.setStorage(storage);
        QueueCluster cluster = new QueueCluster();
        cluster.setMetadata(new ObjectMetaBuilder().withName(CLUSTER).build());
        cluster.setSpec(spec);
        return cluster;
    }

    /** The node image's QueueClient in {@code pod}, handed the data key on stdin: a key holder's first write. */
    private String keyHolderWrite(String pod, String text) {
        List<String> command = List.of("/opt/java/bin/java", "@/opt/queue-enterprise/bin/jvm.args", "-Xmx64m", "-XX:TieredStopAtLevel=1",
            "-cp", "/opt/queue-enterprise/lib/*", "io.queueenterprise.kubernetes.probe.QueueClient", "create-encrypted",
            NodePaths.DATA_DIRECTORY + "/" + QUEUE, RollCycle.FAST_HOURLY.name(), text, "10000");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Integer exitCode;
        try (ExecWatch watch = client.pods().inNamespace(namespace).withName(pod).inContainer("node")
                .readingInput(new ByteArrayInputStream((dataKey + "\n").getBytes(StandardCharsets.US_ASCII)))
                .writingOutput(out).writingError(err).exec(command.toArray(String[]::new))) {
            exitCode = watch.exitCode().get(5, TimeUnit.MINUTES);
        } catch (Exception e) {
            throw new AssertionError("key holder in " + pod + " did not finish: " + e + "\nstderr: " + err.toString(StandardCharsets.UTF_8), e);
        }
        assertEquals(Integer.valueOf(0), exitCode, "key holder in " + pod + ": " + out + "\nstderr: " + err.toString(StandardCharsets.UTF_8));
        return out.toString(StandardCharsets.UTF_8);
    }

    /**
     * Builds {@code examples/remote-client} as the application team does (by coordinates, outside this reactor), stages
     * its jars and the project's {@code bin/jvm.args}, and imports the image into the test bed.
     */
    private String buildExampleImage() throws IOException, InterruptedException {
        Path app = copyTree(ROOT.resolve("examples/remote-client"), work.resolve("remote-client"));
        List<String> command = List.of(ROOT.resolve("mvnw").toString(), "-B", "-q", "-f", app.resolve("pom.xml").toString(),
            "-Dmaven.repo.local=" + CONSUMER_REPO, "-Dmaven.repo.local.tail=" + REAL_REPO,
            "-Dmaven.repo.local.tail.ignoreAvailability=true", "package");
        Path log = work.resolve("example-build.log");
        ProcessBuilder builder = new ProcessBuilder(command).directory(app.toFile()).redirectErrorStream(true).redirectOutput(log.toFile());
        builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        Process process = builder.start();
        try {
            assertTrue(process.waitFor(5, TimeUnit.MINUTES), "the example's build did not finish in 5 minutes: " + Files.readString(log));
            assertEquals(0, process.exitValue(), "the example's build:\n" + Files.readString(log));
        } finally {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }
        Path imageApp = Files.createDirectories(work.resolve("image-app/lib"));
        try (Stream<Path> jars = Stream.concat(Files.list(app.resolve("target/lib")),
                Stream.of(app.resolve("target/remote-client-example-1.0.jar")))) {
            for (Path jar : jars.toList()) {
                Files.copy(jar, imageApp.resolve(jar.getFileName()), StandardCopyOption.REPLACE_EXISTING);
            }
        }
        Files.createDirectories(work.resolve("image-app/bin"));
        Files.copy(ROOT.resolve("bin/jvm.args"), work.resolve("image-app/bin/jvm.args"), StandardCopyOption.REPLACE_EXISTING);
        return testbed.importImage("remote-client-example", work.resolve("image-app"), "1.0");
    }

    private String waitForLog(String pod, Predicate<String> condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        String log = "";
        while (System.nanoTime() < deadline) {
            Pod current = client.pods().inNamespace(namespace).withName(pod).get();
            if (current != null && current.getStatus() != null && current.getStatus().getContainerStatuses() != null
                    && current.getStatus().getContainerStatuses().stream().anyMatch(s -> s.getState().getWaiting() == null)) {
                log = client.pods().inNamespace(namespace).withName(pod).getLog();
                if (condition.test(log)) {
                    return log;
                }
            }
            Thread.sleep(200);
        }
        throw new AssertionError("no " + what + " within " + WAIT + ": " + log);
    }

    private Pod waitForPodToFinish(String name) {
        return client.pods().inNamespace(namespace).withName(name).waitUntilCondition(pod -> pod != null && pod.getStatus() != null
            && List.of("Succeeded", "Failed").contains(pod.getStatus().getPhase()), WAIT.toMinutes(), TimeUnit.MINUTES);
    }

    private QueueCluster waitFor(String what, Predicate<QueueCluster> condition) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        QueueCluster cluster = null;
        while (System.nanoTime() < deadline) {
            cluster = client.resources(QueueCluster.class).inNamespace(namespace).withName(CLUSTER).get();
            if (cluster != null && condition.test(cluster)) {
                return cluster;
            }
            Thread.sleep(1_000);
        }
        throw new AssertionError("no " + what + " within " + WAIT + "; status: "
            + (cluster == null ? null : client.getKubernetesSerialization().asJson(cluster.getStatus())));
    }

    private static boolean ready(QueueCluster cluster) {
        QueueClusterStatus status = cluster.getStatus();
        return status != null && status.getLeader() != null && status.getTerm() != null && status.getConditions() != null
            && status.getConditions().stream().anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    }

    /** Copies the example's sources (not a target/ a user may have left there). */
    private static Path copyTree(Path from, Path to) throws IOException {
        Files.walkFileTree(from, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                if (dir.getFileName().toString().equals("target")) {
                    return FileVisitResult.SKIP_SUBTREE;
                }
                Files.createDirectories(to.resolve(from.relativize(dir).toString()));
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.copy(file, to.resolve(from.relativize(file).toString()));
                return FileVisitResult.CONTINUE;
            }
        });
        return to;
    }
}
