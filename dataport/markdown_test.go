package dataport_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"
	xhtml "golang.org/x/net/html"

	"palaver/dataport"
	"palaver/models"
)

// hostile is what a person, a title or a model could write to get markup
// into a Markdown viewer.
var hostile = []string{
	`<script>alert(1)</script>`,
	`<img src=x onerror=alert(1)>`,
	"<div onclick=\"alert(1)\">\nblock\n</div>",
	`<a href="javascript:alert(1)">x</a>`,
	`[click](javascript:alert(1))`,
	`![img](javascript:alert(1))`,
	`[ref]` + "\n\n[ref]: javascript:alert(1)",
	`<javascript:alert(1)>`,
	`[x](JaVaScRiPt&#58;alert(1))`,
	`[x](data:text/html;base64,PHNjcmlwdD4=)`,
	"[x](<java\tscript:alert(1)>) [y](java\\script:alert(1))",
	"`code` <b onmouseover=alert(1)>bold</b>",
	"<!-- comment --><svg/onload=alert(1)>",
	"<details><summary>x</summary><iframe src=//evil></iframe></details>",
	"</details><script>alert(2)</script>",
	`&lt;script&gt; &#60;img src=x onerror=alert(1)&#62;`,
	"<?php evil(); ?> <![CDATA[<script>]]>",
	"# heading\n- item\n> quote\n1. one\n    indented <x>",
}

// TestMarkdownExportEscapesHTML exports a conversation whose title, user
// messages, reply, comment and error each hold hostile text, renders the
// export with goldmark letting raw HTML through (as many viewers do), and
// finds no element a person did not get from the export's own layout, no
// event attribute and no script link; the title and the user's text read
// exactly as written.
func TestMarkdownExportEscapesHTML(t *testing.T) {
	for _, evil := range hostile {
		down := int64(models.FeedbackDown)
		comment, agent := evil, "router"
		at := time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)
		e := &models.ExportedExchange{Messages: []models.Message{
			{Role: models.RoleUser, Content: evil, CreatedAt: at},
			{Role: models.RoleAssistant, Content: "Here: " + evil + "\n\nand *fine* **Markdown** `code`", AgentType: &agent,
				Feedback: &down, FeedbackComment: &comment, CreatedAt: at},
			{Role: models.RoleError, Content: evil, CreatedAt: at},
		}}
		e.Title = evil
		var md bytes.Buffer
		if err := dataport.Markdown(&md, e); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		gm := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(html.WithUnsafe()))
		if err := gm.Convert(md.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
		doc, err := xhtml.Parse(&out)
		if err != nil {
			t.Fatal(err)
		}
		var h1 string
		var walk func(*xhtml.Node)
		walk = func(n *xhtml.Node) {
			if n.Type == xhtml.ElementNode {
				switch n.Data {
				case "html", "head", "body", "h1", "h2", "h3", "p", "em", "strong", "code", "pre", "blockquote", "a", "br", "hr", "del", "ul", "ol", "li", "img":
				default:
					t.Errorf("%q: the export renders a <%s> element:\n%s\n---\n%s", evil, n.Data, md.String(), out.String())
				}
				for _, a := range n.Attr {
					if strings.HasPrefix(a.Key, "on") || (a.Key == "href" || a.Key == "src") && !strings.HasPrefix(a.Val, "http") {
						t.Errorf("%q: the export renders %s=%q:\n%s", evil, a.Key, a.Val, md.String())
					}
				}
				if n.Data == "h1" {
					h1 = textOf(n)
				}
			}
			if n.Type == xhtml.CommentNode && !strings.Contains(n.Data, "raw HTML omitted") {
				t.Errorf("%q: the export renders a comment %q", evil, n.Data)
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				walk(c)
			}
		}
		walk(doc)
		if want := strings.Join(strings.Fields(evil), " "); h1 != want {
			t.Errorf("the title reads %q, want %q", h1, want)
		}
	}
}

// TestMarkdownExportKeepsReplies: a plain reply's Markdown is written as the
// model wrote it.
func TestMarkdownExportKeepsReplies(t *testing.T) {
	reply := "# Plan\n\n- one\n- [two](https://example.com)\n\n```go\nif a < b && c > d {}\n```\n\n`x < y` and 3 > 2"
	e := &models.ExportedExchange{Messages: []models.Message{{Role: models.RoleAssistant, Content: reply}}}
	var md bytes.Buffer
	if err := dataport.Markdown(&md, e); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), reply) {
		t.Fatalf("the reply was changed:\n%s", md.String())
	}
}

func textOf(n *xhtml.Node) string {
	if n.Type == xhtml.TextNode {
		return n.Data
	}
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		b.WriteString(textOf(c))
	}
	return b.String()
}
