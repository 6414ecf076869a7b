package elastic

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/freshbench/freshbench/target"
)

// TestSettings checks that a bad value is a bad setting (the command exits
// 2) and that the effective settings hold every knob, defaults included.
func TestSettings(t *testing.T) {
	u, _ := url.Parse("elasticsearch://h/idx")
	for _, set := range []map[string]string{{"shards": "abc"}, {"shards": "0"}, {"replicas": "-1"}, {"max_retries": "x"}, {"mapping": "strict"}, {"replication_type": "logical"}} {
		if _, err := parseConfig(u, target.Options{Settings: set}, envOf(nil)); !errors.Is(err, target.ErrBadSetting) {
			t.Errorf("%v: err = %v, want one wrapping ErrBadSetting", set, err)
		}
	}
	c, err := parseConfig(u, target.Options{Settings: map[string]string{"refresh_interval": "-1"}}, envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.generatorField() != "generator_identifier" {
		t.Errorf("probes filter on %s by default, want generator_identifier", c.generatorField())
	}
	got := (&Target{cfg: c}).Settings()
	want := map[string]string{"shards": "1", "replicas": "0", "refresh_interval": "-1", "max_retries": "5", "mapping": "freshbench", "replication_type": ""}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("effective %s = %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("effective settings %v, want %v", got, want)
	}
}

// mapping=dynamic creates the index with settings alone, and the probes
// filter on the keyword subfield that dynamic mapping adds to a string.
func TestMappingDynamic(t *testing.T) {
	u, _ := url.Parse("elasticsearch://h/idx")
	c, err := parseConfig(u, target.Options{Settings: map[string]string{"mapping": "Dynamic"}}, envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	tg := &Target{cfg: c}
	if got := tg.Settings()["mapping"]; got != MappingDynamic {
		t.Errorf("effective mapping %q, want %q", got, MappingDynamic)
	}
	def := tg.indexDefinition()
	if _, ok := def["mappings"]; ok || def["settings"] == nil {
		t.Errorf("index definition %v, want settings and no mappings", def)
	}
	if c.generatorField() != "generator_identifier.keyword" {
		t.Errorf("probes filter on %s, want generator_identifier.keyword", c.generatorField())
	}
}

// replication_type sets OpenSearch's index.replication.type when the index
// is created; Elasticsearch, which has no such setting, refuses it with an
// error that names the fix.
func TestReplicationType(t *testing.T) {
	osURL, _ := url.Parse("opensearch://h/idx")
	for in, want := range map[string]string{"segment": "SEGMENT", "Document": "DOCUMENT", "": ""} {
		c, err := parseConfig(osURL, target.Options{Settings: map[string]string{"replication_type": in}}, envOf(nil))
		if err != nil {
			t.Fatalf("replication_type=%q: %v", in, err)
		}
		index := (&Target{cfg: c}).indexDefinition()["settings"].(map[string]any)["index"].(map[string]any)
		if got, _ := index["replication.type"].(string); got != want {
			t.Errorf("replication_type=%q: index.replication.type %q, want %q", in, got, want)
		}
	}
	es, _ := url.Parse("elasticsearch://h/idx")
	for _, v := range []string{"segment", "document"} {
		_, err := parseConfig(es, target.Options{Settings: map[string]string{"replication_type": v}}, envOf(nil))
		if !errors.Is(err, target.ErrBadSetting) || !strings.Contains(err.Error(), "remove the setting") || strings.Contains(err.Error(), "\n") {
			t.Errorf("elasticsearch with replication_type=%s: err = %v, want one line wrapping ErrBadSetting that names the fix", v, err)
		}
	}
}
