package views

import (
	"bytes"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// Markdown renders assistant Markdown to HTML and then sanitises it. goldmark
// already drops raw HTML; the sanitiser is the second line of defence. It is
// safe for concurrent use.
type Markdown struct {
	md     goldmark.Markdown
	policy *bluemonday.Policy
}

// NewMarkdown builds the renderer: GitHub-flavoured Markdown, user-generated
// content policy (links get rel="nofollow noopener" and open in a new tab).
func NewMarkdown() *Markdown {
	p := bluemonday.UGCPolicy()
	p.RequireNoFollowOnLinks(true)
	p.AddTargetBlankToFullyQualifiedLinks(true)
	return &Markdown{md: goldmark.New(goldmark.WithExtensions(extension.GFM)), policy: p}
}

// HTML renders src; on the (theoretical) failure of goldmark it falls back to
// the escaped source, so a reply is never lost from the page.
func (m *Markdown) HTML(src string) string {
	var buf bytes.Buffer
	if err := m.md.Convert([]byte(src), &buf); err != nil {
		return m.policy.Sanitize("<pre>" + bluemonday.StrictPolicy().Sanitize(src) + "</pre>")
	}
	return m.policy.Sanitize(buf.String())
}
