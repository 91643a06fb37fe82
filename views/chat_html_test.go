package views

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/a-h/templ"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// renderHTML renders a component and parses the result as a fragment of a
// <body>, as a browser (or htmx) would.
func renderHTML(t *testing.T, c templ.Component) (string, *html.Node) {
	t.Helper()
	var buf bytes.Buffer
	if err := c.Render(context.Background(), &buf); err != nil {
		t.Fatalf("render: %v", err)
	}
	body := &html.Node{Type: html.ElementNode, Data: "body", DataAtom: atom.Body}
	nodes, err := html.ParseFragment(strings.NewReader(buf.String()), body)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	for _, n := range nodes {
		body.AppendChild(n)
	}
	return buf.String(), body
}

// findAll returns the elements under n (n included) that match.
func findAll(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && match(n) {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

func byTestID(n *html.Node, id string) []*html.Node {
	return findAll(n, func(e *html.Node) bool { v, _ := attr(e, "data-testid"); return v == id })
}

func byTag(n *html.Node, tag string) []*html.Node {
	return findAll(n, func(e *html.Node) bool { return e.Data == tag })
}

// one is the only element with the test id, or the test fails.
func one(t *testing.T, n *html.Node, id string) *html.Node {
	t.Helper()
	got := byTestID(n, id)
	if len(got) != 1 {
		t.Fatalf("%d elements with data-testid=%q, want 1", len(got), id)
	}
	return got[0]
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func mustAttr(t *testing.T, n *html.Node, key, want string) {
	t.Helper()
	if got, ok := attr(n, key); !ok || got != want {
		t.Fatalf("<%s> %s=%q (present %v), want %q", n.Data, key, got, ok, want)
	}
}

// textOf is the text content of n, whitespace collapsed.
func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

// formValue is the value of the named field of a form (hidden inputs).
func formValue(form *html.Node, name string) (string, bool) {
	for _, in := range byTag(form, "input") {
		if n, _ := attr(in, "name"); n == name {
			return attr(in, "value")
		}
	}
	return "", false
}

// nextElement is the element after n, skipping text.
func nextElement(n *html.Node) *html.Node {
	for s := n.NextSibling; s != nil; s = s.NextSibling {
		if s.Type == html.ElementNode {
			return s
		}
	}
	return nil
}
