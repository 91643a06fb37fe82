package main

import (
	"net/url"
	"regexp"
	"strings"
)

// keyValuePassword finds the password of a key=value connection string
// ("host=db password=secret"), quoted or not.
var keyValuePassword = regexp.MustCompile(`(?i)(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)`)

// redactDSN is a --db value fit for the log: the password of a URL (in its
// user part or a password parameter) or of a key=value string replaced by
// xxxxx. A URL that does not parse is not shown at all, since where its
// password is cannot be told.
func redactDSN(dsn string) string {
	if !strings.Contains(dsn, "://") {
		return keyValuePassword.ReplaceAllString(dsn, "${1}xxxxx")
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "(a database URL that does not parse)"
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}
