package views

import (
	"bytes"
	"regexp"
	"strings"

	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	highlighting "github.com/yuin/goldmark-highlighting/v2"
	"github.com/yuin/goldmark/extension"
)

// Markdown renders assistant Markdown to HTML and then sanitises it. goldmark
// already drops raw HTML; the sanitiser is the second line of defence. It is
// safe for concurrent use.
//
// It remembers what it rendered last: the same replies are rendered again
// and again (every tab that shows a conversation, every tab a reply is
// streamed to), and rendering is most of the cost of showing one.
type Markdown struct {
	md     goldmark.Markdown
	policy *bluemonday.Policy
	*memo[string]
}

// What the renderer remembers: up to markdownCached sources, each of at most
// markdownCachedLen bytes (a longer one is rendered every time).
const (
	markdownCached    = 512
	markdownCachedLen = 32 << 10
)

// highlightClass is what the sanitiser lets through of the highlighter's
// classes: chroma's, under their prefix (static/app.css colours them), and
// nothing else, so a reply cannot borrow the page's own classes.
var highlightClass = regexp.MustCompile(`^hl-[a-z0-9]+( hl-[a-z0-9]+)*$`)

// NewMarkdown builds the renderer: GitHub-flavoured Markdown, fenced code in
// a named language highlighted on the server (CSS classes, never inline
// styles, so the Content-Security-Policy holds), user-generated content
// policy (links get rel="nofollow noopener" and open in a new tab).
func NewMarkdown() *Markdown {
	p := bluemonday.UGCPolicy()
	p.RequireNoFollowOnLinks(true)
	p.AddTargetBlankToFullyQualifiedLinks(true)
	p.AllowAttrs("class").Matching(highlightClass).OnElements("pre", "span")
	md := goldmark.New(goldmark.WithExtensions(extension.GFM, highlighting.NewHighlighting(
		highlighting.WithGuessLanguage(false), // a block without a language stays plain
		highlighting.WithFormatOptions(chromahtml.WithClasses(true), chromahtml.ClassPrefix("hl-")),
	)))
	return &Markdown{md: md, policy: p, memo: newMemo[string](markdownCached)}
}

// HTML renders src; on the (theoretical) failure of goldmark it falls back to
// the escaped source, so a reply is never lost from the page.
func (m *Markdown) HTML(src string) string {
	if len(src) > markdownCachedLen {
		return m.render(src)
	}
	if html, ok := m.get(src); ok {
		return html
	}
	html := m.render(src)
	// The key is kept: it must not share memory with a request buffer the
	// server reuses (fiber's zero-copy strings, a page preview's form).
	m.put(strings.Clone(src), html)
	return html
}

func (m *Markdown) render(src string) string {
	var buf bytes.Buffer
	if err := m.md.Convert([]byte(src), &buf); err != nil {
		return m.policy.Sanitize("<pre>" + bluemonday.StrictPolicy().Sanitize(src) + "</pre>")
	}
	return m.policy.Sanitize(buf.String())
}
