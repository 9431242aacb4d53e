package io.queueenterprise.operator.api;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/**
 * What a QueueCluster asks for. Rules the API server enforces (CEL, {@code x-kubernetes-validations}) sit on the
 * class or field they constrain; each message names the field and why, since that message is all a user sees.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(value = "self.queues.all(q, self.queues.exists_one(p, p.name == q.name))",
    message = "queue names must be unique within a QueueCluster", fieldPath = ".queues")
@ValidationRule(value = "(self.ackMode != 'QUORUM' && !self.queues.exists(q, has(q.ackMode) && q.ackMode == 'QUORUM'))"
    + " || self.replicas % 2 == 1",
    message = "replicas must be odd when ackMode is QUORUM (for the cluster or any queue): an even count adds a replica"
        + " without tolerating one more failure", fieldPath = ".replicas")
@ValidationRule(value = "!self.pinned || self.coresPerReplica.matches('^[1-9][0-9]*$')",
    message = "coresPerReplica must be a whole number of cores (e.g. \"2\") when pinned is true: the static CPU manager"
        + " grants exclusive cores only to integer CPU requests", fieldPath = ".coresPerReplica")
@ValidationRule(value = "self.queues.all(q, oldSelf.queues.all(o, o.name != q.name"
    + " || (o.encryption == q.encryption && o.rollCycle == q.rollCycle)))",
    message = "a queue's encryption and rollCycle are immutable: its cycle files and descriptor were written with them",
    fieldPath = ".queues")
// /dev/shm is a memory-backed emptyDir: its pages count against the container's memory limit, beside the heap and
// the queues' mapped pages. isQuantity guards leave a malformed value to the fields' own patterns.
@ValidationRule(value = "!has(self.memory) || !has(self.sharedMemory) || !isQuantity(self.memory)"
    + " || !isQuantity(self.sharedMemory)"
    + " || quantity(self.sharedMemory).add(quantity(self.sharedMemory)).compareTo(quantity(self.memory)) <= 0",
    message = "sharedMemory must be at most half of memory: /dev/shm is memory-backed and counts against the pod's"
        + " memory limit, and the rest holds the node's JVM and the queues' mapped pages", fieldPath = ".sharedMemory")
@ValidationRule(value = "!has(self.calibration) || self.pinned",
    message = "calibration requires pinned: true: the figures are rates on exclusive cores, and only a pinned pool"
        + " grants them", fieldPath = ".calibration")
// the node refuses a writeKeyDirectory without a clientCredentialFile: write keys only check remote clients' appends
@ValidationRule(value = "!has(self.writeKeySecret) || has(self.clientCredentialSecret)",
    message = "writeKeySecret requires clientCredentialSecret: write keys check remote clients' appends, and only a"
        + " cluster with a client credential serves remote clients", fieldPath = ".writeKeySecret")
// the node refuses an authorisedClientsFile without a clientCredentialFile: only a cluster serving clients names them
@ValidationRule(value = "!has(self.clients) || has(self.clientCredentialSecret)",
    message = "clients requires clientCredentialSecret: clients are named only where remote clients are served, and"
        + " every client still proves the cluster's client credential", fieldPath = ".clients")
@ValidationRule(value = "!has(self.clients) || self.clients.all(c, self.clients.exists_one(d, d.name == c.name))",
    message = "client names must be unique within a QueueCluster",
    // no messageExpression naming the duplicate: a nested filter over 64 names is estimated far over the API server's
    // CEL cost budget, and the whole CRD is refused (as the queues rule beside it, a static message)
    fieldPath = ".clients")
public class QueueClusterSpec {
    @Required
    @Size(min = 1, max = 32)
    @JsonPropertyDescription("The queues every replica hosts.")
    private List<QueueDefinition> queues = new ArrayList<>();

    @Min(1)
    @Max(9)
    @Default("3")
    @JsonPropertyDescription("How many replicas (pods) hold every queue; odd when ackMode is QUORUM.")
    private Integer replicas = 3;

    @Default("ASYNC")
    @JsonPropertyDescription("Acknowledgement mode of every queue that does not set its own.")
    private AckMode ackMode = AckMode.ASYNC;

    @Default("true")
    @JsonPropertyDescription("Pin each replica to exclusive cores: Guaranteed QoS with whole CPUs, on a node pool whose"
        + " kubelet runs the static CPU manager.")
    private Boolean pinned = true;

    @Default("1")
    @Size(max = 16)
    @Pattern("^([1-9][0-9]*|[1-9][0-9]*m)$")
    @JsonPropertyDescription("CPU per replica: pinned, requests = limits and a whole number (exclusive cores); unpinned, a request and no CPU limit (a CFS quota stalls a bursting JVM).")
    private String coresPerReplica = "1";

    @Required
    @Size(max = 32)
    @Pattern("^[1-9][0-9]*(Ki|Mi|Gi|Ti|K|M|G|T)?$")
    @JsonPropertyDescription("Memory per replica, requests = limits, heap and mapped pages included.")
    private String memory;

    @Default("256Mi")
    @Size(max = 32)
    @Pattern("^[1-9][0-9]*(Ki|Mi|Gi)$")
    @JsonPropertyDescription("Size of the memory-backed /dev/shm that Aeron's log buffers live in; counts against"
        + " memory, of which it may take at most half.")
    private String sharedMemory = "256Mi";

    @Required
    @ValidationRule(value = "self == oldSelf",
        message = "storage is immutable: a StatefulSet's volumeClaimTemplates cannot change")
    @JsonPropertyDescription("The persistent volume each replica keeps its cycle files on (immutable).")
    private StorageSpec storage;

    @JsonPropertyDescription("Which nodes the replicas run on: the tuned pool.")
    private NodePool nodePool;

    @Default("POD")
    @ValidationRule(value = "self == oldSelf",
        message = "networkMode is immutable: peers' addresses and ports are fixed in every replica's configuration")
    @JsonPropertyDescription("POD network, or HOST network for the lowest latency (one replica per node).")
    private NetworkMode networkMode = NetworkMode.POD;

    @Default("BACKOFF")
    @JsonPropertyDescription("How each node's duty-cycle thread idles; BUSY_SPIN burns its pinned core.")
    private IdleStrategy idleStrategy = IdleStrategy.BACKOFF;

    @Size(max = 253)
    @JsonPropertyDescription("Secret holding the credential remote clients present (mounted read-only, mode 0400).")
    private String clientCredentialSecret;

    @Size(max = 253)
    @JsonPropertyDescription("Secret holding the queues' write-authorisation keys, entries <queue>.<key id>.key as"
        + " `qe write-keys` makes them (derived one way from the master keys: no data key), mounted read-only (mode 0400)"
        + " as every node's writeKeyDirectory; requires clientCredentialSecret. Without it remote clients still tail,"
        + " but every remote append is refused (WRITE_UNAUTHORISED).")
    private String writeKeySecret;

    @Size(max = 64)
    @JsonPropertyDescription("Remote clients, each with its own identity (requires clientCredentialSecret): the operator"
        + " makes each one's key pair in the Secret <cluster>-client-<name> (created once, never overwritten; annotate it"
        + " queue-enterprise.io/rotate to replace it) and lists its public key in every node's authorised clients, which"
        + " nodes re-read every second. A client removed here is refused at its next connect and its live sessions close;"
        + " its Secret is deleted. An empty list takes no client at all; absent, any client proving the client"
        + " credential is taken.")
    private List<ClientIdentity> clients;

    @JsonPropertyDescription("Pods allowed to reach the replicas' client and replication ports (NetworkPolicy);"
        + " nobody else but the operator and the replicas themselves.")
    private AuthorizedClients authorizedClients;

    @Size(max = 512)
    @JsonPropertyDescription("Node image; defaults to the operator's QE_NODE_IMAGE.")
    private String image;

    @JsonPropertyDescription("Prometheus scraping.")
    private Monitoring monitoring;

    @JsonPropertyDescription("Measure the pool's hardware on demand: a calibration Job with the replicas' whole cores"
        + " (requires pinned).")
    private CalibrationRequest calibration;

    public CalibrationRequest getCalibration() {
        return calibration;
    }

    public void setCalibration(CalibrationRequest calibration) {
        this.calibration = calibration;
    }

    public List<QueueDefinition> getQueues() {
        return queues;
    }

    public void setQueues(List<QueueDefinition> queues) {
        this.queues = queues;
    }

    public Integer getReplicas() {
        return replicas;
    }

    public void setReplicas(Integer replicas) {
        this.replicas = replicas;
    }

    public AckMode getAckMode() {
        return ackMode;
    }

    public void setAckMode(AckMode ackMode) {
        this.ackMode = ackMode;
    }

    public Boolean getPinned() {
        return pinned;
    }

    public void setPinned(Boolean pinned) {
        this.pinned = pinned;
    }

    public String getCoresPerReplica() {
        return coresPerReplica;
    }

    public void setCoresPerReplica(String coresPerReplica) {
        this.coresPerReplica = coresPerReplica;
    }

    public String getMemory() {
        return memory;
    }

    public void setMemory(String memory) {
        this.memory = memory;
    }

    public String getSharedMemory() {
        return sharedMemory;
    }

    public void setSharedMemory(String sharedMemory) {
        this.sharedMemory = sharedMemory;
    }

    public StorageSpec getStorage() {
        return storage;
    }

    public void setStorage(StorageSpec storage) {
        this.storage = storage;
    }

    public NodePool getNodePool() {
        return nodePool;
    }

    public void setNodePool(NodePool nodePool) {
        this.nodePool = nodePool;
    }

    public NetworkMode getNetworkMode() {
        return networkMode;
    }

    public void setNetworkMode(NetworkMode networkMode) {
        this.networkMode = networkMode;
    }

    public IdleStrategy getIdleStrategy() {
        return idleStrategy;
    }

    public void setIdleStrategy(IdleStrategy idleStrategy) {
        this.idleStrategy = idleStrategy;
    }

    public String getClientCredentialSecret() {
        return clientCredentialSecret;
    }

    public void setClientCredentialSecret(String clientCredentialSecret) {
        this.clientCredentialSecret = clientCredentialSecret;
    }

    public String getWriteKeySecret() {
        return writeKeySecret;
    }

    public void setWriteKeySecret(String writeKeySecret) {
        this.writeKeySecret = writeKeySecret;
    }

    public List<ClientIdentity> getClients() {
        return clients;
    }

    public void setClients(List<ClientIdentity> clients) {
        this.clients = clients;
    }

    public AuthorizedClients getAuthorizedClients() {
        return authorizedClients;
    }

    public void setAuthorizedClients(AuthorizedClients authorizedClients) {
        this.authorizedClients = authorizedClients;
    }

    public String getImage() {
        return image;
    }

    public void setImage(String image) {
        this.image = image;
    }

    public Monitoring getMonitoring() {
        return monitoring;
    }

    public void setMonitoring(Monitoring monitoring) {
        this.monitoring = monitoring;
    }
}
