package io.queueenterprise.kubernetes.testbed;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;

/**
 * What a cluster started by hand ({@code kubernetes/node.sh up}) needs besides Kubernetes' own processes, in one
 * process that {@code node.sh} starts and stops by its PID: the cluster DNS the tests serve from their own JVM
 * ({@link ClusterDns}, on the node IP, port 53) and a volume provisioner ({@link LocalVolumeProvisioner}, the default
 * StorageClass {@code qe-local}). Runs until SIGTERM.
 *
 * <pre>
 * ClusterServices KUBECONFIG CLUSTER_DOMAIN NODE_IP NODE_NAME VOLUMES_DIRECTORY
 * </pre>
 */
public final class ClusterServices {
    private ClusterServices() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 5) {
            System.err.println("usage: ClusterServices KUBECONFIG CLUSTER_DOMAIN NODE_IP NODE_NAME VOLUMES_DIRECTORY");
            System.exit(2);
        }
        KubernetesClient client = new KubernetesClientBuilder().withConfig(Config.fromKubeconfig(Files.readString(Path.of(args[0])))).build();
        ClusterDns dns = ClusterDns.start(client, args[1], InetAddress.getByName(args[2]), 53);
        LocalVolumeProvisioner provisioner = new LocalVolumeProvisioner(client, Path.of(args[4]).toAbsolutePath().normalize(), args[3]);
        try {
            provisioner.start();
        } catch (IOException | RuntimeException e) {
            provisioner.close();   // nothing left serving port 53 for a services JVM that is going away
            dns.close();
            client.close();
            throw e;
        }
        System.err.println("[cluster-services] cluster DNS on " + dns.address() + " (zone svc." + args[1] + "); StorageClass "
            + LocalVolumeProvisioner.STORAGE_CLASS + " (default) provisions local volumes under " + args[4]);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            provisioner.close();
            dns.close();
            client.close();
            stopped.countDown();
        }, "cluster-services-stop"));
        stopped.await();
    }
}
