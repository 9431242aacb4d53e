package io.queueenterprise.kubernetes.testbed;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * The running single-node cluster, as tests see it: a client with cluster-admin rights, the node's
 * name, the node image's reference and the kubelet's PodResources view. Obtained by declaring a
 * parameter of this type in a test annotated {@link KubernetesTestbed}.
 */
public final class Testbed {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final KubernetesClient client;
    private final String nodeName;
    private final String nodeImage;
    private final Path kubeconfig;
    private final Path podResourcesHelper;
    private final Path podResourcesSocket;
    private final TestbedScripts scripts;
    private final ClusterDns clusterDns;
    private final boolean clusterServicesRunning;
    /**
     * Image archives already imported into this cluster's containerd. An archive is named by a hash of its contents
     * (build-image.sh), so one imported stays right until the cluster goes down: a second import of it (the bench
     * image, once per calibration test) would unpack the same layers again for nothing.
     */
    private final java.util.Set<String> imported = java.util.concurrent.ConcurrentHashMap.newKeySet();

    Testbed(KubernetesClient client, String nodeName, String nodeImage, Path kubeconfig,
            Path podResourcesHelper, Path podResourcesSocket, TestbedScripts scripts, ClusterDns clusterDns,
            boolean clusterServicesRunning) {
        this.client = client;
        this.nodeName = nodeName;
        this.nodeImage = nodeImage;
        this.kubeconfig = kubeconfig;
        this.podResourcesHelper = podResourcesHelper;
        this.podResourcesSocket = podResourcesSocket;
        this.scripts = scripts;
        this.clusterDns = clusterDns;
        this.clusterServicesRunning = clusterServicesRunning;
    }

    /**
     * Whether the pods' cluster DNS answers: served by this test run ({@link #clusterDns()}), or by the cluster services
     * of a cluster started by hand ({@code node.sh up}, {@link ClusterServices}) that this run reuses.
     */
    public boolean clusterDnsServed() {
        return clusterDns != null || clusterServicesRunning;
    }

    /** Whether this run reuses a cluster started by hand whose cluster services (DNS, volume provisioner) run. */
    public boolean clusterServicesRunning() {
        return clusterServicesRunning;
    }

    /** The pods' cluster DNS ({@link ClusterDns}), served by this test run; empty when it could not start. */
    public java.util.Optional<ClusterDns> clusterDns() {
        return java.util.Optional.ofNullable(clusterDns);
    }

    public KubernetesClient client() {
        return client;
    }

    public String nodeName() {
        return nodeName;
    }

    /** The image with the project's runtime jars, {@code bin/jvm.args} and the probes; pull policy must be Never. */
    public String nodeImage() {
        return nodeImage;
    }

    /**
     * Builds another image of the project ({@code kubernetes/build-image.sh KIND --app-dir DIR --tag TAG}, e.g. the
     * bench image) and imports it into the node's containerd; returns its reference (pull policy Never).
     */
    public String importImage(String kind, Path appDirectory, String tag) {
        String imageTar = scripts.run(10, TimeUnit.MINUTES, "build-image.sh", kind, "--app-dir", appDirectory.toString(),
            "--tag", tag).trim();
        if (!imported.contains(imageTar)) {
            scripts.run(2, TimeUnit.MINUTES, "node.sh", "import-image", imageTar);
            imported.add(imageTar);
        }
        return "queue-enterprise.local/" + kind + ":" + tag;
    }

    public Path kubeconfig() {
        return kubeconfig;
    }

    /** Asks the kubelet, through its PodResources gRPC socket, which CPUs it assigned exclusively. */
    public PodResources podResources() {
        ProcessBuilder builder = new ProcessBuilder(podResourcesHelper.toString(), "--socket", podResourcesSocket.toString())
            .redirectError(ProcessBuilder.Redirect.appendTo(scripts.log().toFile()));
        try {
            Process process = builder.start();
            String stdout = new String(process.getInputStream().readAllBytes());
            if (!process.waitFor(30, TimeUnit.SECONDS) || process.exitValue() != 0) {
                throw new TestbedException(podResourcesHelper + " failed (see " + scripts.log() + ")");
            }
            return JSON.readValue(stdout, PodResources.class);
        } catch (JsonProcessingException e) {
            throw new TestbedException("unexpected PodResources output: " + e.getOriginalMessage(), e);
        } catch (java.io.IOException e) {
            throw new TestbedException("cannot run " + podResourcesHelper + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TestbedException("interrupted while asking the kubelet for pod resources", e);
        }
    }
}
