package handlers_test

import (
	"context"
	"fmt"
	"testing"
)

// browserEveryScreen: an administrator opens every screen of the app under the
// Content-Security-Policy, with a conversation and a page whose Markdown
// holds remote images; the scenario fails on anything the policy refuses
// (newBrowserScene's check), and no image from another origin is in the
// document.
func browserEveryScreen(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	s.expectConsole(`^error: Failed to load resource: the server responded with a status of 404 `) // /no/such/page
	admin := s.window("kim-admin")
	admin.register("kim")
	admin.send("what is ![x](http://attacker.example/leak.png) about")
	ex := admin.exchangeID()
	u, err := s.app.store.UserByUsername(context.Background(), "kim")
	if err != nil {
		s.fatalf("kim: %v", err)
	}
	pg, err := s.app.store.CreatePage(context.Background(), u.ID, "Trip", "# Trip\n\n![map](//maps.example/paris.png)\n")
	if err != nil {
		s.fatalf("create page: %v", err)
	}
	remote := `[...document.querySelectorAll("img, [src], [srcset], [poster]")].filter((e) => /^(https?:)?\/\//i.test(e.getAttribute("src") || "")).length`
	for _, p := range []string{"/chat", fmt.Sprintf("/chat/%d", ex), fmt.Sprintf("/chat/%d?seq=0", ex), fmt.Sprintf("/chat/%d?at=1", ex),
		fmt.Sprintf("/chat/%d/branches", ex), fmt.Sprintf("/chat/%d/compare/%d", ex, ex), "/chat/search?q=about", "/chat/archived", "/pages", fmt.Sprintf("/pages/%d/edit", pg.ID),
		"/admin", "/admin/exchanges", "/admin/users", "/admin/housekeeping", "/admin/audit", "/no/such/page"} {
		admin.visit(p)
		if n := browserEval[int](admin, remote); n != 0 {
			s.fatalf("%s holds %d elements that load from another origin", p, n)
		}
	}
	s.window("visitor").visit("/login")
}
