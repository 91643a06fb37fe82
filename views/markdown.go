package views

import (
	"bytes"
	"net/url"
	"regexp"
	"strings"

	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	highlighting "github.com/yuin/goldmark-highlighting/v2"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Markdown renders assistant Markdown to HTML and then sanitises it. goldmark
// already drops raw HTML; the sanitiser is the second line of defence. It is
// safe for concurrent use, and it is the one renderer of Markdown: the chat,
// the page preview and view, the proposals' messages and the admin's reading
// view all go through it, so they share one policy.
//
// The policy: rendered Markdown never makes the browser fetch from another
// origin. A reply can be steered by what it quotes (prompt injection), and an
// image URL that carries conversation text would leak it to whoever serves
// the image the moment the page shows it. So an image from another origin
// becomes a link whose text is its URL (the reader sees where it points and
// may follow it); an image with a data: or any other non-web URL becomes its
// alt text; only a same-origin relative image stays an image.
//
// It remembers what it rendered last: the same replies are rendered again
// and again (every tab that shows a conversation, every tab a reply is
// streamed to), and rendering is most of the cost of showing one.
type Markdown struct {
	md     goldmark.Markdown
	policy *bluemonday.Policy
	*memo[string, string]
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

// NewMarkdown builds the renderer: GitHub-flavoured Markdown with the origin
// policy above, fenced code in a named language highlighted on the server
// (CSS classes, never inline styles, so the Content-Security-Policy holds),
// then bluemonday's user-generated content policy. Every link gets
// rel="noopener nofollow noreferrer" (noopener from the renderer, the others
// from the sanitiser), and a link to another site opens in a new tab.
func NewMarkdown() *Markdown {
	p := bluemonday.UGCPolicy()
	p.RequireNoFollowOnLinks(true)
	p.RequireNoReferrerOnLinks(true)
	p.AddTargetBlankToFullyQualifiedLinks(true)
	p.AllowAttrs("class").Matching(highlightClass).OnElements("pre", "span")
	p.AllowAttrs("rel").Matching(regexp.MustCompile(`^noopener$`)).OnElements("a")
	// The sanitiser holds the image rule too, whatever produced the HTML: an
	// image URL from elsewhere is emptied (an empty src loads nothing).
	// bluemonday has no way to refuse the attribute here, since UGCPolicy
	// already allows any src on img and its attribute policies add up.
	p.RewriteSrc(func(u *url.URL) {
		if !sameOriginImage.MatchString(u.String()) {
			*u = url.URL{}
		}
	})
	md := goldmark.New(
		goldmark.WithExtensions(extension.GFM, highlighting.NewHighlighting(
			highlighting.WithGuessLanguage(false), // a block without a language stays plain
			highlighting.WithFormatOptions(chromahtml.WithClasses(true), chromahtml.ClassPrefix("hl-")),
		)),
		goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(originPolicy{}, 1000))))
	return &Markdown{md: md, policy: p, memo: NewMemo[string, string](markdownCached)}
}

// HTML renders src; on the (theoretical) failure of goldmark it falls back to
// the escaped source, so a reply is never lost from the page.
func (m *Markdown) HTML(src string) string {
	if len(src) > markdownCachedLen {
		return m.render(src)
	}
	if html, ok := m.Get(src); ok {
		return html
	}
	html := m.render(src)
	// The key is kept: it must not share memory with a request buffer the
	// server reuses (fiber's zero-copy strings, a page preview's form).
	m.Put(strings.Clone(src), html)
	return html
}

func (m *Markdown) render(src string) string {
	var buf bytes.Buffer
	if err := m.md.Convert([]byte(src), &buf); err != nil {
		return m.policy.Sanitize("<pre>" + bluemonday.StrictPolicy().Sanitize(src) + "</pre>")
	}
	return m.policy.Sanitize(buf.String())
}

// sameOriginImage matches an image URL that can only load from the page's
// own origin: a path from the root ("/static/x.png", not "//host/x" nor
// "/\host/x", which browsers read as "//host/x") or a relative path whose
// first segment has no scheme ("img/x.png", not "data:..." nor "http:...").
// No whitespace or control character anywhere, since browsers drop some of
// them inside a URL. The URL is the one the browser sees: goldmark's escaped
// destination, or an attribute value after entity decoding.
var sameOriginImage = regexp.MustCompile(
	`^(?:/(?:[^/\\\x00-\x20\x7f][^\x00-\x20\x7f]*)?|[^/\\:?#\x00-\x20\x7f][^/\\:?#\x00-\x20\x7f]*(?:[/?#][^\x00-\x20\x7f]*)?)$`)

// webURL matches an absolute http(s) or scheme-relative URL, which a remote
// image turns into a link to.
var webURL = regexp.MustCompile(`^(?i:https?:|[/\\]{2})`)

// originPolicy applies the Markdown origin policy (see Markdown) to the
// parsed document: it rewrites every image that is not same-origin, and
// marks every link rel="noopener".
type originPolicy struct{}

// Transform implements parser.ASTTransformer.
func (originPolicy) Transform(doc *ast.Document, _ text.Reader, _ parser.Context) {
	var images []*ast.Image
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if img, ok := n.(*ast.Image); ok && entering {
			images = append(images, img)
		}
		return ast.WalkContinue, nil
	})
	// Outer images come first: an image in the alt text of one that is
	// replaced is either dropped with it or moved out, and then checked.
	for _, img := range images {
		if parent := img.Parent(); parent != nil {
			replaceImage(parent, img)
		}
	}
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		switch n.(type) {
		case *ast.Link, *ast.AutoLink:
			if entering {
				n.SetAttributeString("rel", []byte("noopener"))
			}
		}
		return ast.WalkContinue, nil
	})
}

// replaceImage applies the policy to one image of parent.
func replaceImage(parent ast.Node, img *ast.Image) {
	u := string(util.URLEscape(img.Destination, true)) // the src goldmark would write
	switch {
	case sameOriginImage.MatchString(u):
		return
	case webURL.MatchString(u):
		label := ast.NewString(util.EscapeHTML([]byte(u)))
		label.SetCode(true) // written as is: escaped above
		if insideLink(parent) {
			parent.ReplaceChild(parent, img, label) // no link inside a link
			return
		}
		link := ast.NewLink()
		link.Destination = img.Destination
		link.AppendChild(link, label)
		parent.ReplaceChild(parent, img, link)
	default: // data:, javascript:, any other scheme: the alt text only
		for c := img.FirstChild(); c != nil; {
			next := c.NextSibling()
			parent.InsertBefore(parent, img, c)
			c = next
		}
		parent.RemoveChild(parent, img)
	}
}

// insideLink says whether n is, or is inside, a link.
func insideLink(n ast.Node) bool {
	for ; n != nil; n = n.Parent() {
		if _, ok := n.(*ast.Link); ok {
			return true
		}
	}
	return false
}
