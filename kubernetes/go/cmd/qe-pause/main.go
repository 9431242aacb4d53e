// Command qe-pause is the pod sandbox ("pause") image's only program: it holds the pod's
// namespaces open until the runtime stops it. Built statically by build-binaries.sh so the
// sandbox image needs no registry (registry.k8s.io/pause is unreachable here).
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range signals {
		if sig == syscall.SIGCHLD {
			reapChildren() // as PID 1 of a shared PID namespace it inherits orphans
			continue
		}
		os.Exit(0)
	}
}

func reapChildren() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
