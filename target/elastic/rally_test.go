package elastic

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/freshbench/freshbench/internal/testenv"
	"github.com/freshbench/freshbench/target"
)

// rallyTrack runs `scripts/rally.sh track DIR` with env and returns DIR,
// stderr and the exit error. The script builds freshbench into a cache of
// the test's own; nothing is installed and no server is contacted.
func rallyTrack(t *testing.T, cache string, env ...string) (string, string, error) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "track")
	// Building freshbench on a busy machine may take a while.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// The freshbench the other packages' tests built, up to date (a
	// link of its own took most of this test: 17 s on a busy machine).
	bin, err := testenv.BuildFreshbench(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, "bash", filepath.Join("..", "..", "scripts", "rally.sh"), "track", dir)
	cmd.Env = append(os.Environ(), append([]string{"FRESHBENCH_CACHE=" + cache, "FRESHBENCH_BIN=" + bin}, env...)...)
	cmd.WaitDelay = 10 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	return dir, stderr.String(), err
}

// rallyTrackFile is the part of track.json that the test checks.
type rallyTrackFile struct {
	Indices []struct {
		Name string `json:"name"`
		Body string `json:"body"`
	} `json:"indices"`
	Corpora []struct {
		Documents []struct {
			SourceFile        string `json:"source-file"`
			DocumentCount     int    `json:"document-count"`
			UncompressedBytes int64  `json:"uncompressed-bytes"`
			ActionAndMetaData bool   `json:"includes-action-and-meta-data"`
		} `json:"documents"`
	} `json:"corpora"`
	Schedule []struct {
		Operation struct {
			Type     string `json:"operation-type"`
			BulkSize int    `json:"bulk-size"`
		} `json:"operation"`
		Clients int `json:"clients"`
		Warmup  int `json:"warmup-time-period"`
		Period  int `json:"time-period"`
	} `json:"schedule"`
}

// The Rally track of scripts/rally.sh holds the documents freshbench
// generates, as freshbench sends them (no _id member in the source; with
// client ids, a create action with that _id), the bulk size and clients
// asked for, and creates the index freshbench creates with the same
// settings.
func TestRallyTrack(t *testing.T) {
	t.Parallel() // directories of its own; its two tracks, which share a cache, one after the other
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not found")
	}
	cache := t.TempDir()
	const docs, batch, clients = 7, 123, 3
	for _, c := range []struct{ ids, mapping string }{{"client", MappingFreshbench}, {"auto", MappingDynamic}} {
		t.Run(c.ids+"-"+c.mapping, func(t *testing.T) {
			dir, stderr, err := rallyTrack(t, cache,
				"FRESHBENCH_RALLY_IDS="+c.ids, "FRESHBENCH_RALLY_MAPPING="+c.mapping,
				fmt.Sprintf("FRESHBENCH_RALLY_DOCS=%d", docs), fmt.Sprintf("FRESHBENCH_RALLY_BATCH=%d", batch),
				fmt.Sprintf("FRESHBENCH_RALLY_CLIENTS=%d", clients), "FRESHBENCH_RALLY_DOC_SIZE=2KB",
				"FRESHBENCH_RALLY_SHARDS=2", "FRESHBENCH_RALLY_REPLICAS=1", "FRESHBENCH_RALLY_REFRESH=250ms",
				"FRESHBENCH_RALLY_WARMUP=5", "FRESHBENCH_RALLY_DURATION=30")
			if err != nil {
				t.Fatalf("rally.sh track: %v\n%s", err, stderr)
			}
			var tr rallyTrackFile
			readJSON(t, filepath.Join(dir, "track.json"), &tr)
			if len(tr.Indices) != 1 || len(tr.Corpora) != 1 || len(tr.Corpora[0].Documents) != 1 || len(tr.Schedule) == 0 {
				t.Fatalf("track.json: %+v, want one index, one corpus of one file and a schedule", tr)
			}
			index := tr.Indices[0].Name
			d := tr.Corpora[0].Documents[0]
			bulk := tr.Schedule[len(tr.Schedule)-1]
			if d.DocumentCount != docs || d.ActionAndMetaData != (c.ids == "client") {
				t.Errorf("documents: %+v, want %d documents, action and meta-data %v", d, docs, c.ids == "client")
			}
			if bulk.Operation.Type != "bulk" || bulk.Operation.BulkSize != batch || bulk.Clients != clients || bulk.Warmup != 5 || bulk.Period != 30 {
				t.Errorf("last task %+v, want a bulk of %d by %d clients, 5 s warm-up, 30 s", bulk, batch, clients)
			}

			sources := checkRallyDocuments(t, filepath.Join(dir, d.SourceFile), index, c.ids == "client", d.UncompressedBytes)
			if len(sources) != docs {
				t.Errorf("%d documents in %s, want %d", len(sources), d.SourceFile, docs)
			}
			for _, s := range sources {
				if n := len(s); n < 1800 || n > 2000 {
					t.Errorf("a source of %d bytes, want about 2KB less the _id member", n)
					break
				}
			}

			// The index body is the one freshbench's Setup sends.
			u, _ := url.Parse("elasticsearch://127.0.0.1/x")
			cfg, err := parseConfig(u, target.Options{Settings: map[string]string{
				"mapping": c.mapping, "shards": "2", "replicas": "1", "refresh_interval": "250ms"}}, envOf(nil))
			if err != nil {
				t.Fatal(err)
			}
			want, _ := json.Marshal((&Target{cfg: cfg}).indexDefinition())
			var got, wantAny any
			readJSON(t, filepath.Join(dir, tr.Indices[0].Body), &got)
			if err := json.Unmarshal(want, &wantAny); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, wantAny) {
				b, _ := json.Marshal(got)
				t.Errorf("index body\n%s\nwant freshbench's\n%s", b, want)
			}
		})
	}

	// Bad input is refused before anything is built, exit 2.
	_, stderr, err := rallyTrack(t, cache, "FRESHBENCH_RALLY_MAPPING=strict")
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(stderr, "FRESHBENCH_RALLY_MAPPING=strict: want dynamic or freshbench") {
		t.Errorf("bad mapping: %v, stderr %q; want exit 2 naming the variable", err, stderr)
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// checkRallyDocuments checks a documents file line by line and returns the
// sources: with meta, each after a create action into index with a
// distinct _id; every source a generated event without its _id member.
func checkRallyDocuments(t *testing.T, path, index string, meta bool, size int64) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || st.Size() != size {
		t.Errorf("uncompressed-bytes %d, the file has %v (%v)", size, st.Size(), err)
	}
	var sources []string
	ids := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if meta {
			var action struct {
				Create *struct {
					Index string `json:"_index"`
					ID    string `json:"_id"`
				} `json:"create"`
			}
			if err := json.Unmarshal([]byte(line), &action); err != nil || action.Create == nil || action.Create.Index != index || action.Create.ID == "" || ids[action.Create.ID] {
				t.Fatalf("action line %q: want a create into %s with a new _id (%v)", line, index, err)
			}
			ids[action.Create.ID] = true
			if !sc.Scan() {
				t.Fatal("an action line without its source")
			}
			line = sc.Text()
		}
		var src map[string]any
		if err := json.Unmarshal([]byte(line), &src); err != nil {
			t.Fatalf("source %q: %v", line, err)
		}
		if _, ok := src["_id"]; ok {
			t.Fatalf("source %q keeps its _id member", line)
		}
		if src["generator_identifier"] == nil || src["_event_time"] == nil || src["_seq"] == nil {
			t.Fatalf("source %q is not a generated event", line)
		}
		sources = append(sources, line)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return sources
}
