package probe

import (
	"context"
	"sync"
	"time"
)

// fakeReader is a target.Reader whose answers the test sets exactly, and
// which records every visibility query it was asked.
type fakeReader struct {
	mu sync.Mutex
	// visible decides, per call of Visible, whether a probe is visible;
	// call counts the calls for that generator from 1.
	visible func(gen, id string, call int) bool
	// queryDelay is the service time of every Visible call.
	queryDelay time.Duration
	calls      map[string][]visCall

	freshness func(ctx context.Context, gen string) (int64, bool, error)
	seqs      func(ctx context.Context, gen string, fn func(int64)) error
}

type visCall struct {
	ids        []string
	sent, done time.Time
	seen       map[string]bool
}

func newFakeReader() *fakeReader { return &fakeReader{calls: map[string][]visCall{}} }

func (f *fakeReader) Freshness(ctx context.Context, gen string) (int64, bool, error) {
	return f.freshness(ctx, gen)
}

func (f *fakeReader) Visible(ctx context.Context, gen string, ids []string) (map[string]bool, error) {
	sent := time.Now()
	if f.queryDelay > 0 {
		select {
		case <-time.After(f.queryDelay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	call := len(f.calls[gen]) + 1
	out := map[string]bool{}
	for _, id := range ids {
		if f.visible != nil && f.visible(gen, id, call) {
			out[id] = true
		}
	}
	f.calls[gen] = append(f.calls[gen], visCall{ids: append([]string(nil), ids...), sent: sent, done: time.Now(), seen: out})
	return out, nil
}

func (f *fakeReader) Count(context.Context, string) (int64, error) { return 0, nil }

func (f *fakeReader) Seqs(ctx context.Context, gen string, fn func(int64)) error {
	return f.seqs(ctx, gen, fn)
}

// callsFor returns a copy of the visibility queries made for gen.
func (f *fakeReader) callsFor(gen string) []visCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]visCall(nil), f.calls[gen]...)
}
