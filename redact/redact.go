// Package redact hides credentials in what freshbench shows: target URLs,
// libpq connection strings and error messages that quote them. It is a
// leaf package, so that both the targets and the renderers of a results
// file can use it.
package redact

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// masked replaces every credential that URL hides.
const masked = "xxxxx"

// secretKey reports whether a query parameter or key=value pair named key
// carries a credential. The match is by substring and ignores case, so
// password, sslpassword, Password, api_key, apikey and ApiKey are all
// caught: a name the redactor does not know is hidden rather than shown.
func secretKey(key string) bool {
	k := strings.ToLower(key)
	for _, s := range []string{"pass", "pwd", "secret", "token", "apikey", "api_key", "api-key", "credential"} {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

// URL returns raw, a target URL as the user gave it, with every
// credential replaced by xxxxx: the password of the userinfo, and the value
// of any query parameter whose name says it is a secret (password,
// sslpassword, api_key, apikey, in any case). Text without a scheme is read
// as a libpq key=value connection string (host=h password=…) and its secret
// values are hidden the same way. Every output that shows a target (console,
// results file, metric labels, progress, HTML report, error messages) shows
// it through URL.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if strings.Contains(raw, "://") {
			// A URL that does not parse cannot be taken apart safely.
			return "<unparseable URL>"
		}
		return redactKeyValues(raw)
	}
	if u.Scheme == "" {
		return redactKeyValues(raw)
	}
	if u.Opaque != "" {
		// scheme:user:password@host, without the slashes.
		if at := strings.LastIndex(u.Opaque, "@"); at >= 0 {
			if colon := strings.Index(u.Opaque[:at], ":"); colon >= 0 {
				u.Opaque = u.Opaque[:colon+1] + masked + u.Opaque[at:]
			}
		}
	}
	u.RawQuery = redactQuery(u.RawQuery)
	if u.Fragment != "" {
		u.Fragment = redactKeyValues(u.Fragment)
		u.RawFragment = ""
	}
	out := u.Redacted()
	// url.URL drops the "//" of a URL without a host (sim://?…), which
	// would no longer read as the URL the user gave.
	if u.Host == "" && u.Opaque == "" && strings.HasPrefix(raw, u.Scheme+"://") && !strings.HasPrefix(out, u.Scheme+"://") {
		out = u.Scheme + "://" + strings.TrimPrefix(out, u.Scheme+":")
	}
	return out
}

// redactQuery hides the values of secret parameters in a raw query string,
// keeping the order and encoding of the rest as given. Both & and ; count as
// separators: a client that splits on either must not find a secret.
func redactQuery(raw string) string {
	var b strings.Builder
	for raw != "" {
		i := strings.IndexAny(raw, "&;")
		pair, sep := raw, ""
		if i >= 0 {
			pair, sep, raw = raw[:i], raw[i:i+1], raw[i+1:]
		} else {
			raw = ""
		}
		key, _, hasValue := strings.Cut(pair, "=")
		if k, err := url.QueryUnescape(key); err == nil {
			key = k
		}
		if hasValue && secretKey(key) {
			pair = pair[:strings.IndexByte(pair, '=')+1] + masked
		}
		b.WriteString(pair)
		b.WriteString(sep)
	}
	return b.String()
}

// keyValue matches one key=value pair of a libpq connection string; the
// value is a single-quoted string (with backslash escapes) or runs to the
// next space.
var keyValue = regexp.MustCompile(`([\w.-]+)(\s*=\s*)('(?:[^'\\]|\\.)*'?|\S*)`)

// redactKeyValues hides the secret values of key=value text.
func redactKeyValues(s string) string {
	return keyValue.ReplaceAllStringFunc(s, func(kv string) string {
		m := keyValue.FindStringSubmatch(kv)
		if secretKey(m[1]) {
			return m[1] + m[2] + masked
		}
		if strings.Contains(m[3], "=") {
			// "user= password=x": spaces around = are allowed, so the value
			// of user may hold the next pair; hide what it holds too.
			return m[1] + m[2] + redactKeyValues(m[3])
		}
		return kv
	})
}

// CredentialVars names the environment variables that carry credentials
// to a target: the search engines' (see target/elastic) and those libpq
// and pgx read for PostgreSQL.
func CredentialVars() []string {
	return []string{
		"FRESHBENCH_ES_PASSWORD", "FRESHBENCH_ES_API_KEY", "FRESHBENCH_OS_PASSWORD",
		"PGPASSWORD", "PGSSLPASSWORD",
	}
}

// minSecret is the shortest secret Text hides: replacing every
// "ab" in a message would make it unreadable, and a password that short
// protects nothing.
const minSecret = 4

// Secrets returns the credential values that texts carry (target URLs,
// libpq key=value strings, or flags such as --target=URL) and those of the
// CredentialVars read through getenv, each as given and decoded, for
// Text. It is for text that URL cannot take apart, such as an
// error message of a client library that quotes what it was given.
func Secrets(getenv func(string) string, texts ...string) []string {
	var out []string
	add := func(vals ...string) {
		for _, v := range vals {
			if len(v) >= minSecret {
				out = append(out, v)
			}
		}
	}
	for _, name := range CredentialVars() {
		add(getenv(name))
	}
	for _, t := range texts {
		if strings.HasPrefix(t, "-") {
			// A flag: its value follows the first =.
			_, t, _ = strings.Cut(t, "=")
		}
		if u, err := url.Parse(t); err == nil && u.Scheme != "" {
			if pw, ok := u.User.Password(); ok {
				add(pw, url.PathEscape(pw), url.QueryEscape(pw))
			}
			for _, pair := range strings.FieldsFunc(u.RawQuery, func(r rune) bool { return r == '&' || r == ';' }) {
				k, v, ok := strings.Cut(pair, "=")
				if dk, err := url.QueryUnescape(k); err == nil {
					k = dk
				}
				if !ok || !secretKey(k) {
					continue
				}
				add(v)
				if dv, err := url.QueryUnescape(v); err == nil {
					add(dv)
				}
			}
			continue
		}
		for _, m := range keyValue.FindAllStringSubmatch(t, -1) {
			if secretKey(m[1]) {
				v := m[3]
				add(v)
				if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
					add(strings.NewReplacer(`\'`, `'`, `\\`, `\`).Replace(v[1 : len(v)-1]))
				}
			}
		}
	}
	return out
}

// Text returns text with every occurrence of each secret replaced
// by xxxxx, the longest first so that a secret containing another is
// hidden whole.
func Text(text string, secrets []string) string {
	s := slices.Clone(secrets)
	slices.SortFunc(s, func(a, b string) int { return len(b) - len(a) })
	for _, sec := range s {
		if len(sec) >= minSecret {
			text = strings.ReplaceAll(text, sec, masked)
		}
	}
	return text
}
