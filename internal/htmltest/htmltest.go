// Package htmltest reads rendered HTML the way the tests of views and
// handlers do: parse a component or a page, then find elements by
// data-testid, id or tag, and read their attributes and text.
package htmltest

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/a-h/templ"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Render renders a component and parses the result as a fragment of a
// <body>, as a browser (or htmx) would; it returns the HTML too.
func Render(t testing.TB, c templ.Component) (string, *html.Node) {
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

// Parse parses a whole document as the browser would.
func Parse(t testing.TB, doc string) *html.Node {
	t.Helper()
	n, err := html.Parse(strings.NewReader(doc))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return n
}

// FindAll returns the elements under n (n included) that match, in
// document order.
func FindAll(n *html.Node, match func(*html.Node) bool) []*html.Node {
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

// ByTestID returns the elements with data-testid=id.
func ByTestID(n *html.Node, id string) []*html.Node {
	return FindAll(n, func(e *html.Node) bool { v, _ := Attr(e, "data-testid"); return v == id })
}

// ByTag returns the elements of a tag ("input").
func ByTag(n *html.Node, tag string) []*html.Node {
	return FindAll(n, func(e *html.Node) bool { return e.Data == tag })
}

// ByID is the first element with the id, or nil.
func ByID(n *html.Node, id string) *html.Node {
	got := FindAll(n, func(e *html.Node) bool { v, _ := Attr(e, "id"); return v == id })
	if len(got) == 0 {
		return nil
	}
	return got[0]
}

// One is the only element with the test id, or the test fails.
func One(t testing.TB, n *html.Node, id string) *html.Node {
	t.Helper()
	got := ByTestID(n, id)
	if len(got) != 1 {
		t.Fatalf("%d elements with data-testid=%q, want 1", len(got), id)
	}
	return got[0]
}

// Attr is an attribute's value, and whether the element has it.
func Attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

// MustAttr fails the test unless the element has the attribute, with the
// value want.
func MustAttr(t testing.TB, n *html.Node, key, want string) {
	t.Helper()
	if got, ok := Attr(n, key); !ok || got != want {
		t.Fatalf("<%s> %s=%q (present %v), want %q", n.Data, key, got, ok, want)
	}
}

// Text is the text content of n, whitespace collapsed.
func Text(n *html.Node) string {
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

// FormValue is the value of the named input of a form (hidden fields).
func FormValue(form *html.Node, name string) (string, bool) {
	for _, in := range ByTag(form, "input") {
		if n, _ := Attr(in, "name"); n == name {
			return Attr(in, "value")
		}
	}
	return "", false
}

// NextElement is the element after n, skipping text.
func NextElement(n *html.Node) *html.Node {
	for s := n.NextSibling; s != nil; s = s.NextSibling {
		if s.Type == html.ElementNode {
			return s
		}
	}
	return nil
}
