package handlers_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"palaver/agents"
	"palaver/internal/htmltest"
	"palaver/models"
)

// The whole page flow without JavaScript: create, edit, save, ask the
// assistant for a section edit, accept it, restore an earlier revision.
func TestPagesNoJSFlow(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")

	doc := c.chatScreen(t, "/pages")
	if len(htmltest.ByTestID(doc, "pages-empty")) != 1 || len(htmltest.ByTestID(doc, "page-create")) != 1 {
		t.Fatal("an empty /pages lacks its empty note or its create form")
	}
	// The browser sends the text area's lines with CRLF; the page keeps LF.
	id := c.pageCreate(t, "  Trip  ", strings.ReplaceAll(pageTrip, "\n", "\r\n"))
	p := a.page(c.user.ID, id)
	if p.Title != "Trip" || p.Content != pageTrip {
		t.Fatalf("created %q %q", p.Title, p.Content)
	}
	doc = c.pageEdit(t, id)
	if got := pageEditorText(t, doc); got != pageTrip {
		t.Fatalf("editor shows %q", got)
	}
	for _, hook := range []string{"page-content", "page-save", "page-chat", "page-preview"} {
		if len(htmltest.ByTestID(doc, hook)) != 1 {
			t.Fatalf("the editor has no single %s", hook)
		}
	}
	panel := htmltest.ByTestID(doc, "page-chat")[0]
	if len(htmltest.ByTestID(panel, "chat-input")) != 1 || len(htmltest.ByTestID(panel, "chat-send")) != 1 || len(htmltest.ByTestID(panel, "chat-welcome")) != 1 {
		t.Fatal("the panel lacks its own composer or welcome")
	}
	if h2 := htmltest.FindAll(htmltest.ByTestID(doc, "page-preview")[0], func(n *chatNode) bool { return n.Data == "h2" }); len(h2) != 2 || htmltest.Text(h2[0]) != "Plan" {
		t.Fatalf("the preview does not render the Markdown: %d h2", len(h2))
	}
	if got := pageRevisionSources(doc); !slices.Equal(got, []string{"user"}) {
		t.Fatalf("revisions %v", got)
	}

	// Save: a revision by the user.
	edited := strings.Replace(pageTrip, "Fly to Paris.", "Fly to Paris on Friday.", 1)
	res := c.postForm(fmt.Sprintf("/pages/%d/save", id), url.Values{"title": {"Trip plans"}, "content": {edited}})
	mustStatus(t, res, http.StatusSeeOther)
	if loc := res.Header.Get("Location"); loc != fmt.Sprintf("/pages/%d/edit", id) {
		t.Fatalf("save redirected to %q", loc)
	}
	doc = c.pageEdit(t, id)
	if got := pageRevisionSources(doc); !slices.Equal(got, []string{"user", "user"}) {
		t.Fatalf("after a save the revisions are %v", got)
	}
	if got := pageEditorText(t, doc); got != edited {
		t.Fatalf("editor after save %q", got)
	}
	if v, _ := htmltest.Attr(htmltest.ByTestID(doc, "page-title")[0], "value"); v != "Trip plans" {
		t.Fatalf("title after save %q", v)
	}
	// Saving what is already there writes no revision.
	mustStatus(t, c.postForm(fmt.Sprintf("/pages/%d/save", id), url.Values{"title": {"Trip plans"}, "content": {edited}}), http.StatusSeeOther)
	if n := len(a.revisions(c.user.ID, id)); n != 2 {
		t.Fatalf("an unchanged save wrote a revision: %d", n)
	}

	// Ask for a section edit: the reply has its card under it.
	ex, msg := c.pageProposal(t, id, `replace section "Plan" with: Take the train.`, 0)
	doc = c.pageEdit(t, id)
	cards := pageCards(doc)
	if len(cards) != 1 || cards[0].MessageID != msg || cards[0].Mode != models.EditSectionPatch || cards[0].Stale || !cards[0].Accept {
		t.Fatalf("cards %+v (reply %d)", cards, msg)
	}
	if !slices.Equal(cards[0].Sections, []string{"## Plan"}) || !slices.Equal(cards[0].Kinds, []string{"changed"}) {
		t.Fatalf("section blocks %v %v", cards[0].Sections, cards[0].Kinds)
	}
	if !strings.Contains(cards[0].Text, "+Take the train.") || !strings.Contains(cards[0].Text, "-Fly to Paris on Friday.") || !strings.Contains(cards[0].Text, "+1 / -1") {
		t.Fatalf("the card's diff: %s", cards[0].Text)
	}
	if msgs := chatTranscript(doc); len(msgs) != 2 || msgs[0].Role != "user" || msgs[1].Role != "assistant" {
		t.Fatalf("panel transcript %+v", msgs)
	}

	// Accept the checked sections, as the form posts them.
	res = c.postForm(fmt.Sprintf("/pages/%d/proposals/%d/accept", id, msg), url.Values{"pick": {"1"}, "sections": {"## Plan"}})
	mustStatus(t, res, http.StatusSeeOther)
	if loc := res.Header.Get("Location"); loc != fmt.Sprintf("/pages/%d/edit#msg-%d", id, msg) {
		t.Fatalf("accept redirected to %q", loc)
	}
	want := strings.Replace(edited, "Fly to Paris on Friday.", "Take the train.", 1)
	if got := a.page(c.user.ID, id).Content; got != want {
		t.Fatalf("content after accept %q, want %q", got, want)
	}
	doc = c.pageEdit(t, id)
	if got := pageEditorText(t, doc); got != want {
		t.Fatalf("editor after accept %q", got)
	}
	if len(pageCards(doc)) != 0 || !slices.Equal(pageApplied(doc), []string{fmt.Sprintf("proposal-%d", msg)}) {
		t.Fatalf("after accept: cards %+v, applied %v", pageCards(doc), pageApplied(doc))
	}
	if got := pageRevisionSources(doc); !slices.Equal(got, []string{"agent", "user", "user"}) {
		t.Fatalf("revisions after accept %v", got)
	}
	link := htmltest.ByTestID(doc, "revision-message")
	if href, _ := htmltest.Attr(link[0], "href"); len(link) != 1 || href != fmt.Sprintf("/pages/%d/chat/%d#msg-%d", id, ex, msg) {
		t.Fatalf("the agent revision's link: %d links, %q", len(link), href)
	}
	revs := a.revisions(c.user.ID, id)
	if last := revs[len(revs)-1]; last.EditSource != models.EditAgent || last.MessageID == nil || *last.MessageID != msg {
		t.Fatalf("agent revision %+v", last)
	}
	// The link opens the proposing chat.
	if msgs := chatTranscript(c.chatScreen(t, fmt.Sprintf("/pages/%d/chat/%d", id, ex))); len(msgs) != 2 || msgs[1].ID != fmt.Sprintf("msg-%d", msg) {
		t.Fatalf("the proposal's chat shows %+v", msgs)
	}

	// Restore the first revision: a new revision marked restore.
	res = c.postForm(fmt.Sprintf("/pages/%d/revisions/%d/restore", id, revs[0].ID), url.Values{})
	mustStatus(t, res, http.StatusSeeOther)
	if got := a.page(c.user.ID, id).Content; got != pageTrip {
		t.Fatalf("content after restore %q", got)
	}
	if got := pageRevisionSources(c.pageEdit(t, id)); !slices.Equal(got, []string{"restore", "agent", "user", "user"}) {
		t.Fatalf("revisions after restore %v", got)
	}
	// The list shows the page with its revisions.
	list := c.chatScreen(t, "/pages")
	items := htmltest.ByTestID(list, "page-item")
	if len(items) != 1 || htmltest.Text(htmltest.ByTestID(items[0], "page-item-title")[0]) != "Trip plans" ||
		htmltest.Text(htmltest.ByTestID(items[0], "page-item-revisions")[0]) != "4 revisions" {
		t.Fatalf("/pages lists %d items: %s", len(items), htmltest.Text(list))
	}
}

// A whole-page edit without JavaScript: a unified diff, Accept.
func TestPageFullReplacementNoJS(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	id := c.pageCreate(t, "Trip", pageTrip)
	_, msg := c.pageProposal(t, id, `replace "Paris" with "Lyon"`, 0)
	cards := pageCards(c.pageEdit(t, id))
	if len(cards) != 1 || cards[0].Mode != models.EditFullReplacement || !cards[0].Accept || len(cards[0].Sections) != 0 {
		t.Fatalf("cards %+v", cards)
	}
	for _, w := range []string{"@@ -1,7 +1,7 @@", "-Fly to Paris.", "+Fly to Lyon.", "+2 / -2", "Replaces 2 occurrences"} {
		if !strings.Contains(cards[0].Text, w) {
			t.Fatalf("card lacks %q: %s", w, cards[0].Text)
		}
	}
	mustStatus(t, c.postForm(fmt.Sprintf("/pages/%d/proposals/%d/accept", id, msg), url.Values{}), http.StatusSeeOther)
	if got := a.page(c.user.ID, id).Content; got != strings.ReplaceAll(pageTrip, "Paris", "Lyon") {
		t.Fatalf("content %q", got)
	}
}

// A section patch applied in part: only the checked sections change.
func TestProposalPartialApply(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	id := c.pageCreate(t, "Trip", pageTrip)
	// The new text carries a second heading: Plan changes and Extra is new.
	_, msg := c.pageProposal(t, id, "replace section \"Plan\" with: Walk.\n\n## Extra\nMore.", 0)
	cards := pageCards(c.pageEdit(t, id))
	if len(cards) != 1 || !slices.Equal(cards[0].Sections, []string{"## Plan", "## Extra"}) || !slices.Equal(cards[0].Kinds, []string{"changed", "new"}) {
		t.Fatalf("cards %+v", cards)
	}
	if !strings.Contains(cards[0].Text, "Accept (2)") || !strings.Contains(cards[0].Text, "2 sections") {
		t.Fatalf("card text %s", cards[0].Text)
	}
	// Nothing checked: refused, nothing changes.
	before := a.pageSnapshot()
	mustStatus(t, c.postForm(fmt.Sprintf("/pages/%d/proposals/%d/accept", id, msg), url.Values{"pick": {"1"}}), http.StatusBadRequest)
	if a.pageSnapshot() != before {
		t.Fatal("an accept with no section checked changed something")
	}
	// Only Extra's checkbox stays checked: the form posts its value.
	mustStatus(t, c.postForm(fmt.Sprintf("/pages/%d/proposals/%d/accept", id, msg), url.Values{"pick": {"1"}, "sections": {cards[0].Keys[1]}}), http.StatusSeeOther)
	got := a.page(c.user.ID, id).Content
	if !strings.Contains(got, "Fly to Paris.") || strings.Contains(got, "Walk.") || !strings.Contains(got, "## Extra\nMore.") {
		t.Fatalf("partial apply gave %q", got)
	}
	// Extra comes where it stood in the proposal, with the blank line that
	// separated Plan from Budget.
	if got != "Notes for the trip.\n\n## Plan\nFly to Paris.\n\n## Extra\nMore.\n\n## Budget\n300 euros, Paris hotels included.\n" {
		t.Fatalf("partial apply: %q", got)
	}
	doc := c.pageEdit(t, id)
	if len(pageCards(doc)) != 0 || len(pageApplied(doc)) != 1 {
		t.Fatal("a partly applied proposal is still actionable")
	}
}

// Editing the page makes a card stale: it says why, Accept is off, and any
// accept answers 409 and changes nothing. Reject still works, and the card
// stays gone after a reload and in a new session.
func TestProposalStaleAndReject(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	id := c.pageCreate(t, "Trip", pageTrip)
	_, full := c.pageProposal(t, id, `rewrite the page as: # Gone`, 0)
	mustStatus(t, c.postForm(fmt.Sprintf("/pages/%d/save", id), url.Values{"title": {"Trip"}, "content": {pageTrip + "edited\n"}}), http.StatusSeeOther)

	doc := c.pageEdit(t, id)
	cards := pageCards(doc)
	if len(cards) != 1 || !cards[0].Stale || cards[0].Accept || !strings.Contains(cards[0].Text, "The page changed since this was proposed") {
		t.Fatalf("stale card %+v", cards)
	}
	before := a.pageSnapshot()
	path := fmt.Sprintf("/pages/%d/proposals/%d/accept", id, full)
	mustStatus(t, c.postForm(path, url.Values{}), http.StatusConflict)
	res := c.htmx(http.MethodPost, path, url.Values{})
	mustStatus(t, res, http.StatusConflict)
	if !strings.Contains(bodyOf(res), "page changed since this was proposed") || !chatHTMXAlert.MatchString(bodyOf(res)) {
		t.Fatalf("htmx stale answer: %s", bodyOf(res))
	}
	r, b := c.api(http.MethodPost, fmt.Sprintf("/api/pages/%d/proposals/%d/accept", id, full), nil)
	if msg := apiErr(t, r, b, http.StatusConflict); !strings.Contains(msg, "changed since") {
		t.Fatalf("API stale message %q", msg)
	}
	if a.pageSnapshot() != before {
		t.Fatal("a stale accept changed something")
	}

	// Reject the stale card (htmx): it turns into a short note that is no
	// proposal card, and a reload does not bring the card back.
	res = c.htmx(http.MethodPost, fmt.Sprintf("/pages/%d/proposals/%d/reject", id, full), url.Values{})
	mustStatus(t, res, http.StatusOK)
	want := fmt.Sprintf("proposal-%d", full)
	if got := pageRejected(chatDoc(t, res)); !slices.Equal(got, []string{want}) {
		t.Fatalf("reject answered the notes %v, want %s", got, want)
	}
	doc = c.pageEdit(t, id)
	if len(pageCards(doc)) != 0 || len(pageApplied(doc)) != 0 || !slices.Equal(pageRejected(doc), []string{want}) {
		t.Fatalf("a dismissed proposal renders %d cards, %d applied notes, rejected notes %v", len(pageCards(doc)), len(pageApplied(doc)), pageRejected(doc))
	}
	if msgs := chatTranscript(doc); len(msgs) != 2 {
		t.Fatalf("the message itself should stay: %+v", msgs)
	}
	if n := a.pageCount("proposal_rejections", "message_id = ? AND user_id = ?", full, c.user.ID); n != 1 {
		t.Fatalf("%d rejection rows", n)
	}
	// A new sign-in (a fresh session): still dismissed.
	other := a.anon()
	other.get("/login")
	mustStatus(t, other.postForm("/login", url.Values{"username": {"ada"}, "password": {"correct horse"}}), http.StatusSeeOther)
	if cards := pageCards(other.pageEdit(t, id)); len(cards) != 0 {
		t.Fatalf("a new session shows the dismissed card: %+v", cards)
	}
	// Rejecting without JavaScript: 303 back to the editor.
	_, prop := c.pageProposal(t, id, `add section "Z": z`, 0)
	res = c.postForm(fmt.Sprintf("/pages/%d/proposals/%d/reject", id, prop), url.Values{})
	mustStatus(t, res, http.StatusSeeOther)
	if cards := pageCards(c.pageEdit(t, id)); len(cards) != 0 {
		t.Fatalf("no-JS reject left %+v", cards)
	}
}

// The same proposal accepted twice: the second is refused (409) and writes
// no second revision; the card shows it as applied, never as actionable.
func TestProposalAcceptTwice(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	id := c.pageCreate(t, "Trip", pageTrip)
	_, msg := c.pageProposal(t, id, `add section "Z": z`, 0)
	path := fmt.Sprintf("/pages/%d/proposals/%d/accept", id, msg)
	mustStatus(t, c.postForm(path, url.Values{}), http.StatusSeeOther)
	before := a.pageSnapshot()
	res := c.postForm(path, url.Values{})
	mustStatus(t, res, http.StatusConflict)
	if a.pageSnapshot() != before {
		t.Fatal("a second accept changed something")
	}
	if n := a.pageCount("page_revisions", "message_id = ?", msg); n != 1 {
		t.Fatalf("%d revisions name the proposal", n)
	}
	// Even once the page is back to what it was proposed for.
	revs := a.revisions(c.user.ID, id)
	mustStatus(t, c.postForm(fmt.Sprintf("/pages/%d/revisions/%d/restore", id, revs[0].ID), url.Values{}), http.StatusSeeOther)
	r, b := c.api(http.MethodPost, fmt.Sprintf("/api/pages/%d/proposals/%d/accept", id, msg), nil)
	if m := apiErr(t, r, b, http.StatusConflict); !strings.Contains(m, "already been applied") {
		t.Fatalf("second accept via the API: %q", m)
	}
	doc := c.pageEdit(t, id)
	if len(pageCards(doc)) != 0 || len(pageApplied(doc)) != 1 {
		t.Fatalf("applied proposal shown as %+v / %v", pageCards(doc), pageApplied(doc))
	}
}

// A refused save keeps what was typed and says why; a blank create does too.
func TestPageFormsRefused(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	c.get("/pages")
	before := a.pageSnapshot()
	res := c.postForm("/pages", url.Values{"title": {"   "}, "content": {"# kept text"}})
	mustStatus(t, res, http.StatusUnprocessableEntity)
	doc := chatDoc(t, res)
	if e := htmltest.ByTestID(doc, "page-create-error"); len(e) != 1 || !strings.Contains(htmltest.Text(e[0]), "title") {
		t.Fatal("no error on a blank title")
	}
	if got := htmltest.Text(htmltest.ByTestID(doc, "page-create-content")[0]); got != "# kept text" {
		t.Fatalf("typed content lost: %q", got)
	}
	mustStatus(t, c.postForm("/pages", url.Values{"title": {strings.Repeat("x", 201)}}), http.StatusUnprocessableEntity)
	if a.pageSnapshot() != before {
		t.Fatal("a refused create stored something")
	}

	id := c.pageCreate(t, "Trip", pageTrip)
	before = a.pageSnapshot()
	res = c.postForm(fmt.Sprintf("/pages/%d/save", id), url.Values{"title": {""}, "content": {"unsaved words"}})
	mustStatus(t, res, http.StatusUnprocessableEntity)
	doc = chatDoc(t, res)
	if got := pageEditorText(t, doc); got != "unsaved words" || len(htmltest.ByTestID(doc, "page-error")) != 1 {
		t.Fatalf("refused save shows %q", got)
	}
	mustStatus(t, c.postForm(fmt.Sprintf("/pages/%d/save", id), url.Values{"title": {"T"}}), http.StatusBadRequest)
	if a.pageSnapshot() != before {
		t.Fatal("a refused save changed something")
	}
	// An empty message to the assistant: the editor again, with the reason.
	res = c.postForm(fmt.Sprintf("/pages/%d/chat", id), url.Values{"query": {"  "}, "exchange_id": {"0"}})
	mustStatus(t, res, http.StatusUnprocessableEntity)
	if e := htmltest.ByTestID(chatDoc(t, res), "composer-error"); len(e) != 1 || !strings.Contains(htmltest.Text(e[0]), "Type a message") {
		t.Fatal("no reason for an empty message")
	}
	if a.pageSnapshot() != before {
		t.Fatal("an empty message stored something")
	}
}

// The panel's conversation is kept per page in the session: a reload, a
// visit to another page and back, a new chat and selecting an older one.
func TestPageChatResume(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	p1 := c.pageCreate(t, "One", pageTrip)
	p2 := c.pageCreate(t, "Two", "# Two\n")
	if got := chatComposerExchange(t, c.pageEdit(t, p1)); got != "0" {
		t.Fatalf("a page without chats opens on exchange %s", got)
	}
	ex1 := c.pageSend(t, p1, "first question", 0)
	if again := c.pageSend(t, p1, "second question", ex1); again != ex1 {
		t.Fatalf("the follow-up went to %d", again)
	}
	ex2 := c.pageSend(t, p2, "about two", 0)
	doc := c.pageEdit(t, p1) // back to the first page
	if got := chatComposerExchange(t, doc); got != fmt.Sprint(ex1) {
		t.Fatalf("page one resumes %s, want %d", got, ex1)
	}
	if msgs := chatTranscript(doc); len(msgs) != 4 || msgs[0].Text != "first question" {
		t.Fatalf("page one shows %+v", msgs)
	}
	if got := chatComposerExchange(t, c.pageEdit(t, p2)); got != fmt.Sprint(ex2) {
		t.Fatalf("page two resumes %s", got)
	}

	// New chat: empty, and it stays empty on reload.
	mustStatus(t, c.postForm(fmt.Sprintf("/pages/%d/chat/new", p1), url.Values{}), http.StatusSeeOther)
	doc = c.pageEdit(t, p1)
	if got := chatComposerExchange(t, doc); got != "0" || len(chatTranscript(doc)) != 0 || len(htmltest.ByTestID(doc, "chat-welcome")) != 1 {
		t.Fatalf("new chat shows exchange %s with %d messages", got, len(chatTranscript(doc)))
	}
	ex3 := c.pageSend(t, p1, "another chat", 0)
	items := chatHistoryIDs(c.pageEdit(t, p1))
	if !slices.Equal(items, []int64{ex3, ex1}) {
		t.Fatalf("the page's chats %v, want [%d %d]", items, ex3, ex1)
	}
	// Select the older one; a reload keeps it.
	c.chatScreen(t, fmt.Sprintf("/pages/%d/chat/%d", p1, ex1))
	if got := chatComposerExchange(t, c.pageEdit(t, p1)); got != fmt.Sprint(ex1) {
		t.Fatalf("after selecting, the panel shows %s", got)
	}
	// Another page's chat cannot be opened through this page.
	mustStatus(t, c.get(fmt.Sprintf("/pages/%d/chat/%d", p1, ex2)), http.StatusNotFound)

	// A new sign-in: the page's most recent chat.
	other := a.anon()
	other.get("/login")
	mustStatus(t, other.postForm("/login", url.Values{"username": {"ada"}, "password": {"correct horse"}}), http.StatusSeeOther)
	if got := chatComposerExchange(t, other.pageEdit(t, p1)); got != fmt.Sprint(ex3) {
		t.Fatalf("a new session opens %s, want the latest %d", got, ex3)
	}

	// Deleting the open chat (no JavaScript: confirm first) starts a new one.
	res := c.postForm(fmt.Sprintf("/pages/%d/chat/%d/delete", p1, ex1), url.Values{})
	mustStatus(t, res, http.StatusOK)
	if len(htmltest.ByTestID(chatDoc(t, res), "confirm")) != 1 {
		t.Fatal("no confirmation before deleting a chat")
	}
	mustStatus(t, c.postForm(fmt.Sprintf("/pages/%d/chat/%d/delete", p1, ex1), url.Values{"confirmed": {"1"}}), http.StatusSeeOther)
	if got := chatComposerExchange(t, c.pageEdit(t, p1)); got != "0" {
		t.Fatalf("after deleting the open chat the panel shows %s", got)
	}
	if n := a.pageCount("messages", "exchange_id = ?", ex1); n != 0 {
		t.Fatalf("%d messages of the deleted chat left", n)
	}
}

// Page chats stay out of the general chat's history, and the reverse.
func TestPageChatsAreNotGeneralChats(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	id := c.pageCreate(t, "Trip", pageTrip)
	pex := c.pageSend(t, id, "about the page", 0)
	gex := c.chatSend(t, "general", 0)
	if ids := chatHistoryIDs(c.chatScreen(t, "/chat")); !slices.Equal(ids, []int64{gex}) {
		t.Fatalf("/chat lists %v", ids)
	}
	if ids := chatHistoryIDs(c.pageEdit(t, id)); !slices.Equal(ids, []int64{pex}) {
		t.Fatalf("the page lists %v", ids)
	}
	mustStatus(t, c.get(fmt.Sprintf("/chat/%d", pex)), http.StatusNotFound)
	mustStatus(t, c.get(fmt.Sprintf("/pages/%d/chat/%d", id, gex)), http.StatusNotFound)
	// The page chat's reply came from the page assistant.
	msgs := a.chatMessages(c.user.ID, pex)
	if msgs[1].AgentType == nil || *msgs[1].AgentType != agents.AgentPageAssistant || !strings.Contains(msgs[1].Content, "“Trip” has 2 sections") {
		t.Fatalf("page chat reply %+v", msgs[1])
	}
}

// The panel closes and opens again without JavaScript (a session flag).
func TestPagePanelToggle(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	id := c.pageCreate(t, "Trip", pageTrip)
	mustStatus(t, c.postForm(fmt.Sprintf("/pages/%d/panel", id), url.Values{"panel": {"closed"}}), http.StatusSeeOther)
	doc := c.pageEdit(t, id)
	if len(htmltest.ByTestID(doc, "page-chat")) != 0 || len(htmltest.ByTestID(doc, "page-chat-open")) != 1 || len(htmltest.ByTestID(doc, "page-content")) != 1 {
		t.Fatal("the closed panel still shows, or cannot be opened")
	}
	res := c.htmx(http.MethodPost, fmt.Sprintf("/pages/%d/panel", id), url.Values{"panel": {"open"}})
	mustStatus(t, res, http.StatusOK)
	frag := chatDoc(t, res)
	if len(htmltest.ByTestID(frag, "page-chat")) != 1 || len(htmltest.ByTestID(frag, "chat-input")) != 1 || len(htmltest.ByTestID(frag, "page-content")) != 0 {
		t.Fatal("htmx open does not answer with the panel alone")
	}
	if len(htmltest.ByTestID(c.pageEdit(t, id), "page-chat")) != 1 {
		t.Fatal("the panel did not stay open")
	}
	mustStatus(t, c.postForm(fmt.Sprintf("/pages/%d/panel", id), url.Values{"panel": {"sideways"}}), http.StatusBadRequest)
}

// Duplicate headings in a proposal: each block has its own checkbox value,
// so of two "## N" blocks exactly the checked one applies.
func TestProposalDuplicateHeadings(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	id := c.pageCreate(t, "Notes", "## N\n1\n\n## N\n2\n")
	_, msg := c.pageProposal(t, id, "replace section \"N\" with: x\n\n## N\ny", 0)
	card := pageCards(c.pageEdit(t, id))[0]
	if !slices.Equal(card.Sections, []string{"## N", "## N"}) || !slices.Equal(card.Kinds, []string{"changed", "new"}) || card.Keys[0] == card.Keys[1] {
		t.Fatalf("blocks %v %v keys %v", card.Sections, card.Kinds, card.Keys)
	}
	mustStatus(t, c.postForm(fmt.Sprintf("/pages/%d/proposals/%d/accept", id, msg),
		url.Values{"pick": {"1"}, "sections": {card.Keys[1]}}), http.StatusSeeOther)
	if got := a.page(c.user.ID, id).Content; got != "## N\n1\n\n## N\ny\n\n## N\n2\n" {
		t.Fatalf("content %q", got)
	}
}
