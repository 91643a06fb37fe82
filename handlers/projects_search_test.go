package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"palaver/internal/htmltest"
	"palaver/models"
	"palaver/paths"
)

// TestSearchScopedToProject: inside a project (a chat in it) the sidebar's
// box searches that project's chats, its "All chats" box all of them; the
// no-JS results screen keeps the scope and the toggle; another user's
// project answers 404; the project page has the same scoped box.
func TestSearchScopedToProject(t *testing.T) {
	a := newTestApp(t)
	ann, bob := a.register("ann"), a.register("bob")
	ctx := context.Background()
	name := "Garden"
	p, err := a.store.CreateProject(ctx, ann.user.ID, models.ProjectInput{Name: &name})
	if err != nil {
		t.Fatal(err)
	}
	in := a.searchChat(ann.user.ID, models.ScopeGeneral, nil, "roses need pruning", "prune in spring")
	out := a.searchChat(ann.user.ID, models.ScopeGeneral, nil, "roses as a gift", "red ones")
	if _, err := a.store.MoveToProject(ctx, ann.user.ID, in, &p.ID); err != nil {
		t.Fatal(err)
	}
	pid := strconv.FormatInt(p.ID, 10)
	chats := func(hits []string) map[string]bool {
		got := map[string]bool{}
		for _, h := range hits {
			got[strings.SplitN(h, "?", 2)[0]] = true
		}
		return got
	}

	// The sidebar of a chat in the project: the box carries the scope.
	doc := htmltest.Parse(t, bodyOf(ann.get(paths.Chat(in))))
	form := htmltest.FindAll(doc, func(n *chatNode) bool {
		_, ok := htmltest.Attr(n, "data-search-form")
		return n.Data == "form" && ok
	})
	if len(form) != 1 || len(htmltest.ByTestID(form[0], "search-all-chats")) != 1 {
		t.Fatalf("the search box of a chat in the project has no All chats box")
	}
	if v, _ := htmltest.FormValue(form[0], "project_id"); v != pid {
		t.Fatalf("the search box's project_id is %q, want %s", v, pid)
	}
	// A chat outside any project: no scope.
	if doc := htmltest.Parse(t, bodyOf(ann.get(paths.Chat(out)))); len(htmltest.ByTestID(doc, "search-all-chats")) != 0 {
		t.Fatal("a chat in no project offers All chats")
	}
	// The project page has the scoped box too.
	if doc := htmltest.Parse(t, bodyOf(ann.get(paths.Project(p.ID)))); len(htmltest.ByTestID(doc, "search-all-chats")) != 1 {
		t.Fatal("the project page has no scoped search")
	}

	scoped := ann.htmx(http.MethodGet, "/chat/search?q=roses&project_id="+pid, nil)
	mustStatus(t, scoped, http.StatusOK)
	got := chats(searchHits(chatDoc(t, scoped)))
	if !got[paths.Chat(in)] || got[paths.Chat(out)] {
		t.Fatalf("scoped hits: %v", got)
	}
	all := ann.htmx(http.MethodGet, "/chat/search?q=roses&project_id="+pid+"&all=1", nil)
	if got := chats(searchHits(chatDoc(t, all))); !got[paths.Chat(in)] || !got[paths.Chat(out)] {
		t.Fatalf("All chats hits: %v", got)
	}
	// Without JavaScript: the results screen keeps the project and the box.
	page := htmltest.Parse(t, bodyOf(ann.get("/chat/search?q=roses&project_id="+pid)))
	if toggles := htmltest.ByTestID(page, "search-all-chats"); len(toggles) < 1 {
		t.Fatal("the results screen has no All chats box")
	}
	if s := htmltest.ByTestID(page, "search-scope"); len(s) != 1 || !strings.Contains(htmltest.Text(s[0]), name) {
		t.Fatal("the results screen does not say the project searched")
	}
	// Bob cannot search in ann's project.
	if res := bob.htmx(http.MethodGet, "/chat/search?q=roses&project_id="+pid, nil); res.StatusCode != http.StatusNotFound {
		t.Fatalf("bob in ann's project: %d", res.StatusCode)
	}
}

// TestAdminExchangesByProject: the admin list filters by a project's
// number, and a row in a project links to that filter; the project's name,
// the owner's data, is not in the list.
func TestAdminExchangesByProject(t *testing.T) {
	a := newTestApp(t)
	admin, ann := a.register("root"), a.register("ann")
	ctx := context.Background()
	name := "Secret plans"
	p, err := a.store.CreateProject(ctx, ann.user.ID, models.ProjectInput{Name: &name})
	if err != nil {
		t.Fatal(err)
	}
	in := a.searchChat(ann.user.ID, models.ScopeGeneral, nil, "inside", "yes")
	out := a.searchChat(ann.user.ID, models.ScopeGeneral, nil, "outside", "no")
	if _, err := a.store.MoveToProject(ctx, ann.user.ID, in, &p.ID); err != nil {
		t.Fatal(err)
	}
	rows := func(query string) []string {
		t.Helper()
		res := admin.get(paths.AdminExchanges + query)
		mustStatus(t, res, http.StatusOK)
		body := bodyOf(res)
		if strings.Contains(body, name) {
			t.Fatalf("the admin list shows the project's name")
		}
		var ids []string
		for _, r := range htmltest.ByTestID(htmltest.Parse(t, body), "admin-exchange-row") {
			id, _ := htmltest.Attr(r, "data-exchange-id")
			ids = append(ids, id)
		}
		return ids
	}
	if got := rows("?" + url.Values{"project": {strconv.FormatInt(p.ID, 10)}}.Encode()); len(got) != 1 || got[0] != fmt.Sprint(in) {
		t.Fatalf("filtered by the project: %v", got)
	}
	if got := rows(""); len(got) != 2 {
		t.Fatalf("unfiltered: %v (want %d and %d)", got, in, out)
	}
	doc := htmltest.Parse(t, bodyOf(admin.get(paths.AdminExchanges)))
	links := htmltest.ByTestID(doc, "admin-project-link")
	if len(links) != 1 {
		t.Fatalf("%d project links", len(links))
	}
	if href, _ := htmltest.Attr(links[0], "href"); !strings.Contains(href, "project="+strconv.FormatInt(p.ID, 10)) {
		t.Fatalf("the project link goes to %s", href)
	}
	if res := admin.get(paths.AdminExchanges + "?project=x"); res.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("a project that is not a number: %d", res.StatusCode)
	}
}
