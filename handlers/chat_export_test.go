package handlers_test

import (
	"net/http"
	"strings"
	"testing"

	"palaver/internal/htmltest"
	"palaver/paths"
)

// TestChatExportMenu: an open conversation's header has the export menu
// (export-exchange) whose links download it as JSON and as Markdown; a new
// chat, not stored yet, has none.
func TestChatExportMenu(t *testing.T) {
	a := newTestApp(t)
	ann := a.register("ann")
	id := ann.chatSend(t, "pelicans in winter", 0)
	a.waitTurns()
	doc := chatDoc(t, ann.get(paths.Chat(id)))
	menu := htmltest.ByTestID(doc, "export-exchange")
	if len(menu) != 1 {
		t.Fatalf("%d export-exchange controls", len(menu))
	}
	for format, want := range map[string]string{"json": `"pelicans in winter"`, "md": "pelicans in winter"} {
		links := htmltest.ByTestID(menu[0], "export-exchange-"+format)
		if len(links) != 1 {
			t.Fatalf("no %s link", format)
		}
		href, _ := htmltest.Attr(links[0], "href")
		if href != paths.ExchangeExport(id, format) {
			t.Fatalf("the %s link goes to %q", format, href)
		}
		res := ann.get(href)
		mustStatus(t, res, http.StatusOK)
		if body := bodyOf(res); !strings.HasPrefix(res.Header.Get("Content-Disposition"), "attachment") || !strings.Contains(body, want) {
			t.Fatalf("%s download: %v %.200s", format, res.Header, body)
		}
	}
	ann.postForm(paths.ChatNew, nil)
	if n := len(htmltest.ByTestID(chatDoc(t, ann.get(paths.ChatHome)), "export-exchange")); n != 0 {
		t.Fatalf("a new chat has %d export-exchange controls", n)
	}
}
