package main

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

func check(t *testing.T, history string) porcupine.CheckResult {
	t.Helper()
	records, err := readHistory(strings.NewReader(history))
	if err != nil {
		t.Fatalf("history: %v", err)
	}
	return porcupine.CheckOperationsTimeout(queueLog.ToModel(), operations(records), 10*time.Second)
}

func expect(t *testing.T, want porcupine.CheckResult, history string) {
	t.Helper()
	if got := check(t, history); got != want {
		t.Errorf("got %s, want %s for:\n%s", got, want, history)
	}
}

const (
	a0 = `{"client":0,"queue":"q","op":"append","value":"a","call":0,"return":10,"outcome":"ok","index":100}` + "\n"
	b1 = `{"client":0,"queue":"q","op":"append","value":"b","call":11,"return":20,"outcome":"ok","index":101}` + "\n"
)

func read(call, ret int, log string) string {
	return `{"client":9,"queue":"q","op":"read","replica":"r","call":` + itoa(call) + `,"return":` + itoa(ret) +
		`,"outcome":"ok","log":[` + log + `]}` + "\n"
}

func itoa(n int) string {
	return strconv.Itoa(n)
}

func TestAcknowledgedAppendsReadBackAreLinearizable(t *testing.T) {
	expect(t, porcupine.Ok, a0+b1+read(30, 40, `[100,"a"],[101,"b"]`))
}

func TestAnAcknowledgedAppendMissingFromALaterReadIsNot(t *testing.T) {
	expect(t, porcupine.Illegal, a0+b1+read(30, 40, `[100,"a"]`))
}

func TestAnAcknowledgedAppendAtAnotherIndexIsNot(t *testing.T) {
	expect(t, porcupine.Illegal, a0+b1+read(30, 40, `[100,"a"],[102,"b"]`))
}

func TestATimedOutAppendMayBeKeptOrLost(t *testing.T) {
	timedOut := `{"client":0,"queue":"q","op":"append","value":"t","call":21,"return":25,"outcome":"timeout","index":102}` + "\n"
	expect(t, porcupine.Ok, a0+b1+timedOut+read(30, 40, `[100,"a"],[101,"b"],[102,"t"]`))
	expect(t, porcupine.Ok, a0+b1+timedOut+read(30, 40, `[100,"a"],[101,"b"]`))
	// lost in a failover, its index taken by the next leader's acknowledged append
	next := `{"client":1,"queue":"q","op":"append","value":"n","call":26,"return":28,"outcome":"ok","index":102}` + "\n"
	expect(t, porcupine.Ok, a0+b1+timedOut+next+read(30, 40, `[100,"a"],[101,"b"],[102,"n"]`))
	// but never kept at an index other than its own
	expect(t, porcupine.Illegal, a0+b1+timedOut+read(30, 40, `[100,"a"],[101,"b"],[103,"t"]`))
}

func TestAnAppendWithNoAnswerMayLandOnceAtMost(t *testing.T) {
	noAnswer := `{"client":2,"queue":"q","op":"append","value":"u","call":21,"outcome":"unknown"}` + "\n"
	expect(t, porcupine.Ok, a0+b1+noAnswer+read(30, 40, `[100,"a"],[101,"b"],[102,"u"]`))
	expect(t, porcupine.Ok, a0+b1+noAnswer+read(30, 40, `[100,"a"],[101,"b"]`))
	expect(t, porcupine.Illegal, a0+b1+noAnswer+read(30, 40, `[100,"a"],[101,"b"],[102,"u"],[103,"u"]`))
}

func TestARefusedAppendIsNeverHeld(t *testing.T) {
	refused := `{"client":0,"queue":"q","op":"append","value":"r","call":21,"return":22,"outcome":"refused"}` + "\n"
	expect(t, porcupine.Ok, a0+b1+refused+read(30, 40, `[100,"a"],[101,"b"]`))
	expect(t, porcupine.Illegal, a0+b1+refused+read(30, 40, `[100,"a"],[101,"b"],[102,"r"]`))
}

func TestALaterReadCannotLoseWhatAnEarlierReadSaw(t *testing.T) {
	timedOut := `{"client":0,"queue":"q","op":"append","value":"t","call":21,"return":25,"outcome":"timeout","index":102}` + "\n"
	expect(t, porcupine.Illegal, a0+b1+timedOut+read(30, 40, `[100,"a"],[101,"b"],[102,"t"]`)+read(50, 60, `[100,"a"],[101,"b"]`))
}

func TestConcurrentAppendsMayTakeIndexesInEitherOrderButSequentialOnesMayNot(t *testing.T) {
	x := `{"client":0,"queue":"q","op":"append","value":"x","call":0,"return":10,"outcome":"ok","index":101}` + "\n"
	yOverlapping := `{"client":1,"queue":"q","op":"append","value":"y","call":5,"return":15,"outcome":"ok","index":100}` + "\n"
	ySequential := `{"client":1,"queue":"q","op":"append","value":"y","call":11,"return":15,"outcome":"ok","index":100}` + "\n"
	expect(t, porcupine.Ok, x+yOverlapping+read(30, 40, `[100,"y"],[101,"x"]`))
	expect(t, porcupine.Illegal, x+ySequential+read(30, 40, `[100,"y"],[101,"x"]`))
}

func TestQueuesAreCheckedApart(t *testing.T) {
	other := `{"client":3,"queue":"p","op":"append","value":"a","call":0,"return":10,"outcome":"ok","index":100}` + "\n" +
		`{"client":9,"queue":"p","op":"read","replica":"r","call":30,"return":40,"outcome":"ok","log":[[100,"a"]]}` + "\n"
	expect(t, porcupine.Ok, a0+b1+other+read(30, 40, `[100,"a"],[101,"b"]`))
}

func TestMalformedHistoriesAreRefusedWithTheLine(t *testing.T) {
	for _, bad := range []string{
		`{"op":"append","value":"a","call":0,"return":1,"outcome":"ok"}`,
		`{"op":"append","value":"a","call":5,"return":1,"outcome":"refused"}`,
		`{"op":"append","value":"a","call":0,"return":1,"outcome":"maybe","index":1}`,
		`{"op":"read","call":0,"return":1,"outcome":"ok","log":[[2,"a"],[1,"b"]]}`,
		`{"op":"delete","call":0,"return":1}`,
		`not json`,
	} {
		if _, err := readHistory(strings.NewReader(bad + "\n")); err == nil || !strings.HasPrefix(err.Error(), "line 1:") {
			t.Errorf("%s: want an error naming line 1, got %v", bad, err)
		}
	}
}

// pipelinedHistory is n appends of two interleaved pipelined writers, outcome(i) each, at index 1000+i when it has one
// (refused ones have none), 2,560 time units in flight: writer 1 calls each of its appends a little before writer 0's
// previous one, so call order is not index order (the node took them alternately). Then, when midUpTo >= 0, a read
// taken mid-run that holds every held(i) append up to i = midUpTo, and a final read that holds every held(i) one.
func pipelinedHistory(n, midUpTo int, outcome func(i int) string, held func(i int) bool) string {
	var b strings.Builder
	var final, mid strings.Builder
	for i := 0; i < n; i++ {
		client := i % 2
		call := i*10 - client*15
		if call < 0 {
			call = 0
		}
		index := `,"index":` + itoa(1000+i)
		if outcome(i) == "refused" {
			index = ""
		}
		b.WriteString(`{"client":` + itoa(client) + `,"queue":"q","op":"append","value":"v` + itoa(i) + `","call":` +
			itoa(call) + `,"return":` + itoa(call+2560) + `,"outcome":"` + outcome(i) + `"` + index + "}\n")
		if !held(i) {
			continue
		}
		entry := `[` + itoa(1000+i) + `,"v` + itoa(i) + `"]`
		for _, log := range []*strings.Builder{&final, &mid} {
			if log == &mid && i > midUpTo {
				continue
			}
			if log.Len() > 0 {
				log.WriteString(",")
			}
			log.WriteString(entry)
		}
	}
	if midUpTo >= 0 {
		midCall := 2560 + 10*(midUpTo-1) + 5 // after every append up to midUpTo-1 returned, while midUpTo is in flight
		b.WriteString(read(midCall, midCall+1, mid.String()))
	}
	return b.String() + read(n*10+3000, n*10+3010, final.String())
}

// expectDecidedQuickly: linearizable, and decided within 5 s (undecided histories run into check's 10 s limit).
func expectDecidedQuickly(t *testing.T, history string) {
	t.Helper()
	started := time.Now()
	expect(t, porcupine.Ok, history)
	if elapsed := time.Since(started); elapsed > 5*time.Second {
		t.Errorf("took %s", elapsed)
	}
}

func always(int) bool { return true }

// Two pipelined writers: 2 × 2,000 acknowledged appends, up to 256 in flight at once. Decided, and quickly: an
// acknowledged append takes effect only after the one below it (prevOk), so the search never tries the wrong order.
func TestManyOverlappingPipelinedAppendsAreDecided(t *testing.T) {
	expectDecidedQuickly(t, pipelinedHistory(4000, -1, func(int) string { return "ok" }, always))
}

// A failover under full windows: many appends without an answer among thousands acknowledged, one in twenty (a
// window's worth at a failover), half of them lost (in no read). The reads decide each one (held at its index: it took
// effect; in no read: it did not), so the search does not branch on them.
func TestManyUnansweredAppendsAmongPipelinedOnesAreDecided(t *testing.T) {
	expectDecidedQuickly(t, pipelinedHistory(4000, -1, unansweredOneInTwenty, func(i int) bool { return i%40 != 7 }))
}

func unansweredOneInTwenty(i int) string {
	if i%20 == 7 {
		return "timeout"
	}
	return "ok"
}

// The pruning decides nothing the model would not: a timed-out append a read holds and a later read lost is still
// not linearizable, nor one a read holds at an index other than its own.
func TestUnansweredAppendsPrunedByTheReadsKeepTheirVerdicts(t *testing.T) {
	timedOut := `{"client":0,"queue":"q","op":"append","value":"t","call":21,"return":25,"outcome":"timeout","index":102}` + "\n"
	expect(t, porcupine.Illegal, a0+b1+timedOut+read(30, 40, `[100,"a"],[101,"b"],[102,"t"]`)+read(50, 60, `[100,"a"],[101,"b"]`))
	expect(t, porcupine.Illegal, a0+b1+timedOut+read(30, 40, `[100,"a"],[101,"b"],[103,"t"]`))
	// held by a read that began before the append was called: it cannot have taken effect before its call
	early := `{"client":0,"queue":"q","op":"append","value":"t","call":45,"return":50,"outcome":"timeout","index":102}` + "\n"
	expect(t, porcupine.Illegal, a0+b1+read(30, 40, `[100,"a"],[101,"b"],[102,"t"]`)+early)
	// in no read, and an acknowledged append after it took its index: fine (it never took effect)
	next := `{"client":1,"queue":"q","op":"append","value":"n","call":26,"return":28,"outcome":"ok","index":102}` + "\n"
	expect(t, porcupine.Ok, a0+b1+timedOut+next+read(30, 40, `[100,"a"],[101,"b"],[102,"n"]`))
}

// As above, with a read taken mid-run while hundreds of appends are in flight (a new leader read right after its
// promotion), and refused appends: appends without an answer that no read holds, and refused ones, are left out of the
// search; each one kept doubled the orderings around that read.
func TestUnansweredAppendsBesideAReadTakenMidRunAreDecided(t *testing.T) {
	outcome := func(i int) string {
		if i%50 == 3 {
			return "refused"
		}
		return unansweredOneInTwenty(i)
	}
	expectDecidedQuickly(t, pipelinedHistory(4000, 2001, outcome, func(i int) bool { return outcome(i) != "refused" && i%40 != 7 }))
}
