package ingest

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/freshbench/freshbench/corpus/corpustest"
	"github.com/freshbench/freshbench/docgen"
	"github.com/freshbench/freshbench/invalid"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/pinot"
)

// pinotTarget is a Pinot target that is never set up: it makes its
// columns from the sample it is told, and its layout says which.
func pinotTarget(t *testing.T) target.Target {
	t.Helper()
	u, _ := url.Parse("pinot://127.0.0.1:1/x?controller=127.0.0.1:2")
	tgt, err := pinot.Open(context.Background(), u, target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tgt
}

// A target that makes its columns from the events is told the run's: a
// template's events, the corpus's first target.ShapeSample lines (a line
// past them is not read), none for the built-in shapes. A sample the
// target refuses is the corpus's to fix.
func TestShapeTarget(t *testing.T) {
	layout := func(cfg Config) (string, error) {
		tgt := pinotTarget(t)
		err := ShapeTarget(tgt, cfg)
		return tgt.(target.Layouter).Layout(), err
	}
	tm, err := docgen.ParseTemplate([]byte(`{"user": {"name": "{{name}}", "age": "{{int 18 90}}"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if l, err := layout(Config{Template: tm, Seed: 3}); err != nil || !strings.Contains(l, fmt.Sprintf("first %d events", target.ShapeSample)) ||
		!strings.Contains(l, "user_age DOUBLE, user_name STRING") {
		t.Errorf("template: %v, %s; want its two columns from %d events", err, l, target.ShapeSample)
	}
	if l, err := layout(Config{DocShape: docgen.ShapeNested}); err != nil || !strings.Contains(l, "generated event shape") {
		t.Errorf("built-in shape: %v, %s; want the generated shape's table", err, l)
	}

	var lines strings.Builder
	for i := range target.ShapeSample {
		fmt.Fprintf(&lines, "{\"a\":{\"b\":%d}}\n", i)
	}
	lines.WriteString("{\"a_b\":\"past the sample\"}\n")
	c := corpustest.Open(t, "c.jsonl", []byte(lines.String()), false)
	if l, err := layout(Config{Corpus: c}); err != nil || !strings.Contains(l, fmt.Sprintf("first %d events", target.ShapeSample)) || !strings.Contains(l, "a_b DOUBLE") {
		t.Errorf("corpus: %v, %s; want a_b from its first %d lines", err, l, target.ShapeSample)
	}
	bad := corpustest.Open(t, "bad.jsonl", []byte("{\"a\":1}\n{\"_seq_\":{\"x\":1},\"_seq__x\":2}\n"), false)
	_, err = layout(Config{Corpus: bad})
	if e, ok := invalid.As(err); !ok || e.Field != invalid.Corpus || !strings.Contains(err.Error(), "event 2 of the sample: two fields of the event flatten to the column _seq__x") {
		t.Errorf("a clash in the sample: %v; want the corpus's to fix, naming the event and the column", err)
	}
}
