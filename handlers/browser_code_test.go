package handlers_test

import (
	"context"
	"strings"
	"testing"
)

// browserCodeBlock: a reply's fenced code is highlighted, scrolls sideways
// inside its block (the page does not), and has a Copy button.
func browserCodeBlock(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	w := s.window("cody")
	w.register("cody")
	w.waitVisible("[data-testid=chat-welcome]")
	w.waitFor("the composer's script", `document.querySelector("form[data-composer][data-enhanced]")`)

	long := strings.Repeat("wide_identifier_", 20)
	query := "look:\n```go\nfunc main() { println(\"" + long + "\") }\n```"
	// Several lines: set the field as a paste would, then send.
	browserEval[bool](w, `(() => {
		const ta = document.querySelector("[data-testid=chat-input]");
		ta.value = `+browserQuote(query)+`;
		ta.dispatchEvent(new Event("input", {bubbles: true}));
		ta.form.requestSubmit();
		return true;
	})()`)
	const block = `#transcript [data-role=assistant] .code-frame pre.hl-chroma`
	w.waitFor("the highlighted block with its Copy button", `document.querySelector("`+block+` + [data-testid=code-copy]")`)
	if !browserEval[bool](w, `!!document.querySelector("`+block+` .hl-kd")`) {
		s.fatalf("the Go keyword is not highlighted")
	}
	if !browserEval[bool](w, `(() => { const p = document.querySelector("`+block+`"); return p.scrollWidth > p.clientWidth; })()`) {
		s.fatalf("the long line does not scroll inside its block")
	}
	if !browserEval[bool](w, `document.documentElement.scrollWidth <= window.innerWidth`) {
		s.fatalf("the long line widens the page")
	}
	w.click(`#transcript [data-role=assistant] [data-testid=code-copy]`)
	w.waitFor("the Copy button's answer", `document.querySelector("#transcript [data-role=assistant] [data-testid=code-copy][data-copied]")`)
}
