package elastic

import "strconv"

// Settings returns the settings (--set keys) in effect, defaults included.
func (t *Target) Settings() map[string]string {
	return map[string]string{
		"shards":           strconv.Itoa(t.cfg.shards),
		"replicas":         strconv.Itoa(t.cfg.replicas),
		"refresh_interval": t.cfg.refreshInterval,
		"max_retries":      strconv.Itoa(t.cfg.maxRetries),
	}
}
