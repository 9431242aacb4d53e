package io.queueenterprise.operator.reconciler;

import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.ErrorStatusUpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.Workflow;
import io.javaoperatorsdk.operator.api.reconciler.dependent.Dependent;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.queueenterprise.operator.api.Calibration;
import io.queueenterprise.operator.api.CalibrationRequest;
import io.queueenterprise.operator.api.CalibrationStatus;
import io.queueenterprise.operator.api.LastFailover;
import io.queueenterprise.operator.api.QueueCluster;
import io.queueenterprise.operator.api.QueueClusterStatus;
import io.queueenterprise.operator.failover.AdminClient;
import io.queueenterprise.operator.failover.AdminException;
import io.queueenterprise.operator.failover.CalibrationReading;
import io.queueenterprise.operator.failover.FailoverExecutor;
import io.queueenterprise.operator.failover.FailoverPlanner;
import io.queueenterprise.operator.failover.Plan;
import io.queueenterprise.operator.failover.ReplicaObservation;
import io.queueenterprise.operator.failover.RollingUpdatePlanner;
import io.queueenterprise.operator.model.CalibrationJobModel;
import io.queueenterprise.operator.model.ClusterNames;
import io.queueenterprise.operator.model.NodeIdentityModel;
import io.queueenterprise.operator.model.NodePaths;
import io.queueenterprise.operator.reconciler.dependent.AdminTokenSecretDependentResource;
import io.queueenterprise.operator.reconciler.dependent.ClientIdentities;
import io.queueenterprise.operator.reconciler.dependent.ConfigMapDependentResource;
import io.queueenterprise.operator.reconciler.dependent.HeadlessServiceDependentResource;
import io.queueenterprise.operator.reconciler.dependent.ModelSupport;
import io.queueenterprise.operator.reconciler.dependent.NetworkPolicyDependentResource;
import io.queueenterprise.operator.reconciler.dependent.NodeIdentities;
import io.queueenterprise.operator.reconciler.dependent.PeerCredentialSecretDependentResource;
import io.queueenterprise.operator.reconciler.dependent.PodDisruptionBudgetDependentResource;
import io.queueenterprise.operator.reconciler.dependent.PodMonitorDependentResource;
import io.queueenterprise.operator.reconciler.dependent.StatefulSetDependentResource;

/**
 * Wires the workflow (one dependent resource per managed kind, applied before {@link #reconcile}) and then does what
 * JOSDK cannot: applies the optional PodMonitor, asks every replica's admin endpoint for its status, plans and carries out leadership
 * ({@link FailoverPlanner}, {@link FailoverExecutor}) and writes the status. Pod events (a leader's pod deleted)
 * trigger a reconcile at once; otherwise nodes are polled every {@link #POLL}, or every {@link #SETTLING_POLL} while
 * leadership or a rolling update is in motion ({@link #nextPoll}).
 */
@Workflow(dependents = {
    @Dependent(name = "admin-token", type = AdminTokenSecretDependentResource.class),
    @Dependent(name = "peer-credential", type = PeerCredentialSecretDependentResource.class),
    @Dependent(name = "config", type = ConfigMapDependentResource.class),
    @Dependent(name = "headless-service", type = HeadlessServiceDependentResource.class),
    @Dependent(name = "statefulset", type = StatefulSetDependentResource.class,
        dependsOn = {"admin-token", "peer-credential", "config", "headless-service"}),
    @Dependent(name = "pod-disruption-budget", type = PodDisruptionBudgetDependentResource.class),
    @Dependent(name = "network-policy", type = NetworkPolicyDependentResource.class)
})
@ControllerConfiguration(name = QueueClusterReconciler.NAME)
public class QueueClusterReconciler implements Reconciler<QueueCluster> {
    public static final String NAME = "queuecluster";
    static final Duration POLL = Duration.ofSeconds(10);
    /**
     * While a failover or a rolling update is under way: the next step waits on what only the nodes say (a restarted
     * follower caught up, a promoted leader taking over), which no pod event reports. At {@link #POLL} each such
     * step waited up to 10 s, a three-replica rollout about half a minute of waiting alone.
     */
    static final Duration SETTLING_POLL = Duration.ofSeconds(1);
    private static final Duration ADMIN_TIMEOUT = Duration.ofSeconds(3);
    private static final String PODS = "node-pods";
    private static final Logger LOG = LoggerFactory.getLogger(QueueClusterReconciler.class);

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(ADMIN_TIMEOUT).build();
    private final OperatorMetrics metrics;
    private final EventPublisher events = new EventPublisher();

    public QueueClusterReconciler(OperatorMetrics metrics) {
        this.metrics = metrics;
    }

    @Override
    public List<EventSource<?, QueueCluster>> prepareEventSources(EventSourceContext<QueueCluster> context) {
        // the nodes' pods belong to the StatefulSet, not to us: mapped back through their instance label
        InformerEventSourceConfiguration<Pod> pods = InformerEventSourceConfiguration.from(Pod.class, QueueCluster.class)
            .withName(PODS)
            .withLabelSelector(ClusterNames.LABEL_NAME + "=" + ClusterNames.APP)
            .withSecondaryToPrimaryMapper(pod -> {
                String instance = pod.getMetadata().getLabels().get(ClusterNames.LABEL_INSTANCE);
                return instance == null ? Set.of() : Set.of(new ResourceID(instance, pod.getMetadata().getNamespace()));
            })
            .build();
        return List.of(new InformerEventSource<>(pods, context));
    }

    @Override
    public UpdateControl<QueueCluster> reconcile(QueueCluster cluster, Context<QueueCluster> context) {
        String started = Instant.now().toString();   // a failover planned below is timed from here
        ClusterNames names = ClusterNames.of(cluster);
        QueueClusterStatus previous = cluster.getStatus() != null ? cluster.getStatus() : new QueueClusterStatus();
        List<String> replicas = StatusModel.replicas(cluster);
        Map<String, Pod> pods = new HashMap<>();
        context.getSecondaryResources(Pod.class).stream()
            .filter(pod -> names.cluster().equals(pod.getMetadata().getLabels().get(ClusterNames.LABEL_INSTANCE)))
            .forEach(pod -> pods.put(pod.getMetadata().getName(), pod));

        // the clients' Secrets and the nodes' authorised clients, before anything waits on the nodes
        ClientIdentities.reconcile(cluster, context.getClient());
        Optional<String> token = adminToken(context, names);
        Map<String, AdminClient> clients = new LinkedHashMap<>();
        Map<String, ReplicaObservation> observations = new LinkedHashMap<>();
        Map<String, Calibration> calibrations = new HashMap<>();
        for (String replica : replicas) {
            Pod pod = pods.get(replica);
            try {
                // the pod's own measurement (atFirstStart), readable from its status before the node answers
                Calibration measured = CalibrationProgress.firstStart(pod);
                if (measured != null) {
                    calibrations.put(replica, measured);
                }
            } catch (CalibrationReading.InvalidCalibrationException e) {
                LOG.warn("{}/{}: {}'s calibration at first start is refused: {}", names.namespace(), names.cluster(), replica,
                    e.getMessage());
            }
            String lost = lostReason(replica, pod, token.isPresent());
            if (lost != null) {
                observations.put(replica, new ReplicaObservation.Lost(replica, lost));
                continue;
            }
            AdminClient client = new AdminClient(http, replica,
                URI.create("http://" + pod.getStatus().getPodIP() + ":" + NodePaths.ADMIN_PORT), token.orElseThrow(), ADMIN_TIMEOUT);
            clients.put(replica, client);
            try {
                var status = client.status();
                observations.put(replica, new ReplicaObservation.Reachable(replica, status));
                Calibration calibration = CalibrationReading.read(status.calibration());
                if (calibration != null) {
                    calibrations.putIfAbsent(replica, calibration);
                }
            } catch (AdminException e) {
                observations.put(replica, new ReplicaObservation.Lost(replica, e.reason() + " " + e.getMessage()));
            }
        }

        // identities: pins from the status read at the start, the keys reported now; the pins ConfigMap follows them
        NodeIdentityModel.Plan identities = StatusModel.identities(cluster, previous, replicas, observations);
        NodeIdentities.reconcile(cluster, identities, context.getClient());
        ClusterEvents.identities(identities).forEach(event -> events.publish(context.getClient(), cluster, event));

        long recordedTerm = previous.getTerm() == null ? 0 : previous.getTerm();
        Plan plan = FailoverPlanner.plan(replicas, StatusModel.queues(cluster), recordedTerm, previous.getLeader(), observations);
        if (plan instanceof Plan.Elect elect) {
            LOG.info("{}/{}: electing {} at term {}: {}", names.namespace(), names.cluster(), elect.candidate(), elect.term(), elect.why());
        }
        FailoverExecutor.Outcome outcome = FailoverExecutor.execute(plan, StatusModel.queues(cluster), clients,
            new StatusElectionRecorder(context.getClient(), cluster, metrics, started, false));
        RollingUpdatePlanner.Step rolling = new RollingUpdatePlanner.UpToDate();
        if (plan instanceof Plan.Steady steady) {
            rolling = rollingStep(cluster, context, steady, pods, observations);
            outcome = rollingUpdate(cluster, context, rolling, pods, clients, outcome, started);
        }
        String monitoringProblem = PodMonitorDependentResource.reconcile(cluster, context.getClient());
        if (monitoringProblem != null) {
            List<String> problems = new java.util.ArrayList<>(outcome.problems());
            problems.add(monitoringProblem);
            outcome = new FailoverExecutor.Outcome(outcome.leader(), outcome.term(), outcome.leaderInPlace(), problems);
        }
        QueueClusterStatus recorded = cluster.getStatus() != null ? cluster.getStatus() : previous;

        QueueClusterStatus status = StatusModel.build(cluster, recorded, replicas, observations, outcome,
            tunedNodes(cluster, context), calibrations, calibrate(cluster, context, recorded.getCalibration()), identities,
            Instant.now().toString());
        cluster.setStatus(status);
        events.publish(context.getClient(), cluster, recorded);
        metrics.publish(cluster, status);
        LastFailover completed = StatusModel.failoverCompletedNow(recorded, status);
        if (completed != null) {
            LOG.info("{}/{}: failover at term {}: {} -> {} in {} s (leader found lost -> new leader in status)", names.namespace(),
                names.cluster(), completed.getTerm(), completed.getFrom(), completed.getTo(), completed.getDurationSeconds());
            metrics.failoverCompleted(cluster, completed);
        }
        metrics.reconciled(cluster, plan.getClass().getSimpleName());
        boolean leaderAcknowledges = !(plan instanceof Plan.Steady steadyPlan)
            || !(observations.get(steadyPlan.leader()) instanceof ReplicaObservation.Reachable leading)
            || leading.status().acknowledges();
        return UpdateControl.patchStatus(cluster).rescheduleAfter(nextPoll(plan, rolling, leaderAcknowledges));
    }

    /**
     * {@link #SETTLING_POLL} while leadership moves ({@code Elect}, {@code Repoint}), a leader in place does not
     * acknowledge yet (its lease not held: just promoted) or a rolling update has a step left; {@link #POLL} when steady,
     * acknowledging and up to date, and when no quorum is reachable (pod events, a pod turning Ready, say when that
     * changes).
     */
    static Duration nextPoll(Plan plan, RollingUpdatePlanner.Step rolling, boolean leaderAcknowledges) {
        boolean leadershipMoving = plan instanceof Plan.Elect || plan instanceof Plan.Repoint
            || plan instanceof Plan.Steady && !leaderAcknowledges;
        boolean rollingOut = plan instanceof Plan.Steady && !(rolling instanceof RollingUpdatePlanner.UpToDate);
        return leadershipMoving || rollingOut ? SETTLING_POLL : POLL;
    }

    /**
     * Runs the calibration Job of {@code spec.calibration.request} once and follows it to its result. A finished
     * request is not looked at again (its Job may be gone after its TTL; the figures stay in status); with no request
     * the last result stays.
     */
    private CalibrationStatus calibrate(QueueCluster cluster, Context<QueueCluster> context, CalibrationStatus previous) {
        CalibrationRequest request = cluster.getSpec().getCalibration();
        if (request == null || request.getRequest() == null) {
            return previous;   // no Job asked for (atFirstStart alone is read from the pods)
        }
        if (previous != null && request.getRequest().equals(previous.getRequest())
            && previous.getPhase() != CalibrationStatus.Phase.Running) {
            return previous;
        }
        ClusterNames names = ClusterNames.of(cluster);
        String jobName = CalibrationJobModel.jobName(names, request.getRequest());
        var jobs = context.getClient().batch().v1().jobs().inNamespace(names.namespace());
        Job job = jobs.withName(jobName).get();
        if (job == null) {
            Job desired = CalibrationJobModel.job(cluster, ModelSupport.settings());
            desired.addOwnerReference(cluster);
            LOG.info("{}/{}: calibration request {}: creating Job {}", names.namespace(), names.cluster(), request.getRequest(), jobName);
            jobs.resource(desired).create();
            return CalibrationProgress.observe(request.getRequest(), jobName, null, List.of());
        }
        List<Pod> pods = context.getClient().pods().inNamespace(names.namespace()).withLabel("job-name", jobName).list().getItems();
        CalibrationStatus observed = CalibrationProgress.observe(request.getRequest(), jobName, job, pods);
        if (observed.getPhase() != CalibrationStatus.Phase.Running) {
            LOG.info("{}/{}: calibration {}: {} {}", names.namespace(), names.cluster(), jobName, observed.getPhase(), observed.getMessage());
        }
        return observed;
    }

    /** One step of a rolling update, only from a steady cluster (RollingUpdatePlanner). */
    /** The rolling update's next step: the pods' revisions against the StatefulSet's update revision. */
    private static RollingUpdatePlanner.Step rollingStep(QueueCluster cluster, Context<QueueCluster> context, Plan.Steady steady,
                                                         Map<String, Pod> pods, Map<String, ReplicaObservation> observations) {
        String updateRevision = updateRevision(context);
        if (updateRevision == null) {
            return new RollingUpdatePlanner.UpToDate();
        }
        Map<String, String> revisions = new HashMap<>();
        pods.forEach((name, pod) -> {
            String revision = pod.getMetadata().getLabels().get("controller-revision-hash");
            if (revision != null) {
                revisions.put(name, revision);
            }
        });
        return RollingUpdatePlanner.next(StatusModel.replicas(cluster), StatusModel.queues(cluster),
            steady.term(), steady.leader(), revisions, updateRevision, observations);
    }

    private static String updateRevision(Context<QueueCluster> context) {
        Optional<StatefulSet> set = context.getSecondaryResource(StatefulSet.class);
        return set.map(s -> s.getStatus() == null ? null : s.getStatus().getUpdateRevision()).orElse(null);
    }

    private FailoverExecutor.Outcome rollingUpdate(QueueCluster cluster, Context<QueueCluster> context, RollingUpdatePlanner.Step step,
                                                   Map<String, Pod> pods, Map<String, AdminClient> clients,
                                                   FailoverExecutor.Outcome steadyOutcome, String started) {
        String updateRevision = updateRevision(context);
        ClusterNames names = ClusterNames.of(cluster);
        if (step instanceof RollingUpdatePlanner.Restart restart) {
            LOG.info("{}/{}: rolling update: restarting {}", names.namespace(), names.cluster(), restart.replica());
            context.getClient().pods().inNamespace(names.namespace()).withName(restart.replica()).delete();
            events.publish(context.getClient(), cluster, new ClusterEvents.ClusterEvent("Normal", "RollingRestart",
                "restarting " + restart.replica() + " at the StatefulSet's update revision " + updateRevision,
                "restart/" + pods.get(restart.replica()).getMetadata().getUid()));
        } else if (step instanceof RollingUpdatePlanner.Switchover switchover) {
            LOG.info("{}/{}: rolling update: {}", names.namespace(), names.cluster(), switchover.plan().why());
            return FailoverExecutor.switchover(switchover.plan(), StatusModel.queues(cluster), clients,
                new StatusElectionRecorder(context.getClient(), cluster, metrics, started, true));
        }
        return steadyOutcome;
    }

    @Override
    public ErrorStatusUpdateControl<QueueCluster> updateErrorStatus(QueueCluster cluster, Context<QueueCluster> context, Exception e) {
        metrics.reconciled(cluster, "Error");
        LOG.warn("{}/{}: reconcile failed: {}", cluster.getMetadata().getNamespace(), cluster.getMetadata().getName(), e.toString());
        return ErrorStatusUpdateControl.noStatusUpdate();
    }

    private static String lostReason(String replica, Pod pod, boolean haveToken) {
        if (!haveToken) {
            return "admin token Secret not readable yet";
        }
        if (pod == null) {
            return "pod " + replica + " not found";
        }
        if (pod.getMetadata().getDeletionTimestamp() != null) {
            return "pod " + replica + " is being deleted";
        }
        if (pod.getStatus() == null || !"Running".equals(pod.getStatus().getPhase()) || pod.getStatus().getPodIP() == null) {
            return "pod " + replica + " is " + (pod.getStatus() == null ? "without status" : pod.getStatus().getPhase());
        }
        return null;
    }

    private static Optional<String> adminToken(Context<QueueCluster> context, ClusterNames names) {
        Secret secret = context.getClient().secrets().inNamespace(names.namespace()).withName(names.adminTokenSecret()).get();
        if (secret == null || secret.getData() == null || !secret.getData().containsKey(AdminTokenSecretDependentResource.KEY)) {
            return Optional.empty();
        }
        return Optional.of(new String(Base64.getDecoder().decode(secret.getData().get(AdminTokenSecretDependentResource.KEY)),
            StandardCharsets.UTF_8));
    }

    private static int tunedNodes(QueueCluster cluster, Context<QueueCluster> context) {
        Map<String, String> selector = ModelSupport.model(cluster).nodeSelector();
        return context.getClient().nodes().withLabels(selector).list().getItems().size();
    }
}
