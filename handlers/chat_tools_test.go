package handlers_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

var toolCard = regexp.MustCompile(`data-testid="tool-approval" data-call-id="([^"]+)"`)

// TestToolCardsWithoutJavaScript: a waiting call shows as a card of plain
// forms; approving it through the form (a 303 back) resumes the turn, and
// the card is gone on the next page; the sidebar shows the paused chat.
func TestToolCardsWithoutJavaScript(t *testing.T) {
	a := newTestApp(t)
	ann := a.register("ann")
	res := ann.postForm("/chat/send", url.Values{"query": {"Old plans"}, "exchange_id": {"0"}})
	mustStatus(t, res, http.StatusSeeOther)
	res = ann.postForm("/chat/new", nil)
	res = ann.postForm("/chat/send", url.Values{"query": {`delete my chat "Old plans"`}, "exchange_id": {"0"}})
	mustStatus(t, res, http.StatusSeeOther)
	loc := res.Header.Get("Location")
	page := bodyOf(ann.get(loc))
	m := toolCard.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("%s shows no approval card:\n%s", loc, page)
	}
	for _, want := range []string{`data-testid="tool-approve"`, `data-testid="tool-deny"`, `title: Old plans`, `data-testid="history-paused"`,
		`method="post" action="` + loc + `/tools"`, `name="csrf_token"`} {
		if !strings.Contains(page, want) {
			t.Fatalf("the card page lacks %s", want)
		}
	}
	// A form without the CSRF field: refused, still waiting.
	res = ann.postForm(loc+"/tools", url.Values{"csrf_token": {"wrong"}, "call_id": {m[1]}, "decision": {"approve"}})
	mustStatus(t, res, http.StatusForbidden)
	res = ann.postForm(loc+"/tools", url.Values{"call_id": {m[1]}, "decision": {"maybe"}})
	mustStatus(t, res, http.StatusBadRequest)
	res = ann.postForm(loc+"/tools", url.Values{"call_id": {m[1]}, "decision": {"approve"}})
	mustStatus(t, res, http.StatusSeeOther)
	page = bodyOf(ann.get(loc))
	if toolCard.MatchString(page) || !strings.Contains(page, "Deleted the conversation") {
		t.Fatalf("after approval the page still shows the card, or no reply:\n%s", page)
	}
	if strings.Contains(page, `data-testid="history-paused"`) {
		t.Fatal("the sidebar still shows the chat as waiting")
	}
	res = ann.postForm(loc+"/tools", url.Values{"call_id": {m[1]}, "decision": {"approve"}})
	mustStatus(t, res, http.StatusConflict)
}

// TestReadEditorWithoutJavaScript: a page chat's read_editor card offers a
// button that submits the editor's form (its unsaved text) to the card's
// action; the reply counts that text, not the saved one.
func TestReadEditorWithoutJavaScript(t *testing.T) {
	a := newTestApp(t)
	ann := a.register("ann")
	res := ann.postForm("/pages", url.Values{"title": {"Draft"}, "content": {"# Saved heading\n\nold words here"}})
	mustStatus(t, res, http.StatusSeeOther)
	edit := res.Header.Get("Location")
	var pageID int64
	fmt.Sscanf(edit, "/pages/%d/edit", &pageID)
	res = ann.postForm(fmt.Sprintf("/pages/%d/chat", pageID), url.Values{"query": {"review my draft"}, "exchange_id": {"0"}})
	mustStatus(t, res, http.StatusSeeOther)
	page := bodyOf(ann.get(edit))
	m := toolCard.FindStringSubmatch(page)
	if m == nil || !strings.Contains(page, `data-testid="tool-send-editor"`) || !strings.Contains(page, `form="page-form"`) {
		t.Fatalf("the editor shows no read_editor card with its button:\n%s", page)
	}
	action := regexp.MustCompile(`formaction="(/chat/\d+/tools)"`).FindStringSubmatch(page)
	if action == nil {
		t.Fatal("the button has no formaction")
	}
	// What the editor's form sends (its text, unsaved), plus the button's call_id.
	res = ann.postForm(action[1], url.Values{"content": {"# Unsaved heading\n\none two three four"}, "call_id": {m[1]}})
	mustStatus(t, res, http.StatusSeeOther)
	if got := res.Header.Get("Location"); got != edit {
		t.Fatalf("went to %q, want back to %q", got, edit)
	}
	page = bodyOf(ann.get(edit))
	if !strings.Contains(page, "Your draft has 6 words") || !strings.Contains(page, "Unsaved heading") || toolCard.MatchString(page) {
		t.Fatalf("the reply does not count the unsaved text, or the card stayed:\n%s", page)
	}
}

// TestAccountToolPermissionsForm: the account page lists every tool with
// its choice; the form saves them.
func TestAccountToolPermissionsForm(t *testing.T) {
	a := newTestApp(t)
	ann := a.register("ann")
	page := bodyOf(ann.get("/account"))
	for _, want := range []string{`data-testid="tool-permissions"`, `name="delete_conversation"`, `name="read_editor"`, "Run without asking", "Ask me first", "Never"} {
		if !strings.Contains(page, want) {
			t.Fatalf("the account page lacks %s", want)
		}
	}
	res := ann.postForm("/account/tools", url.Values{"delete_conversation": {"never"}, "read_editor": {"confirm"}})
	mustStatus(t, res, http.StatusSeeOther)
	res = ann.postForm("/account/tools", url.Values{"read_editor": {"sometimes"}})
	mustStatus(t, res, http.StatusBadRequest)
	page = bodyOf(ann.get("/account"))
	if !regexp.MustCompile(`name="delete_conversation"[^>]*>\s*<option value="auto">[^<]*</option><option value="confirm">[^<]*</option><option value="never" selected`).MatchString(page) &&
		!strings.Contains(page, `<option value="never" selected`) {
		t.Fatalf("the choice was not kept:\n%s", page)
	}
	var list []struct{ Tool, Policy string }
	ann.apiJSON("GET", "/api/account/tools", nil, http.StatusOK, &list)
	for _, l := range list {
		if l.Tool == "delete_conversation" && l.Policy != "never" || l.Tool == "read_editor" && l.Policy != "confirm" {
			t.Fatalf("policies = %+v", list)
		}
	}
}
