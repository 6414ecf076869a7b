package pinot

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/freshbench/freshbench/target"
)

// field is one column of the schema.
type field struct {
	Name             string `json:"name"`
	DataType         string `json:"dataType"`
	SingleValueField *bool  `json:"singleValueField,omitempty"`
	DefaultNullValue any    `json:"defaultNullValue,omitempty"`
	Format           string `json:"format,omitempty"`
	Granularity      string `json:"granularity,omitempty"`
}

var multi = new(bool) // false: a multi-valued column

// schema is the table's schema: freshbench's event shape (the fields of
// every generated event, the update fields _revision and _update_time
// 0 in an insert).
func (s *store) schema() map[string]any {
	dims := []field{
		{Name: "_id", DataType: "STRING"},
		{Name: "generator_identifier", DataType: "STRING"},
		{Name: "_seq", DataType: "LONG"},
		{Name: "_revision", DataType: "LONG", DefaultNullValue: 0},
		{Name: "guid", DataType: "STRING"},
		{Name: "isActive", DataType: "BOOLEAN"},
		{Name: "balance", DataType: "LONG"},
		{Name: "picture", DataType: "STRING"},
		{Name: "age", DataType: "INT"},
		{Name: "eyeColor", DataType: "STRING"},
		{Name: "name", DataType: "STRING"},
		{Name: "gender", DataType: "STRING"},
		{Name: "company", DataType: "STRING"},
		{Name: "email", DataType: "STRING"},
		{Name: "emails", DataType: "STRING", SingleValueField: multi},
		{Name: "phone", DataType: "STRING"},
		{Name: "processBy", DataType: "STRING"},
		{Name: "address", DataType: "JSON"},
		{Name: "about", DataType: "STRING"},
		{Name: "registered", DataType: "STRING"},
		{Name: "tags", DataType: "STRING", SingleValueField: multi},
		{Name: "ratings", DataType: "INT", SingleValueField: multi},
		{Name: "friends", DataType: "JSON"},
		{Name: "favoriteFruit", DataType: "STRING"},
		{Name: "score", DataType: "DOUBLE"},
		{Name: "greeting", DataType: "STRING"},
	}
	times := []field{
		{Name: "_event_time", DataType: "LONG", Format: "1:MICROSECONDS:EPOCH", Granularity: "1:MICROSECONDS"},
		{Name: "_update_time", DataType: "LONG", Format: "1:MICROSECONDS:EPOCH", Granularity: "1:MICROSECONDS", DefaultNullValue: 0},
	}
	sc := map[string]any{"schemaName": s.cfg.table, "dimensionFieldSpecs": dims, "dateTimeFieldSpecs": times}
	if s.cfg.upsert {
		sc["primaryKeyColumns"] = []string{"_id"}
	}
	return sc
}

// Layout says what Setup made for the events: a schema of freshbench's
// own event shape, whatever the events sent are.
func (s *store) Layout() string {
	sc := s.schema()
	var cols []string
	for _, f := range append(sc["dimensionFieldSpecs"].([]field), sc["dateTimeFieldSpecs"].([]field)...) {
		cols = append(cols, f.Name)
	}
	return fmt.Sprintf("table %s: the schema is freshbench's generated event shape, %d columns (%s); "+
		"a field of the events that the schema does not name is not stored, so a corpus or template of another shape keeps only the fields it shares with it",
		s.cfg.table, len(cols), strings.Join(cols, ", "))
}

// tableConfig is the REALTIME table consuming topic on brokers.
func (s *store) tableConfig(brokers, topic string) map[string]any {
	set := s.cfg.settings
	t := map[string]any{
		"tableName": s.cfg.table,
		"tableType": "REALTIME",
		"segmentsConfig": map[string]any{
			"timeColumnName":       "_event_time",
			"schemaName":           s.cfg.table,
			"replicasPerPartition": "1",
		},
		"tenants":  map[string]any{},
		"metadata": map[string]any{},
		"tableIndexConfig": map[string]any{
			"loadMode":             "MMAP",
			"invertedIndexColumns": []string{"generator_identifier", "_id", "processBy", "company", "emails"},
			// Long text and JSON, unique to each event, stored raw: a
			// dictionary of them would only slow the segment's build
			// (while which the server consumes nothing).
			"noDictionaryColumns": []string{"guid", "about", "greeting", "address", "friends"},
			"streamConfigs": map[string]string{
				"streamType":                               "kafka",
				"stream.kafka.consumer.type":               "lowlevel",
				"stream.kafka.topic.name":                  topic,
				"stream.kafka.broker.list":                 brokers,
				"stream.kafka.decoder.class.name":          "org.apache.pinot.plugin.stream.kafka.KafkaJSONMessageDecoder",
				"stream.kafka.consumer.factory.class.name": "org.apache.pinot.plugin.stream.kafka20.KafkaConsumerFactory",
				// Events produced before the table is made are read too.
				"stream.kafka.consumer.prop.auto.offset.reset": "smallest",
				// Pinot 0.11 gives its Kafka consumer every stream setting
				// as a consumer property: this names it in Kafka (its
				// logs, its quotas) as ConsumerClientID says.
				"client.id":                             ConsumerClientID(s.cfg.table),
				"realtime.segment.flush.threshold.rows": strconv.Itoa(set["flush_rows"].(int)),
				"realtime.segment.flush.threshold.time": set["flush_time"].(time.Duration).String(),
			},
		},
	}
	if s.cfg.upsert {
		// Pinot keeps the upsert metadata per partition on the server
		// that consumes it: queries must route to that one.
		t["upsertConfig"] = map[string]any{"mode": "FULL", "comparisonColumn": "_revision"}
		t["routing"] = map[string]any{"instanceSelectorType": "strictReplicaGroup"}
	}
	return t
}

// ConsumerClientID is the Kafka client id of the consumer of table's
// server.
func ConsumerClientID(table string) string { return "pinot-" + table }

// tableTopic reads the REALTIME table's config: its topic and whether it
// is an upsert table, and false when there is none.
func (s *store) tableTopic(ctx context.Context) (topic string, upsert, ok bool, err error) {
	var have struct {
		Realtime *struct {
			TableIndexConfig struct {
				StreamConfigs map[string]string `json:"streamConfigs"`
			} `json:"tableIndexConfig"`
			UpsertConfig *struct {
				Mode string `json:"mode"`
			} `json:"upsertConfig"`
		} `json:"REALTIME"`
	}
	if err := s.api.Call(ctx, "table of", http.MethodGet, s.tableURL("?type=realtime"), nil, &have); err != nil {
		return "", false, false, err
	}
	if have.Realtime == nil {
		return "", false, false, nil
	}
	up := have.Realtime.UpsertConfig != nil && have.Realtime.UpsertConfig.Mode != "" && have.Realtime.UpsertConfig.Mode != "NONE"
	return have.Realtime.TableIndexConfig.StreamConfigs["stream.kafka.topic.name"], up, true, nil
}

func (s *store) tableURL(suffix string) string {
	return s.cfg.controller + "/tables/" + url.PathEscape(s.cfg.table) + suffix
}

func (s *store) schemaURL() string {
	return s.cfg.controller + "/schemas/" + url.PathEscape(s.cfg.table)
}

// Setup makes the schema and the REALTIME table that consumes the via's
// topic (idempotent: a table consuming that topic, of the same kind, is
// left as it is) and waits until its server consumes. With Recreate,
// what was there is torn down first.
func (s *store) Setup(ctx context.Context) error {
	brokers, topic := s.Source()
	if topic == "" {
		return fmt.Errorf("pinot %s: %w", s.cfg.redacted, errNoVia)
	}
	if s.cfg.recreate {
		if err := s.Teardown(ctx); err != nil {
			return err
		}
	}
	have, up, ok, err := s.tableTopic(ctx)
	if err != nil {
		return err
	}
	if ok && (have != topic || up != s.cfg.upsert) {
		return fmt.Errorf("%w: pinot table %s consumes topic %s (upsert %v), not %s (upsert %v): recreate it, or give another table",
			target.ErrBadSetting, s.cfg.table, have, up, topic, s.cfg.upsert)
	}
	if !ok {
		if err := s.api.Call(ctx, "setup of", http.MethodPost, s.cfg.controller+"/schemas?override=true", s.schema(), nil); err != nil {
			return err
		}
		if err := s.api.Call(ctx, "setup of", http.MethodPost, s.cfg.controller+"/tables", s.tableConfig(brokers, topic), nil); err != nil {
			return err
		}
	}
	return s.waitConsuming(ctx)
}

// waitConsuming waits until the server says it consumes every partition
// of the table (the events produced until then wait in the topic).
func (s *store) waitConsuming(ctx context.Context) error {
	var last string
	for {
		ps, err := s.partitions(ctx)
		if err != nil {
			return err
		}
		last = "no consuming segment"
		if len(ps) > 0 {
			last = ""
			for _, p := range ps {
				if p.State != "CONSUMING" {
					last = "segment " + p.Segment + " on " + p.Server + " " + p.State
				}
			}
			if last == "" {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pinot setup of %s: the server does not consume the topic (%s): %w", s.cfg.table, last, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// Teardown drops the table (its segments with it) and its schema.
func (s *store) Teardown(ctx context.Context) error {
	_, _, ok, err := s.tableTopic(ctx)
	if err != nil {
		return err
	}
	if ok {
		if err := s.api.Call(ctx, "teardown of", http.MethodDelete, s.tableURL("?type=realtime"), nil, nil); err != nil {
			return err
		}
	}
	// The controller refuses to drop a schema while a table it is
	// dropping still uses it.
	for {
		err := s.api.Call(ctx, "teardown of", http.MethodDelete, s.schemaURL(), nil, nil)
		var pe *pinotError
		if err == nil || (errors.As(err, &pe) && pe.Status == http.StatusNotFound) {
			return nil
		}
		if !errors.As(err, &pe) || pe.Status != http.StatusConflict {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", err, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}
