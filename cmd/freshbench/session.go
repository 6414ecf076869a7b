package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/freshbench/freshbench/bench"
	"github.com/freshbench/freshbench/outfile"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/target"
)

// session is what run, peak and query share around their measurement: the
// target opened and set up, the metrics endpoint, the description that
// every results file carries, and the teardown.
type session struct {
	tgt         target.Target
	raw         string
	obs         stats.Observer
	desc        bench.Description
	stopMetrics func()
	out         output
	reads       []bench.ReadEndpoint // opened, closed with the session
}

// openSession opens the target and the read endpoints reads (in place:
// see targetFlags.openReads) and serves the metrics of a measurement, an
// instance of experiment e if not nil; close it.
func openSession(ctx context.Context, command string, tf *targetFlags, reads []bench.ReadEndpoint, mf *metricsFlags, e *results.Experiment, out output, stderr io.Writer) (*session, error) {
	tgt, raw, err := tf.open(ctx)
	if err != nil {
		return nil, err
	}
	if err := tf.openReads(ctx, reads); err != nil {
		tgt.Close()
		return nil, err
	}
	return newSession(ctx, command, tgt, raw, reads, mf, e, out, stderr)
}

// newSession serves the metrics of a measurement of tgt and of the read
// endpoints reads, open already; the session closes them.
func newSession(ctx context.Context, command string, tgt target.Target, raw string, reads []bench.ReadEndpoint, mf *metricsFlags, e *results.Experiment, out output, stderr io.Writer) (*session, error) {
	obs, stop, err := mf.serve(ctx, raw, e, stderr)
	if err != nil {
		tgt.Close()
		closeReads(reads)
		return nil, err
	}
	return &session{tgt: tgt, raw: raw, reads: reads, obs: obs, stopMetrics: stop, out: out, desc: bench.Describe(ctx, command, tgt, raw)}, nil
}

// write writes res, described, to the results file, or keeps it in a
// file of the user's cache when it cannot (output.save).
func (s *session) write(res *results.Result) error {
	b, err := s.encode(res)
	if err != nil {
		return err
	}
	return s.out.save(b)
}

// keep writes a partial result (a step) and goes on when it cannot; a
// stream takes the final result alone.
func (s *session) keep(res *results.Result, stderr io.Writer, command string) {
	if s.out.stream != nil {
		return
	}
	b, err := s.encode(res)
	if err == nil {
		err = outfile.Write(s.out.path, b)
	}
	if err != nil {
		fmt.Fprintf(stderr, "freshbench %s: %v (the measurement goes on)\n", command, err)
	}
}

func (s *session) encode(res *results.Result) ([]byte, error) {
	s.desc.Apply(res)
	return results.Marshal(res)
}

// close stops the metrics once they have lingered (--metrics-linger),
// drops the index or table when asked, and releases the target.
func (s *session) close(ctx context.Context, teardown bool) error {
	s.stopMetrics()
	defer s.tgt.Close()
	defer closeReads(s.reads)
	if !teardown {
		return nil
	}
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := s.tgt.Teardown(tctx); err != nil {
		return fmt.Errorf("teardown: %w", err)
	}
	return nil
}
