package redact

import (
	"slices"
	"strings"
	"testing"
)

func TestRedactEveryCredentialForm(t *testing.T) {
	const s = "s3cret"
	for _, c := range []struct{ raw, want string }{
		{"postgres://u@h/db?Password=s3cret&table=t", "postgres://u@h/db?Password=xxxxx&table=t"},
		{"postgres://u@h/db?table=t&PASSWORD=s3cret&SSLPassword=s3cret", "postgres://u@h/db?table=t&PASSWORD=xxxxx&SSLPassword=xxxxx"},
		{"postgres://u@h/db?sslpassword=s3cret", "postgres://u@h/db?sslpassword=xxxxx"},
		{"postgres://u@h/db?pass%77ord=s3cret", "postgres://u@h/db?pass%77ord=xxxxx"},
		{"postgres://u@h/db?a=1;password=s3cret", "postgres://u@h/db?a=1;password=xxxxx"},
		{"elasticsearch://h:9200/i?ApiKey=s3cret", "elasticsearch://h:9200/i?ApiKey=xxxxx"},
		{"elasticsearch://h:9200/i?apikey=s3cret&api_key=s3cret", "elasticsearch://h:9200/i?apikey=xxxxx&api_key=xxxxx"},
		{"elasticsearch://elastic:s3cret@h:9200/i", "elasticsearch://elastic:xxxxx@h:9200/i"},
		{"postgres://u:s3c%40ret@h/db", "postgres://u:xxxxx@h/db"},
		{"postgres:u:s3cret@h/db", "postgres:u:xxxxx@h/db"},
		{"sim://?password=s3cret", "sim://?password=xxxxx"},
		{"host=h port=5432 user=u password=s3cret dbname=d", "host=h port=5432 user=u password=xxxxx dbname=d"},
		{"host=h password = 's3cret with spaces' dbname=d", "host=h password = xxxxx dbname=d"},
		{`host=h password='s3\'cret' sslpassword=s3cret`, "host=h password=xxxxx sslpassword=xxxxx"},
		{"host=h:5432 password=s3cret", "host=h:5432 password=xxxxx"},
		{"host=h user= password=s3cret", "host=h user= password=xxxxx"},
		{"host=h user=password=s3cret", "host=h user=password=xxxxx"},
		{"postgres://u:pa s3cret@h/db", "<unparseable URL>"},
		{"postgres://h/db#password=s3cret", "postgres://h/db#password=xxxxx"},
		// Nothing secret: unchanged.
		{"postgres://u@h:5432/db?table=events&sslmode=disable", "postgres://u@h:5432/db?table=events&sslmode=disable"},
		{"host=h dbname=d", "host=h dbname=d"},
	} {
		got := URL(c.raw)
		if got != c.want {
			t.Errorf("URL(%q) = %q, want %q", c.raw, got, c.want)
		}
		if strings.Contains(got, s) || strings.Contains(got, "s3c%40ret") {
			t.Errorf("URL(%q) = %q shows the secret", c.raw, got)
		}
	}
}

func TestSecretsAndRedactSecrets(t *testing.T) {
	env := map[string]string{"PGPASSWORD": "pg-secret", "FRESHBENCH_ES_API_KEY": "aWQ6a2V5", "FRESHBENCH_OS_PASSWORD": "ab", "HOME": "/root"}
	secrets := Secrets(func(k string) string { return env[k] },
		"--target=postgres://u:p%40ss-word@h/db?PASSWORD=qu%20ery&table=events",
		"host=h password='dsn \\'quoted\\'' sslpassword=plain-dsn",
		"sqlite:///tmp/x.db",
	)
	for _, want := range []string{"pg-secret", "aWQ6a2V5", "p@ss-word", "p%40ss-word", "qu ery", "qu%20ery", "dsn 'quoted'", "plain-dsn"} {
		if !slices.Contains(secrets, want) {
			t.Errorf("Secrets: %q missing from %q", want, secrets)
		}
	}
	for _, not := range []string{"ab", "/root", "events", "u", "h"} {
		if slices.Contains(secrets, not) {
			t.Errorf("Secrets: %q is not a credential, in %q", not, secrets)
		}
	}
	msg := "dial: user u password p@ss-word (and p%40ss-word), key aWQ6a2V5, option qu ery, about a cab"
	got := Text(msg, secrets)
	if want := "dial: user u password xxxxx (and xxxxx), key xxxxx, option xxxxx, about a cab"; got != want {
		t.Errorf("Text = %q, want %q", got, want)
	}
	// The longest first: a secret that contains another is hidden whole.
	if got := Text("token abcdefgh", []string{"abcd", "abcdefgh"}); got != "token xxxxx" {
		t.Errorf("Text with nested secrets = %q, want %q", got, "token xxxxx")
	}
}
