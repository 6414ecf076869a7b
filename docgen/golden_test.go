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
// were taken before the generator was tuned; only a deliberate change of
// the documents updates them.
func TestOutputUnchanged(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{DocSize: 1000, Seed: 1}, "6b0f33ab2bd119e5c94cba8995a19cfad991db9a107ad9f2810f0546765c4c52"},
		{Config{DocSize: 400, Seed: 2, Index: 3}, "653f95722482e7b62f7b7439bb41568366218852fffa214e97dd2e026f442430"},
		{Config{DocSize: 1250, Seed: 3, Nonce: 9}, "816d79262f7131f841409145bc981f1eb469027e3e7ebdb7daeb2917b501c12a"},
		{Config{DocSize: 10_000, Seed: 4}, "b6365842b97385e19cc473a5667418891c9374760cb4a88b92418d58de219f23"},
		{Config{DocSize: 9000, Seed: 5, Shape: ShapeNested}, "043de3a0827a7a7a9bf49b4aa49af3a21e41229e4f59a347ed934393c03585e9"},
	} {
		g, err := New(c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		var buf []byte
		for i := range 3000 {
			var d target.Document
			d, buf = g.Next(buf[:0], 1_700_000_000_000_000+int64(i)*997)
			h.Write(d.JSON)
			if i%7 == 0 {
				k := Key{ID: d.ID, Seq: d.Seq, EventTime: d.EventTime}
				d, buf = g.Revise(buf[:0], k, 1+int64(i%3), 1_700_000_000_500_000+int64(i))
				h.Write(d.JSON)
			}
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != c.want {
			t.Errorf("%+v: documents' digest %s, want %s", c.cfg, got, c.want)
		}
	}
}
