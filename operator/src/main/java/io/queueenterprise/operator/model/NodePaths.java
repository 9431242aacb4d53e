package io.queueenterprise.operator.model;

/** Where a node pod finds what the operator gives it, and the ports it listens on (fixed: one replica per pod). */
public final class NodePaths {
    public static final String DATA_DIRECTORY = "/var/lib/queue-enterprise";
    public static final String CONFIG_DIRECTORY = "/etc/queue-enterprise/config";
    public static final String ADMIN_DIRECTORY = "/etc/queue-enterprise/admin";
    public static final String ADMIN_TOKEN_FILE = ADMIN_DIRECTORY + "/token";
    public static final String PEER_DIRECTORY = "/etc/queue-enterprise/peer";
    public static final String PEER_CREDENTIAL_FILE = PEER_DIRECTORY + "/credential";
    public static final String CLIENT_DIRECTORY = "/etc/queue-enterprise/client";
    /** The key {@code credential} of the QueueCluster's client-credential Secret, as mounted. */
    public static final String CLIENT_CREDENTIAL_FILE = CLIENT_DIRECTORY + "/credential";
    /**
     * The QueueCluster's write-key Secret, as mounted: {@code <queue>.<key id>.key} entries, flat, the node's
     * {@code writeKeyDirectory}.
     */
    public static final String WRITE_KEY_DIRECTORY = "/etc/queue-enterprise/write-keys";
    /**
     * The authorised-clients ConfigMap, mounted as a whole directory (never subPath): the kubelet swaps its files in
     * place when the ConfigMap changes, and the node re-reads {@link #AUTHORISED_CLIENTS_FILE} every second.
     */
    public static final String AUTHORISED_CLIENTS_DIRECTORY = "/etc/queue-enterprise/clients";
    /** The ConfigMap's key, and so the file's name in {@link #AUTHORISED_CLIENTS_DIRECTORY}. */
    public static final String AUTHORISED_CLIENTS_KEY = "authorised";
    public static final String AUTHORISED_CLIENTS_FILE = AUTHORISED_CLIENTS_DIRECTORY + "/" + AUTHORISED_CLIENTS_KEY;
    /**
     * The node's identity key (Ed25519 seed), on its own data volume: the node draws it there owner-only at first
     * start ({@code drawIdentityKeyIfAbsent}) and keeps it across restarts, so its pin holds.
     */
    public static final String IDENTITY_KEY_FILE = DATA_DIRECTORY + "/identity.key";
    /**
     * The node-identities ConfigMap, mounted as a whole directory (never subPath), like the authorised clients: the
     * kubelet swaps its files in place when a pin changes, and the node re-reads {@link #PEER_IDENTITIES_FILE} every
     * second.
     */
    public static final String PEER_IDENTITIES_DIRECTORY = "/etc/queue-enterprise/node-identities";
    /** The ConfigMap's key, and so the file's name in {@link #PEER_IDENTITIES_DIRECTORY}. */
    public static final String PEER_IDENTITIES_KEY = "peers";
    public static final String PEER_IDENTITIES_FILE = PEER_IDENTITIES_DIRECTORY + "/" + PEER_IDENTITIES_KEY;
    /** Where a node's gateway takes remote clients (UDP, Aeron); one replica per pod, so one port. */
    public static final int CLIENT_PORT = 40120;
    public static final int REPLICATION_PORT = 40100;
    public static final int ADMIN_PORT = 40190;
    public static final int METRICS_PORT = 40191;

    private NodePaths() {
    }
}
