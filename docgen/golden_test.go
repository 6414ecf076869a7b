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
// shape (TestNestedTemplate pins its fields against the hand-written one).
func TestOutputUnchanged(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{DocSize: 1000, Seed: 1}, "6e45cc60b163368436cc5c8455745fda390c1ce844e1f2afb6869670b8e0d060"},
		{Config{DocSize: 400, Seed: 2, Index: 3}, "109cb0a8ba09bb2b40201a6729f1fc821cecfc3165b681eeb1f74f2e3d228ef2"},
		{Config{DocSize: 1250, Seed: 3, Nonce: 9}, "537046c21c90f67fadb95e1599e65b6931ae05dfbb4c1cb053e016e52df83a98"},
		{Config{DocSize: 10_000, Seed: 4}, "3a8ed4af9ca0dbf6bbf63b0aa275dfbb35913d3bcd63c2746078f53330a1232d"},
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
		{"rockbench", mustShipped(t, "rockbench"), "76f37517b03a916d04236fe6ccda04373a8c953e6f4d8bd8f14ad64b86aeeac1"},
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
