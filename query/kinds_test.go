package query

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/freshbench/freshbench/invalid"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/sim"
)

// The shipped kinds are target.QueryKinds, in that order, each with one
// parameter and a text for every family that compiles at any limit; the
// field each draws from is the one its meaning names.
func TestShippedKinds(t *testing.T) {
	kinds := Kinds()
	names := make([]target.QueryKind, len(kinds))
	for i, k := range kinds {
		names[i] = target.QueryKind(k.Name)
	}
	if !slices.Equal(names, target.QueryKinds()) {
		t.Fatalf("shipped kinds %v, want %v", names, target.QueryKinds())
	}
	for _, k := range kinds {
		if len(k.Params) != 1 || k.Params[0].Recent {
			t.Errorf("%s: params %+v; want one, drawn uniformly", k.Name, k.Params)
		}
		if !strings.HasPrefix(k.Where, kindsFile+":") {
			t.Errorf("%s: defined at %q; want %s:LINE", k.Name, k.Where, kindsFile)
		}
		for _, f := range Families {
			if _, err := k.compile(f, 3); err != nil {
				t.Errorf("%s on %s: %v", k.Name, f, err)
			}
		}
	}
	for kind, field := range map[target.QueryKind]string{
		target.QueryPoint: "processBy", target.QueryArray: "emails", target.QueryAggregate: "company",
		target.QueryNewest: "generator_identifier", target.QueryBucket: "generator_identifier", "nokind": "",
	} {
		if got := KindField(kind); got != field {
			t.Errorf("KindField(%s) = %q, want %q", kind, got, field)
		}
	}
	// Each call parses afresh: a caller's change is its own.
	Kinds()[0].Texts["sqlite"] = "changed"
	if o, _ := Kind(target.QueryPoint); o.Texts["sqlite"] == "changed" {
		t.Error("a change to one call's kinds shows in the next")
	}
}

// A query of one's own without a sim text, or with one the simulator
// cannot run, is refused before a run on the simulator in one line that
// names the query, where it is defined and the fix; the shipped kinds
// pass.
func TestCheckOwnSim(t *testing.T) {
	tgt := sim.New(sim.Config{})
	ctx := context.Background()
	shipped := Config{Mix: DefaultMix(), Limit: 10}
	shipped.Mix = append(shipped.Mix, Weighted{Kind: target.QueryBucket, Weight: 1})
	if err := CheckOwn(ctx, tgt, shipped); err != nil {
		t.Errorf("shipped kinds: %v", err)
	}
	for text, want := range map[string]string{
		"":                     "query q: (w.yaml:7) has no text for sim (it has postgres); add a sim: text under it, or leave it out of the mix on this target",
		"SELECT :v":            `query q: (w.yaml:7) sim cannot run it: sim query q: "SELECT $1" is no text the simulator runs; want newest :generator :limit, bucket :generator :limit, or none :param`,
		"newest :v":            `query q: (w.yaml:7) sim cannot run it: sim query q: "newest $1" is no text the simulator runs`,
		"newest :v :limit":     "",
		"none :v":              "",
		"bucket :v :limit now": `"bucket $1 10 now" is no text the simulator runs`,
	} {
		texts := map[string]string{"postgres": "SELECT :v"}
		if text != "" {
			texts["sim"] = text
		}
		cfg := Config{Mix: Mix{{Kind: "q", Weight: 1}}, Own: []Own{*own(texts, Param{Name: "v", Field: "a"})}, Limit: 10}
		err := CheckOwn(ctx, tgt, cfg)
		if want == "" {
			if err != nil {
				t.Errorf("%q: %v", text, err)
			}
			continue
		}
		if _, ok := invalid.As(err); !ok || !strings.Contains(err.Error(), want) || !strings.HasSuffix(err.Error(), "fix its sim text") && text != "" || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v; want one line of bad input saying %q", text, err, want)
		}
	}
}
