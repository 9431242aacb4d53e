package io.queueenterprise.operator.reconciler.dependent;

import io.queueenterprise.operator.model.ClusterNames;

/** The bearer token the operator presents to the nodes' admin endpoints ({@code token}). */
public class AdminTokenSecretDependentResource extends CredentialSecretDependentResource {
    public static final String KEY = "token";

    @Override
    String secretName(ClusterNames names) {
        return names.adminTokenSecret();
    }

    @Override
    String key() {
        return KEY;
    }
}
