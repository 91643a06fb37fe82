package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"palaver/internal/htmltest"
	"palaver/models"
)

// longChat seeds one of the user's conversations with n entries (seq 0 …
// n-1, user messages and replies in turn, "m{seq}") and an error row after
// each seq in errorsAfter, in that order in the log.
func (a *testApp) longChat(userID int64, n int, errorsAfter ...int64) int64 {
	a.t.Helper()
	ctx := context.Background()
	ex, _, err := a.store.StartTurn(ctx, models.TurnStart{UserID: userID, Scope: models.ScopeGeneral, AgentType: "router", Query: "m0", Owner: "seed"})
	if err != nil {
		a.t.Fatal(err)
	}
	if err := a.store.FinishTurn(ctx, ex.ID, "seed", &models.Message{Role: models.RoleAssistant, Content: "m1"}); err != nil {
		a.t.Fatal(err)
	}
	db, err := a.store.SQL()
	if err != nil {
		a.t.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		a.t.Fatal(err)
	}
	at := time.Now().UTC()
	for seq := int64(1); seq < int64(n); seq++ {
		if seq >= 2 {
			role := "user"
			if seq%2 == 1 {
				role = "assistant"
			}
			if _, err := tx.Exec(`INSERT INTO messages (exchange_id, seq, role, content, created_at) VALUES (?, ?, ?, ?, ?)`,
				ex.ID, seq, role, fmt.Sprintf("m%d", seq), at); err != nil {
				a.t.Fatal(err)
			}
		}
		if slices.Contains(errorsAfter, seq) {
			if _, err := tx.Exec(`INSERT INTO messages (exchange_id, seq, role, content, created_at) VALUES (?, NULL, 'error', ?, ?)`,
				ex.ID, fmt.Sprintf("error after %d", seq), at); err != nil {
				a.t.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		a.t.Fatal(err)
	}
	return ex.ID
}

// logIDs is the element ids of the whole log as a transcript shows it, in
// order.
func (a *testApp) logIDs(userID, exchangeID int64, at *int64) []string {
	a.t.Helper()
	msgs, err := a.store.Messages(context.Background(), userID, exchangeID, at)
	if err != nil {
		a.t.Fatal(err)
	}
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = "msg-" + strconv.FormatInt(m.ID, 10)
	}
	return out
}

func transcriptIDs(doc *chatNode) []string {
	var out []string
	for _, m := range chatTranscript(doc) {
		out = append(out, m.ID)
	}
	return out
}

// sentinel is a transcript sentinel's no-JS link and its htmx page ("" when
// the page has no such sentinel).
func sentinel(t *testing.T, doc *chatNode, testid string) (href, hxGet string) {
	t.Helper()
	s := htmltest.ByTestID(doc, testid)
	if len(s) == 0 {
		return "", ""
	}
	if len(s) > 1 {
		t.Fatalf("%d %s sentinels", len(s), testid)
	}
	a := htmltest.FindAll(s[0], func(n *chatNode) bool { return n.Data == "a" })[0]
	href, _ = htmltest.Attr(a, "href")
	hxGet, _ = htmltest.Attr(a, "hx-get")
	return href, hxGet
}

// A long conversation opens on its latest 50 entries (with the error rows
// after them); scrolling up loads 50 older ones at a time, by seq, until
// the first; every entry and every error row shows exactly once, in its
// place. Without JavaScript the sentinel is a link to the same page as a
// full screen.
func TestChatLongOpensOnLatestPage(t *testing.T) {
	a := newTestApp(t)
	ann, bob := a.register("ann"), a.register("bob")
	id := a.longChat(ann.user.ID, 130, 20, 79, 80, 129)
	all := a.logIDs(ann.user.ID, id, nil)

	doc := ann.chatScreen(t, fmt.Sprintf("/chat/%d", id))
	first := chatTranscript(doc)
	if len(first) != 52 || first[0].Text != "m80" || !strings.HasSuffix(first[len(first)-1].Text, "error after 129") {
		t.Fatalf("the first page: %d entries, %v … %v", len(first), first[0], first[len(first)-1])
	}
	if last, _ := htmltest.Attr(htmltest.ByID(doc, "transcript"), "data-last-seq"); last != "129" {
		t.Fatalf("data-last-seq %q", last)
	}
	if href, _ := sentinel(t, doc, "transcript-newer"); href != "" {
		t.Fatal("the latest page offers newer messages")
	}
	href, get := sentinel(t, doc, "transcript-older")
	if href != fmt.Sprintf("/chat/%d?before_seq=80", id) || get != fmt.Sprintf("/chat/%d/messages?before_seq=80", id) {
		t.Fatalf("older: %q, %q", href, get)
	}
	pages := [][]string{transcriptIDs(doc)}
	for get != "" {
		res := ann.htmx(http.MethodGet, get, nil)
		mustStatus(t, res, http.StatusOK)
		frag := chatDoc(t, res)
		pages = append([][]string{transcriptIDs(frag)}, pages...)
		if _, next := sentinel(t, frag, "transcript-newer"); next != "" {
			t.Fatal("an older page offers newer messages")
		}
		_, get = sentinel(t, frag, "transcript-older")
		if len(pages) > 5 {
			t.Fatal("the older pages do not end")
		}
	}
	if len(pages) != 3 {
		t.Fatalf("%d pages, want 3 (50 + 50 + 30 entries)", len(pages))
	}
	if got := slices.Concat(pages...); !slices.Equal(got, all) {
		t.Fatalf("the pages put together:\n%v\nthe log:\n%v", got, all)
	}

	// Without JavaScript: the window before seq 80 as a full screen, with
	// links both ways.
	doc = ann.chatScreen(t, fmt.Sprintf("/chat/%d?before_seq=80", id))
	if got := transcriptIDs(doc); !slices.Equal(got, pages[1]) {
		t.Fatalf("?before_seq=80 shows %v, want %v", got, pages[1])
	}
	if href, _ := sentinel(t, doc, "transcript-newer"); href != fmt.Sprintf("/chat/%d", id) {
		t.Fatalf("newer from ?before_seq=80: %q", href)
	}
	if href, _ := sentinel(t, doc, "transcript-older"); href != fmt.Sprintf("/chat/%d?before_seq=30", id) {
		t.Fatalf("older from ?before_seq=80: %q", href)
	}

	// Bad cursors: 400; another user's conversation: 404.
	for _, q := range []string{"", "?before_seq=x", "?before_seq=-1", "?after_seq=1.5", "?before_seq=3&after_seq=1"} {
		res := ann.htmx(http.MethodGet, fmt.Sprintf("/chat/%d/messages%s", id, q), nil)
		mustStatus(t, res, http.StatusBadRequest)
	}
	mustStatus(t, ann.get(fmt.Sprintf("/chat/%d?before_seq=abc", id)), http.StatusBadRequest)
	mustStatus(t, bob.htmx(http.MethodGet, fmt.Sprintf("/chat/%d/messages?before_seq=80", id), nil), http.StatusNotFound)
	mustStatus(t, bob.get(fmt.Sprintf("/chat/%d?before_seq=80", id)), http.StatusNotFound)
}

// A search hit's ?seq=N opens a window around N, highlighted, that loads
// older entries upwards and newer ones downwards; the live connection
// resumes after the log's end, not the window's. Together the pages show
// the whole log once.
func TestChatSeqOpensAWindow(t *testing.T) {
	a := newTestApp(t)
	ann := a.register("ann")
	id := a.longChat(ann.user.ID, 130, 20, 79, 80, 129)
	all := a.logIDs(ann.user.ID, id, nil)

	doc := ann.chatScreen(t, fmt.Sprintf("/chat/%d?seq=40", id))
	msgs := chatTranscript(doc)
	if len(msgs) != 51 || msgs[0].Text != "m16" || !strings.HasPrefix(msgs[len(msgs)-1].Text, "m65 ") {
		t.Fatalf("the window: %d entries, %v … %v", len(msgs), msgs[0], msgs[len(msgs)-1])
	}
	lit := htmltest.FindAll(doc, func(n *chatNode) bool { v, _ := htmltest.Attr(n, "data-highlight"); return v == "true" })
	if len(lit) != 1 || htmltest.Text(lit[0]) != "m40" { // a user message: its text alone
		t.Fatalf("highlighted %d entries", len(lit))
	}
	if last, _ := htmltest.Attr(htmltest.ByID(doc, "transcript"), "data-last-seq"); last != "129" {
		t.Fatalf("data-last-seq %q", last)
	}
	pages := [][]string{transcriptIDs(doc)}
	_, up := sentinel(t, doc, "transcript-older")
	downHref, down := sentinel(t, doc, "transcript-newer")
	if up != fmt.Sprintf("/chat/%d/messages?before_seq=16", id) || down != fmt.Sprintf("/chat/%d/messages?after_seq=65", id) ||
		downHref != fmt.Sprintf("/chat/%d?before_seq=116", id) {
		t.Fatalf("sentinels: up %q, down %q (%q)", up, down, downHref)
	}
	for up != "" {
		frag := chatDoc(t, ann.htmx(http.MethodGet, up, nil))
		pages = append([][]string{transcriptIDs(frag)}, pages...)
		_, up = sentinel(t, frag, "transcript-older")
	}
	for n := 0; down != ""; n++ {
		res := ann.htmx(http.MethodGet, down, nil)
		mustStatus(t, res, http.StatusOK)
		frag := chatDoc(t, res)
		pages = append(pages, transcriptIDs(frag))
		if href, _ := sentinel(t, frag, "transcript-older"); href != "" {
			t.Fatal("a newer page offers older messages")
		}
		_, down = sentinel(t, frag, "transcript-newer")
		if n > 5 {
			t.Fatal("the newer pages do not end")
		}
	}
	if got := slices.Concat(pages...); !slices.Equal(got, all) {
		t.Fatalf("the pages put together:\n%v\nthe log:\n%v", got, all)
	}
	// A seq near the end opens the latest batch, with nothing below it.
	doc = ann.chatScreen(t, fmt.Sprintf("/chat/%d?seq=128", id))
	if href, _ := sentinel(t, doc, "transcript-newer"); href != "" || len(chatTranscript(doc)) != 52 {
		t.Fatalf("?seq=128: newer %q, %d entries", href, len(chatTranscript(doc)))
	}
}

// /chat/{id}?at=N is the log as it was when its Nth entry (seq N-1, as
// the screen counts them, from 1) was written: the error
// rows written before the next entry in their place, no composer and no
// live connection, the stepper's links and range; an entry beyond the log or
// not an entry's number: 400; another user's: 404.
func TestChatTimeTravel(t *testing.T) {
	a := newTestApp(t)
	ann, bob := a.register("ann"), a.register("bob")
	id := a.longChat(ann.user.ID, 6, 3)
	at := func(n int64) *int64 { return &n }

	doc := ann.chatScreen(t, fmt.Sprintf("/chat/%d?at=4", id))
	if got, want := transcriptIDs(doc), a.logIDs(ann.user.ID, id, at(3)); !slices.Equal(got, want) || len(got) != 5 {
		t.Fatalf("?at=4 shows %v, want %v (seq 0…3 and the error row)", got, want)
	}
	// One numbering: the address's number is the one the bar says.
	if got := htmltest.Text(htmltest.ByTestID(doc, "time-travel-at")[0]); got != "4" {
		t.Fatalf("?at=4 says message %q", got)
	}
	if msgs := chatTranscript(doc); msgs[4].Role != "error" {
		t.Fatalf("the last entry at 3 is %v, want the error row", msgs[4])
	}
	if len(htmltest.ByTestID(doc, "chat-input")) != 0 || len(htmltest.ByTestID(doc, "live")) != 0 || len(htmltest.ByTestID(doc, "feedback")) != 0 {
		t.Fatal("time travel shows the composer, the live connection or the rating controls")
	}
	for testid, want := range map[string]string{
		"time-travel-prev": fmt.Sprintf("/chat/%d?at=3", id),
		"time-travel-next": fmt.Sprintf("/chat/%d?at=5", id),
		"time-travel-now":  fmt.Sprintf("/chat/%d", id),
	} {
		el := htmltest.ByTestID(doc, testid)
		if len(el) != 1 {
			t.Fatalf("no %s", testid)
		}
		if href, _ := htmltest.Attr(el[0], "href"); href != want {
			t.Fatalf("%s links to %q, want %q", testid, href, want)
		}
	}
	rng := htmltest.ByTestID(doc, "time-travel-range")[0]
	if v, _ := htmltest.Attr(rng, "value"); v != "4" {
		t.Fatalf("range value %q", v)
	}
	if v, _ := htmltest.Attr(rng, "max"); v != "6" {
		t.Fatalf("range max %q", v)
	}
	doc = ann.chatScreen(t, fmt.Sprintf("/chat/%d?at=3", id))
	if got := transcriptIDs(doc); len(got) != 3 {
		t.Fatalf("?at=3 shows %d entries, want 3 (no error row yet)", len(got))
	}
	if len(htmltest.ByTestID(doc, "time-travel-next")) != 1 {
		t.Fatal("no next step at 2")
	}
	doc = ann.chatScreen(t, fmt.Sprintf("/chat/%d?at=1", id))
	if len(htmltest.ByTestID(doc, "time-travel-prev")) != 0 || len(transcriptIDs(doc)) != 1 {
		t.Fatal("at 0: a previous step, or more than the first message")
	}
	for _, q := range []string{"7", "0", "-1", "x", "1e3"} {
		mustStatus(t, ann.get(fmt.Sprintf("/chat/%d?at=%s", id, q)), http.StatusBadRequest)
	}
	mustStatus(t, bob.get(fmt.Sprintf("/chat/%d?at=4", id)), http.StatusNotFound)

	// A long log as it was: its latest batch up to the point, the older
	// batches read-only too, together the log as it was, once.
	long := a.longChat(ann.user.ID, 130, 20, 79, 80, 129)
	doc = ann.chatScreen(t, fmt.Sprintf("/chat/%d?at=101", long))
	pages := [][]string{transcriptIDs(doc)}
	_, get := sentinel(t, doc, "transcript-older")
	if get != fmt.Sprintf("/chat/%d/messages?before_seq=51&at=101", long) {
		t.Fatalf("older at 100: %q", get)
	}
	for get != "" {
		frag := chatDoc(t, ann.htmx(http.MethodGet, get, nil))
		if len(htmltest.ByTestID(frag, "feedback")) != 0 {
			t.Fatal("an older page of time travel offers ratings")
		}
		pages = append([][]string{transcriptIDs(frag)}, pages...)
		_, get = sentinel(t, frag, "transcript-older")
	}
	if got, want := slices.Concat(pages...), a.logIDs(ann.user.ID, long, at(100)); !slices.Equal(got, want) {
		t.Fatalf("time travel's pages:\n%v\nthe log at 100:\n%v", got, want)
	}
	// Without JavaScript, the older batch keeps the point, and leads back.
	doc = ann.chatScreen(t, fmt.Sprintf("/chat/%d?at=101&before_seq=51", long))
	if got := transcriptIDs(doc); !slices.Equal(got, pages[1]) || len(htmltest.ByTestID(doc, "time-travel")) != 1 {
		t.Fatalf("?at=101&before_seq=51 shows %v, want %v, with the bar", got, pages[1])
	}
	if href, _ := sentinel(t, doc, "transcript-newer"); href != fmt.Sprintf("/chat/%d?at=101", long) {
		t.Fatalf("newer from the older page of time travel: %q", href)
	}
	mustStatus(t, ann.htmx(http.MethodGet, fmt.Sprintf("/chat/%d/messages?before_seq=51&at=x", long), nil), http.StatusBadRequest)

	// Time travel leaves the current conversation as it was.
	other := a.longChat(ann.user.ID, 2)
	ann.chatScreen(t, fmt.Sprintf("/chat/%d", other))
	ann.chatScreen(t, fmt.Sprintf("/chat/%d?at=2", id))
	if got := chatComposerExchange(t, ann.chatScreen(t, "/chat")); got != fmt.Sprint(other) {
		t.Fatalf("/chat opens %s after time travel, want %d", got, other)
	}
}

// "Continue from here" forks at N+1: a new conversation whose log is the
// parent's as it was at N (error rows included), opened with its composer;
// the parent is unchanged. A seq beyond the log or none: 400; another
// user's conversation: 404; neither makes anything.
func TestChatContinueFromHere(t *testing.T) {
	a := newTestApp(t)
	ann, bob := a.register("ann"), a.register("bob")
	id := a.longChat(ann.user.ID, 6, 3)
	before := a.logIDs(ann.user.ID, id, nil)

	snap := a.chatSnapshot()
	for _, at := range []string{"6", "-1", "", "x"} {
		mustStatus(t, ann.postForm(fmt.Sprintf("/chat/%d/continue", id), url.Values{"at": {at}}), http.StatusBadRequest)
	}
	mustStatus(t, bob.postForm(fmt.Sprintf("/chat/%d/continue", id), url.Values{"at": {"3"}}), http.StatusNotFound)
	if a.chatSnapshot() != snap {
		t.Fatal("a refused continue changed the database")
	}

	res := ann.postForm(fmt.Sprintf("/chat/%d/continue", id), url.Values{"at": {"3"}})
	mustStatus(t, res, http.StatusSeeOther)
	fork, err := strconv.ParseInt(strings.TrimPrefix(res.Header.Get("Location"), "/chat/"), 10, 64)
	if err != nil || fork == id {
		t.Fatalf("continue went to %q", res.Header.Get("Location"))
	}
	ctx := context.Background()
	three := int64(3)
	want, err := a.store.Messages(ctx, ann.user.ID, id, &three)
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.store.Messages(ctx, ann.user.ID, fork, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || len(got) != 5 {
		t.Fatalf("the fork holds %d entries, want the %d of the log at 3", len(got), len(want))
	}
	for i := range got {
		if got[i].Role != want[i].Role || got[i].Content != want[i].Content || (got[i].Seq == nil) != (want[i].Seq == nil) {
			t.Fatalf("entry %d of the fork: %s %q, want %s %q", i, got[i].Role, got[i].Content, want[i].Role, want[i].Content)
		}
	}
	ex, err := a.store.Exchange(ctx, ann.user.ID, fork)
	if err != nil || ex.ForkedFromID == nil || *ex.ForkedFromID != id || *ex.ForkedAtSeq != 4 {
		t.Fatalf("the fork's header: %+v, %v", ex, err)
	}
	doc := ann.chatScreen(t, res.Header.Get("Location"))
	if len(htmltest.ByTestID(doc, "chat-input")) != 1 || chatComposerExchange(t, doc) != fmt.Sprint(fork) {
		t.Fatal("the fork opens without its composer")
	}
	if n := htmltest.ByTestID(doc, "branch-notice"); len(n) != 1 || !strings.Contains(htmltest.Text(n[0]), "new branch") {
		t.Fatal("the fork opens without saying it is a new branch")
	}
	if after := a.logIDs(ann.user.ID, id, nil); !slices.Equal(after, before) {
		t.Fatal("the parent changed")
	}

	// At the log's last entry the conversation itself goes on: it opens,
	// without a notice, and no copy is made.
	snap = a.chatSnapshot()
	res = ann.postForm(fmt.Sprintf("/chat/%d/continue", id), url.Values{"at": {"5"}})
	mustStatus(t, res, http.StatusSeeOther)
	if loc := res.Header.Get("Location"); loc != fmt.Sprintf("/chat/%d", id) {
		t.Fatalf("continue at the end went to %q, want the conversation", loc)
	}
	if a.chatSnapshot() != snap {
		t.Fatal("continue at the end made a copy")
	}
	doc = ann.chatScreen(t, res.Header.Get("Location"))
	if chatComposerExchange(t, doc) != fmt.Sprint(id) || len(htmltest.ByTestID(doc, "branch-notice")) != 0 {
		t.Fatal("continue at the end does not open the conversation as it is")
	}
}
