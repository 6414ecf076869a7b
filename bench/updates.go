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
// revision, and the lost-update audit. Each endpoint's update polls and
// probes are its endpointRun's; probes watches every probed revision on
// all of them (what is visible everywhere joins the endpoints). A nil
// *updateProbes (no update stream) does nothing.
type updateProbes struct {
	eps    []*endpointRun
	probes *probe.Probes
}

// newUpdateProbes prepares the measurement of the run's updates on eps;
// nil without an update stream. Every endpoint must take updates.
func newUpdateProbes(eps []*endpointRun, cfg Config, window *timeline.Timeline) (*updateProbes, error) {
	if cfg.Ingest.UpdateShare == 0 {
		return nil, nil
	}
	var vis []*probe.Visibility
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
		e.updater = up
		e.updVis = probe.NewUpdateVisibility(e.Name, up, cfg.budget(e.Reader), window)
		vis = append(vis, e.updVis)
	}
	return &updateProbes{eps: eps, probes: probe.NewProbes(window, vis...)}, nil
}

// freshness prepares each endpoint's update freshness polls.
func (u *updateProbes) freshness(gens []string, cfg Config, clock probe.Clock, window *timeline.Timeline) {
	if u == nil {
		return
	}
	for _, e := range u.eps {
		e.updFresh = probe.NewUpdateFreshness(e.Name, e.updater, gens, cfg.budget(e.Reader), clock, window)
	}
}

// run polls until the contexts end: freshness until freshCtx, probes
// until visCtx (which outlasts the drain).
func (u *updateProbes) run(freshCtx, visCtx context.Context, wg *sync.WaitGroup) {
	if u == nil {
		return
	}
	for _, e := range u.eps {
		wg.Add(1)
		go func() { defer wg.Done(); e.updFresh.Run(freshCtx) }()
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
	for _, e := range u.eps {
		for _, g := range gens {
			want, ok := ledger.NewestUpdate(g)
			if !ok {
				continue
			}
			got, seen, err := e.updater.UpdateFreshness(ctx, g)
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
	for i, e := range u.eps {
		out[i] = &results.Updates{Freshness: e.updFresh.Result(), Visibility: seen[i]}
		if !interrupted {
			out[i].Audit, out[i].AuditError = auditEach(ctx, gens, func(ctx context.Context, g string) (results.UpdateAudit, error) {
				return ledger.AuditUpdates(ctx, e.updater, g)
			})
		}
	}
	return out, everywhere
}
