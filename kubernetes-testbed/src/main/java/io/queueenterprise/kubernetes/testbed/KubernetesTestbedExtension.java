package io.queueenterprise.kubernetes.testbed;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.opentest4j.TestAbortedException;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;

/**
 * Starts the single-node cluster once per test run (JUnit's root store holds it, and closes it
 * when the run ends), or reuses one that a person started with {@code kubernetes/node.sh up} and
 * then leaves it running. Provisioning is the idempotent {@code kubernetes/provision.sh}, so a
 * fresh machine needs nothing installed by hand. A JVM shutdown hook tears down a cluster this run
 * started if the run is killed before JUnit closes the store; a run killed harder is cleaned up by
 * the next {@code node.sh up}.
 */
public final class KubernetesTestbedExtension implements BeforeAllCallback, ParameterResolver {
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(KubernetesTestbedExtension.class);

    @Override
    public void beforeAll(ExtensionContext context) {
        session(context).testbed();
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        Class<?> type = parameter.getParameter().getType();
        return type == Testbed.class || type == KubernetesClient.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        Testbed testbed = session(context).testbed();
        return parameter.getParameter().getType() == Testbed.class ? testbed : testbed.client();
    }

    private static Session session(ExtensionContext context) {
        return context.getRoot().getStore(NAMESPACE).getOrComputeIfAbsent(Session.class, type -> Session.open(), Session.class);
    }

    /** One per test run: the cluster, or why there is none. */
    static final class Session implements AutoCloseable {
        private static final long PROVISION_TIMEOUT_MINUTES = 75;   // a cold Kubernetes build is ~10 min on 2 cores
        private final String skipReason;
        private final RuntimeException failure;
        private final Testbed testbed;
        private final TestbedScripts scripts;
        private final boolean startedByThisRun;
        private final Thread shutdownHook;
        private boolean closed;

        private Session(String skipReason, RuntimeException failure, Testbed testbed, TestbedScripts scripts,
                        boolean startedByThisRun) {
            this.skipReason = skipReason;
            this.failure = failure;
            this.testbed = testbed;
            this.scripts = scripts;
            this.startedByThisRun = startedByThisRun;
            this.shutdownHook = startedByThisRun ? new Thread(this::tearDown, "kubernetes-testbed-teardown") : null;
            if (shutdownHook != null) {
                Runtime.getRuntime().addShutdownHook(shutdownHook);
            }
        }

        Testbed testbed() {
            if (skipReason != null) {
                throw new TestAbortedException("Kubernetes test bed skipped: " + skipReason);
            }
            if (failure != null) {
                throw failure;
            }
            return testbed;
        }

        static Session open() {
            Path directory = Path.of(System.getProperty("qe.kubernetes.dir", "kubernetes")).toAbsolutePath().normalize();
            Path workDirectory = Path.of(System.getProperty("qe.kubernetes.work-dir", "target/kubernetes-testbed")).toAbsolutePath();
            TestbedScripts scripts = new TestbedScripts(directory, workDirectory.resolve("testbed.log"),
                Map.of("QE_K8S_KEEP_LOGS_IN", workDirectory.resolve("cluster-logs").toString()));
            String skipReason = skipReason(directory, scripts);
            if (skipReason != null) {
                System.err.println("[kubernetes-testbed] skipped: " + skipReason);
                return new Session(skipReason, null, null, scripts, false);
            }
            boolean started = false;
            try {
                progress("provisioning (a fresh machine builds Kubernetes from source: 10 to 35 min on 2 cores); log " + scripts.log());
                scripts.run(PROVISION_TIMEOUT_MINUTES, TimeUnit.MINUTES, "provision.sh");
                progress("starting the cluster (or reusing one started by hand with node.sh up)");
                started = true;   // so that a failed or half-done start is torn down below
                String outcome = scripts.run(5, TimeUnit.MINUTES, "node.sh", "up", "--for-tests").trim();
                started = !"reused".equals(outcome);
                Map<String, String> environment = TestbedScripts.keyValues(scripts.run(1, TimeUnit.MINUTES, "node.sh", "env"));
                KubernetesClient client = client(Path.of(environment.get("KUBECONFIG")));
                if (!started) {
                    refuseIfInUse(client);
                    progress("reusing the cluster started by hand; it stays up after the tests");
                }
                String nodeImage = importNodeImage(scripts);
                Testbed testbed = connect(environment, client, scripts, nodeImage);
                progress("node " + testbed.nodeName() + " Ready; image " + nodeImage + "; cluster DNS "
                    + testbed.clusterDns().map(dns -> dns.address().toString())
                        .orElse(testbed.clusterDnsServed() ? "served by node.sh's cluster services" : "not running"));
                return new Session(null, null, testbed, scripts, started);
            } catch (RuntimeException e) {
                Session failed = new Session(null, e, null, scripts, started);
                failed.tearDown();   // a half-started cluster is not left behind
                return failed;
            }
        }

        private static String skipReason(Path directory, TestbedScripts scripts) {
            if (!System.getProperty("os.name").toLowerCase(Locale.ROOT).contains("linux")) {
                return "it needs Linux (a kubelet and containerd run on the host); this is " + System.getProperty("os.name");
            }
            if (!Files.isRegularFile(directory.resolve("node.sh"))) {
                return "no test bed scripts at " + directory + " (set -Dqe.kubernetes.dir)";
            }
            long uid = new com.sun.security.auth.module.UnixSystem().getUid();
            if (uid != 0) {
                return "it needs root (it runs a kubelet and containerd and changes host sysctls); running as uid " + uid;
            }
            Map<String, String> environment = TestbedScripts.keyValues(scripts.run(1, TimeUnit.MINUTES, "node.sh", "env"));
            Path binaries = Path.of(environment.get("BIN_DIR"));
            if (!Files.isExecutable(binaries.resolve("kubelet")) && !onPath("go")) {
                return "the Go toolchain (go) is not on PATH and no Kubernetes binaries are cached in " + binaries;
            }
            return null;
        }

        private static String importNodeImage(TestbedScripts scripts) {
            String appDirectory = System.getProperty("qe.kubernetes.image.app-dir");
            String tag = System.getProperty("qe.kubernetes.image.tag");
            if (appDirectory == null || tag == null) {
                throw new TestbedException("qe.kubernetes.image.app-dir and qe.kubernetes.image.tag are not set: "
                    + "run the cluster tests through Maven (failsafe sets them after packaging the image's jars)");
            }
            String imageTar = scripts.run(10, TimeUnit.MINUTES, "build-image.sh", "node", "--app-dir", appDirectory, "--tag", tag).trim();
            scripts.run(2, TimeUnit.MINUTES, "node.sh", "import-image", imageTar);
            return "queue-enterprise.local/node:" + tag;
        }

        private static KubernetesClient client(Path kubeconfig) {
            try {
                return new KubernetesClientBuilder().withConfig(Config.fromKubeconfig(Files.readString(kubeconfig))).build();
            } catch (IOException e) {
                throw new TestbedException("cannot read " + kubeconfig + ": " + e.getMessage(), e);
            }
        }

        private static Testbed connect(Map<String, String> environment, KubernetesClient client, TestbedScripts scripts, String nodeImage) {
            Path kubeconfig = Path.of(environment.get("KUBECONFIG"));
            String nodeName = environment.get("NODE_NAME");
            client.nodes().withName(nodeName).waitUntilCondition(Session::ready, 2, TimeUnit.MINUTES);
            // a cluster started by hand runs its own cluster DNS (node.sh's cluster services) on the port ours would take
            boolean servicesRunning = "running".equals(environment.get("CLUSTER_SERVICES"));
            return new Testbed(client, nodeName, nodeImage, kubeconfig,
                Path.of(environment.get("BIN_DIR"), "qe-podresources"), Path.of(environment.get("POD_RESOURCES_SOCKET")), scripts,
                servicesRunning ? null : clusterDns(client, environment), servicesRunning);
        }

        /** The CRD the product's chart installs: a cluster holding it is someone's, whose QueueClusters the tests would delete. */
        static final String PRODUCT_CRD = "queueclusters.queue-enterprise.io";

        /**
         * A cluster a person started by hand is reused only while nothing of the product is installed on it: the
         * tests install and delete the QueueCluster CRD (deleting every QueueCluster with it), install the chart under
         * their own releases and import their own images, so running them against the walk-through's cluster would
         * destroy what the person built. Nothing is imported or changed before this check.
         */
        private static void refuseIfInUse(KubernetesClient client) {
            if (client.apiextensions().v1().customResourceDefinitions().withName(PRODUCT_CRD).get() != null) {
                client.close();
                throw new TestbedException("the cluster started by hand (node.sh up) has the CRD " + PRODUCT_CRD
                    + " installed: the tests would delete it and every QueueCluster on it. Run them on a cluster of"
                    + " their own: `sudo kubernetes/node.sh down` first (or delete the CRD if it is a crashed test's), or"
                    + " skip them with -Dqe.kubernetes.skip");
            }
        }

        /** The pods' DNS (the kubelet's clusterDNS is the node IP); none, with one line why, if port 53 is taken. */
        private static ClusterDns clusterDns(KubernetesClient client, Map<String, String> environment) {
            try {
                return ClusterDns.start(client, environment.get("CLUSTER_DOMAIN"), java.net.InetAddress.getByName(environment.get("NODE_IP")), 53);
            } catch (TestbedException | java.net.UnknownHostException e) {
                progress("no cluster DNS (pods cannot resolve each other's names): " + e.getMessage());
                return null;
            }
        }

        private static boolean ready(Node node) {
            return node != null && node.getStatus() != null && node.getStatus().getConditions().stream()
                .anyMatch(condition -> "Ready".equals(condition.getType()) && "True".equals(condition.getStatus()));
        }

        private static boolean onPath(String command) {
            for (String directory : System.getenv().getOrDefault("PATH", "").split(":")) {
                if (!directory.isEmpty() && Files.isExecutable(Path.of(directory, command))) {
                    return true;
                }
            }
            return false;
        }

        private static void progress(String message) {
            System.err.println("[kubernetes-testbed] " + message);
        }

        @Override
        public void close() {
            if (testbed != null) {
                testbed.clusterDns().ifPresent(ClusterDns::close);
                testbed.client().close();
            }
            tearDown();
            if (shutdownHook != null) {
                try {
                    Runtime.getRuntime().removeShutdownHook(shutdownHook);
                } catch (IllegalStateException alreadyShuttingDown) {
                    // the hook runs (or ran) tearDown, which is idempotent
                }
            }
        }

        private synchronized void tearDown() {
            if (closed || !startedByThisRun) {
                return;
            }
            closed = true;
            progress("tearing down (node.sh down); cluster logs kept in " + scripts.log().resolveSibling("cluster-logs"));
            scripts.run(3, TimeUnit.MINUTES, "node.sh", "down");
        }
    }
}
