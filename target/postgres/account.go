package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/target"
)

var _ target.AccountReporter = (*store)(nil)

// qStandbys reads pg_stat_replication: one row per standby streaming from
// this server. The lags are intervals (null when there is nothing to
// report); the WAL position compared against is the server's own, which
// on a standby (cascading replication) is what it has replayed. Columns
// other than the name read as null for a user who is neither a superuser
// nor a member of pg_read_all_stats.
const qStandbys = `SELECT application_name, coalesce(state, ''), coalesce(sync_state, ''),
	extract(epoch FROM write_lag) * 1000, extract(epoch FROM flush_lag) * 1000, extract(epoch FROM replay_lag) * 1000,
	pg_wal_lsn_diff(CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END, replay_lsn)::bigint
FROM pg_stat_replication ORDER BY application_name, pid`

// StandbysTable names the table of standbys in a server account.
const StandbysTable = "standbys"

// Account is the server's account of its replication: the standbys that
// stream from it, as pg_stat_replication has them.
type Account struct {
	Standbys []Standby
}

// AccountTables puts the account in the results' shape.
func (a Account) AccountTables() []results.AccountTable {
	return []results.AccountTable{results.TableOf(StandbysTable,
		"each standby streaming from the primary (pg_stat_replication): how far behind it writes, flushes and replays the primary's WAL",
		a.Standbys)}
}

// Standby is one row of PostgreSQL's pg_stat_replication on the primary:
// a standby streaming from it. The lags are null when the server has
// none to report (e.g. a standby idle and caught up).
type Standby struct {
	ApplicationName string   `account:"application_name,key"`
	State           string   `account:"state"`      // streaming, catchup, …
	SyncState       string   `account:"sync_state"` // async, sync, potential, quorum
	WriteLagMS      *float64 `account:"write_lag,level,unit=ms"`
	FlushLagMS      *float64 `account:"flush_lag,level,unit=ms"`
	ReplayLagMS     *float64 `account:"replay_lag,level,unit=ms"`
	// ReplayLagBytes is how much WAL the primary has written that the
	// standby has not replayed yet; null before it reported any.
	ReplayLagBytes *int64 `account:"replay_lag_bytes,level,unit=bytes"`
}

// Standbys reads the standbys of an account taken of this target.
func Standbys(a *results.ServerAccount) ([]Standby, error) {
	var out []Standby
	return out, results.ReadTable(a.Table(StandbysTable), &out)
}

// ServerAccount reports the standbys that stream from the server.
func (s *store) ServerAccount(ctx context.Context) (results.AccountSnapshot, error) {
	sbs, err := s.standbys(ctx)
	return Account{Standbys: sbs}, err
}

// standbys reads pg_stat_replication.
func (s *store) standbys(ctx context.Context) ([]Standby, error) {
	var out []Standby
	ctx, cancel := s.conn.Request(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, qStandbys)
	if err != nil {
		return nil, s.conn.Fail(ctx, "server account of", err)
	}
	var sb Standby
	_, err = pgx.ForEachRow(rows, []any{&sb.ApplicationName, &sb.State, &sb.SyncState,
		&sb.WriteLagMS, &sb.FlushLagMS, &sb.ReplayLagMS, &sb.ReplayLagBytes}, func() error {
		out = append(out, sb)
		// The next row must scan into lags of its own, not into these.
		sb = Standby{}
		return nil
	})
	if err != nil {
		return nil, s.conn.Fail(ctx, "server account of", err)
	}
	return out, nil
}
