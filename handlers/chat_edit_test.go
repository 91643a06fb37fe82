package handlers_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"palaver/internal/htmltest"
	"palaver/models"
	"palaver/paths"
	"palaver/views"
)

// chatBranchTexts is a chat page's transcript as role: text of its bodies
// (the controls and switchers left out).
func chatBranchTexts(doc *html.Node) []string {
	var out []string
	for _, m := range htmltest.ByTestID(doc, "message") {
		role, _ := htmltest.Attr(m, "data-role")
		body := htmltest.ByTestID(m, "message-body")
		text := htmltest.Text(m)
		if len(body) > 0 {
			text = htmltest.Text(body[0])
		}
		out = append(out, role+": "+text)
	}
	return out
}

// chatMessageAt is the transcript entry at seq (nil: none).
func chatMessageAt(doc *html.Node, seq int64) *html.Node {
	for _, m := range htmltest.ByTestID(doc, "message") {
		if s, _ := htmltest.Attr(m, "data-seq"); s == strconv.FormatInt(seq, 10) {
			return m
		}
	}
	return nil
}

// chatSwitch reads the branch switcher of the entry at seq: its position
// ("2 / 3") and the exchanges its arrows open (0: none).
func chatSwitch(t *testing.T, doc *html.Node, seq int64) (pos string, prev, next int64) {
	t.Helper()
	m := chatMessageAt(doc, seq)
	if m == nil {
		t.Fatalf("no entry at seq %d", seq)
	}
	sw := htmltest.ByTestID(m, "branch-switch")
	if len(sw) == 0 {
		return "", 0, 0
	}
	pos = htmltest.Text(htmltest.ByTestID(sw[0], "branch-position")[0])
	link := func(id string) int64 {
		a := htmltest.ByTestID(sw[0], id)
		if len(a) == 0 {
			return 0
		}
		href, _ := htmltest.Attr(a[0], "href")
		var ex, at int64
		if _, err := fmt.Sscanf(href, "/chat/%d?seq=%d", &ex, &at); err != nil || at != seq {
			t.Fatalf("switcher link %q does not open a branch at seq %d", href, seq)
		}
		return ex
	}
	return pos, link("branch-prev"), link("branch-next")
}

// chatMsgAt is the id of the entry at seq of the user's exchange.
func (a *testApp) chatMsgAt(userID, exchangeID, seq int64) int64 {
	a.t.Helper()
	for _, m := range a.chatMessages(userID, exchangeID) {
		if m.Seq != nil && *m.Seq == seq {
			return m.ID
		}
	}
	a.t.Fatalf("exchange %d has no entry at seq %d", exchangeID, seq)
	return 0
}

// chatLocationID is the exchange a 303 (or HX-Push-Url) leads to.
func chatLocationID(t *testing.T, loc string) int64 {
	t.Helper()
	id, err := strconv.ParseInt(strings.TrimPrefix(loc, "/chat/"), 10, 64)
	if err != nil || !strings.HasPrefix(loc, "/chat/") {
		t.Fatalf("went to %q, want /chat/{id}", loc)
	}
	return id
}

// Editing a message without JavaScript: a page with the form, then a new
// branch with the new text and its answer; the original keeps its log, and
// both carry a switcher at the edited message. The sidebar shows the
// family once, with its count; the JSON history lists both.
func TestChatEditMakesABranch(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	id := c.chatSend(t, "first question", 0)
	c.chatSend(t, "second question", id)
	before := chatBranchTexts(c.chatScreen(t, paths.Chat(id)))
	if len(before) != 4 {
		t.Fatalf("the conversation shows %q", before)
	}

	// Every user message has its edit control, every reply its
	// regeneration; no form and no token in the transcript's entries.
	doc := c.chatScreen(t, paths.Chat(id))
	for _, m := range htmltest.ByTestID(doc, "message") {
		role, _ := htmltest.Attr(m, "data-role")
		seq, _ := htmltest.Attr(m, "data-seq")
		n, _ := strconv.ParseInt(seq, 10, 64)
		want, path := "edit-message", paths.MessageEdit(a.chatMsgAt(c.user.ID, id, n))
		if role == "assistant" {
			want, path = "regenerate", paths.MessageRegenerate(a.chatMsgAt(c.user.ID, id, n))
		}
		ctl := htmltest.ByTestID(m, want)
		if len(ctl) != 1 {
			t.Fatalf("%s message at seq %s has %d %s controls", role, seq, len(ctl), want)
		}
		if href, _ := htmltest.Attr(ctl[0], "href"); href != path {
			t.Fatalf("%s control links to %q", want, href)
		}
		// A link, not a form with its own token (the page's one token
		// goes in htmx's header), and small: a long transcript pays it
		// per message.
		var b bytes.Buffer
		if err := html.Render(&b, ctl[0]); err != nil {
			t.Fatal(err)
		}
		if ctl[0].Data != "a" || ctl[0].Parent.Data == "form" || b.Len() > 300 {
			t.Fatalf("the %s control is %d bytes: %s", want, b.Len(), b.String())
		}
	}
	if v, _ := htmltest.Attr(htmltest.FindAll(doc, func(n *html.Node) bool { v, _ := htmltest.Attr(n, "name"); return v == "after_seq" })[0], "value"); v != "3" {
		t.Fatalf("the composer's after_seq is %q, want 3", v)
	}

	// The form, on a screen of its own, holds the old text.
	form := c.chatScreen(t, paths.MessageEdit(a.chatMsgAt(c.user.ID, id, 2)))
	in := htmltest.ByTestID(form, "edit-input")
	if len(in) != 1 || strings.TrimSpace(chatRawText(in[0])) != "second question" {
		t.Fatal("the edit page does not hold the message's text")
	}
	if action, _ := htmltest.Attr(htmltest.ByTestID(form, "edit-form")[0], "action"); action != paths.MessageEdit(a.chatMsgAt(c.user.ID, id, 2)) {
		t.Fatalf("the edit form posts to %q", action)
	}

	res := c.postForm(paths.MessageEdit(a.chatMsgAt(c.user.ID, id, 2)), url.Values{"query": {"second question, edited"}})
	mustStatus(t, res, http.StatusSeeOther)
	fork := chatLocationID(t, res.Header.Get("Location"))
	if fork == id {
		t.Fatal("the edit went to the original conversation")
	}
	doc = c.chatScreen(t, paths.Chat(fork))
	got := chatBranchTexts(doc)
	if len(got) != 4 || got[0] != "user: first question" || got[2] != "user: second question, edited" || !strings.HasPrefix(got[3], "assistant: ") {
		t.Fatalf("the new branch shows %q", got)
	}
	if n := htmltest.ByTestID(doc, "branch-notice"); len(n) != 1 || !strings.Contains(htmltest.Text(n[0]), "original conversation is kept") {
		t.Fatal("the new branch does not say what became of the original")
	}
	if pos, prev, next := chatSwitch(t, doc, 2); pos != "2 / 2" || prev != id || next != 0 {
		t.Fatalf("the branch's switcher at seq 2: %q ‹%d %d›", pos, prev, next)
	}
	if pos, _, _ := chatSwitch(t, doc, 1); pos != "" {
		t.Fatalf("the shared reply at seq 1 has a switcher %q", pos)
	}
	// The notice is said once.
	if n := htmltest.ByTestID(c.chatScreen(t, paths.Chat(fork)), "branch-notice"); len(n) != 0 {
		t.Fatal("the notice came back on the next visit")
	}

	orig := c.chatScreen(t, paths.Chat(id))
	if got := chatBranchTexts(orig); strings.Join(got, "|") != strings.Join(before, "|") {
		t.Fatalf("the original changed:\n%q\nwas\n%q", got, before)
	}
	if pos, prev, next := chatSwitch(t, orig, 2); pos != "1 / 2" || prev != 0 || next != fork {
		t.Fatalf("the original's switcher at seq 2: %q ‹%d %d›", pos, prev, next)
	}

	// One sidebar item for the family: the branch on screen, with the
	// count; from elsewhere, the branch active last.
	items := htmltest.ByTestID(orig, "history-item")
	if len(items) != 1 {
		t.Fatalf("the sidebar lists %d items %v, want one for the family", len(items), chatHistoryIDs(orig))
	}
	if v, _ := htmltest.Attr(items[0], "data-exchange-id"); v != strconv.FormatInt(id, 10) {
		t.Fatalf("on the original, the family's item is exchange %s", v)
	}
	if b := htmltest.ByTestID(items[0], "history-branches"); len(b) != 1 || htmltest.Text(b[0]) != "2 branches" {
		t.Fatal("the family's item does not count its branches")
	}
	other := c.chatSend(t, "an unrelated topic", 0)
	items = htmltest.ByTestID(c.chatScreen(t, paths.Chat(other)), "history-item")
	if ids := chatHistoryIDs(c.chatScreen(t, paths.Chat(other))); len(ids) != 2 || ids[0] != other || ids[1] != fork {
		t.Fatalf("from another chat the sidebar lists %v, want [%d %d] (the branch active last)", ids, other, fork)
	}
	var history []map[string]any
	c.apiJSON(http.MethodGet, "/api/chat/history", nil, http.StatusOK, &history)
	if len(history) != 3 {
		t.Fatalf("the JSON history lists %d exchanges, want all 3", len(history))
	}
}

// With htmx, the edit form comes alone, and sending it answers with the
// new branch's whole screen, its address pushed; the reply follows live.
func TestChatEditHTMX(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	id := c.chatSend(t, "first question", 0)

	res := c.htmx(http.MethodGet, paths.MessageEdit(a.chatMsgAt(c.user.ID, id, 0)), nil)
	mustStatus(t, res, http.StatusOK)
	body := bodyOf(res)
	if strings.Contains(body, "<html") || !strings.Contains(body, `data-testid="edit-form"`) || !strings.Contains(body, "first question") {
		t.Fatalf("the htmx edit form: %s", body)
	}

	res = c.htmx(http.MethodPost, paths.MessageEdit(a.chatMsgAt(c.user.ID, id, 0)), url.Values{"query": {"a better question"}})
	mustStatus(t, res, http.StatusOK)
	fork := chatLocationID(t, res.Header.Get("HX-Push-Url"))
	if res.Header.Get("HX-Retarget") != "body" || res.Header.Get("HX-Reswap") != "innerHTML" {
		t.Fatalf("the new branch is swapped into %q with %q", res.Header.Get("HX-Retarget"), res.Header.Get("HX-Reswap"))
	}
	doc := chatDoc(t, res)
	if got := chatBranchTexts(doc); len(got) == 0 || got[0] != "user: a better question" {
		t.Fatalf("the new branch shows %q", got)
	}
	if v := chatComposerExchange(t, doc); v != strconv.FormatInt(fork, 10) {
		t.Fatalf("the composer sends to %s, want the branch %d", v, fork)
	}
	a.waitTurns()
	if got := chatBranchTexts(c.chatScreen(t, paths.Chat(fork))); len(got) != 2 || got[1] == "assistant: " {
		t.Fatalf("the branch after its turn: %q", got)
	}
	if got := chatBranchTexts(c.chatScreen(t, paths.Chat(id))); len(got) != 2 || got[0] != "user: first question" {
		t.Fatalf("the original after the edit: %q", got)
	}
}

// Regenerating a reply: a new answer in a branch at the reply's seq (the
// question copied, not sent again), the old answer kept, a switcher on
// both replies. Without JavaScript the control asks first.
func TestChatRegenerate(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	id := c.chatSend(t, "tell me something", 0)

	ask := c.chatScreen(t, paths.MessageRegenerate(a.chatMsgAt(c.user.ID, id, 1)))
	confirm := htmltest.ByTestID(ask, "confirm")
	if len(confirm) != 1 {
		t.Fatal("no confirm button on the page that asks")
	}
	res := c.postForm(paths.MessageRegenerate(a.chatMsgAt(c.user.ID, id, 1)), url.Values{"confirmed": {"1"}})
	mustStatus(t, res, http.StatusSeeOther)
	first := chatLocationID(t, res.Header.Get("Location"))

	res = c.htmx(http.MethodPost, paths.MessageRegenerate(a.chatMsgAt(c.user.ID, id, 1)), nil)
	mustStatus(t, res, http.StatusOK)
	second := chatLocationID(t, res.Header.Get("HX-Push-Url"))
	a.waitTurns()
	if first == id || second == id || first == second {
		t.Fatalf("regenerations went to %d and %d (original %d)", first, second, id)
	}
	for i, ex := range []int64{id, first, second} {
		doc := c.chatScreen(t, paths.Chat(ex))
		got := chatBranchTexts(doc)
		if len(got) != 2 || got[0] != "user: tell me something" || !strings.HasPrefix(got[1], "assistant: ") {
			t.Fatalf("exchange %d shows %q", ex, got)
		}
		pos, _, _ := chatSwitch(t, doc, 1)
		if want := fmt.Sprintf("%d / 3", i+1); pos != want {
			t.Fatalf("exchange %d's reply switcher says %q, want %q", ex, pos, want)
		}
		if q, _, _ := chatSwitch(t, doc, 0); q != "" {
			t.Fatalf("the shared question has a switcher %q", q)
		}
	}
	msgs := a.chatMessages(c.user.ID, first)
	if len(msgs) != 2 || msgs[0].Content != "tell me something" {
		t.Fatalf("the branch's log: %+v", msgs)
	}
}

// What the branch routes refuse: another user's conversation and a page or
// job chat are not found, a seq that names nothing to edit or answer again
// is a 400, and an edit's text is checked as a send's (400, in the form).
// Nothing is made.
func TestChatBranchRefused(t *testing.T) {
	a := newTestApp(t)
	ada := a.register("ada")
	bob := a.register("bob")
	id := ada.chatSend(t, "ada's question", 0)
	bobs := bob.chatSend(t, "bob's secret", 0)
	job := a.chatOtherScope(ada.user.ID)
	// An error row: a failed turn's, with no seq.
	ctx := context.Background()
	ex, _, err := a.store.StartTurn(ctx, models.TurnStart{UserID: ada.user.ID, ExchangeID: id, Scope: models.ScopeGeneral,
		AgentType: "router", Query: "a failing one", Owner: "test"})
	if err != nil {
		t.Fatal(err)
	}
	failed, err := a.store.FailTurn(ctx, ex.ID, "test", "it broke")
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 100_001)
	question, reply := a.chatMsgAt(ada.user.ID, id, 0), a.chatMsgAt(ada.user.ID, id, 1)
	bobQ, bobR := a.chatMsgAt(bob.user.ID, bobs, 0), a.chatMsgAt(bob.user.ID, bobs, 1)
	jobQ, jobR := a.chatMsgAt(ada.user.ID, job, 0), a.chatMsgAt(ada.user.ID, job, 1)
	before := a.chatSnapshot()

	type req struct {
		name, method, path string
		form               url.Values
		status             int
	}
	edit := url.Values{"query": {"edited"}}
	for _, tc := range []req{
		{"edit another's: form", http.MethodGet, paths.MessageEdit(bobQ), nil, http.StatusNotFound},
		{"edit another's", http.MethodPost, paths.MessageEdit(bobQ), edit, http.StatusNotFound},
		{"regenerate another's: ask", http.MethodGet, paths.MessageRegenerate(bobR), nil, http.StatusNotFound},
		{"regenerate another's", http.MethodPost, paths.MessageRegenerate(bobR), url.Values{}, http.StatusNotFound},
		{"edit a job chat", http.MethodPost, paths.MessageEdit(jobQ), edit, http.StatusNotFound},
		{"regenerate a job chat", http.MethodPost, paths.MessageRegenerate(jobR), url.Values{}, http.StatusNotFound},
		{"edit a missing one", http.MethodPost, paths.MessageEdit(999999), edit, http.StatusNotFound},
		{"id not a number", http.MethodPost, paths.ChatHome + "/message/x/edit", edit, http.StatusNotFound},
		{"edit a reply", http.MethodPost, paths.MessageEdit(reply), edit, http.StatusBadRequest},
		{"edit form of a reply", http.MethodGet, paths.MessageEdit(reply), nil, http.StatusBadRequest},
		{"edit an error row", http.MethodPost, paths.MessageEdit(failed.ID), edit, http.StatusBadRequest},
		{"regenerate a question", http.MethodPost, paths.MessageRegenerate(question), url.Values{}, http.StatusBadRequest},
		{"regenerate an error row", http.MethodPost, paths.MessageRegenerate(failed.ID), url.Values{}, http.StatusBadRequest},
		{"regenerate's ask of a question", http.MethodGet, paths.MessageRegenerate(question), nil, http.StatusBadRequest},
		{"edit to nothing", http.MethodPost, paths.MessageEdit(question), url.Values{"query": {""}}, http.StatusBadRequest},
		{"edit to blanks", http.MethodPost, paths.MessageEdit(question), url.Values{"query": {" \n\t "}}, http.StatusBadRequest},
		{"edit too long", http.MethodPost, paths.MessageEdit(question), url.Values{"query": {long}}, http.StatusBadRequest},
	} {
		for _, htmx := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s (htmx %v)", tc.name, htmx), func(t *testing.T) {
				var res *http.Response
				switch {
				case htmx:
					res = ada.htmx(tc.method, tc.path, tc.form)
				case tc.method == http.MethodGet:
					res = ada.get(tc.path)
				default:
					res = ada.postForm(tc.path, tc.form)
				}
				mustStatus(t, res, tc.status)
				if after := a.chatSnapshot(); after != before {
					t.Fatalf("a refused request changed the database:\n%s\n---\n%s", before, after)
				}
				if !strings.HasPrefix(tc.name, "edit to") && tc.name != "edit too long" {
					return
				}
				// The form again, with the reason and the text kept.
				doc := chatDoc(t, res)
				errs := htmltest.ByTestID(doc, "edit-error")
				want := "Type the new text"
				if tc.name == "edit too long" {
					want = "the limit is 100000"
				}
				if len(errs) != 1 || !strings.Contains(htmltest.Text(errs[0]), want) {
					t.Fatalf("no edit error saying %q: %s", want, bodyOf(res))
				}
				if in := htmltest.ByTestID(doc, "edit-input"); len(in) != 1 || len(chatRawText(in[0])) < len(strings.TrimSpace(tc.form.Get("query"))) {
					t.Fatal("the typed text was not kept in the form")
				}
				if htmx && strings.Contains(bodyOf(res), "<html") {
					t.Fatal("the htmx refusal is a whole page, not the form")
				}
			})
		}
	}
	// Without the CSRF token nothing is made either.
	res := ada.postForm(paths.MessageEdit(question), url.Values{"query": {"edited"}, "csrf_token": {"forged"}})
	if res.StatusCode != http.StatusForbidden {
		t.Fatalf("a forged edit: status %d", res.StatusCode)
	}
	if after := a.chatSnapshot(); after != before {
		t.Fatal("a forged edit changed the database")
	}
}

// Two tabs answer the same reply: the composer sends after_seq, the last
// seq its tab showed. The first lands in the conversation; the second, now
// behind, starts a branch of its own and is told so. Both are kept.
func TestChatSendAfterSeqForks(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	id := c.chatSend(t, "the question", 0) // seq 0 and 1

	send := func(query, after string) url.Values {
		return url.Values{"query": {query}, "exchange_id": {strconv.FormatInt(id, 10)}, "after_seq": {after}}
	}
	res := c.postForm(paths.ChatSend, send("tab one's answer", "1"))
	mustStatus(t, res, http.StatusSeeOther)
	if got := chatLocationID(t, res.Header.Get("Location")); got != id {
		t.Fatalf("an up-to-date send went to %d", got)
	}
	res = c.postForm(paths.ChatSend, send("tab two's answer", "1"))
	mustStatus(t, res, http.StatusSeeOther)
	fork := chatLocationID(t, res.Header.Get("Location"))
	if fork == id {
		t.Fatal("a send behind the log landed after the newer messages")
	}
	doc := c.chatScreen(t, paths.Chat(fork))
	if n := htmltest.ByTestID(doc, "branch-notice"); len(n) != 1 || htmltest.Text(n[0]) != views.NoticeStale {
		t.Fatal("the tab behind was not told it started a branch")
	}
	if got := chatBranchTexts(doc); len(got) != 4 || got[2] != "user: tab two's answer" {
		t.Fatalf("the branch shows %q", got)
	}
	if got := chatBranchTexts(c.chatScreen(t, paths.Chat(id))); len(got) != 4 || got[2] != "user: tab one's answer" {
		t.Fatalf("the original shows %q", got)
	}

	// With htmx: the branch's screen, its address pushed.
	res = c.htmx(http.MethodPost, paths.ChatSend, send("tab three's answer", "1"))
	mustStatus(t, res, http.StatusOK)
	third := chatLocationID(t, res.Header.Get("HX-Push-Url"))
	if third == id || third == fork || !strings.Contains(bodyOf(res), views.NoticeStale) {
		t.Fatalf("htmx stale send: pushed %d, body has the notice: %v", third, strings.Contains(bodyOf(res), views.NoticeStale))
	}
	a.waitTurns()

	// after_seq that is no seq: 400, nothing stored.
	before := a.chatSnapshot()
	for _, bad := range []string{"x", "-2", "1.5"} {
		mustStatus(t, c.postForm(paths.ChatSend, send("never stored", bad)), http.StatusBadRequest)
	}
	if after := a.chatSnapshot(); after != before {
		t.Fatal("a send with a bad after_seq changed the database")
	}
}

// Another tab of the same person sees a new branch appear: the switcher on
// the message where it parts (swapped alone, out of band), and
// the family's sidebar item, still the branch the tab shows, with its new
// count.
func TestChatBranchLive(t *testing.T) {
	a := newTestApp(t)
	addr := a.listen()
	ann := a.register("ann")
	id := ann.chatSend(t, "first question", 0)
	msgs := a.chatMessages(ann.user.ID, id)
	tab := ann.openTab(t, addr)
	tab.watch(id, -1)
	tab.hasEntries(msgID(&msgs[0]), msgID(&msgs[1]))

	res := ann.htmx(http.MethodPost, paths.MessageEdit(a.chatMsgAt(ann.user.ID, id, 0)), url.Values{"query": {"edited elsewhere"}})
	mustStatus(t, res, http.StatusOK)
	fork := chatLocationID(t, res.Header.Get("HX-Push-Url"))

	var switched, counted bool
	tab.readUntil("the switcher and the family's count", func() bool {
		if len(tab.frames) == 0 {
			return false
		}
		doc, err := html.Parse(strings.NewReader(tab.frames[len(tab.frames)-1]))
		if err != nil {
			t.Fatal(err)
		}
		if sw := liveSwitcher(doc, msgs[0].ID); sw != nil && strings.Contains(htmltest.Text(sw), "1 / 2") {
			switched = true
			if len(htmltest.ByTestID(doc, "message")) != 0 {
				t.Fatalf("the tab got an entry again, not its switcher alone: %s", tab.frames[len(tab.frames)-1])
			}
		}
		for _, it := range htmltest.ByTestID(doc, "history-item") {
			ex, _ := htmltest.Attr(it, "data-exchange-id")
			fam, _ := htmltest.Attr(it, "data-family")
			b := htmltest.ByTestID(it, "history-branches")
			if ex == strconv.FormatInt(id, 10) && fam == strconv.FormatInt(id, 10) && len(b) == 1 && htmltest.Text(b[0]) == "2 branches" {
				counted = true
			}
		}
		return switched && counted
	})
	a.waitTurns()
	// The fork's own entries never reach the tab watching the original.
	for _, f := range tab.frames {
		if strings.Contains(f, "edited elsewhere") {
			t.Fatalf("the original's tab got the branch's message: %s", f)
		}
	}
	if fork == id {
		t.Fatal("the edit went to the original")
	}
}

// The sidebar's answers keep the family whole: a message sent in a branch
// moves the family's one item to the top (removing it by family, whichever
// branch it showed); a renamed branch keeps its count; deleting a branch
// leaves the family's item, now showing another branch.
func TestChatBranchSidebarAnswers(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	id := c.chatSend(t, "the question", 0)
	res := c.postForm(paths.MessageEdit(a.chatMsgAt(c.user.ID, id, 0)), url.Values{"query": {"another question"}})
	mustStatus(t, res, http.StatusSeeOther)
	fork := chatLocationID(t, res.Header.Get("Location"))
	root := strconv.FormatInt(id, 10)

	res = c.htmx(http.MethodPost, paths.ChatSend, url.Values{"query": {"more"}, "exchange_id": {strconv.FormatInt(fork, 10)}, "after_seq": {"1"}})
	mustStatus(t, res, http.StatusOK)
	a.waitTurns()
	body := bodyOf(res)
	if !strings.Contains(body, `hx-swap-oob="delete:#history-items &gt; [data-family=&#34;`+root+`&#34;]"`) {
		t.Fatalf("the send answer does not remove the family's item: %s", body)
	}
	doc := chatDoc(t, res)
	items := htmltest.ByTestID(doc, "history-item")
	if len(items) != 1 {
		t.Fatalf("the send answer carries %d items", len(items))
	}
	if fam, _ := htmltest.Attr(items[0], "data-family"); fam != root {
		t.Fatalf("the branch's item is of family %q, want %s", fam, root)
	}
	if b := htmltest.ByTestID(items[0], "history-branches"); len(b) != 1 || htmltest.Text(b[0]) != "2 branches" {
		t.Fatal("the branch's item lost its count")
	}

	res = c.htmx(http.MethodPost, paths.ChatRename(fork), url.Values{"title": {"Renamed branch"}})
	mustStatus(t, res, http.StatusOK)
	if b := htmltest.ByTestID(chatDoc(t, res), "history-branches"); len(b) != 1 || htmltest.Text(b[0]) != "2 branches" {
		t.Fatalf("the renamed item lost its count: %s", bodyOf(res))
	}

	other := c.chatSend(t, "elsewhere", 0)
	c.chatScreen(t, paths.Chat(other))
	res = c.htmx(http.MethodPost, paths.ChatDelete(fork), url.Values{"confirmed": {"1"}})
	mustStatus(t, res, http.StatusOK)
	if res.Header.Get("HX-Retarget") != "#history" {
		t.Fatalf("deleting a branch retargets %q", res.Header.Get("HX-Retarget"))
	}
	if ids := chatHistoryIDs(chatDoc(t, res)); len(ids) != 2 || ids[1] != id {
		t.Fatalf("after deleting a branch the sidebar lists %v, want the family's other branch %d", ids, id)
	}
}

// A job's chat is not shown in /chat, but its forks are general chats: the
// switcher between them leaves the job's own chat out.
func TestChatBranchSwitchLeavesOutAJobsChat(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	api := a.apiClient("ada")
	job := a.chatOtherScope(c.user.ID)
	var forks []int64
	for _, q := range []string{"first other", "second other"} {
		var out struct {
			ExchangeID int64 `json:"exchange_id"`
		}
		api.apiJSON(http.MethodPost, fmt.Sprintf("/api/chat/exchange/%d/fork", job), map[string]any{"seq": 1, "query": q}, http.StatusOK, &out)
		forks = append(forks, out.ExchangeID)
	}
	doc := c.chatScreen(t, paths.Chat(forks[0]))
	if pos, prev, next := chatSwitch(t, doc, 1); pos != "1 / 2" || prev != 0 || next != forks[1] {
		t.Fatalf("the first fork's switcher: %q ‹%d %d›", pos, prev, next)
	}
	if items := htmltest.ByTestID(doc, "history-item"); len(items) != 1 {
		t.Fatalf("the sidebar lists %d items for the job's two forks", len(items))
	}
	mustStatus(t, c.get(paths.Chat(job)), http.StatusNotFound)
}

// Deleting the branch on screen goes to the family's branch active last
// (with or without JavaScript), not to an empty new chat; deleting the
// last of a family goes to a new chat, as a conversation's delete does.
func TestChatDeleteShownBranchGoesToItsSibling(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	id := c.chatSend(t, "the question", 0)
	var forks []int64
	for _, q := range []string{"another question", "a third question"} {
		res := c.postForm(paths.MessageEdit(a.chatMsgAt(c.user.ID, id, 0)), url.Values{"query": {q}})
		mustStatus(t, res, http.StatusSeeOther)
		forks = append(forks, chatLocationID(t, res.Header.Get("Location")))
	}
	a.waitTurns()
	// The root was active before the forks; the first fork, now, is the
	// family's branch active last once the second goes.
	c.htmx(http.MethodPost, paths.ChatSend, url.Values{"query": {"more"}, "exchange_id": {strconv.FormatInt(forks[0], 10)}})
	a.waitTurns()

	c.chatScreen(t, paths.Chat(forks[1]))
	res := c.htmx(http.MethodPost, paths.ChatDelete(forks[1]), url.Values{"confirmed": {"1"}})
	if got := res.Header.Get("HX-Redirect"); got != paths.Chat(forks[0]) {
		t.Fatalf("deleting the branch on screen went to %q, want its sibling %s", got, paths.Chat(forks[0]))
	}
	c.chatScreen(t, paths.Chat(forks[0]))
	res = c.postForm(paths.ChatDelete(forks[0]), url.Values{"confirmed": {"1"}})
	mustStatus(t, res, http.StatusSeeOther)
	if got := res.Header.Get("Location"); got != paths.Chat(id) {
		t.Fatalf("without JavaScript, deleting the branch on screen went to %q, want %s", got, paths.Chat(id))
	}
	if got := chatComposerExchange(t, c.chatScreen(t, "/chat")); got != strconv.FormatInt(id, 10) {
		t.Fatalf("/chat opens %s after the delete, want the sibling %d", got, id)
	}
	c.chatScreen(t, paths.Chat(id))
	res = c.postForm(paths.ChatDelete(id), url.Values{"confirmed": {"1"}})
	if got := res.Header.Get("Location"); got != paths.ChatHome {
		t.Fatalf("deleting the last of the family went to %q", got)
	}
}
