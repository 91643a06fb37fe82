package handlers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// browserAdminList: the first account is the administrator; another person
// chats in their own browser; the administrator's list of conversations
// shows that exchange, and the other person cannot open the list.
func browserAdminList(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	admin := s.window("ivy-admin")
	admin.register("ivy")
	admin.waitVisible(`header a[href="/admin"]`)

	user := s.window("jon")
	user.register("jon")
	if n := browserEval[int](user, browserCount(`header a[href="/admin"]`)); n != 0 {
		s.fatalf("the second account sees the Admin link")
	}
	user.send("where do swifts sleep")
	ex := user.exchangeID()

	// The other person is not an administrator: the list is not there.
	s.expectConsole(`^error: Failed to load resource: the server responded with a status of 404 `)
	ctx, cancel := user.step()
	res, err := chromedp.Run(ctx, chromedp.NavigateResponse(s.base+"/admin/exchanges"))
	cancel()
	if err != nil {
		s.fatalf("jon: open /admin/exchanges: %v", err)
	}
	if res.Status != 404 || browserEval[int](user, browserCount("[data-testid=admin-exchanges]")) != 0 {
		s.fatalf("a person who is not an administrator opened /admin/exchanges: status %d", res.Status)
	}

	admin.visit("/admin/exchanges")
	admin.waitVisible("[data-testid=admin-exchanges]")
	row := fmt.Sprintf(`[data-testid=admin-exchange-row][data-exchange-id="%d"]`, ex)
	if n := browserEval[int](admin, browserCount(row)); n != 1 {
		s.fatalf("the admin list has %d rows for jon's exchange %d, want 1", n, ex)
	}
	text := admin.text(row)
	if !strings.Contains(text, "jon") || !strings.Contains(text, "where do swifts sleep") {
		s.fatalf("jon's row reads %q, want his name and the conversation's title", text)
	}
}
