package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
)

// One line of a history file: an operation's call and its return, as the Java side recorded them
// (System.nanoTime, which is CLOCK_MONOTONIC and so comparable across the JVMs of one machine).
type record struct {
	Client  int        `json:"client"`
	Queue   string     `json:"queue"`
	Op      string     `json:"op"`      // "append" or "read"
	Value   string     `json:"value"`   // append: what was written (unique per history, e.g. a payload hash)
	Call    int64      `json:"call"`    // ns
	Return  *int64     `json:"return"`  // ns; absent: no answer came (the caller died or gave up)
	Outcome string     `json:"outcome"` // append: "ok", "timeout", "refused", "unknown"; read: "ok"
	Index   *int64     `json:"index"`   // append ok/timeout: where it was written
	Log     []logEntry `json:"log"`     // read: every (index, value) the replica holds, in index order
	Replica string     `json:"replica"` // read: which replica answered (for the report)
}

type logEntry struct {
	Index int64
	Value string
}

func (e *logEntry) UnmarshalJSON(b []byte) error {
	var pair []json.RawMessage
	if err := json.Unmarshal(b, &pair); err != nil || len(pair) != 2 {
		return fmt.Errorf("a log entry is [index, \"value\"], got %s", string(b))
	}
	if err := json.Unmarshal(pair[0], &e.Index); err != nil {
		return fmt.Errorf("log entry index: %v", err)
	}
	return json.Unmarshal(pair[1], &e.Value)
}

// readHistory parses a history: one JSON object per line; blank lines are skipped.
func readHistory(r io.Reader) ([]record, error) {
	var records []record
	scanner := bufio.NewScanner(r)
	scanner.Buffer(make([]byte, 1<<20), 1<<30) // a read of a whole log is one long line
	line := 0
	for scanner.Scan() {
		line++
		text := scanner.Bytes()
		if len(text) == 0 {
			continue
		}
		var rec record
		if err := json.Unmarshal(text, &rec); err != nil {
			return nil, fmt.Errorf("line %d: %v", line, err)
		}
		if err := rec.validate(); err != nil {
			return nil, fmt.Errorf("line %d: %v", line, err)
		}
		records = append(records, rec)
	}
	if err := scanner.Err(); err != nil {
		return nil, err
	}
	if len(records) == 0 {
		return nil, fmt.Errorf("the history is empty")
	}
	return records, nil
}

func (r *record) validate() error {
	if r.Return != nil && *r.Return < r.Call {
		return fmt.Errorf("returns (%d) before its call (%d)", *r.Return, r.Call)
	}
	switch r.Op {
	case "append":
		switch r.Outcome {
		case "ok", "timeout":
			if r.Index == nil {
				return fmt.Errorf("an append with outcome %q needs the index it was written at", r.Outcome)
			}
		case "refused", "unknown":
		default:
			return fmt.Errorf("append outcome %q is not ok, timeout, refused or unknown", r.Outcome)
		}
		if r.Value == "" {
			return fmt.Errorf("an append needs its value")
		}
		if r.Return == nil && r.Outcome != "unknown" {
			return fmt.Errorf("an append without a return can only have outcome unknown")
		}
	case "read":
		if r.Outcome != "ok" || r.Return == nil {
			return fmt.Errorf("a read is recorded once it returned, with outcome ok")
		}
		if !sort.SliceIsSorted(r.Log, func(i, j int) bool { return r.Log[i].Index < r.Log[j].Index }) {
			return fmt.Errorf("a read's log is in index order")
		}
		for i := 1; i < len(r.Log); i++ {
			if r.Log[i].Index == r.Log[i-1].Index {
				return fmt.Errorf("a read's log holds index %d twice", r.Log[i].Index)
			}
		}
	default:
		return fmt.Errorf("op %q is not append or read", r.Op)
	}
	return nil
}

// returnOf is when an operation returned, or never (an append with no answer may take effect at any later time).
func (r *record) returnOf() int64 {
	if r.Return == nil {
		return math.MaxInt64
	}
	return *r.Return
}
