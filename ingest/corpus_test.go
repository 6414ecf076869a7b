package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/corpus"
	"github.com/freshbench/freshbench/corpus/corpustest"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/sim"
)

// recorder keeps what each write sent, then lets sim answer.
type recorder struct {
	*sim.Target
	mu   sync.Mutex
	sent []map[string]any
}

func (r *recorder) Write(ctx context.Context, b target.Batch) (target.WriteResult, error) {
	if len(b.Docs) == 0 {
		panic("an empty batch was sent")
	}
	r.mu.Lock()
	for _, d := range b.Docs {
		var m map[string]any
		if err := json.Unmarshal(d.JSON, &m); err != nil {
			panic(fmt.Sprintf("sent %s: %v", d.JSON, err))
		}
		r.sent = append(r.sent, m)
	}
	r.mu.Unlock()
	return r.Target.Write(ctx, b)
}

func corpusOf(t *testing.T, lines int, loop bool) *corpus.Corpus {
	t.Helper()
	var b strings.Builder
	for i := range lines {
		fmt.Fprintf(&b, "{\"line\":%d,\"user\":{\"name\":\"u%d\"}}\n", i, i%7)
	}
	return corpustest.Open(t, "c.jsonl", []byte(b.String()), loop)
}

// A corpus that does not loop stops the run at its end: every line is
// sent once, to one of the generators, and acknowledged; no empty batch
// goes out, and the events the schedule had left are not counted unsent
// (they never existed), even from streams behind their schedule, waiting
// for a slot of a slow target.
func TestCorpusStopsAtItsEnd(t *testing.T) { synctest.Test(t, testCorpusStopsAtItsEnd) }

func testCorpusStopsAtItsEnd(t *testing.T) {
	const lines = 1234 // not a multiple of the batch size
	cfg := testConfig(1000, 50, 10*time.Second)
	cfg.Generators = 3
	cfg.MaxInflight = 1
	cfg.UpdateShare = 0.2
	cfg.Corpus = corpusOf(t, lines, false)
	// 50 events per 100 ms: half the rate, so the streams fall behind.
	rec := &recorder{Target: sim.New(sim.Config{Discard: true, WriteDelay: 100 * time.Millisecond})}
	a := run(t, cfg, rec)
	seen := map[float64]int{}
	for _, m := range rec.sent {
		seen[m["line"].(float64)]++
	}
	if len(rec.sent) != lines || len(seen) != lines {
		t.Fatalf("sent %d events of %d distinct lines, want each of the %d lines once", len(rec.sent), len(seen), lines)
	}
	var due, acked, unsent, failed int64
	for _, p := range []string{results.PhaseWarmup, results.PhaseMeasured, results.PhaseTail} {
		ph := a.Phase(p)
		due, acked, unsent, failed = due+ph.Due, acked+ph.Acked, unsent+ph.Unsent, failed+ph.Failed
	}
	if due != lines || acked != lines || unsent != 0 || failed != 0 {
		t.Fatalf("due %d acked %d unsent %d failed %d, want %d due and acked", due, acked, unsent, failed, lines)
	}
	if from, to := a.Timeline().Measured(); to.Sub(from) >= 10*time.Second {
		t.Fatalf("measured %s..%s: the run went on after the corpus ended", from, to)
	}
}

// A looping corpus runs the whole duration, starting over as needed.
func TestCorpusLoops(t *testing.T) { synctest.Test(t, testCorpusLoops) }

func testCorpusLoops(t *testing.T) {
	cfg := testConfig(1000, 10, 2*time.Second)
	cfg.Corpus = corpusOf(t, 300, true)
	rec := &recorder{Target: sim.New(sim.Config{Discard: true})}
	run(t, cfg, rec)
	if len(rec.sent) != 2000 {
		t.Fatalf("sent %d events in 2 s at 1000/s, want 2000", len(rec.sent))
	}
	for i, m := range rec.sent {
		if m["line"].(float64) != float64(i%300) {
			t.Fatalf("event %d is line %v, want %d", i, m["line"], i%300)
		}
	}
	if taken, passes := cfg.Corpus.Passes(); taken != 2000 || passes < 6.6 || passes > 6.7 {
		t.Fatalf("%d events in %v passes, want 2000 in 6.67", taken, passes)
	}
}
