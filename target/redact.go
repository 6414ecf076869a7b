package target

import "github.com/freshbench/freshbench/redact"

// Redact returns raw, a target URL as the user gave it, with every
// credential replaced by xxxxx (redact.URL). Every output that shows a
// target (console, results file, metric labels, progress, HTML report,
// error messages) shows it through Redact.
func Redact(raw string) string { return redact.URL(raw) }

// CredentialVars names the environment variables that carry credentials
// to a target (redact.CredentialVars).
func CredentialVars() []string { return redact.CredentialVars() }

// Secrets returns the credential values that texts carry and those of the
// CredentialVars read through getenv (redact.Secrets), for RedactSecrets.
func Secrets(getenv func(string) string, texts ...string) []string {
	return redact.Secrets(getenv, texts...)
}

// RedactSecrets returns text with every occurrence of each secret replaced
// by xxxxx (redact.Text).
func RedactSecrets(text string, secrets []string) string { return redact.Text(text, secrets) }
