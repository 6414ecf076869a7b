package docgen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/freshbench/freshbench/invalid"
)

// A {{fill N}} makes every event, and every revision with its longer head,
// exactly N bytes: the filler text takes what the rest leaves. The rest
// here varies by hundreds of bytes from event to event, and N is read
// from the template, not tuned to it.
func TestTemplateFill(t *testing.T) {
	const size = 900
	tm := mustTemplate(t, `{
	  "tags": {"$array": "0..12", "of": "{{word}}"},
	  "who": "{{name | absent 0.5}}",
	  "about": "{{sentence 1 20}}",
	  "notes": {"pinned": "{{bool}}", "text": "{{fill 900}}"}
	}`)
	if tm.MeanSize() != size {
		t.Fatalf("mean size %d, want the fill's %d", tm.MeanSize(), size)
	}
	g := mustNew(t, Config{Template: tm, Seed: 11})
	var short, long int
	for i := range 2000 {
		d, _ := g.Next(nil, t0+int64(i))
		r, _ := g.Revise(nil, Key{ID: d.ID, Seq: d.Seq, EventTime: d.EventTime}, 1, t0+int64(i)+5)
		for _, doc := range [][]byte{d.JSON, r.JSON} {
			if len(doc) != size {
				t.Fatalf("event of %d bytes, want %d: %s", len(doc), size, doc)
			}
			text := decode(t, doc)["notes"].(map[string]any)["text"].(string)
			short, long = min(short, len(text)), max(long, len(text))
			if strings.TrimRight(text, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ ,.") != "" {
				t.Fatalf("filler %q is not lorem text", text)
			}
		}
	}
	if long-short < 100 {
		t.Fatalf("the filler took %d..%d bytes: the rest did not vary, the test cannot fail", short, long)
	}
}

// A filler that cannot fill is refused at compile time with the line and
// the fix: a size below what the rest of the event takes, a filler that
// is not the last value or sits inside an array or a | null, two fillers.
func TestTemplateFillRefused(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"{\"tags\": {\"$array\": \"10\", \"of\": \"{{word}}\"},\n\"g\": \"{{fill 150}}\"}", "line 2: {{fill 150}}: the template's other values take up to"},
		{"{\"g\": \"{{fill 900}}\",\n\"a\": 1}", "line 1: {{fill 900}} is not the template's last value"},
		{"{\"a\": {\"$array\": \"2\", \"of\": \"{{fill 900}}\"}}", "{{fill 900}} is not the template's last value"},
		{"{\"g\": \"{{fill 900 | null 0.5}}\"}", "{{fill 900}} is not the template's last value"},
		{"{\"g\": \"{{fill 900 | absent 0.5}}\"}", "{{fill 900}} is not the template's last value"},
		{"{\"g\": \"x{{fill 900}}\"}", "{{fill}} is a whole value"},
		{"{\"a\": \"{{fill 900}}\",\n\"g\": \"{{fill 900}}\"}", "line 2: a second {{fill}} (the first on line 1)"},
		{"{\"g\": \"{{fill 0}}\"}", "fill 0: want an event size in bytes"},
	} {
		_, err := ParseTemplate([]byte(tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("template %q: error %v, want one line with %q", tc.text, err, tc.want)
		}
	}
	// The least size the error names is one the template takes.
	p := filepath.Join(t.TempDir(), "small.json")
	text := `{"tags": {"$array": "10", "of": "{{word}}"}, "g": "{{fill 150}}"}`
	os.WriteFile(p, []byte(text), 0o600)
	_, err := ParseTemplateFile(p)
	if _, ok := invalid.As(err); !ok || !strings.Contains(err.Error(), p+": line 1: {{fill 150}}") {
		t.Fatalf("error %v, want the file, the line and the fix", err)
	}
	_, least, _ := strings.Cut(err.Error(), "raise the size to ")
	least, _, _ = strings.Cut(least, " ")
	if _, err := ParseTemplate([]byte(strings.Replace(text, "150", least, 1))); err != nil {
		t.Fatalf("the size the error names, %s, refused: %v", least, err)
	}
}

// Dates are formatted without the time package; the time package is the
// truth they are held to, for every day from year 1 to 9999.
func TestAppendCivil(t *testing.T) {
	first := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).Unix() / 86_400
	last := time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC).Unix() / 86_400
	var b []byte
	for d := first; d <= last; d++ {
		b = appendCivil(b[:0], d)
		if want := time.Unix(d*86_400, 0).UTC().Format(time.DateOnly); string(b) != want {
			t.Fatalf("day %d: %s, want %s", d, b, want)
		}
	}
}
