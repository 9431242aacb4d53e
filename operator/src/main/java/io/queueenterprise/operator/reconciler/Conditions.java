package io.queueenterprise.operator.reconciler;

import java.util.ArrayList;
import java.util.List;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;

/** metav1.Condition bookkeeping: lastTransitionTime moves only when the status does. */
public final class Conditions {
    public static final String READY = "Ready";
    public static final String QUORUM = "Quorum";
    public static final String PINNED = "Pinned";
    public static final String FAILOVER = "Failover";
    public static final String REPLICAS_HEALTHY = "ReplicasHealthy";
    public static final String QUARANTINED = "Quarantined";
    public static final String NODE_IDENTITY_MISMATCH = "NodeIdentityMismatch";

    private Conditions() {
    }

    public static List<Condition> merge(List<Condition> previous, List<Condition> current, String now) {
        List<Condition> merged = new ArrayList<>();
        for (Condition condition : current) {
            String since = previous.stream()
                .filter(old -> old.getType().equals(condition.getType()) && old.getStatus().equals(condition.getStatus()))
                .map(Condition::getLastTransitionTime).findFirst().orElse(now);
            merged.add(new ConditionBuilder(condition).withLastTransitionTime(since).build());
        }
        return merged;
    }

    public static Condition of(String type, boolean status, String reason, String message, long generation) {
        return new ConditionBuilder().withType(type).withStatus(status ? "True" : "False").withReason(reason)
            .withMessage(message).withObservedGeneration(generation).build();
    }

    public static Condition unknown(String type, String reason, String message, long generation) {
        return new ConditionBuilder().withType(type).withStatus("Unknown").withReason(reason).withMessage(message)
            .withObservedGeneration(generation).build();
    }
}
