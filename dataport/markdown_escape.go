package dataport

import (
	"bytes"
	"html"
	"slices"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// The Markdown export is read by whatever renderer a person opens it with,
// and many pass raw HTML through: nothing a user, a title or a model wrote
// may become an element or a script link there. Titles, the user's text,
// comments and errors are written as literal text (as the chat shows them);
// a reply stays Markdown, with its raw HTML turned into text and, if it
// links a script, the whole reply written as literal text.

// literal writes s so that a Markdown renderer shows exactly its text: the
// characters that open HTML, entities, links, emphasis or code are
// backslash-escaped everywhere, and those that start a block (heading,
// list, quote, rule) where a line starts.
func literal(s string) string {
	var b strings.Builder
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		start := true // no text on this line yet, only indentation
		digits := false
		for _, r := range line {
			switch {
			case start && (r == ' ' || r == '\t'):
				b.WriteString("&#32;") // no indented code block, where escapes would show
				continue
			case strings.ContainsRune("\\`*_[]<>&|~", r):
				b.WriteByte('\\')
			case start && strings.ContainsRune("#-+=", r):
				b.WriteByte('\\')
			case digits && (r == '.' || r == ')'):
				b.WriteByte('\\') // "1." opens an ordered list
			}
			digits = (start || digits) && r >= '0' && r <= '9'
			start = false
			b.WriteRune(r)
		}
	}
	return b.String()
}

// exportMarkdown parses a reply the way a common renderer does (CommonMark
// with GitHub's extensions), to find what in it would become HTML.
var exportMarkdown = goldmark.New(goldmark.WithExtensions(extension.GFM))

// reply writes an assistant's reply as Markdown with its raw HTML (inline
// or a block) made text: each '<' that opens it becomes "&lt;". Escaping
// can change how the rest parses, so the result is parsed again until it
// holds no HTML; a reply that links a script (javascript:, data: …), or
// does not settle in a few rounds, is written as literal text instead.
func reply(s string) string {
	src := []byte(s)
	for range 4 {
		opens, unsafe := htmlOpens(src)
		if unsafe {
			break
		}
		if len(opens) == 0 {
			return string(src)
		}
		var b bytes.Buffer
		last := 0
		for _, at := range opens {
			b.Write(src[last:at])
			b.WriteString("&lt;")
			last = at + 1
		}
		b.Write(src[last:])
		src = b.Bytes()
	}
	return literal(s)
}

// htmlOpens lists the offsets of every '<' in src that is part of raw HTML
// once parsed, in order, and says whether a link, image or autolink in it
// points at something other than a web or mail address.
func htmlOpens(src []byte) (opens []int, unsafe bool) {
	doc := exportMarkdown.Parser().Parse(text.NewReader(src))
	mark := func(seg text.Segment) {
		for i := seg.Start; i < seg.Stop; i++ {
			if src[i] == '<' {
				opens = append(opens, i)
			}
		}
	}
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.RawHTML:
			for i := 0; i < n.Segments.Len(); i++ {
				mark(n.Segments.At(i))
			}
		case *ast.HTMLBlock:
			for i := 0; i < n.Lines().Len(); i++ {
				mark(n.Lines().At(i))
			}
			if n.HasClosure() {
				mark(n.ClosureLine)
			}
		case *ast.Link:
			unsafe = unsafe || !safeURL(n.Destination)
		case *ast.Image:
			unsafe = unsafe || !safeURL(n.Destination)
		case *ast.AutoLink:
			unsafe = unsafe || !safeURL(n.URL(src))
		}
		return ast.WalkContinue, nil
	})
	slices.Sort(opens)
	return opens, unsafe
}

// safeURL says whether a link's destination is relative, or a web or mail
// address: anything else (javascript:, vbscript:, data:, file: …) is not.
func safeURL(dest []byte) bool {
	// As a browser reads it: entities resolved, and the tabs, newlines and
	// control characters it drops from a URL dropped.
	d := strings.ToLower(strings.Map(func(r rune) rune {
		if r <= ' ' || r == 0x7f {
			return -1
		}
		return r
	}, html.UnescapeString(string(util.UnescapePunctuations(dest)))))
	colon := strings.IndexByte(d, ':')
	if colon < 0 || strings.ContainsAny(d[:colon], "/?#") {
		return true // no scheme: relative
	}
	switch d[:colon] {
	case "http", "https", "mailto":
		return true
	}
	return false
}
