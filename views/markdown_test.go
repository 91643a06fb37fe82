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
