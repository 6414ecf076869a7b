package query

import (
	_ "embed"
	"fmt"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/freshbench/freshbench/target"
)

// kindsFile is where the shipped kinds are defined, as their errors and
// Where name it.
const kindsFile = "query/kinds.yaml"

//go:embed kinds.yaml
var kindsYAML string

// Kinds are the shipped query kinds (target.QueryKinds, in that order),
// written as a user writes a query of their own: a text per database
// family and the field each parameter is drawn from. They are parsed
// afresh on each call, so that no caller shares another's; a text that
// does not parse is a defect of this package, which its tests catch.
func Kinds() []Own {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(kindsYAML), &doc); err != nil {
		panic(fmt.Sprintf("%s: %v", kindsFile, err))
	}
	kinds, err := ParseOwn(kindsFile, doc.Content[0], func(line int, field string, err error) error {
		return fmt.Errorf("%s:%d: %s: %w", kindsFile, line, field, err)
	})
	if err != nil {
		panic(err)
	}
	return kinds
}

// Kind is the shipped query of kind; false for a name that is none.
func Kind(kind target.QueryKind) (Own, bool) {
	kinds := Kinds()
	i := slices.IndexFunc(kinds, func(o Own) bool { return o.Name == string(kind) })
	if i < 0 {
		return Own{}, false
	}
	return kinds[i], true
}

// KindField is the field of the written events a shipped kind draws its
// one value from; "" for a name that is no kind.
func KindField(kind target.QueryKind) string {
	o, ok := Kind(kind)
	if !ok || len(o.Params) == 0 {
		return ""
	}
	return o.Params[0].Field
}
