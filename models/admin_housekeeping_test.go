package models

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"
)

// retentionSpecs: with a 30-day policy at adminBase, the 40- and 31-day-old
// exchanges go, the pinned 90-day-old one stays, the 29-day-old one stays.
func retentionSpecs() []*seedSpec {
	return []*seedSpec{
		{user: "ann", agent: "router", query: "old", turns: 2, ago: 40 * 24 * time.Hour},
		{user: "bob", agent: "router", query: "just over", turns: 1, failLast: true, ago: 31 * 24 * time.Hour},
		{user: "bob", agent: "router", query: "pinned", turns: 1, ago: 90 * 24 * time.Hour, pinned: true},
		{user: "ann", agent: "router", query: "recent", turns: 1, ago: 29 * 24 * time.Hour},
		{user: "cy", agent: "router", query: "today", turns: 1, ago: time.Minute},
	}
}

func TestRetention(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		sd := seedExchanges(t, s, retentionSpecs())
		admin := sd.users["ann"].ID // the first account: an admin
		doomed := []int64{sd.specs[0].id, sd.specs[1].id}
		doomedMsgs := count(t, s, "messages", "exchange_id IN (?, ?)", doomed[0], doomed[1])

		// Off by default: the scheduled job does nothing and logs nothing.
		st, err := s.Settings(ctx)
		if err != nil || st.RetentionEnabled || st.RetentionDays != 365 {
			t.Fatalf("default settings %+v, %v", st, err)
		}
		_, err = s.RunRetention(ctx, RetentionRequest{Source: RetentionScheduled, Now: adminBase})
		wantErr(t, err, ErrRetentionOff, "scheduled run while off")
		if n := count(t, s, "retention_runs", "1 = 1"); n != 0 {
			t.Fatalf("%d runs logged while off", n)
		}

		_, err = s.AdminSetRetention(ctx, true, 0)
		wantErr(t, err, ErrRetentionDays, "0 days")
		if st, err = s.AdminSetRetention(ctx, true, 30); err != nil || !st.RetentionEnabled || st.RetentionDays != 30 {
			t.Fatalf("set retention: %+v, %v", st, err)
		}

		// The candidates and the dry run name exactly the doomed; nothing goes.
		cands, err := s.AdminRetentionCandidates(ctx, RetentionCutoff(adminBase, 30), 10)
		if err != nil {
			t.Fatal(err)
		}
		var candIDs []int64
		for _, c := range cands {
			candIDs = append(candIDs, c.ID)
		}
		if !slices.Equal(candIDs, doomed) {
			t.Fatalf("candidates %v, want %v (oldest first)", candIDs, doomed)
		}
		before := tableCounts(t, s)
		dry, err := s.RunRetention(ctx, RetentionRequest{Source: RetentionManual, AdminID: &admin, DryRun: true, Now: adminBase})
		if err != nil {
			t.Fatal(err)
		}
		if dry.DeletedExchanges != 2 || dry.DeletedMessages != doomedMsgs || dry.FinishedAt == nil || dry.Error != nil {
			t.Fatalf("dry run %+v, want 2 exchanges and %d messages", dry, doomedMsgs)
		}
		after := tableCounts(t, s)
		before["retention_runs"]++ // the dry run is logged, and that is all
		if !maps.Equal(after, before) {
			t.Fatalf("the dry run changed rows:\n got %v\nwant %v", after, before)
		}

		// A dry run may try another period before it is saved; a real run may not.
		tried, err := s.RunRetention(ctx, RetentionRequest{Source: RetentionManual, DryRun: true, Days: 35, Now: adminBase})
		if err != nil || tried.Days != 35 || tried.DeletedExchanges != 1 {
			t.Fatalf("dry run with 35 days: %+v, %v", tried, err)
		}
		_, err = s.RunRetention(ctx, RetentionRequest{Source: RetentionManual, Days: 35, Now: adminBase})
		wantErr(t, err, ErrRetentionDays, "a real run with unsaved days")
		_, err = s.RunRetention(ctx, RetentionRequest{Source: RetentionManual, DryRun: true, Days: -1, Now: adminBase})
		wantErr(t, err, ErrRetentionDays, "a dry run with -1 days")
		if err := s.db.Exec("DELETE FROM retention_runs WHERE id = ?", tried.ID).Error; err != nil { // keeps the log checks below simple
			t.Fatal(err)
		}

		// The scheduled run deletes them, in batches of one here.
		run, err := s.RunRetention(ctx, RetentionRequest{Source: RetentionScheduled, Now: adminBase, BatchSize: 1})
		if err != nil {
			t.Fatal(err)
		}
		if run.DeletedExchanges != 2 || run.DeletedMessages != doomedMsgs || run.Days != 30 || run.DryRun {
			t.Fatalf("run %+v", run)
		}
		want := maps.Clone(after)
		want["exchanges"] -= 2
		want["messages"] -= doomedMsgs
		want["retention_runs"]++
		if got := tableCounts(t, s); !maps.Equal(got, want) {
			t.Fatalf("rows after the run:\n got %v\nwant %v", got, want)
		}
		for _, sp := range sd.specs {
			gone := slices.Contains(doomed, sp.id)
			if n := count(t, s, "exchanges", "id = ?", sp.id); (n == 0) != gone {
				t.Errorf("%q: %d rows left (doomed: %v)", sp.query, n, gone)
			}
		}

		// Both runs are in the log, newest first, as they happened.
		runs, err := s.AdminRetentionRuns(ctx, 10)
		if err != nil || len(runs) != 2 {
			t.Fatalf("runs %+v, %v", runs, err)
		}
		if r := runs[0]; r.Source != RetentionScheduled || r.DryRun || r.DeletedExchanges != 2 || r.FinishedAt == nil || r.AdminID != nil {
			t.Fatalf("latest run logged as %+v", r)
		}
		if r := runs[1]; r.Source != RetentionManual || !r.DryRun || r.AdminID == nil || *r.AdminID != admin ||
			r.AdminName == nil || *r.AdminName != "ann" {
			t.Fatalf("dry run logged as %+v", r)
		}
		// A second run finds nothing more.
		again, err := s.RunRetention(ctx, RetentionRequest{Source: RetentionScheduled, Now: adminBase})
		if err != nil || again.DeletedExchanges != 0 {
			t.Fatalf("second run %+v, %v", again, err)
		}
	})
}

// TestRetentionLogsFailures: a run cut short is logged with its error.
func TestRetentionLogsFailures(t *testing.T) {
	s := newSQLite(t, Options{})
	seedExchanges(t, s, retentionSpecs())
	if _, err := s.AdminSetRetention(context.Background(), true, 30); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.RunRetention(ctx, RetentionRequest{Source: RetentionManual, Now: adminBase}); err == nil {
		t.Fatal("a cancelled run reported success")
	}
	// Settings could not even be read: nothing to log. Now cancel mid-run
	// instead: settings read, run logged, then the deletion fails.
	ctx2, cancel2 := context.WithCancel(context.Background())
	s.db.Callback().Delete().Before("gorm:delete").Register("test:cancel", func(*gorm.DB) { cancel2() })
	defer s.db.Callback().Delete().Remove("test:cancel")
	run, err := s.RunRetention(ctx2, RetentionRequest{Source: RetentionManual, Now: adminBase})
	if err == nil || run == nil || run.Error == nil || run.FinishedAt == nil {
		t.Fatalf("run %+v, err %v: want a logged failure", run, err)
	}
	runs, _ := s.AdminRetentionRuns(context.Background(), 5)
	if len(runs) != 1 || runs[0].Error == nil || *runs[0].Error == "" {
		t.Fatalf("logged runs %+v", runs)
	}
	if n := count(t, s, "exchanges", "1 = 1"); n != 5 {
		t.Fatalf("%d exchanges left after a failed run, want all 5", n)
	}
}

func TestOrphans(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		sd := seedExchanges(t, s, []*seedSpec{
			{user: "ann", scope: ScopePage, page: "Kept", agent: "page_assistant", query: "on a live page", turns: 1, ago: 48 * time.Hour},
			{user: "ann", scope: ScopePage, page: "Binned", agent: "page_assistant", query: "on a binned page", turns: 2, ago: time.Minute},
			{user: "bob", agent: "router", query: "normal", turns: 1, ago: 48 * time.Hour},
		})
		if err := s.db.Exec("UPDATE pages SET deleted_at = ? WHERE id = ?", now(), sd.pages["Binned"].ID).Error; err != nil {
			t.Fatal(err)
		}
		empty := func(ago time.Duration) int64 {
			at := adminBase.Add(-ago)
			e := &Exchange{UserID: sd.users["bob"].ID, Scope: ScopeGeneral, Title: "", AgentType: "router",
				CreatedAt: at, UpdatedAt: at, TurnStatus: TurnIdle}
			if err := s.db.Create(e).Error; err != nil {
				t.Fatal(err)
			}
			return e.ID
		}
		oldEmpty := empty(3 * time.Hour)
		empty(10 * time.Minute) // within the grace period: being created
		binned := sd.specs[1].id
		binnedMsgs := count(t, s, "messages", "exchange_id = ?", binned)

		orphans, total, err := s.AdminOrphans(ctx, adminBase, 10)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, o := range orphans {
			ids = append(ids, o.ID)
		}
		slices.Sort(ids)
		if total != 2 || !slices.Equal(ids, []int64{binned, oldEmpty}) && !slices.Equal(ids, []int64{oldEmpty, binned}) {
			t.Fatalf("orphans %v (total %d), want %d and %d", ids, total, binned, oldEmpty)
		}
		for _, o := range orphans {
			if (o.ID == oldEmpty) != o.Empty || (o.ID == binned && (o.PageTitle == nil || *o.PageTitle != "Binned" || o.Messages != binnedMsgs)) {
				t.Errorf("orphan %+v", o)
			}
		}
		before := tableCounts(t, s)
		exs, msgs, err := s.AdminPurgeOrphans(ctx, adminBase)
		if err != nil || exs != 2 || msgs != binnedMsgs {
			t.Fatalf("purged %d exchanges, %d messages, %v; want 2, %d", exs, msgs, err, binnedMsgs)
		}
		before["exchanges"] -= 2
		before["messages"] -= binnedMsgs
		if got := tableCounts(t, s); !maps.Equal(got, before) {
			t.Fatalf("rows after the purge:\n got %v\nwant %v", got, before)
		}
		if _, total, _ := s.AdminOrphans(ctx, adminBase, 10); total != 0 {
			t.Fatalf("%d orphans left", total)
		}
	})
}

func TestDatabaseSizeAndVacuum(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u := mustUser(t, s, "ann")
		big := string(bytes.Repeat([]byte("x"), 64<<10))
		var ids []int64
		for range 20 {
			ex, _, _ := mustTurn(t, s, TurnStart{UserID: u.ID, Query: big}, big)
			ids = append(ids, ex.ID)
		}
		size, err := s.AdminDatabaseSize(ctx)
		if err != nil || size.Bytes < 20*128<<10 {
			t.Fatalf("size %+v, %v: want at least the 2.5 MiB written", size, err)
		}
		if _, err := s.DeleteExchanges(ctx, u.ID, ids); err != nil {
			t.Fatal(err)
		}
		r, err := s.AdminVacuum(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if s.Dialect() == "sqlite" {
			// The file gives back what was deleted, and the WAL is emptied.
			if r.After.Bytes >= r.Before.Bytes || r.After.FreeBytes != 0 || r.After.WALBytes != 0 {
				t.Fatalf("vacuum: before %+v, after %+v", r.Before, r.After)
			}
		} else if r.After.Bytes <= 0 {
			t.Fatalf("vacuum on postgres: after %+v", r.After)
		}
	})
}

// TestDeletedContentLeavesTheFile: with secure_delete on, text that was
// deleted is not left readable in the database file, its WAL or the
// full-text index, once the write-ahead log has been checkpointed: a
// deleted conversation, a deleted account (its conversations, pages and
// revisions), a deleted page (its text and revisions), and an import that was refused part-way and rolled back
// (large enough that SQLite spilled its pages to the WAL before the
// refusal).
func TestDeletedContentLeavesTheFile(t *testing.T) {
	const secret = "zebracornflowerpassphrase"
	cases := []struct {
		name string
		// write stores the secret and returns its deletion (for the
		// import: the import refused, whose text is in the WAL after it).
		write func(t *testing.T, s *Store, contains func() bool) func() error
	}{
		{"a conversation", func(t *testing.T, s *Store, _ func() bool) func() error {
			u := mustUser(t, s, "ann")
			ex, _, _ := mustTurn(t, s, TurnStart{UserID: u.ID, Query: "my secret is " + secret}, "noted: "+secret)
			mustTurn(t, s, TurnStart{UserID: u.ID, Query: "an unrelated chat"}, "that stays")
			return func() error { return errOf(s.DeleteExchange(context.Background(), u.ID, ex.ID)) }
		}},
		{"an account", func(t *testing.T, s *Store, _ func() bool) func() error {
			ctx := context.Background()
			mustUser(t, s, "admin") // the first account is the administrator, which cannot go last
			u := mustUser(t, s, "ann")
			mustTurn(t, s, TurnStart{UserID: u.ID, Query: "my secret is " + secret}, "noted: "+secret)
			p, err := s.CreatePage(ctx, u.ID, "Notes "+secret, "the page says "+secret)
			if err != nil {
				t.Fatal(err)
			}
			title := "Notes"
			if _, err := s.UpdatePage(ctx, u.ID, p.ID, &title, "a revision that says "+secret+" too"); err != nil {
				t.Fatal(err)
			}
			return func() error { _, err := s.DeleteOwnAccount(ctx, u.ID); return err }
		}},
		{"a page", func(t *testing.T, s *Store, _ func() bool) func() error {
			ctx := context.Background()
			u := mustUser(t, s, "ann")
			p, err := s.CreatePage(ctx, u.ID, "Notes "+secret, "the page says "+secret)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.UpdatePage(ctx, u.ID, p.ID, nil, "a revision that says "+secret+" too"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.CreatePage(ctx, u.ID, "Other", "a page that stays"); err != nil {
				t.Fatal(err)
			}
			return func() error { _, _, err := s.DeletePage(ctx, u.ID, p.ID); return err }
		}},
		{"an import rolled back", func(t *testing.T, s *Store, contains func() bool) func() error {
			u := mustUser(t, s, "ann")
			return func() error {
				// 8 MiB of conversations that hold the secret, more than
				// the page cache holds, then a refusal (the batches before
				// it committed, then undone).
				n := 0
				reached := false
				_, err := s.Import(context.Background(), u.ID, func() (*ImportItem, error) {
					n++
					if n > 2000 {
						reached = contains()
						return nil, fmt.Errorf("line %d: %w", n, ErrImport)
					}
					ex := &ExportedExchange{Exchange: Exchange{UID: newUID(), Scope: ScopeGeneral, Title: "chat", AgentType: "router",
						CreatedAt: time.Now(), UpdatedAt: time.Now()}}
					ex.Messages = []Message{{UID: newUID(), Seq: ptr(int64(0)), Role: RoleUser, CreatedAt: time.Now(),
						Content: strings.Repeat("my secret is "+secret+". ", 160)}}
					return &ImportItem{Exchange: ex, Where: fmt.Sprintf("line %d", n)}, nil
				})
				if !errors.Is(err, ErrImport) {
					t.Fatalf("the import: %v", err)
				}
				if !reached {
					t.Fatal("the refused import's text never reached the files: the test would prove nothing")
				}
				return nil
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newSQLite(t, Options{})
			if got := pragma(t, s, "secure_delete"); got != "1" {
				t.Fatalf("secure_delete = %s, want 1", got)
			}
			var files []struct {
				Seq  int64
				Name string
				File string
			}
			s.db.Raw("PRAGMA database_list").Scan(&files)
			path := files[0].File
			contains := func() bool {
				for _, f := range []string{path, path + "-wal"} {
					b, err := os.ReadFile(f)
					if err == nil && bytes.Contains(b, []byte(secret)) {
						return true
					}
				}
				return false
			}
			del := c.write(t, s, contains)
			if !contains() && c.name != "an import rolled back" {
				t.Fatal("the secret is not in the files before deletion: the test would prove nothing")
			}
			if err := del(); err != nil {
				t.Fatal(err)
			}
			// No VACUUM (which rewrites the file anyway): only the checkpoint
			// that moves the WAL into the file and empties it. It answers
			// busy, doing nothing, while another checkpoint runs (the erase
			// watcher's, woken by the deletion), so it is tried again until
			// the secret is gone, for a bounded time.
			deadline := time.Now().Add(10 * time.Second)
			for contains() {
				if time.Now().After(deadline) {
					t.Fatalf("10 s after the deletion, the secret is still readable in %v", holding(t, path, secret))
				}
				if err := s.db.Exec("PRAGMA wal_checkpoint(TRUNCATE)").Error; err != nil {
					t.Fatal(err)
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}
