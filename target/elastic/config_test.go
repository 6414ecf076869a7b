package elastic

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/freshbench/freshbench/target"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestParseConfig(t *testing.T) {
	tests := []struct {
		raw      string
		opts     target.Options
		env      map[string]string
		product  string
		https    bool
		host     string
		index    string
		user     string
		pass     string
		apiKey   string
		wantErr  string
		badURLEr bool
	}{
		{raw: "elasticsearch://127.0.0.1:19200/idx", product: Elasticsearch, host: "127.0.0.1:19200", index: "idx"},
		{raw: "opensearch://localhost/idx", product: OpenSearch, host: "localhost:9200", index: "idx"},
		{raw: "elasticsearch+https://h:9243/idx", product: Elasticsearch, https: true, host: "h:9243", index: "idx"},
		{raw: "opensearch+https://[::1]:9200/idx/", product: OpenSearch, https: true, host: "[::1]:9200", index: "idx"},
		{raw: "elasticsearch://u:p%40ss@h/idx", product: Elasticsearch, host: "h:9200", index: "idx", user: "u", pass: "p@ss"},
		{
			raw: "elasticsearch://h/idx", env: map[string]string{"FRESHBENCH_ES_API_KEY": "k", "FRESHBENCH_ES_USERNAME": "u"},
			product: Elasticsearch, host: "h:9200", index: "idx", apiKey: "k",
		},
		{
			raw: "elasticsearch://h/idx", env: map[string]string{"FRESHBENCH_ES_USERNAME": "eu", "FRESHBENCH_ES_PASSWORD": "ep"},
			product: Elasticsearch, host: "h:9200", index: "idx", user: "eu", pass: "ep",
		},
		{
			raw: "opensearch://h/idx", env: map[string]string{"FRESHBENCH_ES_API_KEY": "k", "FRESHBENCH_OS_USERNAME": "ou", "FRESHBENCH_OS_PASSWORD": "op"},
			product: OpenSearch, host: "h:9200", index: "idx", user: "ou", pass: "op",
		},
		{raw: "elasticsearch://h/", wantErr: "missing index name", badURLEr: true},
		{raw: "elasticsearch://h/Idx", wantErr: "lowercase", badURLEr: true},
		{raw: "elasticsearch://h/_idx", wantErr: "must not start", badURLEr: true},
		{raw: "elasticsearch://h/a/b", wantErr: "must not contain", badURLEr: true},
		{raw: "elasticsearch://h/idx?tls=true", wantErr: "query parameters", badURLEr: true},
		{raw: "elasticsearch://h:99999/idx", wantErr: "invalid port", badURLEr: true},
		{raw: "solr://h/idx", wantErr: "scheme", badURLEr: true},
		{raw: "elasticsearch://h/idx", opts: target.Options{CACert: "/ca.pem"}, wantErr: "+https", badURLEr: true},
		{raw: "elasticsearch://h/idx", opts: target.Options{Settings: map[string]string{"shards": "0"}}, wantErr: "shards"},
		{raw: "elasticsearch://h/idx", opts: target.Options{Settings: map[string]string{"replicas": "x"}}, wantErr: "replicas"},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			u, err := url.Parse(tc.raw)
			if err != nil {
				t.Fatal(err)
			}
			c, err := parseConfig(u, tc.opts, envOf(tc.env))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				if tc.badURLEr && !errors.Is(err, target.ErrBadURL) {
					t.Errorf("err = %v, want ErrBadURL", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.product != tc.product || c.https != tc.https || c.host != tc.host || c.index != tc.index {
				t.Errorf("got product=%s https=%v host=%s index=%s", c.product, c.https, c.host, c.index)
			}
			if c.username != tc.user || c.password != tc.pass || c.apiKey != tc.apiKey {
				t.Errorf("got user=%q pass=%q apiKey=%q", c.username, c.password, c.apiKey)
			}
		})
	}
}

func TestParseConfigDefaultsAndSettings(t *testing.T) {
	u, _ := url.Parse("elasticsearch://h/idx")
	c, err := parseConfig(u, target.Options{}, envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.shards != 1 || c.replicas != 0 || c.refreshInterval != "1s" || c.timeout != 30*time.Second || c.maxRetries != 5 {
		t.Errorf("defaults: %+v", c)
	}
	c, err = parseConfig(u, target.Options{
		RequestTimeout: 2500 * time.Millisecond,
		Settings:       map[string]string{"shards": "3", "replicas": "1", "refresh_interval": "200ms", "max_retries": "0"},
	}, envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.shards != 3 || c.replicas != 1 || c.refreshInterval != "200ms" || c.timeout != 2500*time.Millisecond || c.maxRetries != 0 {
		t.Errorf("settings: %+v", c)
	}
}

// A password must not leak into any message, even for a bad URL.
func TestCredentialsNotInErrors(t *testing.T) {
	r := target.NewRegistry()
	Register(r)
	for _, raw := range []string{
		"elasticsearch://user:s3cret@127.0.0.1:19200/BAD",
		"opensearch://user:s3cret@127.0.0.1:19200/idx?x=1",
	} {
		_, err := r.Open(context.Background(), raw, target.Options{})
		if err == nil {
			t.Fatalf("%s: want an error", raw)
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("error leaks the password: %v", err)
		}
	}
	// A request error against a closed port carries the address only.
	tg, err := r.Open(context.Background(), "elasticsearch://user:s3cret@127.0.0.1:1/idx", target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	_, err = tg.Count(context.Background(), "g")
	if err == nil || strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "user:") {
		t.Errorf("err = %v", err)
	}
}

func TestRegisterSchemes(t *testing.T) {
	r := target.NewRegistry()
	Register(r)
	got := strings.Join(r.Schemes(), ",")
	want := "elasticsearch,elasticsearch+https,opensearch,opensearch+https"
	if got != want {
		t.Errorf("schemes = %s, want %s", got, want)
	}
}
