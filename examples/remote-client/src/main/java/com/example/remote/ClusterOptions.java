package com.example.remote;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.queueenterprise.remote.RemoteQueue;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;

/**
 * Where the queue is and what the client proves itself with, as the operator and the chart lay it out for a
 * {@code QueueCluster} named {@code --cluster}: replica {@code N} answers remote clients at
 * {@code <cluster>-N.<cluster>-nodes.<namespace>.svc.<cluster domain>:40120} (the headless Service the operator
 * creates), the client credential is the {@code credential} key of the cluster's {@code clientCredentialSecret}, and the
 * queue's data keys are the files of its {@code dataKeySecret}, both mounted into the client's pod. Every option has an
 * environment variable, so that a pod spec can set them; a command-line option wins.
 */
final class ClusterOptions {
    private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");
    private static final Pattern HOST_PORT = Pattern.compile("([^:\\s]+):([0-9]{1,5})");

    @Option(names = "--nodes", split = ",", paramLabel = "HOST:PORT", defaultValue = "${env:QE_NODES}",
        description = "The nodes' client endpoints, comma-separated (env QE_NODES); instead of --cluster.")
    List<String> nodes;

    @Option(names = "--cluster", paramLabel = "NAME", defaultValue = "${env:QE_CLUSTER}",
        description = "The QueueCluster's name (env QE_CLUSTER): its replicas' DNS names are the addresses.")
    String cluster;

    @Option(names = "--namespace", paramLabel = "NAMESPACE", defaultValue = "${env:POD_NAMESPACE}",
        description = "The QueueCluster's namespace (env POD_NAMESPACE, e.g. from the downward API).")
    String namespace;

    @Option(names = "--replicas", paramLabel = "N", defaultValue = "${env:QE_REPLICAS:-3}",
        description = "The QueueCluster's spec.replicas (env QE_REPLICAS, default ${DEFAULT-VALUE}).")
    int replicas;

    @Option(names = "--cluster-domain", paramLabel = "DOMAIN", defaultValue = "${env:QE_CLUSTER_DOMAIN:-cluster.local}",
        description = "The Kubernetes cluster domain (default ${DEFAULT-VALUE}).")
    String clusterDomain;

    @Option(names = "--client-port", paramLabel = "PORT", defaultValue = "40120",
        description = "The nodes' client port (default ${DEFAULT-VALUE}, the operator's).")
    int clientPort;

    @Option(names = "--queue", paramLabel = "NAME", defaultValue = "${env:QE_QUEUE}",
        description = "The queue (one of the QueueCluster's spec.queues; env QE_QUEUE).")
    String queue;

    @Option(names = "--credential-file", paramLabel = "FILE",
        defaultValue = "${env:QE_CREDENTIAL_FILE:-/etc/queue-enterprise/client/credential}",
        description = "The cluster's client credential: the `credential` key of its clientCredentialSecret, mounted"
            + " (default ${DEFAULT-VALUE}).")
    Path credentialFile;

    @Option(names = "--key-dir", paramLabel = "DIR", defaultValue = "${env:QE_KEY_DIR:-/etc/queue-enterprise/keys}",
        description = "The queue's data keys: its dataKeySecret mounted as a directory (<id>.key files and `active`;"
            + " default ${DEFAULT-VALUE}).")
    Path keyDirectory;

    @Option(names = "--client-name", paramLabel = "NAME", defaultValue = "${env:QE_CLIENT_NAME}",
        description = "This client's name in the QueueCluster's spec.clients (env QE_CLIENT_NAME); needed when the"
            + " cluster lists its clients, each with its own identity.")
    String clientName;

    @Option(names = "--identity-key", paramLabel = "FILE",
        defaultValue = "${env:QE_IDENTITY_KEY:-/etc/queue-enterprise/identity/key}",
        description = "This client's identity key: the `key` of the operator's Secret <cluster>-client-<name>, mounted"
            + " (default ${DEFAULT-VALUE}); read only with --client-name.")
    Path identityKey;

    @Option(names = "--connect-timeout", paramLabel = "DURATION", defaultValue = "60s", converter = DurationConverter.class,
        description = "How long to look for a node that serves the queue (default ${DEFAULT-VALUE}).")
    Duration connectTimeout;

    /** The client endpoints, in order: the named replica first when {@code preferredReplica} is not null. */
    List<String> addresses(CommandSpec spec, Integer preferredReplica) {
        boolean byNodes = nodes != null && !nodes.isEmpty();
        if (byNodes == (cluster != null)) {
            throw Cli.bad(spec,
                "give either --nodes HOST:PORT,... or --cluster NAME (with --namespace), not " + (byNodes ? "both" : "neither"));
        }
        List<String> addresses = new ArrayList<>();
        if (byNodes) {
            for (String node : nodes) {
                Matcher m = HOST_PORT.matcher(node.trim());
                if (!m.matches() || Integer.parseInt(m.group(2)) < 1 || Integer.parseInt(m.group(2)) > 65535) {
                    throw Cli.bad(spec, "--nodes: '" + node + "' is not HOST:PORT with a port 1-65535");
                }
                addresses.add(node.trim());
            }
        } else {
            requireLabel(spec, "--cluster", cluster);
            if (namespace == null) {
                throw Cli.bad(spec, "--cluster needs --namespace (or POD_NAMESPACE)");
            }
            requireLabel(spec, "--namespace", namespace);
            if (replicas < 1 || replicas > 9) {
                throw Cli.bad(spec, "--replicas: " + replicas + " is not 1-9 (a QueueCluster's range)");
            }
            if (clientPort < 1 || clientPort > 65535) {
                throw Cli.bad(spec, "--client-port: " + clientPort + " is not 1-65535");
            }
            for (int replica = 0; replica < replicas; replica++) {
                addresses.add(cluster + "-" + replica + "." + cluster + "-nodes." + namespace + ".svc." + clusterDomain + ":" + clientPort);
            }
        }
        if (preferredReplica != null) {
            if (preferredReplica < 0 || preferredReplica >= addresses.size()) {
                throw Cli.bad(spec, "--prefer-replica: " + preferredReplica + " is not 0-"
                    + (addresses.size() - 1) + " (one of the " + addresses.size() + " nodes)");
            }
            addresses.add(0, addresses.remove((int) preferredReplica));
        }
        return addresses;
    }

    /** A builder for the queue, after checking what can be checked before any network traffic. */
    RemoteQueue.Builder builder(CommandSpec spec, Integer preferredReplica) {
        List<String> addresses = addresses(spec, preferredReplica);
        Cli.requireAboveZero(spec, "--connect-timeout", connectTimeout);
        if (queue == null) {
            throw Cli.bad(spec, "--queue (or QE_QUEUE) is required: one of the QueueCluster's spec.queues");
        }
        requireLabel(spec, "--queue", queue);
        if (!Files.isRegularFile(credentialFile) || !Files.isReadable(credentialFile)) {
            throw Cli.bad(spec, "--credential-file: " + credentialFile + " is not a readable file"
                + " (mount the cluster's clientCredentialSecret, key `credential`)");
        }
        if (!Files.isDirectory(keyDirectory) || !Files.isRegularFile(keyDirectory.resolve("active"))) {
            throw Cli.bad(spec, "--key-dir: " + keyDirectory + " is not a key directory with an"
                + " `active` file (mount the queue's dataKeySecret as a directory)");
        }
        RemoteQueue.Builder builder = RemoteQueue.builder(addresses).queue(queue).clientCredential(credentialFile)
            .keyDirectory(keyDirectory).connectTimeout(connectTimeout);
        if (clientName != null) {
            requireLabel(spec, "--client-name", clientName);
            if (!Files.isRegularFile(identityKey) || !Files.isReadable(identityKey)) {
                throw Cli.bad(spec, "--identity-key: " + identityKey + " is not a readable file (mount the Secret "
                    + (cluster == null ? "<cluster>" : cluster) + "-client-" + clientName + ", key `key`)");
            }
            builder.identity(clientName, identityKey);
        }
        return builder;
    }

    private static void requireLabel(CommandSpec spec, String option, String value) {
        if (!DNS_LABEL.matcher(value).matches()) {
            throw Cli.bad(spec, option + ": '" + value + "' is not a DNS label (a-z, 0-9, '-', at most 63)");
        }
    }

    /** {@code 250ms}, {@code 10s}, {@code 2m}, {@code 1h}. */
    static final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
        private static final Pattern DURATION = Pattern.compile("([0-9]{1,9})(ms|s|m|h)");

        @Override
        public Duration convert(String value) {
            Matcher m = DURATION.matcher(value.trim());
            if (!m.matches()) {
                throw new CommandLine.TypeConversionException("'" + value + "' is not a duration like 250ms, 10s, 2m or 1h");
            }
            long amount = Long.parseLong(m.group(1));
            return switch (m.group(2)) {
                case "ms" -> Duration.ofMillis(amount);
                case "s" -> Duration.ofSeconds(amount);
                case "m" -> Duration.ofMinutes(amount);
                default -> Duration.ofHours(amount);
            };
        }
    }
}
