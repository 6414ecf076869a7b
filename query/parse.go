package query

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ErrorAt builds the error for a problem at line of a file, with the
// field it is in (a dotted path from queries), so that the caller reports
// it as it reports its file's other problems.
type ErrorAt func(line int, field string, err error) error

// ParseOwn reads a queries block of the file at path: each query's name,
// its parameters and its text per database family,
//
//	queries:
//	  by-worker:
//	    params:
//	      worker: processBy                        # uniform over what was written
//	      mail: {field: emails, draw: recent}      # or among the newest values
//	    sqlite: SELECT doc FROM {table} WHERE json_extract(doc, '$.processBy') = :worker
//	    postgres: SELECT doc FROM {table} WHERE doc->>'processBy' = :worker
//	    elasticsearch: {"query": {"term": {"processBy": "{{worker}}"}}}
func ParseOwn(path string, m *yaml.Node, errorAt ErrorAt) ([]Own, error) {
	bad := func(n *yaml.Node, field, format string, args ...any) error {
		return errorAt(n.Line, field, fmt.Errorf(format, args...))
	}
	if m.Kind != yaml.MappingNode {
		return nil, bad(m, "queries", "want a mapping of query names to their params and texts")
	}
	var out []Own
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		name := "queries." + k.Value
		if slices.ContainsFunc(out, func(o Own) bool { return o.Name == k.Value }) {
			return nil, bad(k, name, "given twice")
		}
		if k.Value == "" || strings.ContainsAny(k.Value, ",= ") {
			return nil, bad(k, name, "a query's name is one word without , or =, as the mix names it")
		}
		if v.Kind != yaml.MappingNode {
			return nil, bad(v, name, "want params and a text per database family (%s)", strings.Join(Families, ", "))
		}
		o := Own{Name: k.Value, Texts: map[string]string{}, Where: fmt.Sprintf("%s:%d", path, k.Line)}
		for j := 0; j+1 < len(v.Content); j += 2 {
			kk, vv := v.Content[j], v.Content[j+1]
			field := name + "." + kk.Value
			switch {
			case kk.Value == "params":
				ps, err := params(vv, func(n *yaml.Node, format string, args ...any) error {
					return bad(n, field, format, args...)
				})
				if err != nil {
					return nil, err
				}
				o.Params = ps
			case slices.Contains(Families, kk.Value):
				text, err := queryText(vv)
				if err != nil {
					return nil, bad(vv, field, "%v", err)
				}
				o.Texts[kk.Value] = text
			default:
				return nil, bad(kk, field, "unknown key: want params or a database family (%s)", strings.Join(Families, ", "))
			}
		}
		if len(o.Texts) == 0 {
			return nil, bad(k, name, "no text: add one per database family it runs on (%s)", strings.Join(Families, ", "))
		}
		out = append(out, o)
	}
	return out, nil
}

// params reads a query's parameters: name: FIELD, or name: {field: FIELD,
// draw: uniform|recent}.
func params(m *yaml.Node, bad func(*yaml.Node, string, ...any) error) ([]Param, error) {
	if m.Kind != yaml.MappingNode {
		return nil, bad(m, "want a mapping of parameter names to the fields their values come from")
	}
	var out []Param
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		p := Param{Name: k.Value}
		switch v.Kind {
		case yaml.ScalarNode:
			p.Field = v.Value
		case yaml.MappingNode:
			for j := 0; j+1 < len(v.Content); j += 2 {
				kk, vv := v.Content[j], v.Content[j+1]
				switch {
				case kk.Value == "field" && vv.Kind == yaml.ScalarNode:
					p.Field = vv.Value
				case kk.Value == "draw" && (vv.Value == "uniform" || vv.Value == "recent"):
					p.Recent = vv.Value == "recent"
				case kk.Value == "draw":
					return nil, bad(vv, "%s: draw %q: want uniform or recent", k.Value, vv.Value)
				default:
					return nil, bad(kk, "%s: unknown key %q: want field and draw", k.Value, kk.Value)
				}
			}
		default:
			return nil, bad(v, "%s: want a field path, or {field: PATH, draw: uniform|recent}", k.Value)
		}
		if p.Field == "" {
			return nil, bad(v, "%s: no field: give the field of the written events its values come from, e.g. processBy or user.name", k.Value)
		}
		out = append(out, p)
	}
	return out, nil
}

// queryText is a query's text: a string, or a search body written as YAML.
func queryText(n *yaml.Node) (string, error) {
	if n.Kind == yaml.ScalarNode {
		return n.Value, nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return "", err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("a search body written as YAML must be JSON's: %w", err)
	}
	return string(b), nil
}
