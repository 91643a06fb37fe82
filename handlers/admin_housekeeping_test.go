package handlers_test

import (
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"palaver/internal/htmltest"
)

// TestAdminRetention drives the retention policy through its page: off by
// default; the dry run lists exactly what would go and deletes nothing; the
// run deletes exactly that (pinned exempt); both are logged and shown.
func TestAdminRetention(t *testing.T) {
	a := newTestApp(t)
	admin := a.register("root")
	bob := a.register("bob")
	day := 24 * time.Hour
	old := a.adminExchange(bob.user.ID, adminEx{queries: []string{"old", "older"}, ago: 45 * day})
	older := a.adminExchange(admin.user.ID, adminEx{queries: []string{"ancient"}, fail: true, ago: 400 * day})
	pinned := a.adminExchange(bob.user.ID, adminEx{queries: []string{"pinned"}, ago: 400 * day, pinned: true})
	recent := a.adminExchange(bob.user.ID, adminEx{queries: []string{"recent"}, ago: 20 * day})
	doomed := []int64{older, old} // oldest first, as the dry run lists them
	doomedMsgs := len(a.chatMessages(bob.user.ID, old)) + len(a.chatMessages(admin.user.ID, older))

	doc := admin.chatScreen(t, "/admin/housekeeping")
	box := htmltest.ByTestID(doc, "retention-enabled")[0]
	if _, on := htmltest.Attr(box, "checked"); on {
		t.Fatal("retention is on by default")
	}
	if v, _ := htmltest.Attr(htmltest.ByTestID(doc, "retention-days")[0], "value"); v != "365" {
		t.Fatalf("default days %q", v)
	}

	// Bad days are refused and change nothing.
	for _, days := range []string{"0", "-3", "lots", "36501"} {
		res := admin.postFormFrom("/admin/housekeeping/retention", "/admin/housekeeping", url.Values{"enabled": {"1"}, "days": {days}})
		mustStatus(t, res, http.StatusSeeOther)
		if f := adminFlash(admin.chatScreen(t, "/admin/housekeeping")); !strings.Contains(f, "1 to 36500 days") {
			t.Fatalf("days %s: flash %q", days, f)
		}
	}
	st, _ := a.store.Settings(t.Context())
	if st.RetentionEnabled || st.RetentionDays != 365 {
		t.Fatalf("refused input changed the policy: %+v", st)
	}
	// A period can be tried before it is saved: the dry run button posts the
	// policy's form.
	res := admin.postForm("/admin/housekeeping/retention/dry-run", url.Values{"days": {"30"}})
	mustStatus(t, res, http.StatusOK)
	doc = chatDoc(t, res)
	if got := htmltest.Text(htmltest.ByTestID(doc, "dry-run-result")[0]); !strings.Contains(got, "Dry run with 30 days: 2 conversations") {
		t.Fatalf("dry run with typed days: %q", got)
	}
	if v, _ := htmltest.Attr(htmltest.ByTestID(doc, "retention-days")[0], "value"); v != "30" {
		t.Fatalf("the form forgot the typed days: %q", v)
	}
	if st, _ := a.store.Settings(t.Context()); st.RetentionEnabled || st.RetentionDays != 365 {
		t.Fatalf("a dry run saved the policy: %+v", st)
	}
	res = admin.postForm("/admin/housekeeping/retention", url.Values{"enabled": {"1"}, "days": {"30"}})
	mustStatus(t, res, http.StatusSeeOther)
	doc = admin.chatScreen(t, "/admin/housekeeping")
	if f := adminFlash(doc); !strings.Contains(f, "Retention is on") || !strings.Contains(f, "30 days") {
		t.Fatalf("flash %q", f)
	}
	if _, on := htmltest.Attr(htmltest.ByTestID(doc, "retention-enabled")[0], "checked"); !on {
		t.Fatal("the form does not show the policy on")
	}

	// The dry run.
	before := a.adminCounts()
	res = admin.postForm("/admin/housekeeping/retention/dry-run", nil)
	mustStatus(t, res, http.StatusOK)
	doc = chatDoc(t, res)
	result := htmltest.ByTestID(doc, "dry-run-result")
	if len(result) != 1 || !strings.Contains(htmltest.Text(result[0]), fmt.Sprintf("2 conversations (%d messages)", doomedMsgs)) {
		t.Fatalf("dry run says %q", htmltest.Text(result[0]))
	}
	var listed []int64
	for _, r := range htmltest.ByTestID(doc, "dry-run-row") {
		id, _ := strconv.ParseInt(htmltest.Text(htmltest.FindAll(r, func(n *chatNode) bool { return n.Data == "td" })[0]), 10, 64)
		listed = append(listed, id)
	}
	if !slices.Equal(listed, doomed) {
		t.Fatalf("dry run lists %v, want %v", listed, doomed)
	}
	want := maps.Clone(before)
	want["retention_runs"]++
	if got := a.adminCounts(); !maps.Equal(got, want) {
		t.Fatalf("the dry run changed rows:\n got %v\nwant %v", got, want)
	}

	// Run now: confirmed first; then exactly the doomed go.
	res = admin.postForm("/admin/housekeeping/retention/run", nil)
	mustStatus(t, res, http.StatusOK)
	if len(htmltest.ByTestID(chatDoc(t, res), "confirm")) != 1 {
		t.Fatal("run now is not confirmed first")
	}
	if got := a.adminCounts(); !maps.Equal(got, want) {
		t.Fatal("the confirmation page deleted something")
	}
	res = admin.postForm("/admin/housekeeping/retention/run", url.Values{"confirmed": {"1"}})
	mustStatus(t, res, http.StatusSeeOther)
	want["exchanges"] -= 2
	want["messages"] -= doomedMsgs
	want["retention_runs"]++
	if got := a.adminCounts(); !maps.Equal(got, want) {
		t.Fatalf("rows after the run:\n got %v\nwant %v", got, want)
	}
	for id, kept := range map[int64]bool{old: false, older: false, pinned: true, recent: true} {
		_, err := a.store.AdminExchange(t.Context(), id)
		if (err == nil) != kept {
			t.Errorf("exchange %d: kept %v, want %v", id, err == nil, kept)
		}
	}
	doc = admin.chatScreen(t, "/admin/housekeeping")
	if f := adminFlash(doc); f != fmt.Sprintf("Retention deleted 2 conversations with %d messages.", doomedMsgs) {
		t.Fatalf("flash %q", f)
	}
	runs := htmltest.ByTestID(doc, "retention-run-row")
	if len(runs) != 3 || !strings.Contains(htmltest.Text(runs[0]), "deleted") || !strings.Contains(htmltest.Text(runs[1]), "dry run") ||
		!strings.Contains(htmltest.Text(runs[0]), "root") {
		t.Fatalf("runs shown: %d", len(runs))
	}
	// htmx asks with hx-confirm and sends confirmed=1: it gets HX-Redirect.
	res = admin.htmx("POST", "/admin/housekeeping/retention/run", url.Values{"confirmed": {"1"}})
	if res.StatusCode != http.StatusNoContent || res.Header.Get("HX-Redirect") != "/admin/housekeeping" {
		t.Fatalf("htmx run: %d, %q", res.StatusCode, res.Header.Get("HX-Redirect"))
	}
}

func TestAdminOrphansAndVacuum(t *testing.T) {
	a := newTestApp(t)
	admin := a.register("root")
	bob := a.register("bob")
	page := a.adminPage(bob.user.ID, "Binned")
	binned := a.adminExchange(bob.user.ID, adminEx{scope: "page", page: page, agent: "page_assistant", queries: []string{"on a binned page"}})
	kept := a.adminExchange(bob.user.ID, adminEx{queries: []string{"fine"}})
	a.chatExec("UPDATE pages SET deleted_at = ? WHERE id = ?", time.Now().UTC(), page)
	a.chatExec(`INSERT INTO exchanges (user_id, scope, title, agent_type, created_at, updated_at) VALUES (?, 'general', '', 'router', ?, ?)`,
		bob.user.ID, time.Now().UTC().Add(-2*time.Hour), time.Now().UTC().Add(-2*time.Hour))

	doc := admin.chatScreen(t, "/admin/housekeeping")
	if n := htmltest.Text(htmltest.ByTestID(doc, "orphan-count")[0]); n != "2 orphans found." {
		t.Fatalf("orphans: %q", n)
	}
	before := a.adminCounts()
	res := admin.postForm("/admin/housekeeping/orphans", nil)
	mustStatus(t, res, http.StatusOK) // the confirmation page
	res = admin.postForm("/admin/housekeeping/orphans", url.Values{"confirmed": {"1"}})
	mustStatus(t, res, http.StatusSeeOther)
	want := maps.Clone(before)
	want["exchanges"] -= 2
	want["messages"] -= 2 // the binned page's chat: one turn
	if got := a.adminCounts(); !maps.Equal(got, want) {
		t.Fatalf("rows after the purge:\n got %v\nwant %v", got, want)
	}
	if _, err := a.store.AdminExchange(t.Context(), binned); err == nil {
		t.Fatal("the binned page's chat is still there")
	}
	if _, err := a.store.AdminExchange(t.Context(), kept); err != nil {
		t.Fatal("a normal chat was purged")
	}
	doc = admin.chatScreen(t, "/admin/housekeeping")
	if f := adminFlash(doc); f != "Purged 2 orphaned conversations with 2 messages." {
		t.Fatalf("flash %q", f)
	}
	if n := htmltest.Text(htmltest.ByTestID(doc, "orphan-count")[0]); n != "None found." {
		t.Fatalf("after the purge: %q", n)
	}

	// VACUUM says what it did; the size is shown.
	if size := htmltest.Text(htmltest.ByTestID(doc, "admin-db-size")[0]); !strings.Contains(size, "sqlite") || !strings.Contains(size, "KB") {
		t.Fatalf("size box %q", size)
	}
	mustStatus(t, admin.postForm("/admin/housekeeping/vacuum", nil), http.StatusSeeOther)
	if f := adminFlash(admin.chatScreen(t, "/admin/housekeeping")); !strings.HasPrefix(f, "VACUUM done in ") {
		t.Fatalf("flash %q", f)
	}
}

// TestAdminPurgeBlobs: housekeeping counts a blob no file names and offers
// to purge it (after a confirmation); the purge takes that blob only, and
// a file's blob and bytes stay.
func TestAdminPurgeBlobs(t *testing.T) {
	a := newTestApp(t)
	admin := a.register("root")
	ann := a.apiClient("ann")
	kept := ann.mustUpload("kept.txt", []byte("a file that stays"))
	a.chatExec(`INSERT INTO blobs (user_id, sha256, size, data, created_at) VALUES ((SELECT id FROM users WHERE username = 'ann'), ?, 5, ?, ?)`,
		strings.Repeat("0", 64), []byte("stray"), time.Now().UTC())
	counts, err := a.store.CountBlobs(t.Context())
	if err != nil || counts.Unreferenced != 1 || counts.Blobs != 2 {
		t.Fatalf("before: %+v %v", counts, err)
	}
	doc := admin.chatScreen(t, "/admin/housekeeping")
	if len(htmltest.ByTestID(doc, "admin-purge-blobs")) != 1 {
		t.Fatal("no purge button while a blob is unreferenced")
	}
	mustStatus(t, admin.postForm("/admin/housekeeping/blobs", nil), http.StatusOK) // the confirmation page
	if c, _ := a.store.CountBlobs(t.Context()); c.Unreferenced != 1 {
		t.Fatal("the purge ran unconfirmed")
	}
	mustStatus(t, admin.postForm("/admin/housekeeping/blobs", url.Values{"confirmed": {"1"}}), http.StatusSeeOther)
	counts, err = a.store.CountBlobs(t.Context())
	if err != nil || counts.Unreferenced != 0 || counts.Blobs != 1 || counts.Files != 1 {
		t.Fatalf("after: %+v %v", counts, err)
	}
	doc = admin.chatScreen(t, "/admin/housekeeping")
	if f := adminFlash(doc); f != "Purged 1 unreferenced blob (5 B)." {
		t.Fatalf("flash %q", f)
	}
	if len(htmltest.ByTestID(doc, "admin-purge-blobs")) != 0 {
		t.Fatal("a purge button with nothing to purge")
	}
	res := ann.get(fmt.Sprintf("/api/files/%d", kept.ID))
	if b, _ := io.ReadAll(res.Body); string(b) != "a file that stays" {
		t.Fatalf("the file's bytes after the purge: %q", b)
	}
}
