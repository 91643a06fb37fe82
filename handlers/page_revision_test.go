package handlers_test

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"palaver/internal/htmltest"
	"strings"
	"testing"
)

// A revision offers its changes against the text now before Restore: the
// editor's list links each earlier revision to them, the page of its own
// (no JavaScript) shows the diff and the Restore, htmx gets the diff
// alone, and another person's page answers 404 like a missing one.
func TestRevisionDiffBeforeRestore(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	id := c.pageCreate(t, "Trip", pageTrip)
	edited := strings.Replace(pageTrip, "Fly to Paris.", "Fly to Paris on Friday.", 1)
	mustStatus(t, c.postForm(fmt.Sprintf("/pages/%d/save", id), url.Values{"title": {"Trip"}, "content": {edited}}), http.StatusSeeOther)
	revs := a.revisions(c.user.ID, id)
	first, current := revs[0].ID, revs[len(revs)-1].ID
	path := fmt.Sprintf("/pages/%d/revisions/%d", id, first)

	doc := c.pageEdit(t, id)
	compare := htmltest.ByTestID(doc, "revision-compare")
	if len(compare) != 1 || !strings.Contains(htmltest.Text(compare[0]), "Restore…") {
		t.Fatalf("the editor offers %d comparisons, want one (the earlier revision's)", len(compare))
	}
	// The list itself restores nothing: Restore comes with the changes.
	if n := len(htmltest.ByTestID(doc, "revision-restore")); n != 0 {
		t.Fatalf("the editor's list has %d Restore buttons before any change was shown", n)
	}
	if links := htmltest.FindAll(compare[0], func(n *chatNode) bool { h, _ := htmltest.Attr(n, "href"); return h == path }); len(links) != 1 {
		t.Fatalf("the comparison does not link to %s", path)
	}

	page := c.chatScreen(t, path)
	diff := htmltest.ByTestID(page, "revision-diff")
	if len(diff) != 1 {
		t.Fatalf("%s shows no diff", path)
	}
	text := htmltest.Text(diff[0])
	if !strings.Contains(text, "-Fly to Paris on Friday.") || !strings.Contains(text, "+Fly to Paris.") || !strings.Contains(text, "+1 / -1") {
		t.Fatalf("the revision's diff against the text now: %s", text)
	}
	forms := htmltest.FindAll(page, func(n *chatNode) bool {
		act, _ := htmltest.Attr(n, "action")
		return n.Data == "form" && act == path+"/restore"
	})
	if len(forms) != 1 {
		t.Fatalf("%s has no Restore form", path)
	}

	res := c.htmx(http.MethodGet, path, nil)
	mustStatus(t, res, http.StatusOK)
	body, _ := io.ReadAll(res.Body)
	if s := string(body); strings.Contains(s, "<html") || !strings.Contains(s, `data-testid="revision-diff"`) || !strings.Contains(s, "Fly to Paris on Friday.") ||
		!strings.Contains(s, `data-testid="revision-restore"`) {
		t.Fatalf("the htmx answer is not the diff with its Restore: %.200s", s)
	}

	same := htmltest.Text(htmltest.ByTestID(c.chatScreen(t, fmt.Sprintf("/pages/%d/revisions/%d", id, current)), "revision-diff")[0])
	if !strings.Contains(same, "changes nothing") {
		t.Fatalf("the current revision's diff says %q", same)
	}

	eve := a.register("eve")
	for _, p := range []string{path, fmt.Sprintf("/pages/%d/revisions/%d", id, current+100)} {
		who := eve
		if p != path {
			who = c
		}
		if res := who.get(p); res.StatusCode != http.StatusNotFound {
			t.Fatalf("GET %s answered %d, want 404", p, res.StatusCode)
		}
	}
	if got := a.page(c.user.ID, id).Content; got != edited {
		t.Fatalf("looking at a revision changed the page: %q", got)
	}
}
