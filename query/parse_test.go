package query

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// parseOwn parses text's queries block as a file called q.yaml would.
func parseOwn(t *testing.T, text string) ([]Own, error) {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatal(err)
	}
	return ParseOwn("q.yaml", doc.Content[0].Content[1], func(line int, field string, err error) error {
		return fmt.Errorf("q.yaml:%d: %s: %w", line, field, err)
	})
}

// A query keeps its parameters in order, its texts by family (a search
// body written as YAML becomes JSON) and where it is defined.
func TestParseOwn(t *testing.T) {
	got, err := parseOwn(t, `queries:
  by-worker:
    params:
      worker: processBy
      mail: {field: emails, draw: recent}
    sqlite: SELECT doc FROM {table} WHERE json_extract(doc, '$.processBy') = :worker OR :mail = ''
    elasticsearch: {"query": {"term": {"processBy": "{{worker}}"}}, "size": "{{mail}}"}
`)
	if err != nil {
		t.Fatal(err)
	}
	want := []Own{{
		Name: "by-worker",
		Texts: map[string]string{
			"sqlite":        "SELECT doc FROM {table} WHERE json_extract(doc, '$.processBy') = :worker OR :mail = ''",
			"elasticsearch": `{"query":{"term":{"processBy":"{{worker}}"}},"size":"{{mail}}"}`,
		},
		Params: []Param{{Name: "worker", Field: "processBy"}, {Name: "mail", Field: "emails", Recent: true}},
		Where:  "q.yaml:2",
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parsed %+v\nwant %+v", got, want)
	}
}

// A bad queries block is refused at its line, naming the field.
func TestParseOwnErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"queries: [1]\n", "q.yaml:1: queries: want a mapping of query names"},
		{"queries:\n  a b:\n    sqlite: x\n", "q.yaml:2: queries.a b: a query's name is one word"},
		{"queries:\n  q: 1\n", "q.yaml:2: queries.q: want params and a text per database family"},
		{"queries:\n  q:\n    sqlite: x\n  q:\n    sqlite: y\n", "q.yaml:4: queries.q: given twice"},
		{"queries:\n  q:\n    mysql: x\n", "q.yaml:3: queries.q.mysql: unknown key: want params or a database family"},
		{"queries:\n  q:\n    params: {a: b}\n", "q.yaml:2: queries.q: no text"},
		{"queries:\n  q:\n    params: [a]\n    sqlite: x\n", "q.yaml:3: queries.q.params: want a mapping of parameter names"},
		{"queries:\n  q:\n    params: {a: {field: b, draw: newest}}\n    sqlite: x\n", `q.yaml:3: queries.q.params: a: draw "newest": want uniform or recent`},
		{"queries:\n  q:\n    params: {a: {draw: recent}}\n    sqlite: x\n", "q.yaml:3: queries.q.params: a: no field"},
		{"queries:\n  q:\n    params: {a: [b]}\n    sqlite: x\n", "q.yaml:3: queries.q.params: a: want a field path"},
	} {
		_, err := parseOwn(t, c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.text, err, c.want)
		}
	}
}
