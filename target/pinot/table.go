package pinot

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/flat"
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

// ownDims and ownTimes are freshbench's columns in every schema: the stamped fields
// (_revision and _update_time 0 in an insert) and _event_time, the time
// column.
var (
	ownDims = []field{
		{Name: "_id", DataType: "STRING"},
		{Name: "generator_identifier", DataType: "STRING"},
		{Name: "_seq", DataType: "LONG"},
		{Name: "_revision", DataType: "LONG", DefaultNullValue: 0},
	}
	ownTimes = []field{
		{Name: "_event_time", DataType: "LONG", Format: "1:MICROSECONDS:EPOCH", Granularity: "1:MICROSECONDS"},
		{Name: "_update_time", DataType: "LONG", Format: "1:MICROSECONDS:EPOCH", Granularity: "1:MICROSECONDS", DefaultNullValue: 0},
	}
)

// generatedDims are the fields of freshbench's generated event shape.
var generatedDims = []field{
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

// pinotType is the column type of a kind of the flat rule.
var pinotType = map[flat.Kind]string{flat.Text: "STRING", flat.Double: "DOUBLE", flat.Boolean: "BOOLEAN"}

// userColumns is the table made from a sample of the user's events
// (ShapeEvents): the columns of the fields the sample holds, by the flat
// rule, and those left out.
type userColumns struct {
	sampled int
	columns []flat.Derived // stored
	dotted  []string       // left out: see ShapeEvents
}

// ShapeEvents makes the schema from the sample's fields, by the flat
// rule. Pinot flattens each event on ingestion (complexTypeConfig: a
// nested field's key is its path joined with '.', an array the STRING of
// its JSON) and a transform names each column as the rule does
// (user.geo.city: user_geo_city). A field whose types differ across the
// sample is a STRING. A top-level field whose name holds a '.' is left
// out: Pinot reads a flattened key up to its first '.' from the event, so
// it would find no such field. An event of the sample whose fields
// flatten onto one column, or onto one of freshbench's, refuses the
// events.
func (s *store) ShapeEvents(sample [][]byte) error {
	if len(sample) == 0 {
		s.user = nil
		return nil
	}
	derived, err := flat.Derive(sample)
	if err != nil {
		return fmt.Errorf("pinot table %s: %w; rename the field", s.cfg.table, err)
	}
	u := &userColumns{sampled: len(sample)}
	for _, d := range derived {
		if strings.Contains(d.Path[0], ".") {
			u.dotted = append(u.dotted, d.Name)
			continue
		}
		u.columns = append(u.columns, d)
	}
	s.user = u
	return nil
}

// transforms name the flattened fields as the rule does: each column
// whose field Pinot's flattening keys otherwise is filled from that key.
func (u *userColumns) transforms() []map[string]string {
	var ts []map[string]string
	for _, c := range u.columns {
		if key := strings.Join(c.Path, "."); key != c.Name {
			// A quoted identifier: the key as it is.
			ts = append(ts, map[string]string{"columnName": c.Name, "transformFunction": `"` + strings.ReplaceAll(key, `"`, `""`) + `"`})
		}
	}
	return ts
}

// schema is the table's schema: freshbench's columns and the user's, or
// with no sample those of freshbench's generated event shape.
func (s *store) schema() map[string]any {
	dims := slices.Clone(ownDims)
	if s.user == nil {
		dims = append(dims, generatedDims...)
	} else {
		for _, c := range s.user.columns {
			dims = append(dims, field{Name: c.Name, DataType: pinotType[c.Kind]})
		}
	}
	sc := map[string]any{"schemaName": s.cfg.table, "dimensionFieldSpecs": dims, "dateTimeFieldSpecs": ownTimes}
	if s.cfg.upsert {
		sc["primaryKeyColumns"] = []string{"_id"}
	}
	return sc
}

// Layout says what Setup made for the events: a table of the user's
// fields, or of freshbench's own event shape, or one that was there.
func (s *store) Layout() string {
	if s.kept != nil {
		return fmt.Sprintf("table %s: kept as it was (recreate it to make it from these events), its schema's %d columns (%s); a field of the events that the schema does not name is not stored",
			s.cfg.table, len(s.kept), strings.Join(s.kept, ", "))
	}
	var own []string
	for _, f := range append(slices.Clone(ownDims), ownTimes...) {
		own = append(own, f.Name)
	}
	if s.user == nil {
		var cols []string
		for _, f := range generatedDims {
			cols = append(cols, f.Name)
		}
		return fmt.Sprintf("table %s: the schema is freshbench's generated event shape, %d columns (%s, %s); "+
			"a field of the events that the schema does not name is not stored",
			s.cfg.table, len(own)+len(cols), strings.Join(own, ", "), strings.Join(cols, ", "))
	}
	u := s.user
	var cols, mixed []string
	for _, c := range u.columns {
		cols = append(cols, c.Name+" "+pinotType[c.Kind])
		if c.Mixed {
			mixed = append(mixed, c.Name)
		}
	}
	l := fmt.Sprintf("table %s: columns from the fields of the first %d events, flattened by Pinot on ingestion by the flat rule (%s), %d columns: freshbench's %s; the events' %s",
		s.cfg.table, u.sampled, flat.Rule("STRING"), len(own)+len(cols), strings.Join(own, ", "), strings.Join(cols, ", "))
	if len(mixed) > 0 {
		l += "; of more than one type in the sample, so a STRING of each value's text: " + strings.Join(mixed, ", ")
	}
	if len(u.dotted) > 0 {
		l += "; left out, from a top-level field whose name holds a '.', which Pinot's flattening cannot read (rename the field): " + strings.Join(u.dotted, ", ")
	}
	return l + "; an empty array is no value (Pinot reads it as null); a field first seen after the sample is not stored, " +
		"and an event whose value does not fit its column (a string in a DOUBLE column) is dropped by Pinot whole, so the audit finds it missing; a query reads a field by its column"
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
			"invertedIndexColumns": []string{"generator_identifier", "_id"},
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
	index := t["tableIndexConfig"].(map[string]any)
	if s.user == nil {
		index["invertedIndexColumns"] = []string{"generator_identifier", "_id", "processBy", "company", "emails"}
		// Long text and JSON, unique to each event, stored raw: a
		// dictionary of them would only slow the segment's build (while
		// which the server consumes nothing).
		index["noDictionaryColumns"] = []string{"guid", "about", "greeting", "address", "friends"}
	} else {
		// The flat rule's flattening, by Pinot: every array kept whole as
		// its JSON; the columns named by the transforms.
		ing := map[string]any{"complexTypeConfig": map[string]any{"delimiter": ".", "collectionNotUnnestedToJson": "ALL"}}
		if ts := s.user.transforms(); len(ts) > 0 {
			ing["transformConfigs"] = ts
		}
		t["ingestionConfig"] = ing
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
	switch {
	case !ok:
		if err := s.api.Call(ctx, "setup of", http.MethodPost, s.cfg.controller+"/schemas?override=true", s.schema(), nil); err != nil {
			return err
		}
		if err := s.api.Call(ctx, "setup of", http.MethodPost, s.cfg.controller+"/tables", s.tableConfig(brokers, topic), nil); err != nil {
			return err
		}
		s.made = true
	case !s.made:
		// The layout names the columns of the table kept, not those
		// these events would have made.
		if s.kept, err = s.schemaColumns(ctx); err != nil {
			return err
		}
	}
	return s.waitConsuming(ctx)
}

// schemaColumns names the columns of the table's schema.
func (s *store) schemaColumns(ctx context.Context) ([]string, error) {
	type spec struct {
		Name string `json:"name"`
	}
	var sc struct {
		Dims    []spec `json:"dimensionFieldSpecs"`
		Metrics []spec `json:"metricFieldSpecs"`
		Times   []spec `json:"dateTimeFieldSpecs"`
	}
	if err := s.api.Call(ctx, "schema of", http.MethodGet, s.schemaURL(), nil, &sc); err != nil {
		return nil, err
	}
	var cols []string
	for _, f := range slices.Concat(sc.Dims, sc.Metrics, sc.Times) {
		cols = append(cols, f.Name)
	}
	return cols, nil
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
