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

// ServerAccount reports the standbys that stream from the server, as
// pg_stat_replication has them.
func (s *store) ServerAccount(ctx context.Context) (results.ServerAccount, error) {
	var acct results.ServerAccount
	ctx, cancel := s.conn.Request(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, qStandbys)
	if err != nil {
		return acct, s.conn.Fail(ctx, "server account of", err)
	}
	var sb results.StandbyAccount
	_, err = pgx.ForEachRow(rows, []any{&sb.ApplicationName, &sb.State, &sb.SyncState,
		&sb.WriteLagMS, &sb.FlushLagMS, &sb.ReplayLagMS, &sb.ReplayLagBytes}, func() error {
		acct.Standbys = append(acct.Standbys, sb)
		// The next row must scan into lags of its own, not into these.
		sb = results.StandbyAccount{}
		return nil
	})
	if err != nil {
		return acct, s.conn.Fail(ctx, "server account of", err)
	}
	return acct, nil
}
