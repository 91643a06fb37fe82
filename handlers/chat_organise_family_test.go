package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// Archiving or pinning a conversation from the sidebar moves all its
// branches: the sidebar shows a family as one conversation, and archiving
// one branch of it left the family in the sidebar, now as the other
// branch. The JSON API's PATCH still sets one exchange.
func TestChatArchiveAndPinTakeTheFamily(t *testing.T) {
	a := newTestApp(t)
	ann := a.register("ann")
	ids := a.chatSeed(ann.user.ID, 2)
	root, other := ids[0], ids[1]
	fork, err := a.store.Fork(context.Background(), ann.user.ID, root, 1)
	if err != nil {
		t.Fatal(err)
	}
	flags := func(id int64) (pinned, archived bool) {
		t.Helper()
		ex, err := a.store.Exchange(context.Background(), ann.user.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		return ex.Pinned, ex.Archived
	}

	res := ann.htmx(http.MethodPost, fmt.Sprintf("/chat/%d/archive", fork.ID), url.Values{"archived": {"1"}})
	mustStatus(t, res, http.StatusOK)
	for _, id := range []int64{root, fork.ID} {
		if _, archived := flags(id); !archived {
			t.Errorf("exchange %d of the archived family is not archived", id)
		}
	}
	if _, archived := flags(other); archived {
		t.Error("another conversation was archived too")
	}
	if pinned, others := sidebarIDs(ann.chatScreen(t, "/chat/"+fmt.Sprint(other))); len(pinned) != 0 || !slices.Equal(others, []int64{other}) {
		t.Fatalf("sidebar after archiving the family: pinned %v, others %v", pinned, others)
	}

	res = ann.htmx(http.MethodPost, fmt.Sprintf("/chat/%d/archive", root), url.Values{"archived": {"0"}})
	mustStatus(t, res, http.StatusOK)
	for _, id := range []int64{root, fork.ID} {
		if _, archived := flags(id); archived {
			t.Errorf("exchange %d stayed archived after the family came back", id)
		}
	}

	res = ann.htmx(http.MethodPost, fmt.Sprintf("/chat/%d/pin", root), url.Values{"pinned": {"1"}})
	mustStatus(t, res, http.StatusOK)
	for _, id := range []int64{root, fork.ID} {
		if pinned, _ := flags(id); !pinned {
			t.Errorf("exchange %d of the pinned family is not pinned", id)
		}
	}
	if pinned, others := sidebarIDs(ann.chatScreen(t, "/chat/"+fmt.Sprint(other))); len(pinned) != 1 || !slices.Equal(others, []int64{other}) {
		t.Fatalf("sidebar after pinning the family: pinned %v, others %v", pinned, others)
	}
}

// The delete page shown without JavaScript asks what the dialog asks: of a
// branch, that its other branches stay (it said the conversation and all
// its messages would go).
func TestChatDeletePageNamesTheBranch(t *testing.T) {
	a := newTestApp(t)
	ann := a.register("ann")
	ids := a.chatSeed(ann.user.ID, 1)
	if _, err := a.store.Fork(context.Background(), ann.user.ID, ids[0], 1); err != nil {
		t.Fatal(err)
	}
	res := ann.postForm(fmt.Sprintf("/chat/%d/delete", ids[0]), url.Values{})
	mustStatus(t, res, http.StatusOK)
	body := bodyOf(res)
	if !strings.Contains(body, "Delete this branch?") || !strings.Contains(body, "Its other branches stay.") {
		t.Fatalf("the delete page of a branch says:\n%s", body)
	}
}
