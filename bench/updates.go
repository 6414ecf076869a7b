package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/freshbench/freshbench/invalid"
	"github.com/freshbench/freshbench/probe"
	"github.com/freshbench/freshbench/redact"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/timeline"
)

// updateProbes measures an update stream on every endpoint, apart from
// the inserts: the freshness of updates, the visibility of each probed
// revision, and the lost-update audit. A nil *updateProbes (no update
// stream) does nothing.
type updateProbes struct {
	eps    []ReadEndpoint
	ups    []target.Updater
	vis    []*probe.Visibility
	probes *probe.Probes
	fresh  []*probe.Freshness
}

// newUpdateProbes prepares the measurement of the run's updates; nil
// without an update stream. Every endpoint must take updates.
func newUpdateProbes(eps []ReadEndpoint, cfg Config, window *timeline.Timeline) (*updateProbes, error) {
	if cfg.Ingest.UpdateShare == 0 {
		return nil, nil
	}
	u := &updateProbes{eps: eps}
	for _, e := range eps {
		up, ok := e.Reader.(target.Updater)
		// Through an intermediary, updates reach only a database that
		// reads the documents from it itself and upserts them: the
		// intermediary's target is then an Updater (via.Kafka.Wrap).
		if _, piped := e.Reader.(target.Piped); piped && !ok {
			return nil, invalid.New(invalid.UpdateShare, cfg.Ingest.UpdateShare, "0: writes through an intermediary reach this target as inserts only (a Kafka sink writes inserts; a database that consumes the topic itself takes updates where its settings make it upsert)")
		}
		if !ok {
			what := "the target"
			if e.Name != results.TargetEndpoint {
				what = fmt.Sprintf("read endpoint %s (%s)", e.Name, redact.URL(e.URL))
			}
			return nil, invalid.New(invalid.UpdateShare, cfg.Ingest.UpdateShare, fmt.Sprintf("0: %s takes no updates (the targets that do say so in their settings help)", what))
		}
		u.ups = append(u.ups, up)
		u.vis = append(u.vis, probe.NewUpdateVisibility(e.Name, up, cfg.budget(e.Reader), window))
	}
	u.probes = probe.NewProbes(window, u.vis...)
	return u, nil
}

// freshness prepares the update freshness samplers.
func (u *updateProbes) freshness(gens []string, cfg Config, clock probe.Clock, window *timeline.Timeline) {
	if u == nil {
		return
	}
	for i, e := range u.eps {
		u.fresh = append(u.fresh, probe.NewUpdateFreshness(e.Name, u.ups[i], gens, cfg.budget(u.eps[i].Reader), clock, window))
	}
}

// run polls until the contexts end: freshness until freshCtx, probes
// until visCtx (which outlasts the drain).
func (u *updateProbes) run(freshCtx, visCtx context.Context, wg *sync.WaitGroup) {
	if u == nil {
		return
	}
	for _, f := range u.fresh {
		wg.Add(1)
		go func() { defer wg.Done(); f.Run(freshCtx) }()
	}
	wg.Add(1)
	go func() { defer wg.Done(); u.probes.Run(visCtx) }()
}

// allVisible reports whether every endpoint shows, for every generator,
// an update as new as the newest acknowledged: the drain's sign that the
// updates have landed (the audit then says whether each did).
func (u *updateProbes) allVisible(ctx context.Context, gens []string, ledger *probe.Ledger) bool {
	if u == nil {
		return true
	}
	for _, up := range u.ups {
		for _, g := range gens {
			want, ok := ledger.NewestUpdate(g)
			if !ok {
				continue
			}
			got, seen, err := up.UpdateFreshness(ctx, g)
			if errors.Is(err, target.ErrNotKept) {
				continue
			}
			if err != nil || !seen || got < want {
				return false
			}
		}
	}
	return true
}

func (u *updateProbes) pending() int {
	if u == nil {
		return 0
	}
	return u.probes.Pending()
}

// finish returns each endpoint's update figures, audited unless the run
// was interrupted, and the visibility of updates everywhere.
func (u *updateProbes) finish(ctx context.Context, ledger *probe.Ledger, gens []string, interrupted bool) ([]*results.Updates, *results.Visibility) {
	if u == nil {
		return nil, nil
	}
	seen, everywhere := u.probes.Finish()
	out := make([]*results.Updates, len(u.eps))
	for i := range u.eps {
		out[i] = &results.Updates{Freshness: u.fresh[i].Result(), Visibility: seen[i]}
		if !interrupted {
			out[i].Audit, out[i].AuditError = auditEach(ctx, gens, func(ctx context.Context, g string) (results.UpdateAudit, error) {
				return ledger.AuditUpdates(ctx, u.ups[i], g)
			})
		}
	}
	return out, everywhere
}
