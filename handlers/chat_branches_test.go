package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"testing"

	"palaver/internal/htmltest"
	"palaver/models"
)

// branchFamily seeds a family for the user: a root of 6 entries (m0 … m5),
// a fork of it at seq 2 that asks something else (and is answered), and a
// fork of that fork at seq 3 with nothing written yet. It returns root,
// fork and fork of fork.
func (a *testApp) branchFamily(userID int64) (root, fork, grand int64) {
	a.t.Helper()
	ctx := context.Background()
	root = a.longChat(userID, 6)
	f, err := a.store.Fork(ctx, userID, root, 2)
	if err != nil {
		a.t.Fatal(err)
	}
	if _, _, err := a.store.StartTurn(ctx, models.TurnStart{UserID: userID, ExchangeID: f.ID, AgentType: "router",
		Query: "a different question", Owner: "seed"}); err != nil {
		a.t.Fatal(err)
	}
	if err := a.store.FinishTurn(ctx, f.ID, "seed", &models.Message{Role: models.RoleAssistant, Content: "a different answer"}); err != nil {
		a.t.Fatal(err)
	}
	g, err := a.store.Fork(ctx, userID, f.ID, 3)
	if err != nil {
		a.t.Fatal(err)
	}
	return root, f.ID, g.ID
}

// The tree of a family: every branch once, nested under the one it was
// forked from, each with the message it parts with, its length and a link;
// the one it was opened from marked. Another user's: 404.
func TestChatBranchesTree(t *testing.T) {
	a := newTestApp(t)
	ann, bob := a.register("ann"), a.register("bob")
	root, fork, grand := a.branchFamily(ann.user.ID)

	doc := ann.chatScreen(t, fmt.Sprintf("/chat/%d/branches", fork))
	type node struct {
		id, parent    int64
		first, length string
		href, current string
	}
	var got []node
	for _, b := range htmltest.ByTestID(doc, "branch") {
		v, _ := htmltest.Attr(b, "data-exchange")
		id, _ := strconv.ParseInt(v, 10, 64)
		var parent int64
		for p := b.Parent; p != nil; p = p.Parent {
			if pv, ok := htmltest.Attr(p, "data-exchange"); ok && p.Data == "li" {
				parent, _ = strconv.ParseInt(pv, 10, 64)
				break
			}
		}
		href, _ := htmltest.Attr(htmltest.ByTestID(b, "branch-open")[0], "href")
		cur, _ := htmltest.Attr(b, "data-current")
		got = append(got, node{id: id, parent: parent, first: htmltest.Text(htmltest.ByTestID(b, "branch-first")[0]),
			length: htmltest.Text(htmltest.ByTestID(b, "branch-length")[0]), href: href, current: cur})
	}
	want := []node{
		{root, 0, "Starts: You: m0", "6 messages", fmt.Sprintf("/chat/%d", root), "false"},
		{fork, root, "Differs from message 3 on: You: a different question", "4 messages", fmt.Sprintf("/chat/%d", fork), "true"},
		{grand, fork, "Differs from message 4 on: nothing written yet", "3 messages", fmt.Sprintf("/chat/%d", grand), "false"},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("the tree:\n%+v\nwant:\n%+v", got, want)
	}
	if n := len(htmltest.ByTestID(doc, "branch-pick")); n != 3 {
		t.Fatalf("%d compare boxes", n)
	}
	// A conversation that was never forked is a tree of one.
	lone := a.longChat(ann.user.ID, 2)
	if n := len(htmltest.ByTestID(ann.chatScreen(t, fmt.Sprintf("/chat/%d/branches", lone)), "branch")); n != 1 {
		t.Fatalf("a lone conversation's tree has %d branches", n)
	}
	mustStatus(t, bob.get(fmt.Sprintf("/chat/%d/branches", fork)), http.StatusNotFound)
	mustStatus(t, ann.get("/chat/999999/branches"), http.StatusNotFound)
}

// The tree's form (two ticked branches) leads to their comparison; anything
// but two different branches: 400; another user's conversation: 404.
func TestChatCompareChoose(t *testing.T) {
	a := newTestApp(t)
	ann, bob := a.register("ann"), a.register("bob")
	root, fork, _ := a.branchFamily(ann.user.ID)

	res := ann.get(fmt.Sprintf("/chat/%d/compare?branch=%d&branch=%d", fork, root, fork))
	mustStatus(t, res, http.StatusSeeOther)
	if loc := res.Header.Get("Location"); loc != fmt.Sprintf("/chat/%d/compare/%d", root, fork) {
		t.Fatalf("compare went to %q", loc)
	}
	for _, q := range []string{"", fmt.Sprintf("?branch=%d", root), fmt.Sprintf("?branch=%d&branch=%d", root, root),
		"?branch=x&branch=2", fmt.Sprintf("?branch=%d&branch=%d&branch=1", root, fork)} {
		res := ann.get(fmt.Sprintf("/chat/%d/compare%s", fork, q))
		mustStatus(t, res, http.StatusBadRequest)
		// Not two branches: the tree again, saying so beside the button.
		if doc := chatDoc(t, res); q != "?branch=x&branch=2" && len(htmltest.ByTestID(doc, "branches-compare-error")) != 1 {
			t.Fatalf("compare%s: no inline reason on the tree", q)
		}
	}
	mustStatus(t, bob.get(fmt.Sprintf("/chat/%d/compare?branch=%d&branch=%d", fork, root, fork)), http.StatusNotFound)
}

// Two branches side by side from where they part: the shared entries
// folded away with their count, each side's own entries in order. Two
// conversations of different families, another user's: 404.
func TestChatCompare(t *testing.T) {
	a := newTestApp(t)
	ann, bob := a.register("ann"), a.register("bob")
	root, fork, grand := a.branchFamily(ann.user.ID)

	texts := func(side *chatNode) []string {
		var out []string
		for _, m := range htmltest.ByTestID(side, "message") {
			role, _ := htmltest.Attr(m, "data-role")
			if body := htmltest.ByTestID(m, "message-body"); len(body) == 1 {
				m = body[0] // a reply's text, without its time
			}
			out = append(out, role+":"+htmltest.Text(m))
		}
		return out
	}
	doc := ann.chatScreen(t, fmt.Sprintf("/chat/%d/compare/%d", root, fork))
	shared := htmltest.ByTestID(doc, "compare-shared")
	if len(shared) != 1 {
		t.Fatal("no shared part")
	}
	if n, _ := htmltest.Attr(shared[0], "data-count"); n != "2" {
		t.Fatalf("shared count %q, want 2", n)
	}
	if got := texts(shared[0]); !slices.Equal(got, []string{"user:m0", "assistant:m1"}) {
		t.Fatalf("shared entries %v", got)
	}
	if got := texts(htmltest.ByTestID(doc, "compare-a")[0]); !slices.Equal(got, []string{"user:m2", "assistant:m3", "user:m4", "assistant:m5"}) {
		t.Fatalf("side A %v", got)
	}
	if got := texts(htmltest.ByTestID(doc, "compare-b")[0]); !slices.Equal(got, []string{"user:a different question", "assistant:a different answer"}) {
		t.Fatalf("side B %v", got)
	}
	if len(htmltest.ByTestID(doc, "feedback")) != 0 {
		t.Fatal("the comparison shows rating controls")
	}
	// A fork and its own fork share all the fork wrote before: the grand
	// fork, with nothing of its own, shows nothing on its side.
	doc = ann.chatScreen(t, fmt.Sprintf("/chat/%d/compare/%d", fork, grand))
	if n, _ := htmltest.Attr(htmltest.ByTestID(doc, "compare-shared")[0], "data-count"); n != "3" {
		t.Fatalf("fork and grand fork share %q entries, want 3", n)
	}
	if got := texts(htmltest.ByTestID(doc, "compare-a")[0]); !slices.Equal(got, []string{"assistant:a different answer"}) {
		t.Fatalf("the fork's side %v", got)
	}
	if got := texts(htmltest.ByTestID(doc, "compare-b")[0]); len(got) != 0 {
		t.Fatalf("the grand fork's side %v", got)
	}

	stranger := a.longChat(ann.user.ID, 2)
	mustStatus(t, ann.get(fmt.Sprintf("/chat/%d/compare/%d", root, stranger)), http.StatusNotFound)
	bobs := a.longChat(bob.user.ID, 2)
	mustStatus(t, ann.get(fmt.Sprintf("/chat/%d/compare/%d", root, bobs)), http.StatusNotFound)
	mustStatus(t, bob.get(fmt.Sprintf("/chat/%d/compare/%d", root, fork)), http.StatusNotFound)
	mustStatus(t, bob.get(fmt.Sprintf("/chat/%d/compare/%d", bobs, root)), http.StatusNotFound)
}
