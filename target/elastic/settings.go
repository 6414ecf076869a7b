package elastic

import (
	"fmt"
	"strconv"

	"github.com/freshbench/freshbench/target"
)

// The values of the mapping setting.
const (
	// MappingFreshbench maps the fields that queries filter, sort or
	// aggregate on explicitly, the rest dynamically.
	MappingFreshbench = "freshbench"
	// MappingDynamic creates the index without mappings: the server maps
	// every field from the first document that has it (strings as text
	// with a keyword subfield), as for a Rally track whose index has no
	// mapping.
	MappingDynamic = "dynamic"
)

// Any other value of the mapping setting names a JSON mapping file (see
// readUserMapping).

// The values of the replication_type setting (OpenSearch's
// index.replication.type, in lower case).
const (
	// ReplicationDocument: every copy indexes each document and refreshes
	// on its own schedule.
	ReplicationDocument = "document"
	// ReplicationSegment: the primary alone indexes; replicas copy its
	// segments after each of its refreshes.
	ReplicationSegment = "segment"
)

// knobs declares every setting of the target, once: the settings help, the
// parsing and the effective settings of a results file come from here.
func knobs() target.Knobs {
	return target.Knobs{
		{Name: "shards", Default: strconv.Itoa(defaultShards), Parse: target.ParseInt(1),
			Help: "number_of_shards when the index is created"},
		{Name: "replicas", Default: strconv.Itoa(defaultReplicas), Parse: target.ParseInt(0),
			Help: "number_of_replicas when the index is created"},
		{Name: "refresh_interval", Default: defaultRefreshInterval,
			Help: "refresh_interval when the index is created, e.g. 1s; -1 disables refreshes"},
		{Name: "max_retries", Default: strconv.Itoa(defaultMaxRetries), Parse: target.ParseInt(0),
			Help: "re-sends of bulk items rejected with 429 (too many requests)"},
		{Name: "mapping", Default: MappingFreshbench, Parse: parseMapping,
			Help: "when the index is created: freshbench (the fields queries use mapped explicitly), dynamic (no mappings: the server maps every field, strings as text; no query workload), " +
				`or a JSON file, {"mappings":{…}} or {"properties":{…}}, into which freshbench merges the fields its probes need (no query workload)`},
		{Name: "replication_type", Parse: parseReplicationType,
			Help: "OpenSearch only, when the index is created: document (each copy indexes) or segment (replicas copy the primary's segments); unset: the server's"},
	}
}

// parseMapping takes freshbench or dynamic, in any case, or else the name
// of a mapping file, which applySettings reads.
func parseMapping(v string) (any, error) {
	if v == "" {
		return nil, fmt.Errorf("want %s, %s or a JSON mapping file", MappingFreshbench, MappingDynamic)
	}
	if k, err := target.OneOf(MappingFreshbench, MappingDynamic)(v); err == nil {
		return k, nil
	}
	return v, nil
}

func parseReplicationType(v string) (any, error) {
	if v == "" {
		return v, nil
	}
	return target.OneOf(ReplicationDocument, ReplicationSegment)(v)
}

// applySettings resolves the settings into c.
func (c *config) applySettings(set map[string]string) error {
	s, err := knobs().Resolve(set)
	if err != nil {
		return err
	}
	c.settings = s
	c.shards = s["shards"].(int)
	c.replicas = s["replicas"].(int)
	c.refreshInterval = s["refresh_interval"].(string)
	c.maxRetries = s["max_retries"].(int)
	c.mapping = s["mapping"].(string)
	if c.mapping != MappingFreshbench && c.mapping != MappingDynamic {
		if c.user, err = readUserMapping(c.mapping); err != nil {
			return err
		}
	}
	c.replicationType = s["replication_type"].(string)
	if c.replicationType != "" && c.product == Elasticsearch {
		return fmt.Errorf("%w replication_type=%s: Elasticsearch has no replication type (it replicates documents); remove the setting, or use an opensearch:// target",
			target.ErrBadSetting, c.replicationType)
	}
	return nil
}

// Settings returns the settings in effect, defaults included.
func (t *Target) Settings() map[string]string { return t.cfg.settings.Text() }
