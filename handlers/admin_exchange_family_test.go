package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"palaver/internal/htmltest"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestAdminExchangesMarkForks: a fork's row says which conversation it was
// forked from, by title and number; a family's rows link to the list of
// the whole family (the root and every fork, however deep), which pages
// and counts like any filter; a conversation alone has neither.
func TestAdminExchangesMarkForks(t *testing.T) {
	a := newTestApp(t)
	admin := a.register("root")
	bob := a.register("bob")
	ctx := context.Background()
	root := a.adminExchange(bob.user.ID, adminEx{queries: []string{"zebra plans", "and more"}})
	if _, err := a.store.RenameExchange(ctx, bob.user.ID, root, "Zebra plans"); err != nil {
		t.Fatal(err)
	}
	fork, err := a.store.Fork(ctx, bob.user.ID, root, 2)
	if err != nil {
		t.Fatal(err)
	}
	deeper, err := a.store.Fork(ctx, bob.user.ID, fork.ID, 2)
	if err != nil {
		t.Fatal(err)
	}
	alone := a.adminExchange(bob.user.ID, adminEx{queries: []string{"on its own"}})

	rows := func(path string) map[int64]*chatNode {
		t.Helper()
		res := admin.get(path)
		mustStatus(t, res, http.StatusOK)
		out := map[int64]*chatNode{}
		for _, r := range htmltest.ByTestID(chatDoc(t, res), "admin-exchange-row") {
			v, _ := htmltest.Attr(r, "data-exchange-id")
			id, _ := strconv.ParseInt(v, 10, 64)
			out[id] = r
		}
		return out
	}
	all := rows("/admin/exchanges")
	forkOf := func(id int64) string {
		if m := htmltest.ByTestID(all[id], "admin-fork-of"); len(m) == 1 {
			return htmltest.Text(m[0])
		}
		return ""
	}
	if got := forkOf(fork.ID); got != fmt.Sprintf("branch of “Zebra plans” (#%d)", root) {
		t.Errorf("the fork's row says %q", got)
	}
	if got := forkOf(deeper.ID); !strings.Contains(got, fmt.Sprintf("(#%d)", fork.ID)) {
		t.Errorf("the fork of the fork says %q", got)
	}
	if forkOf(root) != "" || forkOf(alone) != "" {
		t.Error("a root, or a conversation alone, is marked as a branch")
	}
	family := map[int64]string{}
	for id, r := range all {
		if l := htmltest.ByTestID(r, "admin-family-link"); len(l) == 1 {
			family[id], _ = htmltest.Attr(l[0], "href")
		}
	}
	if len(family) != 3 || family[alone] != "" {
		t.Fatalf("family links %v, want the three of the family", family)
	}
	members := rows(family[deeper.ID])
	ids := make([]int64, 0, len(members))
	for id := range members {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []int64{root, fork.ID, deeper.ID}) {
		t.Fatalf("the family's list has %v, want %v", ids, []int64{root, fork.ID, deeper.ID})
	}
	mustStatus(t, admin.get("/admin/exchanges?family=abc"), http.StatusUnprocessableEntity)
}
