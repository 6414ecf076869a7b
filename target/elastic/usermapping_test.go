package elastic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/freshbench/freshbench/target"
)

// writeMapping writes a mapping file for a test and returns its name.
func writeMapping(t *testing.T, body string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "mapping.json")
	if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// openMapping parses the configuration of a target with mapping=file.
func openMapping(file string) (*Target, error) {
	u, _ := url.Parse("elasticsearch://h/idx")
	c, err := parseConfig(u, target.Options{Settings: map[string]string{"mapping": file}}, envOf(nil))
	if err != nil {
		return nil, err
	}
	return &Target{cfg: c}, nil
}

// userMappingBody is a user's mapping with a keyword field, an object the
// server must not index, a probe field mapped as freshbench maps it, and
// a dynamic setting of its own.
const userMappingBody = `{"dynamic":"strict","properties":{
	"status":{"type":"keyword"},
	"payload":{"type":"object","enabled":false},
	"_seq":{"type":"long"}}}`

// A mapping file, in either form, is created with its own fields and
// settings and every field the probes need, with the types they need.
func TestUserMappingMerged(t *testing.T) {
	for name, body := range map[string]string{
		"properties": userMappingBody,
		"mappings":   `{"mappings":` + userMappingBody + `}`,
	} {
		t.Run(name, func(t *testing.T) {
			file := writeMapping(t, body)
			tg, err := openMapping(file)
			if err != nil {
				t.Fatal(err)
			}
			if got := tg.Settings()["mapping"]; got != file {
				t.Errorf("effective mapping %q, want the file %q", got, file)
			}
			if tg.cfg.generatorField() != "generator_identifier" {
				t.Errorf("probes filter on %s, want generator_identifier", tg.cfg.generatorField())
			}
			def, err := json.Marshal(tg.indexDefinition())
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Settings map[string]any `json:"settings"`
				Mappings struct {
					Dynamic    string `json:"dynamic"`
					Properties map[string]struct {
						Type    string `json:"type"`
						Enabled *bool  `json:"enabled"`
					} `json:"properties"`
				} `json:"mappings"`
			}
			if err := json.Unmarshal(def, &got); err != nil {
				t.Fatal(err)
			}
			m := got.Mappings
			if m.Dynamic != "strict" || m.Properties["status"].Type != "keyword" || m.Properties["payload"].Enabled == nil || *m.Properties["payload"].Enabled {
				t.Errorf("index definition %s lost the user's mapping", def)
			}
			for f, typ := range probeFields {
				if m.Properties[f].Type != typ {
					t.Errorf("index definition maps %s as %q, want %s: %s", f, m.Properties[f].Type, typ, def)
				}
			}
			if len(m.Properties) != 2+len(probeFields) || got.Settings == nil {
				t.Errorf("index definition %s: want the user's 3 fields and the 4 probe fields it lacks, and the settings", def)
			}
			layout := tg.Layout()
			for _, want := range []string{file, "3 top-level fields", fmt.Sprintf("freshbench's %d fields", len(probeFields)), "4 of them added"} {
				if !strings.Contains(layout, want) {
					t.Errorf("layout %q does not say %q", layout, want)
				}
			}
		})
	}
}

// A mapping file that the probes could not work with, or that is not a
// mapping, is refused in one line that names the file, the fault and the
// fix, as a bad setting (exit 2).
func TestUserMappingRefused(t *testing.T) {
	for _, c := range []struct {
		name, body string
		want       []string
	}{
		{"generator text", `{"properties":{"generator_identifier":{"type":"text"}}}`,
			[]string{"generator_identifier as text", "need it keyword", "remove generator_identifier"}},
		{"seq keyword", `{"mappings":{"properties":{"_seq":{"type":"keyword"}}}}`,
			[]string{"_seq as keyword", "need it long", "map it as long"}},
		{"event time object", `{"properties":{"_event_time":{"properties":{"ms":{"type":"long"}}}}}`,
			[]string{"_event_time as object"}},
		{"update time not a mapping", `{"properties":{"_update_time":"long"}}`,
			[]string{"_update_time as not a mapping"}},
		{"syntax", "{\"properties\":{\n\"a\":{\"type\":\"keyword\"},\n}}", []string{"line 3", "one JSON object"}},
		{"array", `[{"properties":{}}]`, []string{"line 1", "one JSON object"}},
		{"null", `null`, []string{"not a JSON object"}},
		{"neither", `{"status":{"type":"keyword"}}`, []string{`neither "mappings" nor "properties"`}},
		{"settings beside", `{"settings":{"number_of_shards":2},"mappings":{"properties":{}}}`, []string{`"settings" beside "mappings"`, "target settings"}},
		{"mappings not object", `{"mappings":[]}`, []string{`"mappings" is not an object`}},
		{"properties not object", `{"properties":"x"}`, []string{`"properties" is not an object`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := writeMapping(t, c.body)
			_, err := openMapping(file)
			if err == nil {
				t.Fatalf("mapping %s accepted", c.body)
			}
			msg := err.Error()
			if !errors.Is(err, target.ErrBadSetting) || strings.Contains(msg, "\n") || !strings.Contains(msg, "mapping="+file) {
				t.Errorf("err = %v, want one line wrapping ErrBadSetting that names mapping=%s", err, file)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("err = %v, want it to say %q", err, w)
				}
			}
		})
	}
	missing := filepath.Join(t.TempDir(), "absent.json")
	if _, err := openMapping(missing); !errors.Is(err, target.ErrBadSetting) || !strings.Contains(err.Error(), missing+": no such file") {
		t.Errorf("missing file: err = %v, want a bad setting naming the file and that it is missing", err)
	}
}

// On a real server, an index created with a mapping file has the user's
// fields as the file maps them and the probe fields freshbench merged in,
// as the server reports them (GET _mapping), and the probes find the
// events written to it.
func TestServerUserMapping(t *testing.T) {
	forEachServer(t, func(t *testing.T, s testServer) {
		ctx := context.Background()
		file := writeMapping(t, `{"mappings":{"properties":{"status":{"type":"keyword"},"payload":{"type":"object","enabled":false}}}}`)
		tg := openTest(t, s, target.Options{Settings: map[string]string{"mapping": file, "refresh_interval": "200ms"}})
		if err := tg.Setup(ctx); err != nil {
			t.Fatal(err)
		}
		res, err := tg.do(ctx, http.MethodGet, "/"+tg.ip+"/_mapping", "", nil)
		if err != nil || !is2xx(res.status) {
			t.Fatalf("get mapping: %v %s", err, res.body)
		}
		var indices map[string]struct {
			Mappings struct {
				Properties map[string]struct {
					Type    string `json:"type"`
					Enabled *bool  `json:"enabled"`
				} `json:"properties"`
			} `json:"mappings"`
		}
		if err := json.Unmarshal(res.body, &indices); err != nil || len(indices) != 1 {
			t.Fatalf("decode mapping %s: %v", res.body, err)
		}
		for _, idx := range indices {
			p := idx.Mappings.Properties
			if p["status"].Type != "keyword" || p["payload"].Enabled == nil || *p["payload"].Enabled {
				t.Errorf("server maps status %+v, payload %+v; want the file's keyword and disabled object: %s", p["status"], p["payload"], res.body)
			}
			for f, typ := range probeFields {
				if p[f].Type != typ {
					t.Errorf("server maps %s as %q, want %s: %s", f, p[f].Type, typ, res.body)
				}
			}
		}

		const n = 5
		gen := "user-mapping"
		var docs []target.Document
		for i := range n {
			d := doc(fmt.Sprintf("um-%d", i), gen, int64(i), "")
			d.JSON = fmt.Appendf(nil, `{"_id":%q,"_event_time":%d,"generator_identifier":%q,"_seq":%d,"status":"ok","payload":{"deep":{"x":[1,"a"]}}}`, d.ID, d.EventTime, gen, i)
			docs = append(docs, d)
		}
		if res, err := tg.Write(ctx, target.Batch{Generator: gen, Docs: docs}); err != nil || res.Acknowledged != n {
			t.Fatalf("write: %+v %v", res, err)
		}
		eventually(t, "every event visible", func() (bool, string) {
			c, err := tg.Count(ctx, gen)
			if err != nil {
				t.Fatal(err)
			}
			return c == n, fmt.Sprintf("count %d of %d", c, n)
		})
		// The payload is kept but not indexed: dynamic mapping added
		// nothing under it.
		if got := fieldTypes(t, tg, "payload.deep.x"); got["payload.deep.x"] != "" {
			t.Errorf("payload.deep.x mapped as %q, want nothing under a disabled object", got["payload.deep.x"])
		}
	})
}
