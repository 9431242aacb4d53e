package main

import (
	"fmt"
	"hash/fnv"
	"sort"

	"github.com/anishathalye/porcupine"
)

// The sequential specification of one queue: an append-only log of (index, value), indexes strictly increasing.
//   - An acknowledged append (ok) took effect exactly once, at the index it returned.
//   - An append that timed out (written locally, not acknowledged) or got no answer took effect at most once: at its
//     index, or not at all (a failover may quarantine it).
//   - A refused append never took effect.
//   - A read returns the whole log as it stands at its linearization point.
//
// The state is summarised as (last index, count, a hash folded over the entries in index order), so a step costs
// O(1) however long the log: a read compares its log's summary with the state's.
type logState struct {
	last  int64
	count int
	hash  uint64
}

type appendInput struct {
	queue   string
	value   string
	index   int64 // -1: not known (no answer, and the value is in no read)
	outcome string
	// prevOk: the highest index below this one of an append to the same queue that must take effect (-1: none):
	// an acknowledged one, or one without an answer that a read holds at its index. Every such append takes effect,
	// in index order, so this one can only take effect after that one did: a sound pruning that keeps histories of
	// many overlapping appends (pipelined writers) decidable.
	prevOk int64
	// For an append without an answer (timeout, unknown), what the reads already decide, so the search need not
	// branch on it (with many in flight at a failover, the branches left histories UNDECIDED):
	//   - held: a read holds its value at its index. Reads never lose an entry and only appends add one (values are
	//     unique), so it took effect: only that branch is tried.
	//   - never: no read holds its value. Had it taken effect, every read linearized after it would hold it; so either
	//     it did not, or only after the last read, where it changes nothing a later step checks (appends that must
	//     take effect do so in index order whether or not it did): the "not taken" branch alone decides the same.
	held  bool
	never bool
}

type readInput struct {
	queue   string
	replica string
}

type readOutput struct {
	state   logState
	entries int
}

func (s logState) with(index int64, value string) logState {
	return logState{last: index, count: s.count + 1, hash: fold(s.hash, index, value)}
}

func fold(h uint64, index int64, value string) uint64 {
	f := fnv.New64a()
	fmt.Fprintf(f, "%d\x00%s", index, value)
	x := h ^ f.Sum64()
	// splitmix64's finaliser: order matters, so [a, b] and [b, a] fold to different hashes
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func summarise(log []logEntry) logState {
	s := logState{last: -1}
	for _, e := range log {
		s = s.with(e.Index, e.Value)
	}
	return s
}

func queueOf(input interface{}) string {
	switch in := input.(type) {
	case appendInput:
		return in.queue
	case readInput:
		return in.queue
	}
	return ""
}

var queueLog = porcupine.NondeterministicModel{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byQueue := map[string][]porcupine.Operation{}
		var order []string
		for _, op := range history {
			q := queueOf(op.Input)
			if _, seen := byQueue[q]; !seen {
				order = append(order, q)
			}
			byQueue[q] = append(byQueue[q], op)
		}
		var partitions [][]porcupine.Operation
		for _, q := range order {
			partitions = append(partitions, byQueue[q])
		}
		return partitions
	},
	Init: func() []interface{} { return []interface{}{logState{last: -1}} },
	Step: func(state, input, output interface{}) []interface{} {
		s := state.(logState)
		switch in := input.(type) {
		case appendInput:
			applies := in.index > s.last && s.last >= in.prevOk
			switch in.outcome {
			case "ok":
				if applies {
					return []interface{}{s.with(in.index, in.value)}
				}
				return nil
			case "timeout", "unknown":
				if in.never {
					return []interface{}{s}
				}
				if in.held {
					if applies {
						return []interface{}{s.with(in.index, in.value)}
					}
					return nil
				}
				if in.index >= 0 && applies {
					return []interface{}{s, s.with(in.index, in.value)}
				}
				return []interface{}{s}
			default: // refused
				return []interface{}{s}
			}
		case readInput:
			if output.(readOutput).state == s {
				return []interface{}{s}
			}
			return nil
		}
		return nil
	},
	Equal: func(a, b interface{}) bool { return a.(logState) == b.(logState) },
	Hash:  func(state interface{}) uint64 { return state.(logState).hash ^ uint64(state.(logState).last) },
	DescribeOperation: func(input, output interface{}) string {
		switch in := input.(type) {
		case appendInput:
			return fmt.Sprintf("append(%s) -> %s @%d", in.value, in.outcome, in.index)
		case readInput:
			out := output.(readOutput)
			return fmt.Sprintf("read %s -> %d entries, last %d", in.replica, out.entries, out.state.last)
		}
		return "?"
	},
	DescribeState: func(state interface{}) string {
		s := state.(logState)
		return fmt.Sprintf("%d entries, last %d, hash %016x", s.count, s.last, s.hash)
	},
}

// operations turns the records into porcupine's operations. An append with no answer and no index is looked up in
// the reads: a value found there may have been written at that index (values are unique in a history).
func operations(records []record) []porcupine.Operation {
	foundAt := map[string]int64{}
	for _, r := range records {
		if r.Op == "read" {
			for _, e := range r.Log {
				foundAt[r.Queue+"\x00"+e.Value] = e.Index
			}
		}
	}
	// the index an append without an answer is looked for at: its own, or (none) where a read holds its value
	unansweredIndex := func(r record) int64 {
		if r.Index != nil {
			return *r.Index
		}
		if at, ok := foundAt[r.Queue+"\x00"+r.Value]; ok && r.Outcome == "unknown" {
			return at
		}
		return -1
	}
	heldAt := func(r record, index int64) bool {
		at, ok := foundAt[r.Queue+"\x00"+r.Value]
		return ok && index >= 0 && at == index
	}
	okIndexes := map[string][]int64{} // every append that must take effect: acknowledged, or held by a read
	for _, r := range records {
		if r.Op != "append" {
			continue
		}
		if r.Outcome == "ok" && r.Index != nil {
			okIndexes[r.Queue] = append(okIndexes[r.Queue], *r.Index)
		} else if r.Outcome == "timeout" || r.Outcome == "unknown" {
			if index := unansweredIndex(r); heldAt(r, index) {
				okIndexes[r.Queue] = append(okIndexes[r.Queue], index)
			}
		}
	}
	for _, indexes := range okIndexes {
		sort.Slice(indexes, func(i, j int) bool { return indexes[i] < indexes[j] })
	}
	ops := make([]porcupine.Operation, 0, len(records))
	for _, r := range records {
		op := porcupine.Operation{ClientId: r.Client, Call: r.Call, Return: r.returnOf()}
		if r.Op == "append" {
			index := unansweredIndex(r)
			prevOk := int64(-1)
			if index >= 0 {
				indexes := okIndexes[r.Queue]
				below := sort.Search(len(indexes), func(i int) bool { return indexes[i] >= index })
				if below > 0 {
					prevOk = indexes[below-1]
				}
			}
			unanswered := r.Outcome == "timeout" || r.Outcome == "unknown"
			_, inARead := foundAt[r.Queue+"\x00"+r.Value]
			never := unanswered && !inARead
			if never || r.Outcome == "refused" {
				// no effect and no output to check: placeable anywhere in its interval, so leaving it out decides
				// the same. Kept, each doubled the orderings around a read it overlapped (2^k states for k of them
				// whose only difference is which no-ops were placed): 591 timed-out appends beside two reads taken
				// mid-run were UNDECIDED after 2 min.
				continue
			}
			op.Input = appendInput{queue: r.Queue, value: r.Value, index: index, outcome: r.Outcome, prevOk: prevOk,
				held: unanswered && heldAt(r, index), never: never}
		} else {
			op.Input = readInput{queue: r.Queue, replica: r.Replica}
			op.Output = readOutput{state: summarise(r.Log), entries: len(r.Log)}
		}
		ops = append(ops, op)
	}
	return ops
}
