package models

import (
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"gorm.io/gorm/schema"
)

// TestHandWrittenStatementsCoverTheModels guards the statements written by
// hand (turnsql.go, the export's read of the logs) against a field added to a model later: gorm would
// write or read it, these would silently not.
func TestHandWrittenStatementsCoverTheModels(t *testing.T) {
	columns := func(model any, creatable bool) []string {
		t.Helper()
		sch, err := schema.Parse(model, &sync.Map{}, schema.NamingStrategy{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range sch.Fields {
			if f.DBName == "" || (creatable && (!f.Creatable || f.PrimaryKey)) {
				continue
			}
			out = append(out, f.DBName)
		}
		slices.Sort(out)
		return out
	}
	// An entry's INSERT writes every column gorm's Create would.
	m := regexp.MustCompile(`(?s)INSERT INTO messages \((.*?)\)`).FindStringSubmatch(insertEntryStmt.sqlite)
	if m == nil {
		t.Fatal("no column list in the entry's INSERT")
	}
	var inserted []string
	for _, c := range strings.Split(m[1], ",") {
		inserted = append(inserted, strings.TrimSpace(c))
	}
	slices.Sort(inserted)
	if want := columns(&Message{}, true); !reflect.DeepEqual(inserted, want) {
		t.Errorf("the entry's INSERT writes %v; Message has %v", inserted, want)
	}
	// The export's read of the logs takes every column of Message.
	m = regexp.MustCompile(`(?s)SELECT (.*?) FROM messages`).FindStringSubmatch(exportLogsSQL)
	if m == nil {
		t.Fatal("no column list in the export's read of the logs")
	}
	var exported []string
	for _, c := range strings.Split(m[1], ",") {
		exported = append(exported, strings.TrimSpace(c))
	}
	slices.Sort(exported)
	if want := columns(&Message{}, false); !reflect.DeepEqual(exported, want) {
		t.Errorf("the export reads messages' %v; Message has %v", exported, want)
	}
	for _, q := range []stmt{insertEntryStmt, insertErrorRowStmt} {
		if n, want := strings.Count(q.sqlite, "?"), strings.Count(q.postgres, "$"); n != want || n == 0 {
			t.Errorf("%d placeholders on SQLite, %d on PostgreSQL: %s", n, want, q.sqlite)
		}
	}
	// The key's read fills every field of User.
	read := regexp.MustCompile(`u\.([a-z_]+)`).FindAllStringSubmatch(userByAPIKeyStmt.sqlite, -1)
	var users []string
	for _, r := range read {
		users = append(users, r[1])
	}
	slices.Sort(users)
	users = slices.Compact(users)
	if want := columns(&User{}, false); !reflect.DeepEqual(users, want) {
		t.Errorf("the key's read takes users' %v; User has %v", users, want)
	}
}
