package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"palaver/models"
	"palaver/paths"
)

// TestMoveToProjectFollowsLive: a chat moved into a project in one tab
// moves in the other tab's sidebar: its project group comes with the new
// count, live.
func TestMoveToProjectFollowsLive(t *testing.T) {
	a := newTestApp(t)
	addr := a.listen()
	ann := a.register("ann")
	id := ann.chatSend(t, "plan the trip", 0)
	user, _ := a.store.UserByUsername(context.Background(), "ann")
	name := "Travel"
	p, err := a.store.CreateProject(context.Background(), user.ID, models.ProjectInput{Name: &name})
	if err != nil {
		t.Fatal(err)
	}
	other := ann.openTab(t, addr)
	other.watch(id, 1)
	other.readUntil("the turn state", func() bool { return other.turn != "" })

	res := ann.postForm(paths.ChatProject(id), url.Values{"project_id": {strconv.FormatInt(p.ID, 10)}})
	mustStatus(t, res, http.StatusSeeOther)
	counted := `data-testid="project-count">1<`
	other.readUntil("the project's new count", func() bool {
		for _, f := range other.frames {
			if strings.Contains(f, `data-testid="project-list"`) && strings.Contains(f, counted) {
				return true
			}
		}
		return false
	})
}
