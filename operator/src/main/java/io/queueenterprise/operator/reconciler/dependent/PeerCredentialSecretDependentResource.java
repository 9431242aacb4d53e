package io.queueenterprise.operator.reconciler.dependent;

import io.queueenterprise.operator.model.ClusterNames;

/** The per-cluster credential replicas prove to each other ({@code credential}); not a data key. */
public class PeerCredentialSecretDependentResource extends CredentialSecretDependentResource {
    public static final String KEY = "credential";

    @Override
    String secretName(ClusterNames names) {
        return names.peerCredentialSecret();
    }

    @Override
    String key() {
        return KEY;
    }
}
