package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"palaver/internal/htmltest"
	"palaver/models"
	"palaver/paths"
)

// TestProjectsWithoutJavaScript: plain forms make a project, save its
// instructions, start a chat in it, move a chat in, show the sidebar's
// project group with its count, and delete it keeping its chats; the
// account page saves About me and memory entries.
func TestProjectsWithoutJavaScript(t *testing.T) {
	a := newTestApp(t)
	ann := a.register("ann")
	ctx := context.Background()
	user, err := a.store.UserByUsername(ctx, "ann")
	if err != nil {
		t.Fatal(err)
	}
	res := ann.postForm(paths.Projects+"/", url.Values{"name": {"Garden"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("create: %d %s", res.StatusCode, bodyOf(res))
	}
	projectPage := res.Header.Get("Location")
	ps, _ := a.store.Projects(ctx, user.ID)
	if len(ps) != 1 || projectPage != paths.Project(ps[0].ID) {
		t.Fatalf("projects %+v, went to %s", ps, projectPage)
	}
	id := ps[0].ID
	if res := ann.postForm(paths.Projects+"/", url.Values{"name": {"Garden"}}); res.StatusCode != http.StatusConflict ||
		!strings.Contains(bodyOf(res), "already have a project") {
		t.Errorf("duplicate: %d", res.StatusCode)
	}
	ann.postForm(paths.ProjectInstructions(id), url.Values{"instructions": {"Talk about roses."}, "memory": {"on"}})
	res = ann.postForm(paths.ProjectChat(id), url.Values{"query": {"when to prune"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("new chat in project: %d %s", res.StatusCode, bodyOf(res))
	}
	other := ann.apiChat("unrelated", 0)
	if res := ann.get(paths.ChatProject(*other.ExchangeID)); res.StatusCode != http.StatusOK {
		t.Fatalf("move form: %d", res.StatusCode)
	}
	ann.postForm(paths.ChatProject(*other.ExchangeID), url.Values{"project_id": {"0"}})
	ann.postForm(paths.ChatProject(*other.ExchangeID), url.Values{"project_id": {strings.TrimPrefix(paths.Project(id), paths.Projects+"/")}})

	doc := htmltest.Parse(t, bodyOf(ann.get(projectPage)))
	if got := htmltest.Text(htmltest.One(t, doc, "project-instructions")); got != "Talk about roses." {
		t.Errorf("instructions %q", got)
	}
	if n := len(htmltest.ByTestID(doc, "history-item")); n != 2 {
		t.Errorf("the project page lists %d chats, want 2", n)
	}
	res = ann.get(paths.Chat(*other.ExchangeID))
	doc = htmltest.Parse(t, bodyOf(res))
	items := htmltest.ByTestID(htmltest.One(t, doc, "project-list"), "project-item")
	if len(items) != 1 || !strings.Contains(htmltest.Text(items[0]), "Garden") || htmltest.Text(htmltest.One(t, items[0], "project-count")) != "2" {
		t.Errorf("sidebar projects: %d items", len(items))
	}
	if len(htmltest.ByTestID(doc, "move-to-project")) == 0 {
		t.Error("no move-to-project in the row menu")
	}

	res = ann.postForm(paths.ProjectDelete(id), url.Values{"chats": {"keep"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("delete: %d", res.StatusCode)
	}
	if ps, _ := a.store.Projects(ctx, user.ID); len(ps) != 0 {
		t.Error("the project is still there")
	}
	if _, err := a.store.Exchange(ctx, user.ID, *other.ExchangeID); err != nil {
		t.Errorf("a kept chat went: %v", err)
	}

	ann.postForm(paths.AccountInstructions, url.Values{"about": {"I grow roses."}, "style": {"Briefly."}, "memory": {"on"}})
	ann.postForm(paths.AccountMemories, url.Values{"content": {"Has a greenhouse."}})
	doc = htmltest.Parse(t, bodyOf(ann.get(paths.Account)))
	if got := htmltest.Text(htmltest.One(t, doc, "about-me")); got != "I grow roses." {
		t.Errorf("about me %q", got)
	}
	mems := htmltest.ByTestID(htmltest.One(t, doc, "memories"), "memory")
	if len(mems) != 1 {
		t.Fatalf("%d memory entries shown", len(mems))
	}
	mid, _ := htmltest.Attr(mems[0], "data-memory-id")
	ann.postForm(paths.AccountMemories+"/"+mid+"/delete", nil)
	if list, _ := a.store.Memories(ctx, user.ID); len(list) != 0 {
		t.Errorf("not deleted: %+v", list)
	}
}

// TestTemporaryChatWithoutJavaScript: the composer's box starts a temporary
// chat, whose page says so; "Keep this chat" makes it a normal one.
func TestTemporaryChatWithoutJavaScript(t *testing.T) {
	a := newTestApp(t)
	ann := a.register("ann")
	ctx := context.Background()
	user, _ := a.store.UserByUsername(ctx, "ann")
	res := ann.postForm(paths.ChatSend, url.Values{"query": {"a secret"}, "exchange_id": {"0"}, "temporary": {"1"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("send: %d %s", res.StatusCode, bodyOf(res))
	}
	sums, _ := a.store.ListExchanges(ctx, user.ID, models.ExchangeQuery{Scope: models.ScopeGeneral, Limit: 10})
	if len(sums) != 0 {
		t.Fatalf("the temporary chat is in the history: %+v", sums)
	}
	page := res.Header.Get("Location")
	doc := htmltest.Parse(t, bodyOf(ann.get(page)))
	htmltest.One(t, doc, "temporary-notice")
	id, _ := strconv.ParseInt(strings.TrimPrefix(page, paths.ChatHome+"/"), 10, 64)
	ann.postForm(paths.ChatKeep(id), nil)
	if ex, err := a.store.Exchange(ctx, user.ID, id); err != nil || ex.Temporary {
		t.Fatalf("kept: %+v, %v", ex, err)
	}
	if doc := htmltest.Parse(t, bodyOf(ann.get(page))); len(htmltest.ByTestID(doc, "temporary-notice")) != 0 {
		t.Error("a kept chat still says it is temporary")
	}
}

// TestTemporaryBoxGoesAfterFirstMessage: the htmx answer to a new chat's
// first message takes the "Temporary chat" box away out of band, as a
// reload of the chat draws no box; a temporary chat's answer brings its
// notice (as its page shows one) and no history item.
func TestTemporaryBoxGoesAfterFirstMessage(t *testing.T) {
	a := newTestApp(t)
	ann := a.register("ann")
	if doc := htmltest.Parse(t, bodyOf(ann.get(paths.ChatHome))); len(htmltest.ByTestID(doc, "temporary-chat")) != 1 {
		t.Fatal("a new chat offers no temporary box")
	}
	for _, temporary := range []bool{false, true} {
		form := url.Values{"query": {"hello there"}, "exchange_id": {"0"}}
		if temporary {
			form.Set("temporary", "1")
		}
		res := ann.htmx(http.MethodPost, paths.ChatSend, form)
		mustStatus(t, res, http.StatusOK)
		doc := htmltest.Parse(t, bodyOf(res))
		slot := htmltest.ByID(doc, "composer-temporary")
		if slot == nil {
			t.Fatalf("temporary %v: the answer does not replace the temporary box", temporary)
		}
		if oob, _ := htmltest.Attr(slot, "hx-swap-oob"); oob != "true" || len(htmltest.ByTestID(slot, "temporary-chat")) != 0 {
			t.Fatalf("temporary %v: the box is still offered (oob %q)", temporary, oob)
		}
		if n := len(htmltest.ByTestID(doc, "temporary-notice")); n != map[bool]int{false: 0, true: 1}[temporary] {
			t.Errorf("temporary %v: %d notices", temporary, n)
		}
		if temporary && len(htmltest.ByTestID(doc, "history-item")) != 0 {
			t.Error("a temporary chat's answer puts it in the history")
		}
	}
	// A reload of a chat agrees: no box.
	ex := ann.apiChat("another", 0)
	if doc := htmltest.Parse(t, bodyOf(ann.get(paths.Chat(*ex.ExchangeID)))); len(htmltest.ByTestID(doc, "temporary-chat")) != 0 {
		t.Fatal("a chat's page offers the temporary box")
	}
}
