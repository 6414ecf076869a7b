package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/bench"
	"github.com/freshbench/freshbench/ingest"
	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/target"
)

func open(t *testing.T, path string, opts target.Options) target.Target {
	t.Helper()
	u, err := url.Parse("sqlite://" + path)
	if err != nil {
		t.Fatal(err)
	}
	tgt, err := Open(context.Background(), u, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tgt.Close() })
	return tgt
}

func docs(gen string, from, n int) target.Batch {
	b := target.Batch{Generator: gen}
	for i := from; i < from+n; i++ {
		id := fmt.Sprintf("%s-%d", gen, i)
		b.Docs = append(b.Docs, target.Document{
			ID: id, Generator: gen, Seq: int64(i), EventTime: int64(1000 + i),
			JSON: []byte(fmt.Sprintf(`{"_id":%q,"_event_time":%d,"generator_identifier":%q,"_seq":%d}`, id, 1000+i, gen, i)),
		})
	}
	return b
}

func TestContract(t *testing.T) {
	ctx := context.Background()
	tgt := open(t, filepath.Join(t.TempDir(), "x.db"), target.Options{})
	for i := 0; i < 2; i++ {
		if err := tgt.Setup(ctx); err != nil {
			t.Fatalf("setup %d: %v", i, err)
		}
	}
	if _, ok, err := tgt.Freshness(ctx, "g"); err != nil || ok {
		t.Fatalf("freshness of an empty table: ok=%v err=%v", ok, err)
	}
	res, err := tgt.Write(ctx, docs("g", 0, 10))
	if err != nil || res.Acknowledged != 10 || res.Failed != 0 {
		t.Fatalf("write: %+v %v", res, err)
	}
	// Rewriting seq 8..11: 8 and 9 are duplicate ids, 10 and 11 are new.
	res, err = tgt.Write(ctx, docs("g", 8, 4))
	if err != nil || res.Acknowledged != 2 || res.Failed != 2 || res.ErrorKinds["duplicate_id"] != 2 || len(res.FailedSeqs) != 2 {
		t.Fatalf("write with duplicates: %+v %v", res, err)
	}
	if _, err := tgt.Write(ctx, docs("other", 0, 3)); err != nil {
		t.Fatal(err)
	}
	newest, ok, err := tgt.Freshness(ctx, "g")
	if err != nil || !ok || newest != 1011 {
		t.Fatalf("freshness = %d %v %v, want 1011", newest, ok, err)
	}
	seen, err := tgt.Visible(ctx, "g", []string{"g-0", "g-11", "g-99", "other-0"})
	if err != nil || len(seen) != 2 || !seen["g-0"] || !seen["g-11"] {
		t.Fatalf("visible = %v %v, want g-0 and g-11", seen, err)
	}
	if n, err := tgt.Count(ctx, "g"); err != nil || n != 12 {
		t.Fatalf("count = %d %v, want 12", n, err)
	}
	var seqs []int64
	if err := tgt.Seqs(ctx, "g", func(s int64) { seqs = append(seqs, s) }); err != nil || len(seqs) != 12 {
		t.Fatalf("seqs = %v %v", seqs, err)
	}
	if v, err := tgt.Version(ctx); err != nil || !strings.HasPrefix(v, "SQLite 3.") {
		t.Fatalf("version %q %v", v, err)
	}
	if err := tgt.Teardown(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestRecreateEmptiesTable(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "x.db")
	a := open(t, path, target.Options{})
	if err := a.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Write(ctx, docs("g", 0, 5)); err != nil {
		t.Fatal(err)
	}
	a.Close()
	b := open(t, path, target.Options{})
	b.Setup(ctx)
	if n, _ := b.Count(ctx, "g"); n != 5 {
		t.Fatalf("reuse: count %d, want 5", n)
	}
	b.Close()
	c := open(t, path, target.Options{Recreate: true})
	c.Setup(ctx)
	if n, _ := c.Count(ctx, "g"); n != 0 {
		t.Fatalf("recreate: count %d, want 0", n)
	}
}

func TestLockedFileIsAClearError(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "x.db")
	other, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(ctx, "ROLLBACK")
	u, _ := url.Parse("sqlite://" + path)
	tgt, err := Open(ctx, u, target.Options{})
	if err == nil {
		err = tgt.Setup(ctx)
		tgt.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "locked by another process") {
		t.Fatalf("err = %v, want a 'locked by another process' error", err)
	}
}

func TestUnwritableDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root can write anywhere; the check is exercised by non-root runs")
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o500)
	u, _ := url.Parse("sqlite://" + filepath.Join(dir, "x.db"))
	if _, err := Open(context.Background(), u, target.Options{}); err == nil || !strings.Contains(err.Error(), "choose another data directory") {
		t.Fatalf("err = %v, want one saying to choose another data directory", err)
	}
}

func TestFileInPlaceOfDirectory(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o644)
	u, _ := url.Parse("sqlite://" + filepath.Join(f, "x.db"))
	if _, err := Open(context.Background(), u, target.Options{}); err == nil || !strings.Contains(err.Error(), "choose another data directory") {
		t.Fatalf("err = %v, want one saying to choose another data directory", err)
	}
}

// End to end: a short run against SQLite sees every acknowledged event.
func TestRunEndToEnd(t *testing.T) { synctest.Test(t, testRunEndToEnd) }

func testRunEndToEnd(t *testing.T) {
	ctx := context.Background()
	tgt := open(t, filepath.Join(t.TempDir(), "x.db"), target.Options{})
	if err := tgt.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := bench.Run(ctx, tgt, bench.Config{
		Ingest: ingest.Config{
			Rate: pace.Rate{PerSecond: 2000, Unit: pace.Events}, BatchSize: 50, Duration: 3 * time.Second,
			Warmup: time.Second, Generators: 2, MaxInflight: 4, DocSize: 1000, Seed: 3,
			WriteTimeout: 10 * time.Second, ProbeRate: 20,
		},
		PollInterval: 100 * time.Millisecond, Drain: 10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	if !s.Audited || s.Missing != 0 || s.Unexpected != 0 || s.Duplicates != 0 || s.EventsAcked != 4000 {
		// The summary is of the measured 2 s after the warm-up: 4000 events.
		t.Fatalf("audit %+v, acked %d", res.Target().Completeness, s.EventsAcked)
	}
	if s.AchievedEventsPerSec < 1900 || s.AchievedEventsPerSec > 2100 {
		t.Fatalf("achieved %v events/s, want about 2000", s.AchievedEventsPerSec)
	}
	if s.FreshnessLag.Count == 0 || s.VisibilityLatency.Count == 0 {
		t.Fatalf("no freshness or visibility samples: %+v", s)
	}
	// SQLite makes a commit visible at once: visibility follows the write.
	if s.VisibilityLatency.P50Ms > s.WriteLatency.P50Ms+float64(res.Config.PollIntervalS*1000)+20 {
		t.Fatalf("visibility p50 %v ms far above write latency p50 %v ms", s.VisibilityLatency.P50Ms, s.WriteLatency.P50Ms)
	}
}
