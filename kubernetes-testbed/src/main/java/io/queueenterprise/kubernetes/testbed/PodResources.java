package io.queueenterprise.kubernetes.testbed;

import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * What the kubelet's PodResources gRPC API reported (read by the {@code qe-podresources} helper):
 * the node's allocatable exclusive CPUs and the CPUs the CPU manager assigned to each container.
 */
public record PodResources(@JsonProperty("allocatableCpuIds") List<Integer> allocatableCpuIds,
                           @JsonProperty("pods") List<Pod> pods) {

    public record Pod(@JsonProperty("namespace") String namespace, @JsonProperty("name") String name,
                      @JsonProperty("containers") List<Container> containers) {
    }

    public record Container(@JsonProperty("name") String name, @JsonProperty("cpuIds") List<Integer> cpuIds) {
    }

    public Optional<Container> container(String namespace, String pod, String container) {
        return pods.stream()
            .filter(p -> p.namespace().equals(namespace) && p.name().equals(pod))
            .flatMap(p -> p.containers().stream())
            .filter(c -> c.name().equals(container))
            .findFirst();
    }

    /** Every container other than the given pod's that holds the CPU exclusively, as "namespace/pod/container". */
    public List<String> otherHoldersOf(int cpu, String namespace, String pod) {
        return pods.stream()
            .filter(p -> !(p.namespace().equals(namespace) && p.name().equals(pod)))
            .flatMap(p -> p.containers().stream()
                .filter(c -> c.cpuIds().contains(cpu))
                .map(c -> Stream.of(p.namespace(), p.name(), c.name()))
                .map(parts -> String.join("/", parts.toList())))
            .toList();
    }
}
