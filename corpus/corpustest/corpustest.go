// Package corpustest opens corpora for the tests of the packages that
// read them.
package corpustest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/freshbench/freshbench/corpus"
)

// Open writes data to a file named name (its suffix, such as .gz, says
// how it is compressed) in a directory of the test's own and opens it as
// a corpus, looping when loop is set; the corpus is closed when the test
// ends.
func Open(tb testing.TB, name string, data []byte, loop bool) *corpus.Corpus {
	tb.Helper()
	p := filepath.Join(tb.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		tb.Fatal(err)
	}
	c, err := corpus.Open([]string{p}, loop)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}
