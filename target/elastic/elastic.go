// Package elastic is the freshbench target for Elasticsearch and OpenSearch.
//
// One implementation serves both products; only the transport differs
// (go-elasticsearch v8 for Elasticsearch, opensearch-go v4 for OpenSearch),
// because the REST calls freshbench makes (_bulk, _search, _count, index
// create/delete) are the same on both.
//
// # URLs
//
//	elasticsearch://host[:port]/index        plain HTTP
//	opensearch://host[:port]/index           plain HTTP
//	elasticsearch+https://host[:port]/index  HTTPS
//	opensearch+https://host[:port]/index     HTTPS
//
// The port defaults to 9200. TLS is chosen by the scheme suffix only, so a
// URL says by itself how it is reached; query parameters are rejected
// (knobs go in Options.Settings, credentials in the userinfo or the
// environment, never in a query string that would end up in logs).
//
// # Credentials
//
// In order of precedence:
//  1. userinfo in the URL (https://user:password@…): HTTP basic auth;
//  2. FRESHBENCH_ES_API_KEY (Elasticsearch only): the base64 "id:key"
//     API key, sent as "Authorization: ApiKey …";
//  3. FRESHBENCH_ES_USERNAME and FRESHBENCH_ES_PASSWORD for Elasticsearch,
//     FRESHBENCH_OS_USERNAME and FRESHBENCH_OS_PASSWORD for OpenSearch.
//
// Credentials are never part of an error message: requests are addressed
// to the bare host and the credentials travel only in headers.
//
// # TLS
//
// Options.CACert adds a PEM bundle to the system roots; Options.Insecure
// turns certificate verification off (never implied). Both apply only to
// the +https schemes; a CA bundle given for a plain-HTTP URL is an error
// because it is almost certainly a missing "+https".
//
// # Settings (Options.Settings)
//
// shards, replicas, refresh_interval, max_retries, mapping and
// replication_type (OpenSearch only), declared with their defaults and
// meanings by Knobs.
//
// Setup reuses an existing index as it is (its settings are not changed)
// unless Options.Recreate is set; an index whose generator_identifier is
// mapped otherwise than the mapping setting says is refused, because the
// probes would find none of its documents.
//
// With mapping=FILE the index is created with the user's mapping file,
// into which the fields the probes need are merged (readUserMapping).
//
// With mapping=dynamic the probes filter on generator_identifier.keyword,
// the keyword subfield that dynamic mapping adds to a string; _event_time,
// _seq, _revision and _update_time are mapped as long from their integer
// values either way.
//
// # Measurement rules
//
// Freshness, Visible, Count and Seqs, and the update probes
// UpdateFreshness, Revisions and Updated, are plain searches: none of them
// refreshes the index or uses a real-time GET, because what is measured is
// when a search sees an event.
//
// Write uses the bulk create action for inserts: a document whose _id is
// already stored is refused, as a failed item of kind
// target.ErrorDuplicateID with its _seq, and the stored document stays as
// it was. (The index action would replace it silently, and a repeated run
// on a reused index would then overwrite the last run's events.) An update
// (target.Updater) is written with the index action, which replaces the
// document stored under its _id; one that an ingest pipeline dropped is a
// failed item of kind target.ErrorNotStored.
package elastic

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/elastic/go-elasticsearch/v8"
	"github.com/opensearch-project/opensearch-go/v4"

	"github.com/freshbench/freshbench/redact"
	"github.com/freshbench/freshbench/target"
)

// Product names, also the scheme-level names returned by Name.
const (
	Elasticsearch = "elasticsearch"
	OpenSearch    = "opensearch"
)

const (
	defaultPort            = "9200"
	defaultTimeout         = 30 * time.Second
	defaultShards          = 1
	defaultReplicas        = 0
	defaultRefreshInterval = "1s"
	defaultMaxRetries      = 5
)

// Register registers the elasticsearch, opensearch and their +https schemes.
func Register(r *target.Registry) {
	r.Register(target.Driver{Name: "elasticsearch, opensearch", Open: Open, Knobs: knobs(), Updates: true,
		Schemes: []string{Elasticsearch, Elasticsearch + "+https", OpenSearch, OpenSearch + "+https"}})
}

// Open opens an Elasticsearch or OpenSearch target from its URL. It does not
// contact the server: the first request does (Setup or Version, typically).
func Open(ctx context.Context, u *url.URL, opts target.Options) (target.Target, error) {
	return open(ctx, u, opts, os.Getenv)
}

// config is everything parsed from the URL, the options and the environment.
type config struct {
	product  string // Elasticsearch or OpenSearch
	https    bool
	host     string // host:port
	index    string
	username string
	password string
	apiKey   string

	timeout         time.Duration
	shards          int
	replicas        int
	refreshInterval string
	maxRetries      int
	mapping         string          // MappingFreshbench, MappingDynamic or a mapping file
	user            *userMapping    // the mapping file's, merged; nil for the others
	replicationType string          // "" (the server's), ReplicationDocument or ReplicationSegment
	settings        target.Settings // the above as resolved, for results
	recreate        bool
	insecure        bool
	caCert          string
	readLocal       bool // searches ask for the node's own copy (preference=_local)
}

// parseConfig validates the URL and options. getenv is a parameter so that
// tests do not depend on (or modify) the process environment.
func parseConfig(u *url.URL, opts target.Options, getenv func(string) string) (config, error) {
	var c config
	display := redact.URL(u.String())
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w %q: %s", target.ErrBadURL, display, fmt.Sprintf(format, a...))
	}

	scheme := strings.ToLower(u.Scheme)
	c.product, c.https = strings.CutSuffix(scheme, "+https")
	if c.product != Elasticsearch && c.product != OpenSearch {
		return c, bad("scheme must be elasticsearch, opensearch, elasticsearch+https or opensearch+https")
	}
	if u.Opaque != "" || u.Host == "" {
		return c, bad("want %s://host[:port]/index", scheme)
	}
	if u.RawQuery != "" {
		return c, bad("query parameters are not accepted: use %s+https:// for TLS, target settings for index options, and the URL userinfo or environment for credentials", c.product)
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = defaultPort
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return c, bad("invalid port %q", port)
	}
	c.host = net.JoinHostPort(host, port)

	c.index = strings.Trim(u.Path, "/")
	if err := validIndexName(c.index); err != nil {
		return c, bad("%v", err)
	}

	prefix := "FRESHBENCH_ES_"
	if c.product == OpenSearch {
		prefix = "FRESHBENCH_OS_"
	}
	switch {
	case u.User != nil:
		c.username = u.User.Username()
		c.password, _ = u.User.Password()
	case c.product == Elasticsearch && getenv("FRESHBENCH_ES_API_KEY") != "":
		c.apiKey = getenv("FRESHBENCH_ES_API_KEY")
	default:
		c.username = getenv(prefix + "USERNAME")
		c.password = getenv(prefix + "PASSWORD")
	}

	c.timeout = defaultTimeout
	if opts.RequestTimeout < 0 {
		return c, fmt.Errorf("%s: request timeout must not be negative, got %s", display, opts.RequestTimeout)
	}
	if opts.RequestTimeout > 0 {
		c.timeout = opts.RequestTimeout
	}

	if err := c.applySettings(opts.Settings); err != nil {
		return c, fmt.Errorf("%s: %w", display, err)
	}

	c.recreate = opts.Recreate
	c.readLocal = opts.ReadLocal
	c.insecure = opts.Insecure
	c.caCert = opts.CACert
	if c.caCert != "" && !c.https {
		return c, bad("a CA certificate was given for a plain-HTTP URL; use %s+https://", c.product)
	}
	return c, nil
}

// validIndexName applies the server's index-name rules up front so that a
// typo fails at Open with a clear message instead of at Setup.
func validIndexName(name string) error {
	switch {
	case name == "":
		return errors.New("missing index name in the path (…/index)")
	case name == "." || name == "..":
		return fmt.Errorf("index name %q is not allowed", name)
	case len(name) > 255:
		return errors.New("index name longer than 255 bytes")
	case strings.ContainsAny(name[:1], "-_+"):
		return fmt.Errorf("index name %q must not start with -, _ or +", name)
	case strings.ToLower(name) != name:
		return fmt.Errorf("index name %q must be lowercase", name)
	case strings.ContainsAny(name, `\/*?"<>| ,#:`):
		return fmt.Errorf(`index name %q must not contain any of \ / * ? " < > | , # : or a space`, name)
	}
	return nil
}

// performer sends one request through a product's official client and
// returns the unbuffered response; the caller closes its body.
type performer interface {
	perform(req *http.Request) (*http.Response, error)
	close() error
}

type esPerformer struct{ c *elasticsearch.Client }

func (p esPerformer) perform(req *http.Request) (*http.Response, error) { return p.c.Perform(req) }
func (p esPerformer) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return p.c.Close(ctx)
}

type osPerformer struct{ c *opensearch.Client }

func (p osPerformer) perform(req *http.Request) (*http.Response, error) {
	// Stream, unlike the deprecated Perform, does not buffer the body: the
	// bulk response is decoded straight from the connection.
	res, err := p.c.Stream(req)
	if err != nil && res != nil {
		// Stream can return a response together with an error (e.g. the
		// context ended during its retry back-off); the error wins.
		res.Body.Close()
		return nil, err
	}
	return res, err
}
func (p osPerformer) close() error { return p.c.Close() }

// Target is an Elasticsearch or OpenSearch index under test. It is safe for
// concurrent use.
type Target struct {
	cfg     config
	display string // product://host/index, for messages (no credentials)
	base    string // http(s)://host:port
	ip      string // escaped index name for request paths
	client  performer
	httpTr  *http.Transport
	bodies  bodyPool // _bulk bodies
}

var (
	_ target.Target  = (*Target)(nil)
	_ target.Updater = (*Target)(nil)
)

func open(_ context.Context, u *url.URL, opts target.Options, getenv func(string) string) (*Target, error) {
	cfg, err := parseConfig(u, opts, getenv)
	if err != nil {
		return nil, err
	}
	scheme := "http"
	if cfg.https {
		scheme = "https"
	}
	t := &Target{
		cfg:     cfg,
		display: cfg.product + "://" + cfg.host + "/" + cfg.index,
		base:    scheme + "://" + cfg.host,
		ip:      url.PathEscape(cfg.index),
	}
	t.httpTr, err = newHTTPTransport(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.display, err)
	}

	// Retries inside the clients are off: a whole-request failure must
	// reach the caller as an error (and be timed as such), and item-level
	// 429s are retried by Write itself, per item.
	switch cfg.product {
	case Elasticsearch:
		c, err := elasticsearch.NewClient(elasticsearch.Config{
			Addresses:    []string{t.base},
			Username:     cfg.username,
			Password:     cfg.password,
			APIKey:       cfg.apiKey,
			Transport:    t.httpTr,
			DisableRetry: true,
		})
		if err != nil {
			return nil, fmt.Errorf("%s: create client: %w", t.display, err)
		}
		t.client = esPerformer{c}
	case OpenSearch:
		c, err := opensearch.NewClient(opensearch.Config{
			Addresses:    []string{t.base},
			Username:     cfg.username,
			Password:     cfg.password,
			Transport:    t.httpTr,
			DisableRetry: true,
		})
		if err != nil {
			return nil, fmt.Errorf("%s: create client: %w", t.display, err)
		}
		t.client = osPerformer{c}
	}
	return t, nil
}

func newHTTPTransport(cfg config) (*http.Transport, error) {
	tr := &http.Transport{
		Proxy: nil, // a benchmark talks to the server directly
		DialContext: dialBodyConn((&net.Dialer{
			Timeout:   5 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext),
		// Many concurrent bulk requests go to one host; the default of two
		// idle connections per host would open and close connections all
		// the time and add handshakes to the measured latency.
		MaxIdleConns:        512,
		MaxIdleConnsPerHost: 256,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
	}
	if !cfg.https {
		return tr, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: cfg.insecure} //nolint:gosec // explicit opt-in
	if cfg.caCert != "" {
		pem, err := os.ReadFile(cfg.caCert)
		if err != nil {
			return nil, fmt.Errorf("read CA certificate: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CA certificate %s: no PEM certificate found", cfg.caCert)
		}
		tc.RootCAs = pool
	}
	tr.TLSClientConfig = tc
	return tr, nil
}

// Name returns "elasticsearch" or "opensearch".
func (t *Target) Name() string { return t.cfg.product }

// Index returns the index name.
func (t *Target) Index() string { return t.cfg.index }

// Close releases the client's connections.
func (t *Target) Close() error {
	err := t.client.close()
	t.httpTr.CloseIdleConnections()
	if err != nil && !errors.Is(err, elasticsearch.ErrAlreadyClosed) {
		return fmt.Errorf("%s: close: %w", t.display, err)
	}
	return nil
}

// response is a fully read, small response.
type response struct {
	status int
	body   []byte
}

// maxSmallBody bounds what is read from a response that is not streamed;
// search responses here are small (ids, aggregations) except Seqs pages,
// which stay well under this.
const maxSmallBody = 64 << 20

// send performs one request with the per-request timeout and returns the
// open response; the caller must close its body and call cancel.
func (t *Target) send(ctx context.Context, method, path, query string, body *requestBody, contentType string) (*http.Response, context.CancelFunc, error) {
	ctx, cancel := context.WithTimeout(ctx, t.cfg.timeout)
	addr := t.base + path
	if query != "" {
		addr += "?" + query
	}
	req, err := http.NewRequestWithContext(ctx, method, addr, nil)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	if body != nil {
		body.attach(req)
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	res, err := t.client.perform(req)
	if err != nil {
		cancel()
		if ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
			return nil, nil, fmt.Errorf("no response within %s: %w", t.cfg.timeout, err)
		}
		// go-elasticsearch refuses servers that do not identify as
		// Elasticsearch; the usual cause is an OpenSearch URL.
		if t.cfg.product == Elasticsearch && strings.Contains(err.Error(), "not Elasticsearch") {
			return nil, nil, fmt.Errorf("%w (for OpenSearch use an opensearch:// URL)", err)
		}
		return nil, nil, err
	}
	return res, cancel, nil
}

// do performs a request with a JSON body (or none) and reads the response.
func (t *Target) do(ctx context.Context, method, path, query string, body []byte) (response, error) {
	var rb *requestBody
	if body != nil {
		rb = &requestBody{b: body}
	}
	res, cancel, err := t.send(ctx, method, path, query, rb, "application/json")
	if err != nil {
		return response{}, err
	}
	defer cancel()
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, maxSmallBody))
	if err != nil {
		return response{}, fmt.Errorf("read response (status %d): %w", res.StatusCode, err)
	}
	return response{status: res.StatusCode, body: b}, nil
}

// serverError describes a non-2xx response, with the server's error type
// and reason when the body has them.
func serverError(status int, body []byte) error {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	var detail struct {
		Type   string `json:"type"`
		Reason string `json:"reason"`
	}
	if json.Unmarshal(body, &e) == nil && len(e.Error) > 0 {
		if json.Unmarshal(e.Error, &detail) == nil && detail.Type != "" {
			return fmt.Errorf("status %d: %s: %s", status, detail.Type, detail.Reason)
		}
		var s string
		if json.Unmarshal(e.Error, &s) == nil && s != "" {
			return fmt.Errorf("status %d: %s", status, s)
		}
	}
	msg := strings.TrimSpace(string(body))
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	if msg == "" {
		return fmt.Errorf("status %d %s", status, http.StatusText(status))
	}
	return fmt.Errorf("status %d: %s", status, msg)
}

func is2xx(status int) bool { return status >= 200 && status < 300 }

// Setup creates the index with the mapping setting's mapping, or reuses it
// if its generator_identifier is mapped as that mapping would.
func (t *Target) Setup(ctx context.Context) error {
	if t.cfg.recreate {
		if err := t.deleteIndex(ctx); err != nil {
			return fmt.Errorf("%s: setup: %w", t.display, err)
		}
	} else {
		res, err := t.do(ctx, http.MethodHead, "/"+t.ip, "", nil)
		if err != nil {
			return fmt.Errorf("%s: setup: check index: %w", t.display, err)
		}
		switch res.status {
		case http.StatusOK:
			if err := t.checkGeneratorMapping(ctx); err != nil {
				return fmt.Errorf("%s: setup: %w", t.display, err)
			}
			return nil // reuse as is (idempotent)
		case http.StatusNotFound:
		default:
			return fmt.Errorf("%s: setup: check index: status %d", t.display, res.status)
		}
	}
	body, err := json.Marshal(t.indexDefinition())
	if err != nil {
		return fmt.Errorf("%s: setup: encode mapping: %w", t.display, err)
	}
	res, err := t.do(ctx, http.MethodPut, "/"+t.ip, "", body)
	if err != nil {
		return fmt.Errorf("%s: setup: create index: %w", t.display, err)
	}
	if !is2xx(res.status) {
		// Another process may have created it between HEAD and PUT.
		if res.status == http.StatusBadRequest && bytes.Contains(res.body, []byte("resource_already_exists_exception")) {
			return nil
		}
		return fmt.Errorf("%s: setup: create index: %w", t.display, serverError(res.status, res.body))
	}
	return nil
}

// indexDefinition is the body of the create-index request. With
// freshbench's mapping, fields that queries filter or aggregate on are
// mapped explicitly so that dynamic mapping cannot turn them into text (or
// _event_time into a float); the rest of the payload is mapped
// dynamically, as RockBench did. With mapping=dynamic nothing is mapped.
func (t *Target) indexDefinition() map[string]any {
	index := map[string]any{
		"number_of_shards":   t.cfg.shards,
		"number_of_replicas": t.cfg.replicas,
		"refresh_interval":   t.cfg.refreshInterval,
	}
	if t.cfg.replicationType != "" {
		index["replication.type"] = strings.ToUpper(t.cfg.replicationType)
	}
	def := map[string]any{"settings": map[string]any{"index": index}}
	switch {
	case t.cfg.mapping == MappingDynamic:
		return def
	case t.cfg.user != nil:
		def["mappings"] = t.cfg.user.mappings
		return def
	}
	kw := map[string]any{"type": "keyword"}
	props := map[string]any{
		"processBy": kw,
		"emails":    kw,
		"tags":      kw,
		"company":   kw,
		"age":       map[string]any{"type": "integer"},
	}
	for f, typ := range probeFields {
		props[f] = map[string]any{"type": typ}
	}
	def["mappings"] = map[string]any{"dynamic": true, "properties": props}
	return def
}

// generatorField is the keyword field that the probes filter on: the
// explicitly mapped field, or with dynamic mapping its keyword subfield (a
// term query on the text field would match one word of it, not the value).
func (c config) generatorField() string {
	if c.mapping == MappingDynamic {
		return "generator_identifier.keyword"
	}
	return "generator_identifier"
}

// checkGeneratorMapping refuses an existing index on which the probes'
// filter would match nothing: one whose generator_identifier the other
// mapping made. An index without the field yet is accepted, because the
// first write maps it as an index created without mappings would.
func (t *Target) checkGeneratorMapping(ctx context.Context) error {
	const field = "generator_identifier"
	want := t.cfg.generatorField()
	indices, err := t.fieldTypes(ctx, field, want)
	if err != nil {
		return err
	}
	other := MappingDynamic // the fix for a mapping file, too
	if t.cfg.mapping == MappingDynamic {
		other = MappingFreshbench
	}
	for index, types := range indices {
		got := types[field]
		if got == "" || types[want] == "keyword" {
			continue
		}
		return fmt.Errorf("%w mapping=%s: index %s maps %s as %s, but the probes filter on %s as a keyword; "+
			"recreate the index, or set mapping=%s, the mapping it was created with",
			target.ErrBadSetting, t.cfg.mapping, index, field, got, want, other)
	}
	return nil
}

// fieldTypes returns, per index (an alias may name several), the type
// each of fields is mapped as, "" when it is not, from the field mapping
// API. A subfield is named by its path (generator_identifier.keyword).
func (t *Target) fieldTypes(ctx context.Context, fields ...string) (map[string]map[string]string, error) {
	res, err := t.do(ctx, http.MethodGet, "/"+t.ip+"/_mapping/field/"+strings.Join(fields, ","), "", nil)
	if err != nil {
		return nil, fmt.Errorf("check mapping: %w", err)
	}
	if !is2xx(res.status) {
		return nil, fmt.Errorf("check mapping: %w", serverError(res.status, res.body))
	}
	var indices map[string]struct {
		Mappings map[string]struct {
			Mapping map[string]struct {
				Type string `json:"type"`
			} `json:"mapping"`
		} `json:"mappings"`
	}
	if err := json.Unmarshal(res.body, &indices); err != nil {
		return nil, fmt.Errorf("check mapping: decode: %w", err)
	}
	out := make(map[string]map[string]string, len(indices))
	for index, m := range indices {
		types := make(map[string]string, len(fields))
		for _, f := range fields {
			// The API reports a field under its leaf name.
			types[f] = m.Mappings[f].Mapping[f[strings.LastIndexByte(f, '.')+1:]].Type
		}
		out[index] = types
	}
	return out, nil
}

func (t *Target) deleteIndex(ctx context.Context) error {
	res, err := t.do(ctx, http.MethodDelete, "/"+t.ip, "", nil)
	if err != nil {
		return fmt.Errorf("delete index: %w", err)
	}
	if !is2xx(res.status) && res.status != http.StatusNotFound {
		return fmt.Errorf("delete index: %w", serverError(res.status, res.body))
	}
	return nil
}

// Teardown deletes the index (a missing index is not an error).
func (t *Target) Teardown(ctx context.Context) error {
	if err := t.deleteIndex(ctx); err != nil {
		return fmt.Errorf("%s: teardown: %w", t.display, err)
	}
	return nil
}

// Version returns e.g. "Elasticsearch 8.19.21" or "OpenSearch 2.19.6".
func (t *Target) Version(ctx context.Context) (string, error) {
	product := "Elasticsearch"
	if t.cfg.product == OpenSearch {
		product = "OpenSearch"
	}
	res, err := t.do(ctx, http.MethodGet, "/", "", nil)
	if err != nil {
		return "", fmt.Errorf("%s: version: %w", t.display, err)
	}
	if is2xx(res.status) {
		var root struct {
			Version struct {
				Number       string `json:"number"`
				Distribution string `json:"distribution"`
			} `json:"version"`
		}
		if err := json.Unmarshal(res.body, &root); err != nil {
			return "", fmt.Errorf("%s: version: decode: %w", t.display, err)
		}
		if root.Version.Distribution == OpenSearch {
			product = "OpenSearch"
		}
		if root.Version.Number != "" {
			return product + " " + root.Version.Number, nil
		}
	}
	// Stripped-down builds (Elasticsearch's integ-test-zip) lack the root
	// endpoint; the nodes info API has the version too.
	res, err = t.do(ctx, http.MethodGet, "/_nodes/_local", "filter_path=nodes.*.version", nil)
	if err != nil {
		return "", fmt.Errorf("%s: version: %w", t.display, err)
	}
	if !is2xx(res.status) {
		return "", fmt.Errorf("%s: version: %w", t.display, serverError(res.status, res.body))
	}
	var nodes struct {
		Nodes map[string]struct {
			Version string `json:"version"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal(res.body, &nodes); err != nil {
		return "", fmt.Errorf("%s: version: decode nodes info: %w", t.display, err)
	}
	for _, n := range nodes.Nodes {
		if n.Version != "" {
			return product + " " + n.Version, nil
		}
	}
	return "", fmt.Errorf("%s: version: server did not report one", t.display)
}

// Layout says what Setup mapped for the events.
func (t *Target) Layout() string {
	switch {
	case t.cfg.mapping == MappingDynamic:
		return "index " + t.cfg.index + ": every field mapped dynamically as the first event that has it shows it (a string as text with a .keyword subfield); the probes filter on generator_identifier.keyword"
	case t.cfg.user != nil:
		u := t.cfg.user
		return fmt.Sprintf("index %s: mapping from %s (%d top-level fields) merged with freshbench's %d fields (%s; %d of them added, the rest the file maps alike); a field neither maps is mapped as the file's dynamic setting says (by default dynamically)",
			t.cfg.index, u.file, u.fields, len(probeFields), probeFieldsText, u.added)
	}
	return "index " + t.cfg.index + ": freshbench's fields mapped explicitly (" + probeFieldsText + "), so are the shipped query kinds' (processBy, emails, tags, company keyword; age integer); every other field of the events mapped dynamically (a string as text with a .keyword subfield)"
}
