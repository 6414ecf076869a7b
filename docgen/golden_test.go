package docgen

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/freshbench/freshbench/target"
)

// The generator's output is part of what a benchmark measures: a change
// made for speed must not move a byte. These digests of the first
// thousands of documents and revisions of a few seeds, sizes and shapes
// pin it; only a deliberate change of the documents updates them. The last
// one drew the payload from its own random stream (wyrand) instead of the
// ids' PCG: the same fields, sizes and distributions, other values. The
// nested shape's is the shipped nested template's since it became the
// shape (TestNestedTemplate pins its fields against the hand-written one),
// and the RockBench shape's the shipped rockbench template's since it
// became that shape (TestRockBenchLevels pins its fields, sizes and
// counts, size by size, against the hand-written one).
func TestOutputUnchanged(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{DocSize: 1000, Seed: 1}, "9d19017e89557e1d3814dea5469a0927f6b8bc2069e3d3351049b6667b865093"},
		{Config{DocSize: 400, Seed: 2, Index: 3}, "bed77693090af4c1ac80ba3b787d061c639fee458b4e61b3a1e42d420b867201"},
		{Config{DocSize: 1250, Seed: 3, Nonce: 9}, "2846b43baa387d06f2e1df9afd3fc577ab2ee2e7808dd39eeef94a78066e4ad9"},
		{Config{DocSize: 10_000, Seed: 4}, "1eb967ebba188bd52804b0369c7ff5691eba795e651c470e846d673e6af314a1"},
		{Config{DocSize: 9000, Seed: 5, Shape: ShapeNested}, "0183eb0fe37990a566edb6ca90791a469942aadbdbb1df92d51f8a54e9e2be88"},
	} {
		g, err := New(c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := digest(g, true); got != c.want {
			t.Errorf("%+v: documents' digest %s, want %s", c.cfg, got, c.want)
		}
	}
}

// The templates' events are pinned as the built-in shapes' are: the
// interpreter is tuned for speed, and a faster program must write the same
// bytes for a seed. The built-in shape as a template covers what the
// shipped ones do not (choices, ratings, person emails in an array).
func TestTemplateOutputUnchanged(t *testing.T) {
	builtin, err := ParseTemplate([]byte(builtinShape1250))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		tm   *Template
		want string
	}{
		{"rockbench", mustShipped(t, "rockbench"), "799085cffbfc1b14ac65dc0ed3332603a1ccddc1fe474a85784441365a37254e"},
		{"nested", mustShipped(t, "nested"), "f1dafacfe70d9b58ae3c99e74648ed6906f95caff00236fa5bcf3f84912301ea"},
		{"builtin shape", builtin, "2647e409f7ae58d0aefb8f9b40285fe37d05714f0877a52b2d11c00e7f932d77"},
	} {
		g, err := New(Config{Template: c.tm, Seed: 6})
		if err != nil {
			t.Fatal(err)
		}
		if got := digest(g, false); got != c.want {
			t.Errorf("%s: events' digest %s, want %s", c.name, got, c.want)
		}
	}
}

func mustShipped(t *testing.T, name string) *Template {
	t.Helper()
	tm, err := ShippedTemplate(name)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

// digest is the SHA-256 of g's first 3,000 events and, with revise, a
// revision of every seventh.
func digest(g *Generator, revise bool) string {
	h := sha256.New()
	var buf []byte
	for i := range 3000 {
		var d target.Document
		d, buf = g.Next(buf[:0], 1_700_000_000_000_000+int64(i)*997)
		h.Write(d.JSON)
		if revise && i%7 == 0 {
			k := Key{ID: d.ID, Seq: d.Seq, EventTime: d.EventTime}
			d, buf = g.Revise(buf[:0], k, 1+int64(i%3), 1_700_000_000_500_000+int64(i))
			h.Write(d.JSON)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}
