// Command qe-linearizability checks a history of a replicated queue's operations for linearizability against an
// append-only log (model.go), with Porcupine: an independent check beside the fault tests' own assertions.
//
//	qe-linearizability [-timeout 60s] [-html report.html] history.jsonl
//
// Exit status: 0 linearizable; 1 not linearizable (a plain account of what is wrong is printed, and the
// visualisation written when -html is given); 2 the history cannot be read; 3 undecided within the timeout.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/anishathalye/porcupine"
)

func main() {
	timeout := flag.Duration("timeout", 60*time.Second, "give up (exit 3) after this long")
	html := flag.String("html", "", "write Porcupine's visualisation of the history here")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: qe-linearizability [-timeout 60s] [-html report.html] history.jsonl")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	file, err := os.Open(flag.Arg(0))
	if err != nil {
		fmt.Fprintf(os.Stderr, "qe-linearizability: %v\n", err)
		os.Exit(2)
	}
	records, err := readHistory(file)
	file.Close()
	if err != nil {
		fmt.Fprintf(os.Stderr, "qe-linearizability: %s: %v\n", flag.Arg(0), err)
		os.Exit(2)
	}
	ops := operations(records)
	model := queueLog.ToModel()
	started := time.Now()
	result, info := porcupine.CheckOperationsVerbose(model, ops, *timeout)
	took := time.Since(started).Round(time.Millisecond)
	if *html != "" {
		if err := porcupine.VisualizePath(model, info, *html); err != nil {
			fmt.Fprintf(os.Stderr, "qe-linearizability: visualisation: %v\n", err)
		}
	}
	counts := countOutcomes(records)
	switch result {
	case porcupine.Ok:
		fmt.Printf("LINEARIZABLE %d operations (%s; %d searched) in %s\n", len(records), counts, len(ops), took)
	case porcupine.Illegal:
		fmt.Printf("NOT LINEARIZABLE %d operations (%s; %d searched) in %s\n", len(records), counts, len(ops), took)
		for _, line := range explain(records) {
			fmt.Println("  " + line)
		}
		os.Exit(1)
	default:
		fmt.Printf("UNDECIDED after %s: %d operations (%s; %d searched)\n", took, len(records), counts, len(ops))
		os.Exit(3)
	}
}

func countOutcomes(records []record) string {
	n := map[string]int{}
	for _, r := range records {
		if r.Op == "read" {
			n["read"]++
		} else {
			n["append "+r.Outcome]++
		}
	}
	return fmt.Sprintf("append ok %d, timeout %d, refused %d, unknown %d; reads %d",
		n["append ok"], n["append timeout"], n["append refused"], n["append unknown"], n["read"])
}

// explain says in plain words what no linearization can satisfy, as far as simple rules find it (at most 20 lines):
// an acknowledged append missing from a later read or at another index, a value held twice, a refused append held,
// reads that returned after each other and disagree on an index.
func explain(records []record) []string {
	var lines []string
	add := func(format string, args ...interface{}) {
		if len(lines) < 20 {
			lines = append(lines, fmt.Sprintf(format, args...))
		}
	}
	for _, read := range records {
		if read.Op != "read" {
			continue
		}
		at := map[string]int64{}
		for _, e := range read.Log {
			if previous, twice := at[e.Value]; twice {
				add("read of %s (%s): value %s held at %d and %d", read.Replica, read.Queue, e.Value, previous, e.Index)
			}
			at[e.Value] = e.Index
		}
		for _, w := range records {
			if w.Op != "append" || w.Queue != read.Queue {
				continue
			}
			index, held := at[w.Value]
			switch {
			case w.Outcome == "ok" && w.returnOf() < read.Call && !held:
				add("acknowledged append %s at %d is missing from the later read of %s (%s)", w.Value, *w.Index, read.Replica, read.Queue)
			case w.Outcome == "ok" && held && index != *w.Index:
				add("acknowledged append %s returned index %d but the read of %s holds it at %d", w.Value, *w.Index, read.Replica, index)
			case w.Outcome == "refused" && held:
				add("refused append %s is held at %d by %s (%s)", w.Value, index, read.Replica, read.Queue)
			case w.Outcome == "timeout" && held && index != *w.Index:
				add("unacknowledged append %s was written at %d but the read of %s holds it at %d", w.Value, *w.Index, read.Replica, index)
			}
		}
	}
	if len(lines) == 0 {
		lines = append(lines, "no simple rule names it: see the visualisation (-html)")
	}
	return lines
}
