package io.queueenterprise.operator.reconciler;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.queueenterprise.operator.api.QueueCluster;
import io.queueenterprise.operator.api.QueueClusterStatus;

/**
 * Writes {@link ClusterEvents} as core/v1 Events regarding the QueueCluster. An event's name is derived from its
 * key, so an occurrence is written once: a second create is refused by the API server (409) and ignored, and the
 * names written lately are remembered so that a reconcile every 10 s does not ask again. An event that cannot be
 * written (no RBAC for events, an API server error) is logged and never fails the reconcile: events are for people,
 * the status is the record.
 */
public final class EventPublisher {
    public static final String COMPONENT = "queue-enterprise-operator";
    private static final int REMEMBERED = 4096;
    private static final int MAX_MESSAGE = 1024;
    private static final Logger LOG = LoggerFactory.getLogger(EventPublisher.class);

    private final String instance = hostName();
    private final Set<String> written = Collections.newSetFromMap(new LinkedHashMap<>(256, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
            return size() > REMEMBERED;
        }
    });

    /** Every event {@code cluster}'s new status calls for after {@code previous} ({@link ClusterEvents#of}) not written yet. */
    public void publish(KubernetesClient client, QueueCluster cluster, QueueClusterStatus previous) {
        if (cluster.getStatus() != null) {
            ClusterEvents.of(previous, cluster.getStatus()).forEach(event -> publish(client, cluster, event));
        }
    }

    /** One event (an action the operator takes), unless its key was written already. */
    public synchronized void publish(KubernetesClient client, QueueCluster cluster, ClusterEvents.ClusterEvent event) {
        String name = eventName(cluster, event.key());
        if (written.contains(name)) {
            return;
        }
        try {
            client.v1().events().inNamespace(cluster.getMetadata().getNamespace()).resource(event(cluster, name, event)).create();
            written.add(name);
        } catch (KubernetesClientException e) {
            if (e.getCode() == 409) {
                written.add(name); // written before (by this operator before a restart, or another replica of it)
            } else {
                LOG.warn("{}/{}: event {} not written: {}", cluster.getMetadata().getNamespace(), cluster.getMetadata().getName(),
                    event.reason(), e.getMessage());
            }
        }
    }

    /** {@code <cluster>.<16 hex digits of SHA-256(uid, key)>}: a valid name, the same for the same occurrence. */
    static String eventName(QueueCluster cluster, String key) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256")
                .digest((cluster.getMetadata().getUid() + "/" + key).getBytes(StandardCharsets.UTF_8));
            return cluster.getMetadata().getName() + "." + HexFormat.of().formatHex(digest, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }

    private Event event(QueueCluster cluster, String name, ClusterEvents.ClusterEvent event) {
        String now = Instant.now().toString();
        String message = event.message().length() <= MAX_MESSAGE ? event.message() : event.message().substring(0, MAX_MESSAGE - 3) + "...";
        return new EventBuilder()
            .withNewMetadata().withName(name).withNamespace(cluster.getMetadata().getNamespace()).endMetadata()
            .withNewInvolvedObject().withApiVersion(cluster.getApiVersion()).withKind(cluster.getKind())
                .withName(cluster.getMetadata().getName()).withNamespace(cluster.getMetadata().getNamespace())
                .withUid(cluster.getMetadata().getUid()).endInvolvedObject()
            .withType(event.type()).withReason(event.reason()).withMessage(message)
            .withNewSource().withComponent(COMPONENT).endSource()
            .withReportingComponent("queue-enterprise.io/operator").withReportingInstance(instance)
            .withFirstTimestamp(now).withLastTimestamp(now).withCount(1)
            .build();
    }

    private static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            return COMPONENT;
        }
    }
}
