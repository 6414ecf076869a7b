package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"strings"

	"github.com/freshbench/freshbench/bench"
	"github.com/freshbench/freshbench/redact"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/all"
)

// readFlags is the repeatable --read-endpoint flag: URLs of the same
// database as --target, read from apart from it.
type readFlags []string

func (r *readFlags) String() string {
	out := make([]string, len(*r))
	for i, v := range *r {
		out[i] = redact.URL(v)
	}
	return strings.Join(out, ",")
}

func (r *readFlags) Set(v string) error {
	*r = append(*r, v)
	return nil
}

// addReadFlags adds --read-endpoint to a measuring command whose target
// flags are tf.
func addReadFlags(fs *flag.FlagSet, tf *targetFlags) {
	fs.Var(&tf.reads, "read-endpoint", "URL of another endpoint of the --target database (a replica, a standby, a query node), repeatable: "+
		"freshness polls, visibility probes, the audit and the query load run on each too, writes go to --target only; "+
		"Elasticsearch and OpenSearch endpoints, and then --target too, read their node's own copy (preference _local)")
}

// readEndpoints names the read endpoints read1, read2, … in the order
// given, unopened (see openReads), and refuses, before anything runs,
// one that is not a URL of the scheme of the target.
func (f *targetFlags) readEndpoints() ([]bench.ReadEndpoint, error) {
	scheme := "sqlite" // the embedded database of --data-dir
	if f.url != "" {
		u, err := url.Parse(f.url)
		if err != nil {
			return nil, nil // --target's own error comes when it is opened
		}
		scheme = strings.ToLower(u.Scheme)
	}
	var eps []bench.ReadEndpoint
	for i, raw := range f.reads {
		u, err := url.Parse(raw)
		if err != nil || u.Scheme == "" {
			return nil, usagef("--read-endpoint %s: not a URL; give one of the --target database, e.g. %s://host:port/…", redact.URL(raw), scheme)
		}
		if s := strings.ToLower(u.Scheme); s != scheme {
			return nil, usagef("--read-endpoint %s: scheme %s, not the --target's %s; give an endpoint of the database under test", redact.URL(raw), s, scheme)
		}
		eps = append(eps, bench.ReadEndpoint{Name: fmt.Sprintf("read%d", i+1), URL: raw})
	}
	return eps, nil
}

// openReads opens each of eps, in place, as the target is opened but
// never set up nor recreated (they are the target's database, seen from
// elsewhere), each reading its node's own copies. On an error it closes
// those it opened.
func (f *targetFlags) openReads(ctx context.Context, eps []bench.ReadEndpoint) error {
	opts := f.options()
	opts.Recreate = false
	for i, e := range eps {
		r, err := all.Registry().Open(ctx, e.URL, opts)
		if err != nil {
			closeReads(eps[:i])
			if errors.Is(err, target.ErrBadURL) || errors.Is(err, target.ErrBadSetting) {
				return usagef("--read-endpoint: %v", err)
			}
			return fmt.Errorf("read endpoint %s: %w", redact.URL(e.URL), err)
		}
		eps[i].Reader = r
	}
	return nil
}

// closeReads releases read endpoints opened by openReads.
func closeReads(eps []bench.ReadEndpoint) {
	for _, e := range eps {
		if c, ok := e.Reader.(interface{ Close() error }); ok {
			c.Close()
		}
	}
}
