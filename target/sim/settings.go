package sim

import (
	"time"

	"github.com/freshbench/freshbench/target"
)

// knobs declares every behaviour of the simulated target, once. Each is
// given as a query parameter of the URL (sim://?visibility_delay=200ms) or
// as a setting.
func knobs() target.Knobs {
	return target.Knobs{
		{Name: "visibility_delay", Default: "0s", Parse: target.ParseDuration(0),
			Help: "time from an acknowledged write to a query seeing it"},
		{Name: "write_delay", Default: "0s", Parse: target.ParseDuration(0),
			Help: "service time of every write request"},
		{Name: "query_delay", Default: "0s", Parse: target.ParseDuration(0),
			Help: "service time of every query"},
		{Name: "capacity", Default: "0", Parse: target.ParseFloat(0),
			Help: "events per second accepted at most, as one queue; 0: unbounded"},
		{Name: "drop_every", Default: "0", Parse: target.ParseInt(0),
			Help: "lose every Nth acknowledged event (lost writes); 0: none"},
		{Name: "fail_stored_every", Default: "0", Parse: target.ParseInt(0),
			Help: "answer every Nth insert as failed (duplicate_id) although it is stored, as a server that retried a write itself; 0: none"},
		{Name: "update_delay", Default: "0s", Parse: target.ParseDuration(0),
			Help: "time from an acknowledged update to a query seeing its revision, added to visibility_delay"},
		{Name: "lose_update_every", Default: "0", Parse: target.ParseInt(0),
			Help: "lose every Nth acknowledged update (lost updates: the older revision stays); 0: none"},
		{Name: "query_cost", Default: "0", Parse: target.ParseFloat(0),
			Help: "events' worth of the capacity each query of the query workload takes, in the queue it shares with the writes; 0: queries take none"},
	}
}

// configOf reads resolved settings.
func configOf(s target.Settings) Config {
	return Config{
		VisibilityDelay: s["visibility_delay"].(time.Duration),
		WriteDelay:      s["write_delay"].(time.Duration),
		QueryDelay:      s["query_delay"].(time.Duration),
		Capacity:        s["capacity"].(float64),
		DropEvery:       s["drop_every"].(int),
		FailStoredEvery: s["fail_stored_every"].(int),
		UpdateDelay:     s["update_delay"].(time.Duration),
		LoseUpdateEvery: s["lose_update_every"].(int),
		QueryCost:       s["query_cost"].(float64),
	}
}

// Settings returns the settings in effect, defaults included, of a target
// opened from a URL (none for one made by New or for discard://).
func (t *Target) Settings() map[string]string { return t.settings.Text() }
