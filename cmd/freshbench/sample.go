package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/freshbench/freshbench/docgen"
	"github.com/freshbench/freshbench/pace"
)

func sampleCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sample")
	count := fs.Int("count", 1, "how many documents")
	docSize := fs.String("doc-size", "1KB", "serialized size of one event")
	seed := fs.Uint64("seed", 1, "generator seed (0 = random)")
	compact := fs.Bool("compact", false, "one document per line, as written")
	shape := fs.String("doc-shape", docgen.ShapeRockBench, "shape of the documents: rockbench or nested")
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	size, err := pace.ParseSize(*docSize)
	if err != nil {
		return usagef("--doc-size: %v", err)
	}
	if *count < 1 {
		return usagef("--count %d: want 1 or more", *count)
	}
	if !slices.Contains(docgen.Shapes, *shape) {
		return usagef("--doc-shape %q: want rockbench or nested", *shape)
	}
	g, err := docgen.New(docgen.Config{DocSize: int(size), Seed: *seed, Shape: *shape})
	if err != nil {
		return usagef("--doc-size: %v", err)
	}
	var buf []byte
	for i := 0; i < *count; i++ {
		d, _ := g.Next(buf[:0], time.Now().UnixMicro())
		if *compact {
			fmt.Fprintf(stdout, "%s\n", d.JSON)
			continue
		}
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, d.JSON, "", "  "); err != nil {
			return fmt.Errorf("generated document is not valid JSON: %w", err)
		}
		fmt.Fprintf(stdout, "%s\n", pretty.Bytes())
		fmt.Fprintf(stderr, "(%d bytes serialized)\n", len(d.JSON))
	}
	return nil
}

func versionCmd(_ context.Context, _ []string, stdout, _ io.Writer) error {
	fmt.Fprintln(stdout, "freshbench", versionString())
	return nil
}
