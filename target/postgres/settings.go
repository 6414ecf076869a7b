package postgres

import "strconv"

// Settings returns the settings (--set keys) in effect, defaults included.
func (s *store) Settings() map[string]string {
	gin := s.cfg.gin
	if gin == "" {
		gin = "false"
	}
	sync := s.cfg.pool.ConnConfig.RuntimeParams["synchronous_commit"]
	if sync == "" {
		sync = "server default"
	}
	return map[string]string{
		"table":              s.cfg.table,
		"write_method":       s.cfg.method,
		"gin":                gin,
		"unlogged":           strconv.FormatBool(s.cfg.unlogged),
		"max_conns":          strconv.Itoa(int(s.cfg.pool.MaxConns)),
		"synchronous_commit": sync,
	}
}
