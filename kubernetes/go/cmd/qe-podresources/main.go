// Command qe-podresources prints what the kubelet's PodResources gRPC API reports, as one JSON
// document on stdout: the node's allocatable exclusive CPUs and, per pod and container, the CPUs
// the CPU manager assigned exclusively. The kubernetes-testbed tests read it to check core
// exclusivity from the kubelet's side, independently of what the pod itself reports.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"
)

type container struct {
	Name   string  `json:"name"`
	CPUIDs []int64 `json:"cpuIds"`
}

type pod struct {
	Namespace  string      `json:"namespace"`
	Name       string      `json:"name"`
	Containers []container `json:"containers"`
}

type report struct {
	AllocatableCPUIDs []int64 `json:"allocatableCpuIds"`
	Pods              []pod   `json:"pods"`
}

func main() {
	socket := flag.String("socket", "", "path of the kubelet's pod-resources/kubelet.sock")
	timeout := flag.Duration("timeout", 10*time.Second, "deadline for both calls")
	flag.Parse()
	if *socket == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: qe-podresources --socket <kubelet root>/pod-resources/kubelet.sock [--timeout 10s]")
		os.Exit(2)
	}
	if _, err := os.Stat(*socket); err != nil {
		fmt.Fprintf(os.Stderr, "qe-podresources: no kubelet socket: %v\n", err)
		os.Exit(2)
	}
	if err := run(*socket, *timeout); err != nil {
		fmt.Fprintf(os.Stderr, "qe-podresources: %v\n", err)
		os.Exit(1)
	}
}

func run(socket string, timeout time.Duration) error {
	connection, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("connect %s: %w", socket, err)
	}
	defer connection.Close()
	client := podresourcesv1.NewPodResourcesListerClient(connection)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()

	allocatable, err := client.GetAllocatableResources(ctx, &podresourcesv1.AllocatableResourcesRequest{})
	if err != nil {
		return fmt.Errorf("GetAllocatableResources: %w", err)
	}
	listed, err := client.List(ctx, &podresourcesv1.ListPodResourcesRequest{})
	if err != nil {
		return fmt.Errorf("List: %w", err)
	}
	out := report{AllocatableCPUIDs: nonNil(allocatable.GetCpuIds()), Pods: []pod{}}
	for _, p := range listed.GetPodResources() {
		entry := pod{Namespace: p.GetNamespace(), Name: p.GetName(), Containers: []container{}}
		for _, c := range p.GetContainers() {
			entry.Containers = append(entry.Containers, container{Name: c.GetName(), CPUIDs: nonNil(c.GetCpuIds())})
		}
		out.Pods = append(out.Pods, entry)
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}

func nonNil(ids []int64) []int64 {
	if ids == nil {
		return []int64{}
	}
	return ids
}
