package handlers_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"palaver/agents"
	"palaver/internal/htmltest"
	"palaver/internal/pgtest"
)

// TestShareAcrossProcessesPostgres: a link made on one process opens on
// another one of the same PostgreSQL database, signed out and in; continue
// there makes the viewer's copy; a revoke on the first closes it on the
// second.
func TestShareAcrossProcessesPostgres(t *testing.T) {
	pgtest.Fresh(t)
	one := newProcess(t, pgtest.DSN(t), &agents.Builtin{})
	two := newProcess(t, pgtest.DSN(t), &agents.Builtin{})
	one.t, two.t = t, t
	alice, bob := one.register("alice"), one.register("bob")
	ex := one.adminExchangeMore(alice.user.ID, 0, "a question") // adminExchange's seeding is SQLite's
	one.adminExchangeMore(alice.user.ID, ex, "another")
	sh := alice.shareCreate(ex, `{"visibility": "link"}`)

	visitor := two.anon()
	res := visitor.get(sh.URL)
	mustStatus(t, res, http.StatusOK)
	if n := len(htmltest.ByTestID(htmltest.Parse(t, bodyOf(res)), "message")); n != 4 {
		t.Fatalf("the other process shows %d messages", n)
	}
	var snap apiSharedOut
	visitor.apiJSON(http.MethodGet, "/api/s/"+sh.Token, nil, http.StatusOK, &snap)
	if snap.AtSeq != 3 || len(snap.Messages) != 4 {
		t.Fatalf("the other process's JSON %+v", snap)
	}

	b2 := bob.at(two)
	b2.get(sh.URL)
	res = b2.postForm("/s/"+sh.Token+"/continue", url.Values{"at": {"3"}})
	mustStatus(t, res, http.StatusSeeOther)
	var copyID int64
	if _, err := fmt.Sscanf(res.Header.Get("Location"), "/chat/%d", &copyID); err != nil {
		t.Fatalf("continue went to %q", res.Header.Get("Location"))
	}
	if msgs, err := two.store.Messages(t.Context(), bob.user.ID, copyID, nil); err != nil || len(msgs) != 4 {
		t.Fatalf("bob's copy: %d %v", len(msgs), err)
	}

	alice.apiJSON(http.MethodDelete, fmt.Sprintf("/api/shares/%d", sh.ID), nil, http.StatusOK, nil)
	shareNotFound(t, visitor, sh.Token, "revoked on the other process")
}

type apiSharedOut struct {
	Title    string `json:"title"`
	AtSeq    int64  `json:"at_seq"`
	Messages []struct {
		Seq  int64  `json:"seq"`
		Role string `json:"role"`
	} `json:"messages"`
}
