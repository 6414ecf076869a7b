package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/freshbench/freshbench/results"
)

// The results files kept in results/testdata, older schema versions all,
// render as they did before the endpoint list (schema 6): testdata/*.html
// is each one's report by freshbench at 5d41d24 (schema 5), which differs
// only in the footer's schema version.
func TestOlderFilesRenderAsBefore(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "results", "testdata", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no results files in results/testdata (%v)", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata", name+".html"))
			if err != nil {
				t.Fatal(err)
			}
			res, err := results.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var page bytes.Buffer
			if err := HTML(&page, res); err != nil {
				t.Fatal(err)
			}
			got := bytes.Replace(page.Bytes(), fmt.Appendf(nil, "results schema %d", results.SchemaVersion), []byte("results schema 5"), 1)
			if !bytes.Equal(got, want) {
				t.Errorf("the report differs from testdata/%s.html (first difference at byte %d)", name, firstDiff(got, want))
			}
		})
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
