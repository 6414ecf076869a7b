// Package workload reads workload files: the flags of one freshbench
// command (run, peak or query) written once in YAML, each with the line
// it came from, so that a bad value is reported where it stands; and the
// presets, workload files shipped inside the binary that replay the
// published setups freshbench stands on.
//
// A file names flags as the command line does, without the dashes, so
// that every knob is declared once, by its flag:
//
//	description: one line on what it measures
//	source: the setup it replays
//	command: run
//	flags:
//	  rate: 4000
//	  batch-size: 50
//	  levels: [4000, 8000, 12000]   # a list is joined with commas
//	  set:                          # a mapping sets a repeatable key=value flag
//	    refresh_interval: 1s
//	  read-endpoint:                # a list of a repeatable flag sets it once each
//	    - opensearch://127.0.0.1:19213/freshbench
//
// Which flag takes a list joined with commas and which takes each item
// on its own is the command's to say (see Entry).
package workload

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/freshbench/freshbench/query"
)

// File is one workload file.
type File struct {
	Path        string // where it was read from; preset:NAME for a preset
	Description string
	Source      string
	Command     string  // the command it is for; "" for any
	Flags       []Entry // in the order written
	Queries     []query.Own
}

// Entry is one flag of a file. Values holds a scalar as written, each
// item of a list, or each key: value pair of a mapping as "key=value".
type Entry struct {
	Name   string
	Values []string
	List   bool // written as a list
	Line   int
}

// Joined is the entry's values as one flag value: a list joined with
// commas, for the flags that take one (levels, mix, …).
func (e Entry) Joined() string { return strings.Join(e.Values, ",") }

// Error is a problem with a file at one line.
type Error struct {
	Path  string
	Line  int
	Field string // "" when the problem is not with one field
	Err   error
}

func (e *Error) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s:%d: %v", e.Path, e.Line, e.Err)
	}
	return fmt.Sprintf("%s:%d: %s: %v", e.Path, e.Line, e.Field, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Read reads and parses the workload file at path.
func Read(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("workload file: %w", err)
	}
	return Parse(path, data)
}

// Parse parses a workload file's data; path names it in errors.
func Parse(path string, data []byte) (*File, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, yamlError(path, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, &Error{Path: path, Line: max(doc.Line, 1), Err: errors.New("want a mapping with description, source, command and flags")}
	}
	f := &File{Path: path}
	top := doc.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		bad := func(format string, args ...any) error {
			return &Error{Path: path, Line: v.Line, Field: k.Value, Err: fmt.Errorf(format, args...)}
		}
		switch k.Value {
		case "description", "source", "command":
			if v.Kind != yaml.ScalarNode {
				return nil, bad("want a single value")
			}
			switch k.Value {
			case "description":
				f.Description = v.Value
			case "source":
				f.Source = v.Value
			default:
				if !slices.Contains(Commands, v.Value) {
					return nil, bad("%q is not one of %s", v.Value, strings.Join(Commands, ", "))
				}
				f.Command = v.Value
			}
		case "queries":
			qs, err := query.ParseOwn(path, v, func(line int, field string, err error) error {
				return &Error{Path: path, Line: line, Field: field, Err: err}
			})
			if err != nil {
				return nil, err
			}
			f.Queries = qs
		case "flags":
			if v.Kind != yaml.MappingNode {
				return nil, bad("want a mapping of flag names (as on the command line, without dashes) to values")
			}
			entries, err := flags(path, v)
			if err != nil {
				return nil, err
			}
			f.Flags = entries
		default:
			return nil, &Error{Path: path, Line: k.Line, Field: k.Value, Err: errors.New("unknown field: want description, source, command, flags or queries")}
		}
	}
	return f, nil
}

// Commands are the commands a workload file can drive.
var Commands = []string{"run", "peak", "query", "isolation"}

func flags(path string, m *yaml.Node) ([]Entry, error) {
	var out []Entry
	seen := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		name := strings.TrimLeft(k.Value, "-")
		if line, dup := seen[name]; dup {
			return nil, &Error{Path: path, Line: k.Line, Field: name, Err: fmt.Errorf("given twice (first at line %d)", line)}
		}
		seen[name] = k.Line
		e := Entry{Name: name, Line: k.Line}
		bad := func(format string, args ...any) error {
			return &Error{Path: path, Line: v.Line, Field: name, Err: fmt.Errorf(format, args...)}
		}
		switch v.Kind {
		case yaml.ScalarNode:
			e.Values = []string{v.Value}
		case yaml.SequenceNode:
			e.List = true
			for _, item := range v.Content {
				if item.Kind != yaml.ScalarNode {
					return nil, bad("a list of single values, please")
				}
				e.Values = append(e.Values, item.Value)
			}
		case yaml.MappingNode:
			for j := 0; j+1 < len(v.Content); j += 2 {
				kk, vv := v.Content[j], v.Content[j+1]
				if vv.Kind != yaml.ScalarNode {
					return nil, bad("%s: want a single value", kk.Value)
				}
				e.Values = append(e.Values, kk.Value+"="+vv.Value)
			}
		default:
			return nil, bad("want a value, a list or a mapping")
		}
		out = append(out, e)
	}
	return out, nil
}

// yamlError gives a YAML syntax error the file's name; the parser's
// message names the line already.
func yamlError(path string, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		return fmt.Errorf("%s: %s", path, strings.Join(te.Errors, "; "))
	}
	return fmt.Errorf("%s: %w", path, err)
}
