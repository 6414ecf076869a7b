package elastic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/freshbench/freshbench/target"
)

// probeFields are the fields freshbench stamps into every event and that
// its probes filter, sort or count on, with the types they need: Setup
// maps them so on every index it creates, whatever else is mapped.
var probeFields = map[string]string{
	"generator_identifier": "keyword",
	"_event_time":          "long",
	"_seq":                 "long",
	"_revision":            "long",
	"_update_time":         "long",
}

// probeFieldsText lists probeFields with their types, for the layout.
const probeFieldsText = "generator_identifier keyword; _event_time, _seq, _revision, _update_time long"

// userMapping is a user's mapping file merged with probeFields.
type userMapping struct {
	file     string
	mappings map[string]any // the create-index request's "mappings"
	fields   int            // top-level fields the file maps
	added    int            // probe fields the file did not map (merged in)
}

// readUserMapping reads the mapping file named by the mapping setting:
// a JSON object, either {"mappings":{…}} (as a create-index body has it)
// or the mappings body itself ({"properties":{…}, …}). The probe fields
// are merged into its properties; a file that maps one of them otherwise
// is refused, because the probes would then miss or fail.
func readUserMapping(file string) (*userMapping, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, badMapping(file, "%v; give a readable JSON mapping file, or mapping=%s or mapping=%s", unwrapPath(err), MappingFreshbench, MappingDynamic)
	}
	return parseUserMapping(file, b)
}

func parseUserMapping(file string, b []byte) (*userMapping, error) {
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, badMapping(file, "line %d: %v; write one JSON object, {\"mappings\":{…}} or {\"properties\":{…}}", jsonErrorLine(b, err), err)
	}
	if doc == nil {
		return nil, badMapping(file, "not a JSON object; write {\"mappings\":{…}} or {\"properties\":{…}}")
	}
	mappings := doc
	if m, ok := doc["mappings"]; ok {
		if len(doc) != 1 {
			return nil, badMapping(file, "has %s beside \"mappings\"; give the mappings alone (index settings are target settings: shards, replicas, refresh_interval)",
				strings.Join(otherKeys(doc, "mappings"), ", "))
		}
		if mappings, ok = m.(map[string]any); !ok {
			return nil, badMapping(file, "\"mappings\" is not an object; write {\"mappings\":{\"properties\":{…}}}")
		}
	}
	props := map[string]any{}
	if p, ok := mappings["properties"]; ok {
		if props, ok = p.(map[string]any); !ok {
			return nil, badMapping(file, "\"properties\" is not an object; write {\"properties\":{\"field\":{\"type\":…}}}")
		}
	} else if _, wrapped := doc["mappings"]; !wrapped {
		return nil, badMapping(file, "has neither \"mappings\" nor \"properties\"; write {\"mappings\":{…}} or {\"properties\":{…}}")
	}
	um := &userMapping{file: file, mappings: mappings, fields: len(props)}
	for _, f := range slices.Sorted(maps.Keys(probeFields)) {
		want := probeFields[f]
		given, ok := props[f]
		if !ok {
			props[f] = map[string]any{"type": want}
			um.added++
			continue
		}
		if got := fieldType(given); got != want {
			return nil, badMapping(file, "maps %s as %s, freshbench's probes need it %s; remove %s from the file (freshbench maps it) or map it as %s",
				f, got, want, f, want)
		}
	}
	mappings["properties"] = props
	return um, nil
}

// fieldType is the type a property's mapping gives, as the server would
// read it: an object without a type is an object.
func fieldType(mapping any) string {
	m, ok := mapping.(map[string]any)
	if !ok {
		return "not a mapping"
	}
	if t, ok := m["type"].(string); ok {
		return t
	}
	return "object"
}

// badMapping is the one-line error of a mapping file the user must fix.
func badMapping(file, format string, a ...any) error {
	return fmt.Errorf("%w mapping=%s: %s", target.ErrBadSetting, file, fmt.Sprintf(format, a...))
}

func otherKeys(m map[string]any, except string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k != except {
			out = append(out, fmt.Sprintf("%q", k))
		}
	}
	return out
}

// unwrapPath drops the path a *os.PathError repeats (the message names
// the file already).
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// jsonErrorLine is the line of b at which decoding failed (1 when the
// error has no offset).
func jsonErrorLine(b []byte, err error) int {
	var off int64
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	off = min(off, int64(len(b)))
	return 1 + bytes.Count(b[:off], []byte("\n"))
}
