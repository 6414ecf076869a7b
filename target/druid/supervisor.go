package druid

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/freshbench/freshbench/target"
)

// spec is the Kafka supervisor spec of the datasource: freshbench's
// event shape (package doc) read from topic on brokers.
func (s *store) spec(brokers, topic string) map[string]any {
	set := s.cfg.settings
	return map[string]any{
		"type": "kafka",
		"spec": map[string]any{
			"dataSchema": map[string]any{
				"dataSource": s.cfg.datasource,
				// Druid's timestamp formats stop at milliseconds, and
				// _event_time is in microseconds: the column is read as
				// it is and __time made from it by a transform, which
				// replaces the parsed time.
				"timestampSpec": map[string]any{"column": "_event_time", "format": "millis"},
				"transformSpec": map[string]any{"transforms": []any{
					map[string]any{"type": "expression", "name": "__time", "expression": "_event_time / 1000"},
				}},
				"dimensionsSpec": map[string]any{
					"useSchemaDiscovery": true,
					"dimensions": []any{
						map[string]any{"type": "string", "name": "_id"},
						map[string]any{"type": "string", "name": "generator_identifier"},
						map[string]any{"type": "long", "name": "_seq"},
						map[string]any{"type": "long", "name": "_event_time"},
					},
				},
				"granularitySpec": map[string]any{
					"segmentGranularity": set["segment_granularity"],
					"queryGranularity":   "none",
					"rollup":             false,
				},
			},
			"ioConfig": map[string]any{
				"topic":       topic,
				"inputFormat": map[string]any{"type": "json"},
				// client.id names Druid's consumers in Kafka (its logs,
				// its quotas) as ConsumerClientID says.
				"consumerProperties": map[string]any{"bootstrap.servers": brokers, "client.id": ConsumerClientID(s.cfg.datasource)},
				// Events produced before the first task starts are read too.
				"useEarliestOffset": true,
				"taskCount":         1,
				"replicas":          1,
				"taskDuration":      set["task_duration"],
				// The supervisor's own duties (a task that failed is
				// replaced) run this often: 30 s by default.
				"period": "PT5S",
			},
			"tuningConfig": map[string]any{
				"type":            "kafka",
				"maxRowsInMemory": set["max_rows_in_memory"],
				// An event Druid cannot parse is counted by the task
				// (the audit finds it missing), not a failed task.
				"maxParseExceptions":       2147483647,
				"logParseExceptions":       true,
				"resetOffsetAutomatically": false,
				// How often Druid fetches Kafka's end offsets and its
				// tasks' offsets, and with them its lag (the account's):
				// 30 s by default, 5 s at least.
				"offsetFetchPeriod": "PT5S",
			},
		},
	}
}

const supervisorAPI = "/druid/indexer/v1/supervisor"

// ConsumerClientID is the Kafka client id of the consumers of the tasks
// of datasource's supervisor.
func ConsumerClientID(datasource string) string { return "druid-" + datasource }

// supervisorURL is the URL of the datasource's supervisor (Druid names it
// after the datasource), then suffix ("/reset").
func (s *store) supervisorURL(suffix string) string {
	return s.cfg.overlord + supervisorAPI + "/" + url.PathEscape(s.cfg.datasource) + suffix
}

// supervisorSpec reads the supervisor's spec: its topic, and false when
// there is none.
func (s *store) supervisorSpec(ctx context.Context) (topic string, ok bool, err error) {
	var spec struct {
		Spec struct {
			IOConfig struct {
				Topic string `json:"topic"`
			} `json:"ioConfig"`
		} `json:"spec"`
	}
	err = s.api.Call(ctx, "supervisor of", http.MethodGet, s.supervisorURL(""), nil, &spec)
	var de *druidError
	if errors.As(err, &de) && de.Status == http.StatusNotFound {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return spec.Spec.IOConfig.Topic, true, nil
}

// Setup makes the supervisor that reads the via's topic into the
// datasource (idempotent: one reading that topic is left as it is) and
// waits until its task runs. With Recreate, what was there is torn down
// first.
func (s *store) Setup(ctx context.Context) error {
	brokers, topic := s.Source()
	if topic == "" {
		return fmt.Errorf("druid %s: %w", s.cfg.redacted, errNoVia)
	}
	if s.cfg.recreate {
		if err := s.Teardown(ctx); err != nil {
			return err
		}
	}
	have, ok, err := s.supervisorSpec(ctx)
	if err != nil {
		return err
	}
	if ok && have != topic {
		return fmt.Errorf("%w: druid datasource %s is fed from topic %s, not %s: recreate it, or give another datasource or that topic",
			target.ErrBadSetting, s.cfg.datasource, have, topic)
	}
	if !ok {
		if err := s.api.Call(ctx, "setup of", http.MethodPost, s.cfg.overlord+supervisorAPI, s.spec(brokers, topic), nil); err != nil {
			return err
		}
	}
	return s.waitReading(ctx)
}

// waitReading waits until the supervisor runs a task that Druid says is
// running (the events produced until then wait in the topic).
func (s *store) waitReading(ctx context.Context) error {
	var last string
	for {
		st, err := s.supervisorStatus(ctx)
		if err != nil {
			return err
		}
		last = st.DetailedState
		if st.State == "RUNNING" && len(st.ActiveTasks) > 0 {
			var ts struct {
				Status struct {
					Status string `json:"status"`
				} `json:"status"`
			}
			id := st.ActiveTasks[0].ID
			if err := s.api.Call(ctx, "task of", http.MethodGet, s.cfg.overlord+"/druid/indexer/v1/task/"+url.PathEscape(id)+"/status", nil, &ts); err != nil {
				return err
			}
			if ts.Status.Status == "RUNNING" {
				return nil
			}
			last = "task " + id + " " + ts.Status.Status
		}
		if len(st.RecentErrors) > 0 {
			last += ": " + st.RecentErrors[len(st.RecentErrors)-1].Message
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("druid setup of %s: the supervisor's task is not running (%s): %w", s.cfg.datasource, last, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// Teardown removes the supervisor (its stored offsets reset first, so
// that a supervisor made again reads the topic from its start), waits for
// its tasks to end, and drops the datasource: its segments marked unused,
// then deleted with a kill task.
func (s *store) Teardown(ctx context.Context) error {
	_, ok, err := s.supervisorSpec(ctx)
	if err != nil {
		return err
	}
	if ok {
		if err := s.api.Call(ctx, "teardown of", http.MethodPost, s.supervisorURL("/reset"), nil, nil); err != nil {
			return err
		}
		if err := s.api.Call(ctx, "teardown of", http.MethodPost, s.supervisorURL("/terminate"), nil, nil); err != nil {
			return err
		}
	}
	if err := s.waitNoTasks(ctx); err != nil {
		return err
	}
	ds := url.PathEscape(s.cfg.datasource)
	if err := s.api.Call(ctx, "teardown of", http.MethodDelete, s.cfg.overlord+"/druid/coordinator/v1/datasources/"+ds, nil, nil); err != nil {
		return err
	}
	kill := map[string]any{"type": "kill", "dataSource": s.cfg.datasource, "interval": "1000-01-01/3000-01-01"}
	return s.api.Call(ctx, "teardown of", http.MethodPost, s.cfg.overlord+"/druid/indexer/v1/task", kill, nil)
}

// waitNoTasks waits until no task of the datasource is pending or runs.
func (s *store) waitNoTasks(ctx context.Context) error {
	for {
		var tasks []struct {
			ID string `json:"id"`
		}
		u := s.cfg.overlord + "/druid/indexer/v1/tasks?state=running&datasource=" + url.QueryEscape(s.cfg.datasource)
		if err := s.api.Call(ctx, "teardown of", http.MethodGet, u, nil, &tasks); err != nil {
			return err
		}
		if len(tasks) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("druid teardown of %s: task %s still running: %w", s.cfg.datasource, tasks[0].ID, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}
