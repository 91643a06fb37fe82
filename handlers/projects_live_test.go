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

// TestProjectsFollowLive: a project made, renamed or deleted in one tab
// (or through the API) shows in the other tab's sidebar, live.
func TestProjectsFollowLive(t *testing.T) {
	a := newTestApp(t)
	addr := a.listen()
	ann := a.register("ann")
	id := ann.chatSend(t, "plan the trip", 0)
	other := ann.openTab(t, addr)
	other.watch(id, 1)
	other.readUntil("the turn state", func() bool { return other.turn != "" })
	api := a.apiClient("ann")

	sidebarSays := func(what string, ok func(string) bool) {
		t.Helper()
		seen := len(other.frames)
		other.readUntil(what, func() bool {
			for _, f := range other.frames[seen:] {
				if strings.Contains(f, `data-testid="project-list"`) && ok(f) {
					return true
				}
			}
			return false
		})
	}
	res := ann.postForm(paths.Projects+"/", url.Values{"name": {"Travel plans"}})
	mustStatus(t, res, http.StatusSeeOther)
	sidebarSays("the new project", func(f string) bool { return strings.Contains(f, "Travel plans") })

	user, _ := a.store.UserByUsername(context.Background(), "ann")
	ps, err := a.store.Projects(context.Background(), user.ID)
	if err != nil || len(ps) != 1 {
		t.Fatalf("projects: %v %v", ps, err)
	}
	pid := strconv.FormatInt(ps[0].ID, 10)
	api.apiJSON(http.MethodPatch, "/api/projects/"+pid, map[string]any{"name": "Holidays"}, http.StatusOK, nil)
	sidebarSays("the renamed project", func(f string) bool {
		return strings.Contains(f, "Holidays") && !strings.Contains(f, "Travel plans")
	})

	res = ann.postForm(paths.ProjectDelete(ps[0].ID), url.Values{"chats": {"keep"}})
	mustStatus(t, res, http.StatusSeeOther)
	sidebarSays("the project gone", func(f string) bool {
		return !strings.Contains(f, `data-project-id="`+pid+`"`)
	})
}
