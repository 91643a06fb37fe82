package handlers_test

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"palaver/internal/htmltest"
	"palaver/models"
)

// The admin's list of share links comes a batch at a time, newest first,
// as the audit log does: the next batch through "Older", each link once,
// and back to the newest; a bad ?before= is a 400.
func TestAdminSharesPaged(t *testing.T) {
	a, _, alice, bob, _, ex := shareApp(t) // alice registered first: the administrator
	bobEx := a.adminExchange(bob.user.ID, adminEx{queries: []string{"bob's"}})
	const total = 53
	for i := range total {
		owner, on := alice.user.ID, ex
		if i%2 == 1 {
			owner, on = bob.user.ID, bobEx
		}
		if _, err := a.store.CreateShare(context.Background(), models.ShareNew{UserID: owner, ExchangeID: on,
			Visibility: models.ShareLink, Token: fmt.Sprintf("paged-share-token-%08d", i), At: time.Now().UTC()}); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	var ids []int64
	next, pages := "/admin/shares", 0
	for next != "" {
		pages++
		res := alice.get(next)
		mustStatus(t, res, http.StatusOK)
		doc := htmltest.Parse(t, bodyOf(res))
		rows := htmltest.ByTestID(doc, "share")
		if pages == 1 && (len(rows) >= total || len(htmltest.ByTestID(doc, "admin-first")) != 0) {
			t.Fatalf("the first page lists %d links (of %d), or links to itself", len(rows), total)
		}
		if pages > 1 && len(htmltest.ByTestID(doc, "admin-first")) != 1 {
			t.Fatalf("page %d has no link back to the newest", pages)
		}
		for _, r := range rows {
			id := mustAttr(r, "data-share-id")
			if seen[id] {
				t.Fatalf("link %s listed twice", id)
			}
			seen[id] = true
			var n int64
			fmt.Sscan(id, &n)
			ids = append(ids, n)
		}
		next = ""
		if n := htmltest.ByTestID(doc, "admin-next"); len(n) == 1 {
			next = mustHref(n[0])
		}
	}
	if pages < 2 || len(seen) != total {
		t.Fatalf("%d pages listed %d links, want %d over more than one page", pages, len(seen), total)
	}
	if !slices.IsSortedFunc(ids, func(x, y int64) int { return cmp.Compare(y, x) }) {
		t.Fatalf("links not newest first: %v", ids)
	}
	for _, bad := range []string{"x", "0", "-3"} {
		mustStatus(t, alice.get("/admin/shares?before="+bad), http.StatusBadRequest)
	}
	mustStatus(t, bob.get("/admin/shares"), http.StatusNotFound)
}
