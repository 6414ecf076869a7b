package docgen

import (
	"encoding/json"
	"testing"
)

func TestReviseKeepsTheKeyAndChangesThePayload(t *testing.T) {
	for _, shape := range Shapes {
		size := 1000
		if shape == ShapeNested {
			size = 9000
		}
		g, err := New(Config{DocSize: size, Shape: shape, Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		orig, _ := g.Next(nil, 1_700_000_000_000_000)
		k := Key{ID: orig.ID, Seq: orig.Seq, EventTime: orig.EventTime}
		upd, _ := g.Revise(nil, k, 3, 1_700_000_000_500_000)
		if upd.ID != k.ID || upd.Seq != k.Seq || upd.EventTime != k.EventTime || upd.Revision != 3 || upd.UpdateTime != 1_700_000_000_500_000 || upd.Generator != g.ID() {
			t.Fatalf("%s: revision document %+v does not carry the key %+v, revision 3 and its update time", shape, upd, k)
		}
		if g.Seq() != 1 {
			t.Errorf("%s: Revise moved the generator's _seq to %d, want 1", shape, g.Seq())
		}
		var m map[string]any
		if err := json.Unmarshal(upd.JSON, &m); err != nil {
			t.Fatalf("%s: revision is not JSON: %v", shape, err)
		}
		if m["_id"] != k.ID || m["_seq"] != float64(k.Seq) || m["_event_time"] != float64(k.EventTime) ||
			m["_revision"] != float64(3) || m["_update_time"] != float64(1_700_000_000_500_000) || m["generator_identifier"] != g.ID() {
			t.Errorf("%s: revision JSON fields %v %v %v %v %v", shape, m["_id"], m["_seq"], m["_event_time"], m["_revision"], m["_update_time"])
		}
		if string(upd.JSON[:len(`{"_id":"`)+len(k.ID)+2]) != `{"_id":"`+k.ID+`",` {
			t.Errorf("%s: revision does not start with its _id: %.60s", shape, upd.JSON)
		}
		if n := len(upd.JSON); n < size*97/100 || n > size*103/100 {
			t.Errorf("%s: revision is %d bytes, want %d ±3 %%", shape, n, size)
		}
		if string(upd.JSON) == string(orig.JSON) {
			t.Errorf("%s: revision has the inserted payload", shape)
		}
	}
}
