package models

import (
	"context"
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
	// listed is the column list the pattern's group finds in q, sorted.
	listed := func(pattern, q string) []string {
		t.Helper()
		m := regexp.MustCompile(pattern).FindStringSubmatch(q)
		if m == nil {
			t.Fatalf("no column list %s in %s", pattern, q)
		}
		var out []string
		for _, c := range strings.Split(m[1], ",") {
			out = append(out, strings.TrimSpace(c))
		}
		slices.Sort(out)
		return out
	}
	// An entry's INSERT writes every column gorm's Create would.
	if inserted, want := listed(`(?s)INSERT INTO messages \((.*?)\)`, insertEntryStmt.sqlite), columns(&Message{}, true); !reflect.DeepEqual(inserted, want) {
		t.Errorf("the entry's INSERT writes %v; Message has %v", inserted, want)
	}
	// The export's read of the logs takes every column of Message.
	if exported, want := listed(`(?s)SELECT (.*?) FROM messages`, exportLogsSQL), columns(&Message{}, false); !reflect.DeepEqual(exported, want) {
		t.Errorf("the export reads messages' %v; Message has %v", exported, want)
	}
	// A reply's usage row writes every column gorm's Create would.
	if usage, want := listed(`(?s)INSERT INTO usage_daily \((.*?)\)`, addUsageStmt.sqlite), columns(&UsageDaily{}, true); !reflect.DeepEqual(usage, want) {
		t.Errorf("the usage row's INSERT writes %v; UsageDaily has %v", usage, want)
	}
	for _, q := range []stmt{insertEntryStmt, insertErrorRowStmt, addUsageStmt} {
		if n, want := strings.Count(q.sqlite, "?"), strings.Count(q.postgres, "$"); n != want || n == 0 {
			t.Errorf("%d placeholders on SQLite, %d on PostgreSQL: %s", n, want, q.sqlite)
		}
	}
	// The lease's statements return every column of Exchange, each into
	// its field.
	returned := strings.Fields(strings.ReplaceAll(exchangeColumns, ",", " "))
	if n := len(exchangeFields(&Exchange{})); n != len(returned) {
		t.Errorf("%d columns returned into %d fields", len(returned), n)
	}
	slices.Sort(returned)
	if want := columns(&Exchange{}, false); !reflect.DeepEqual(returned, want) {
		t.Errorf("the lease's statements return exchanges' %v; Exchange has %v", returned, want)
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

// TestLeaseReturnsTheStoredHeader: the header the lease's statements
// return, scanned by hand, is the row as gorm reads it, field for field.
func TestLeaseReturnsTheStoredHeader(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann := mustUser(t, s, "ann")
		name := "garden"
		p, err := s.CreateProject(ctx, ann.ID, ProjectInput{Name: &name})
		if err != nil {
			t.Fatal(err)
		}
		first, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "first", ProjectID: &p.ID}, "one")
		// Distinct values where a swapped pair of fields would show.
		if err := s.db.Exec(`UPDATE exchanges SET pinned = ?, archived = ?, turn_active_ms = 17 WHERE id = ?`,
			true, false, first.ID).Error; err != nil {
			t.Fatal(err)
		}
		started, _ := mustStart(t, s, TurnStart{UserID: ann.ID, ExchangeID: first.ID, Query: "second"})
		finished, err := s.FinishTurnHeader(ctx, first.ID, *started.TurnOwner, assistant("two"))
		if err != nil {
			t.Fatal(err)
		}
		stored, err := s.Exchange(ctx, ann.ID, first.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(finished, stored) {
			t.Errorf("returned %+v\nstored   %+v", finished, stored)
		}
		if started.TurnOwner == nil || started.TurnCount != 2 || !started.Pinned || started.TurnActiveMS != 17 ||
			started.ProjectID == nil || *started.ProjectID != p.ID || started.FirstQueryID == nil {
			t.Errorf("the started header %+v", started)
		}
	})
}
