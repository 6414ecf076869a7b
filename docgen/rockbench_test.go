package docgen

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
)

// levelStats is what the hand-written RockBench shape wrote at a size
// (testdata/rockbench-levels.json, made from it at main 26cb8a8 by
// testdata/rockbench_levels_main.go.txt): every event's field paths with
// their kinds, and the lengths of its arrays and of friends.
type levelStats struct {
	Size   int             `json:"size"`
	Fields []string        `json:"fields"`
	Counts map[string]span `json:"counts"`
}

type span struct {
	Min, Max int
	Mean     float64
}

// The RockBench shape is its shipped template at every size, and the
// template keeps what the hand-written shape it replaced had, size by
// size, at the sizes where a field joined and around them (400, 1000,
// 1250, 2600, 10000 among them): the same fields with values of the same
// kinds in every event, the same least and most tags, emails, ratings and
// friends with means within five standard errors, and the size to the
// byte (over only with an empty filler, in at most 1 % of events).
func TestRockBenchLevels(t *testing.T) {
	data, err := os.ReadFile("testdata/rockbench-levels.json")
	if err != nil {
		t.Fatal(err)
	}
	var levels []levelStats
	if err := json.Unmarshal(data, &levels); err != nil {
		t.Fatal(err)
	}
	const n = 500
	for _, want := range levels {
		g := mustNew(t, Config{DocSize: want.Size, Seed: 77})
		sums := map[string]int{}
		got := map[string]span{}
		over := 0
		for i := range n {
			d, _ := g.Next(nil, t0+int64(i))
			m := decode(t, d.JSON)
			if fields := fieldPaths(m); !slices.Equal(fields, want.Fields) {
				t.Fatalf("size %d: fields differ from the hand-written shape's: %v", want.Size, pathDiff(fields, want.Fields))
			}
			switch l := len(d.JSON); {
			case l < want.Size:
				t.Fatalf("size %d: event of %d bytes", want.Size, l)
			case l > want.Size:
				if m["greeting"] != "" && m["description"] != "" {
					t.Fatalf("size %d: event of %d bytes with a filler: %s", want.Size, l, d.JSON)
				}
				over++
			}
			for k, c := range counts(m) {
				s, seen := got[k]
				if !seen {
					s = span{Min: c, Max: c}
				}
				s.Min, s.Max = min(s.Min, c), max(s.Max, c)
				got[k] = s
				sums[k] += c
			}
		}
		if over > n/100 {
			t.Errorf("size %d: %d of %d events over", want.Size, over, n)
		}
		if len(got) != len(want.Counts) {
			t.Errorf("size %d: counts of %v, the hand-written shape's of %v", want.Size, got, want.Counts)
		}
		for k, w := range want.Counts {
			s := got[k]
			sd := math.Sqrt((math.Pow(float64(w.Max-w.Min+1), 2) - 1) / 12) // of a uniform draw
			mean := float64(sums[k]) / n
			if s.Min != w.Min || s.Max != w.Max || math.Abs(mean-w.Mean) > 5*sd/math.Sqrt(n)+1e-9 {
				t.Errorf("size %d: %s %d..%d, mean %.2f; the hand-written shape %d..%d, mean %.2f", want.Size, k, s.Min, s.Max, mean, w.Min, w.Max, w.Mean)
			}
		}
	}
}

// counts are the lengths the levels test holds: tags, emails, ratings
// and friends, where the event has them.
func counts(m map[string]any) map[string]int {
	c := map[string]int{}
	for _, k := range []string{"tags", "emails", "ratings"} {
		if a, ok := m[k].([]any); ok {
			c[k] = len(a)
		}
	}
	if f, ok := m["friends"].(map[string]any); ok {
		c["friends"] = len(f)
	}
	return c
}

// fieldPaths lists v's paths with their kinds, sorted: objects by member,
// arrays by their first element.
func fieldPaths(v any) []string {
	var out []string
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(prefix+"."+k, e)
			}
		case []any:
			out = append(out, prefix+": array")
			if len(x) > 0 {
				walk(prefix+"[0]", x[0])
			}
		default:
			out = append(out, fmt.Sprintf("%s: %s", prefix, kind(v)))
		}
	}
	walk("", v)
	slices.Sort(out)
	return out
}

// pathDiff says which paths one list has and the other lacks.
func pathDiff(got, want []string) string {
	var extra, missing []string
	for _, p := range got {
		if !slices.Contains(want, p) {
			extra = append(extra, p)
		}
	}
	for _, p := range want {
		if !slices.Contains(got, p) {
			missing = append(missing, p)
		}
	}
	return fmt.Sprintf("extra %v, missing %v", extra, missing)
}

// The RockBench shape is the shipped rockbench template at the configured
// size: the same events, byte for byte, as the template at its own size
// (the default), and every size the hand-written shape took, from 400
// bytes, still works; a smaller one is refused naming the range.
func TestRockBenchShapeIsTheShippedTemplate(t *testing.T) {
	tm := mustShipped(t, "rockbench")
	if tm.MeanSize() != DefaultDocSize {
		t.Fatalf("the shipped template's size %d, want the default %d", tm.MeanSize(), DefaultDocSize)
	}
	shape := mustNew(t, Config{Seed: 6})
	tmpl := mustNew(t, Config{Template: tm, Seed: 6})
	if a, b := digest(shape, true), digest(tmpl, true); a != b {
		t.Fatalf("the RockBench shape's events (digest %s) are not the shipped template's (%s)", a, b)
	}
	if least := MinSize(ShapeRockBench); least > MinDocSize {
		t.Fatalf("the template's least size %d is over %d, the least the hand-written shape took", least, MinDocSize)
	}
	_, err := New(Config{DocSize: MinDocSize - 1})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("accepted %d..%d bytes", MinDocSize, MaxDocSize)) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("size %d: error %v, want one line naming the least size %d", MinDocSize-1, err, MinDocSize)
	}
}
