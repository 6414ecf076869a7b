package main

import (
	"context"
	"fmt"
	"io"

	"github.com/freshbench/freshbench/noop"
)

func noopCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("noop")
	httpAddr := fs.String("http-listen", "127.0.0.1:0", "address of the Elasticsearch and OpenSearch endpoint, host:port (port 0 picks a free one); empty turns it off")
	pgAddr := fs.String("postgres-listen", "127.0.0.1:0", "address of the PostgreSQL endpoint, host:port (port 0 picks a free one); empty turns it off")
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	if *httpAddr == "" && *pgAddr == "" {
		return usagef("--http-listen and --postgres-listen are both empty: give an address to at least one")
	}
	srv, err := noop.Start(noop.Config{HTTPAddr: *httpAddr, PostgresAddr: *pgAddr, Version: versionString()})
	if err != nil {
		return usagef("%v (--http-listen, --postgres-listen)", err)
	}
	if err := srv.Announce(stdout); err != nil {
		srv.Close()
		return err
	}
	fmt.Fprintln(stderr, "freshbench noop: serving the URLs above (give one as --target) until interrupted")
	<-ctx.Done()
	return srv.Close()
}
