package ingest

import (
	"context"
	"time"

	"github.com/freshbench/freshbench/retry"
	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/target"
)

// Attempt is the outcome of writing one batch, re-sends included.
type Attempt struct {
	Acked, Failed int
	// AckedOnRetry of Acked were answered "already stored" by a re-send:
	// the attempt that failed as a whole had stored them.
	AckedOnRetry int
	AckedBytes   int
	Retries      int            // re-sent requests and items
	ErrorKinds   map[string]int // failed events by kind
	Sample       string         // one error message, for the reader
	AckedSeqs    []int64        // _seq of the acknowledged events
	ProbeFailed  bool           // the batch's first event was not stored
}

// WriteBatch writes b, re-sending it up to retries times while the request
// fails as a whole, each attempt bounded by timeout.
//
// A re-send can find events that the failed attempt did store (a client
// timeout after the commit): the database answers "duplicate _id". Every
// run writes _ids of its own (generator identifiers are never reused
// unless asked), so such an answer to a re-send means "stored": the
// events are acknowledged, never turned from a success into a failure.
//
// Every event of b ends up acknowledged or failed: a target that accounts
// for fewer items than it was given has the rest counted as failed with
// kind "unaccounted", so that nothing vanishes from the accounting.
func WriteBatch(ctx context.Context, w target.Writer, b target.Batch, timeout time.Duration, retries int) Attempt {
	var (
		res target.WriteResult
		err error
		a   Attempt
	)
	backoff := retry.Default()
	resent := false
	for attempt := 0; ; attempt++ {
		wctx, cancel := context.WithTimeout(ctx, timeout)
		res, err = w.Write(wctx, b)
		cancel()
		if err == nil || attempt >= retries || !backoff.Wait(ctx, attempt) {
			break
		}
		resent = true
		a.Retries++
	}
	a.Retries += res.Retries
	n := len(b.Docs)
	if err != nil {
		a.Failed = n
		a.ErrorKinds = map[string]int{stats.ErrorKind(err): n}
		a.Sample = err.Error()
		a.ProbeFailed = true
		return a
	}
	if res.Failed == 0 && res.Acknowledged == n {
		// The common case, on the hot path: nothing to look up.
		a.Acked = n
		a.AckedSeqs = make([]int64, n)
		for i, d := range b.Docs {
			a.AckedSeqs[i] = d.Seq
			a.AckedBytes += len(d.JSON)
		}
		return a
	}
	return partial(a, b, res, resent)
}

// partial accounts for a write the target answered with some events not
// acknowledged: which failed, of which kind, and which a re-send found
// stored already (resent).
func partial(a Attempt, b target.Batch, res target.WriteResult, resent bool) Attempt {
	n := len(b.Docs)
	failed := make(map[int64]bool, len(res.FailedSeqs))
	for _, s := range res.FailedSeqs {
		failed[s] = true
	}
	a.ErrorKinds = map[string]int{}
	for k, v := range res.ErrorKinds {
		if resent && k == target.ErrorDuplicateID {
			a.AckedOnRetry += v
			continue
		}
		a.ErrorKinds[k] += v
	}
	if resent && a.AckedOnRetry > 0 {
		// Every failed seq is a duplicate when that is the only kind.
		// Otherwise a target's FailedSeqs do not say which seq failed of
		// which kind, so the duplicates cannot be told apart and stay
		// failed: a failure counted too many, never a success too many.
		if len(res.ErrorKinds) == 1 {
			clear(failed)
		} else {
			a.ErrorKinds[target.ErrorDuplicateID] += a.AckedOnRetry
			a.AckedOnRetry = 0
		}
	}
	a.Acked = res.Acknowledged + a.AckedOnRetry
	a.Failed = res.Failed - a.AckedOnRetry
	if missing := n - a.Acked - a.Failed; missing > 0 {
		a.Failed += missing
		a.ErrorKinds[ErrorUnaccounted] += missing
	}
	if a.Failed > 0 && len(failed) == 0 {
		// The target did not say which: no event can be trusted.
		for _, d := range b.Docs {
			a.AckedBytes += len(d.JSON)
		}
		a.AckedBytes = a.AckedBytes * a.Acked / n
		a.ProbeFailed = true
		return a
	}
	a.AckedSeqs = make([]int64, 0, n-len(failed))
	for _, d := range b.Docs {
		if !failed[d.Seq] {
			a.AckedSeqs = append(a.AckedSeqs, d.Seq)
			a.AckedBytes += len(d.JSON)
		}
	}
	a.ProbeFailed = len(a.AckedSeqs) == 0 || a.AckedSeqs[0] != b.Docs[0].Seq
	return a
}

// ErrorUnaccounted is the error kind of events a target neither
// acknowledged nor reported failed.
const ErrorUnaccounted = "unaccounted"
