package redact

import "testing"

func TestURLForms(t *testing.T) {
	for raw, want := range map[string]string{
		"sim://?visibility_delay=300ms":                      "sim://?visibility_delay=300ms",
		"discard://":                                         "discard://",
		"sqlite:///tmp/x/freshbench.db":                      "sqlite:///tmp/x/freshbench.db",
		"elasticsearch://elastic:s3cret@127.0.0.1:9200/idx":  "elasticsearch://elastic:xxxxx@127.0.0.1:9200/idx",
		"postgres://u@127.0.0.1/db?password=s3cret&table=t":  "postgres://u@127.0.0.1/db?password=xxxxx&table=t",
		"opensearch+https://127.0.0.1:9200/i?api_key=s3cret": "opensearch+https://127.0.0.1:9200/i?api_key=xxxxx",
		"postgres://u:pw@127.0.0.1:5432/db?table=events":     "postgres://u:xxxxx@127.0.0.1:5432/db?table=events",
	} {
		if got := URL(raw); got != want {
			t.Errorf("URL(%q) = %q, want %q", raw, got, want)
		}
	}
}
