package handlers_test

import (
	"strings"
	"testing"

	"palaver/paths"
)

// pathBuilders are the builders of package paths for the HTML routes with a
// parameter, each called with distinct ids (1, 2, …) in the order the
// route's parameters come.
var pathBuilders = map[string]string{
	"GET /chat/:id":                          paths.Chat(1),
	"GET /chat/:id/subruns/:sub":             paths.ChatSubRun(1, 2),
	"POST /chat/:id/rename":                  paths.ChatRename(1),
	"POST /chat/:id/delete":                  paths.ChatDelete(1),
	"POST /chat/:id/stop":                    paths.ChatStop(1),
	"POST /chat/:id/retry":                   paths.ChatRetry(1),
	"POST /chat/:id/tools":                   paths.ChatTools(1),
	"POST /chat/:id/pin":                     paths.ChatPin(1),
	"POST /chat/:id/archive":                 paths.ChatArchive(1),
	"GET /chat/message/:id/edit":             paths.MessageEdit(1),
	"POST /chat/message/:id/edit":            paths.MessageEdit(1),
	"GET /chat/message/:id/regenerate":       paths.MessageRegenerate(1),
	"POST /chat/message/:id/regenerate":      paths.MessageRegenerate(1),
	"POST /chat/message/:id/feedback":        paths.MessageFeedback(1),
	"POST /chat/:id/continue":                paths.ChatContinue(1),
	"GET /chat/:id/messages":                 paths.ChatMessages(1),
	"GET /chat/:id/branches":                 paths.ChatBranches(1),
	"GET /chat/:id/compare":                  paths.ChatCompareChoose(1),
	"GET /chat/:id/compare/:other":           paths.ChatCompare(1, 2),
	"GET /pages/:id":                         paths.Page(1),
	"GET /pages/:id/edit":                    paths.PageEdit(1),
	"POST /pages/:id/save":                   paths.PageSave(1),
	"POST /pages/:id/preview":                paths.PagePreview(1),
	"POST /pages/:id/delete":                 paths.PageDelete(1),
	"POST /pages/:id/panel":                  paths.PagePanel(1),
	"GET /pages/:id/revisions/:rev":          paths.Revision(1, 2),
	"POST /pages/:id/revisions/:rev/restore": paths.RevisionRestore(1, 2),
	"POST /pages/:id/chat":                   paths.PageChat(1),
	"POST /pages/:id/chat/new":               paths.PageChatNew(1),
	"POST /pages/:id/chat/clear":             paths.PageChatClear(1),
	"GET /pages/:id/chat/:ex":                paths.PageChatOpen(1, 2),
	"POST /pages/:id/chat/:ex/delete":        paths.PageChatDelete(1, 2),
	"POST /pages/:id/proposals/:msg/accept":  paths.ProposalAccept(1, 2),
	"POST /pages/:id/proposals/:msg/reject":  paths.ProposalReject(1, 2),
	"GET /admin/exchanges/:id":               paths.AdminExchange(1),
	"POST /admin/exchanges/:id":              paths.AdminExchange(1),
	"POST /admin/users/:id/promote":          paths.AdminUserPromote(1),
	"POST /admin/users/:id/demote":           paths.AdminUserDemote(1),
	"POST /admin/users/:id/disable":          paths.AdminUserDisable(1),
	"POST /admin/users/:id/enable":           paths.AdminUserEnable(1),
	"POST /admin/users/:id/password":         paths.AdminUserPassword(1),
	"POST /admin/users/:id/delete":           paths.AdminUserDelete(1),
	"POST /account/keys/:id/revoke":          paths.AccountKeyRevoke(1),
	"POST /account/identities/:id/unlink":    paths.AccountIdentityUnlink(1),
	"GET /auth/oidc/:name":                   paths.OIDCStart("1"),
	"GET /auth/oidc/:name/callback":          paths.OIDCCallback("1"),
	"GET /s/:token":                          paths.Share("1"),
	"POST /chat/:id/read":                    paths.ChatRead(1),
	"POST /chat/:id/unread":                  paths.ChatUnread(1),
	"POST /s/:token/continue":                paths.ShareContinue("1"),
	"GET /s/:token/files/:n":                 paths.ShareFile("1", 2),
	"GET /s/:token/files/:n/thumbnail":       paths.ShareFileThumbnail("1", 2),
	"GET /chat/:id/share":                    paths.ChatShare(1),
	"POST /chat/:id/share":                   paths.ChatShare(1),
	"POST /account/shares/:id/update":        paths.AccountShareUpdate(1),
	"POST /account/shares/:id/revoke":        paths.AccountShareRevoke(1),
	"POST /admin/shares/:id/revoke":          paths.AdminShareRevoke(1),
	"POST /admin/models/:id":                 paths.AdminModel(1),
	"POST /admin/connections/:id":            paths.AdminConnection(1),
	"POST /admin/connections/:id/test":       paths.AdminConnectionTest(1),
	"POST /admin/connections/:id/delete":     paths.AdminConnectionDelete(1),
	"GET /chat/:id/project":                  paths.ChatProject(1),
	"POST /chat/:id/project":                 paths.ChatProject(1),
	"POST /chat/:id/keep":                    paths.ChatKeep(1),
	"POST /account/memories/:id":             paths.AccountMemory(1),
	"POST /account/memories/:id/delete":      paths.AccountMemoryDelete(1),
	"GET /projects/:id":                      paths.Project(1),
	"POST /projects/:id/instructions":        paths.ProjectInstructions(1),
	"POST /projects/:id/delete":              paths.ProjectDelete(1),
	"POST /projects/:id/chat":                paths.ProjectChat(1),
	"POST /projects/:id/files":               paths.ProjectFiles(1),
	"POST /projects/:id/model":               paths.ProjectModel(1),
	"POST /projects/:id/files/:file/delete":  paths.ProjectFileDelete(1, 2),
	"GET /chat/message/:id/instructions":     paths.MessageInstructions(1),
}

// Every HTML route with a parameter has its builder in package paths, and
// the builder's address is that route's, taken from app.GetRoutes: a new
// route cannot be left to hand-spelled addresses, and a route that moves
// fails here until its builder moves with it. (The JSON API's paths are its
// contract, checked against openapi.json; the server links to none of them.)
func TestEveryRouteWithParametersHasItsBuilder(t *testing.T) {
	a := newTestApp(t)
	seen := map[string]bool{}
	for _, r := range a.app.GetRoutes(true) {
		if r.Method == "HEAD" || !strings.Contains(r.Path, ":") || strings.HasPrefix(r.Path, "/api/") || r.Path == "/static/:name" {
			continue
		}
		key := r.Method + " " + r.Path
		seen[key] = true
		built, ok := pathBuilders[key]
		if !ok {
			t.Errorf("%s has no builder in package paths", key)
			continue
		}
		want := strings.Split(r.Path, "/")
		got := strings.Split(built, "/")
		if len(got) != len(want) {
			t.Errorf("%s: the builder makes %s", key, built)
			continue
		}
		n := 0
		for i, seg := range want {
			if strings.HasPrefix(seg, ":") {
				n++
				if got[i] != string(rune('0'+n)) {
					t.Errorf("%s: the builder makes %s (parameter %s is not id %d)", key, built, seg, n)
				}
			} else if got[i] != seg {
				t.Errorf("%s: the builder makes %s", key, built)
			}
		}
	}
	for key := range pathBuilders {
		if !seen[key] {
			t.Errorf("%s: a builder for a route that is not registered", key)
		}
	}
}
