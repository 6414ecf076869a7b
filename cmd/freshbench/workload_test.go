package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/internal/testenv"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/workload"
)

// readResult reads a results file.
func readResult(t *testing.T, path string) *results.Result {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r results.Result
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// A workload file sets the command's flags; the command line overrides
// it; the scale multiplies what the file gives, never what the command
// line does; the results file records the whole resolved workload, and
// the console names it.
func TestWorkloadFile(t *testing.T) { synctest.Test(t, testWorkloadFile) }

func testWorkloadFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "w.yaml")
	if err := os.WriteFile(file, []byte(`description: a short test
source: the test
command: run
flags:
  rate: 400
  batch-size: 20
  duration: 4s
  warmup: 1s
  drain: 5s
  probe-rate: 5
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "r.json")
	code, stdout, stderr := freshbench(t, "run", "--workload", file, "--scale", "0.5", "--batch-size", "10",
		"--data-dir", filepath.Join(dir, "data"), "--quiet", "--metrics-addr", "", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r := readResult(t, out)
	c := r.Config
	if c.BatchSize != 10 || c.DurationS != 2 || c.WarmupS != 0.5 || c.Rate != "200 events/s" {
		t.Errorf("config %+v: want batch 10 (command line), rate 200 events/s, 2 s and warm-up 0.5 s (file × 0.5)", c)
	}
	w := r.Workload
	if w == nil || w.Source != file || w.Scale != 0.5 || w.Replays != "the test" || w.Flags["rate"] != "200" || w.Flags["drain"] != "5s" || w.Flags["batch-size"] != "10" ||
		!slices.Contains(w.FromCommandLine, "batch-size") || slices.Contains(w.FromCommandLine, "rate") {
		t.Errorf("workload recorded %+v", w)
	}
	if want := "workload: " + file + " at scale 0.5; replays the test"; !strings.Contains(stdout, want) {
		t.Errorf("console does not say %q:\n%s", want, stdout)
	}
}

// A bad workload is refused before anything runs, in one line that names
// the file, the line and the field.
func TestWorkloadErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	badRate := write("rate.yaml", "flags:\n  batch-size: 10\n  rate: fast\n")
	unknown := write("unknown.yaml", "flags:\n  rat: 100\n")
	zeroBatch := write("zero.yaml", "flags:\n  batch-size: 0\n")
	peak := write("peak.yaml", "command: peak\nflags:\n  hold: 10s\n")
	out := write("out.yaml", "flags:\n  out: x.json\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--workload", badRate}, `--rate: rate "fast": want events per second (e.g. 5000) or bytes per second with a unit (e.g. 10MB/s, 512KiB/s) (--rate is from ` + badRate + ":3)"},
		{[]string{"run", "--workload", badRate, "--rate", "100", "--duration", "0s"}, "--duration"},
		{[]string{"run", "--workload", zeroBatch}, "(--batch-size is from " + zeroBatch + ":2)"},
		{[]string{"run", "--workload", unknown}, unknown + ":2: rat: freshbench run has no flag --rat"},
		{[]string{"run", "--workload", peak}, peak + " is a workload for freshbench peak, not run"},
		{[]string{"run", "--workload", out}, out + ":2: out: not a workload flag"},
		{[]string{"run", "--workload", filepath.Join(dir, "none.yaml")}, "no such file"},
		{[]string{"run", "--scale", "2"}, "--scale: scales a workload: give --workload or --preset too"},
		{[]string{"run", "--preset", "rockbench-2020", "--workload", badRate}, "give one"},
		{[]string{"run", "--preset", "nope"}, `no preset "nope": want one of`},
		{[]string{"run", "--preset", "rockbench-2020", "--scale", "-1"}, "--scale -1: want a factor above 0"},
		{[]string{"run", "--workload", badRate, "--scale", "2"}, badRate + `:3: rate: "fast": want a rate such as 5000`},
		{[]string{"presets", "nope"}, `no preset "nope"`},
	} {
		wantUsageError(t, append(c.args, "--data-dir", filepath.Join(dir, "data"), "--metrics-addr", "")[:len(c.args)+map[bool]int{true: 0, false: 4}[c.args[0] == "presets"]], c.want)
	}
}

// presets lists every preset with what it replays, and prints one.
func TestPresetsCommand(t *testing.T) {
	code, stdout, stderr := freshbench(t, "presets")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	all, err := workload.Presets()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range all {
		if !strings.Contains(stdout, p.Name()) || !strings.Contains(stdout, p.Source) {
			t.Errorf("presets does not list %s with its source:\n%s", p.Name(), stdout)
		}
	}
	code, stdout, _ = freshbench(t, "presets", "rockbench-2020")
	if code != 0 || !strings.Contains(stdout, "levels:") {
		t.Errorf("presets rockbench-2020: exit %d:\n%s", code, stdout)
	}
}

// tinyScales are the scales the presets are tried at: the smallest at
// which each run's measured part still holds batches (the events it
// holds scale as scale²), with what the command line overrides to keep
// the whole test short.
var tinyScales = map[string]struct {
	scale    string
	override []string
}{
	"rockbench-2020":          {"0.008", nil},
	"latency-70ms-2023":       {"0.005", nil},
	"client-calibration-2016": {"0.05", []string{"--trials", "1", "--warmup-trials", "0"}},
	// One step: a peak search at this scale would go on for its 20. Its
	// least hold (5 minutes, at most 45) is scaled to 2.7 s: enough for
	// a few batches.
	"es-vs-rockset-2023": {"0.009", []string{"--max-steps", "1"}},
	// One sweep step.
	"qps-20k": {"0.02", []string{"--sweep-max", "40"}},
	// The same, with its queries of one's own.
	"qps-20k-own": {"0.02", []string{"--sweep-max", "40"}},
	// 30 s of virtual time, about 5 events and 20 queries a second: at
	// the scale's 100 the in-process database's queries took 10 s of CPU.
	"isolation-20k": {"0.1", []string{"--qps", "20"}},
}

// Every preset runs end to end at a tiny scale: those that fit any target
// on the embedded default, the Elasticsearch one (its index settings) on
// the real server. Each records the preset and the scale.
func TestPresetsRunTiny(t *testing.T) {
	t.Parallel() // beside the other tests of a server or data directory of their own
	all, err := workload.Presets()
	if err != nil {
		t.Fatal(err)
	}
	es := serverHost(t, "FRESHBENCH_TEST_ELASTICSEARCH_URL")
	for _, p := range all {
		t.Run(p.Name(), func(t *testing.T) {
			t.Parallel()
			tiny, ok := tinyScales[p.Name()]
			if !ok {
				t.Fatalf("no tiny scale for the preset %s: add it to tinyScales", p.Name())
			}
			dir := t.TempDir()
			out := filepath.Join(dir, "r.json")
			args := append([]string{p.Command, "--preset", p.Name(), "--scale", tiny.scale, "--quiet", "--metrics-addr", "", "--out", out, "--drain", "10s"}, tiny.override...)
			if slices.ContainsFunc(p.Flags, func(e workload.Entry) bool { return e.Name == "set" }) {
				if es == "" {
					testenv.Unavailable(t, "FRESHBENCH_TEST_ELASTICSEARCH_URL is not set: start a server with `scripts/elasticsearch.sh start`")
				}
				idx := fmt.Sprintf("fb-preset-%d", time.Now().UnixNano())
				t.Cleanup(func() {
					req, _ := http.NewRequest(http.MethodDelete, "http://"+es+"/"+idx, nil)
					if res, err := http.DefaultClient.Do(req); err == nil {
						res.Body.Close()
					}
				})
				// Every request, the index's creation among them, may take
				// its time: a starved server took over 30 s (the default
				// bound) to create the preset's index of 32 shards.
				args = append(args, "--target", "elasticsearch://"+es+"/"+idx, "--recreate", "--write-timeout", "2m")
				runPreset(t, p, tiny.scale, out, args)
				return
			}
			// No server: the in-process database runs on virtual time.
			args = append(args, "--data-dir", filepath.Join(dir, "data"))
			synctest.Test(t, func(t *testing.T) { runPreset(t, p, tiny.scale, out, args) })
		})
	}
}

// runPreset runs a preset with args and checks that its results and
// console name it.
func runPreset(t *testing.T, p *workload.File, scale, out string, args []string) {
	code, stdout, stderr := freshbench(t, args...)
	if code != 0 {
		t.Fatalf("freshbench %s: exit %d\n%s\n%s", strings.Join(args, " "), code, stdout, stderr)
	}
	r := readResult(t, out)
	if r.Workload == nil || r.Workload.Source != workload.PresetPrefix+p.Name() || r.Workload.Flags["scale"] != scale {
		t.Errorf("workload recorded %+v", r.Workload)
	}
	updates := slices.ContainsFunc(p.Flags, func(e workload.Entry) bool { return e.Name == "update-share" })
	if u := r.Summary.Updates; updates && (u == nil || u.Acked == 0 || !u.Audited || u.Lost != 0) {
		t.Errorf("a preset with updates measured none, or lost some: %+v", u)
	}
	if !strings.Contains(stdout, "workload: preset:"+p.Name()+" at scale "+scale+"; replays ") {
		t.Errorf("the console does not name the preset:\n%s", stdout)
	}
}
