package htmltest

import (
	"slices"
	"testing"

	"github.com/a-h/templ"
	"golang.org/x/net/html"
)

func TestQueries(t *testing.T) {
	_, body := Render(t, templ.Raw(`<form data-testid="f" id="x"><input name="a" value="1"><input name="b">  </form>`+
		`<p data-testid="p">one <b>two</b>
	three</p><p data-testid="p" hidden></p>`))
	form := One(t, body, "f")
	if ByID(body, "x") != form || ByID(body, "none") != nil {
		t.Error("ByID does not find the form by its id alone")
	}
	if v, ok := FormValue(form, "a"); !ok || v != "1" {
		t.Errorf("FormValue a = %q %v", v, ok)
	}
	if v, ok := FormValue(form, "b"); ok || v != "" {
		t.Errorf("FormValue of a field without a value = %q %v, want absent", v, ok)
	}
	ps := ByTestID(body, "p")
	if len(ps) != 2 || Text(ps[0]) != "one two three" {
		t.Fatalf("%d p, text %q", len(ps), Text(ps[0]))
	}
	if _, ok := Attr(ps[1], "hidden"); !ok {
		t.Error("Attr misses a bare attribute")
	}
	if NextElement(form) != ps[0] || NextElement(ps[1]) != nil {
		t.Error("NextElement does not skip text, or runs past the end")
	}
	var tags []string
	for _, n := range FindAll(body, func(n *html.Node) bool { return true }) {
		tags = append(tags, n.Data)
	}
	if want := []string{"body", "form", "input", "input", "p", "b", "p"}; !slices.Equal(tags, want) {
		t.Errorf("FindAll in document order: %v, want %v", tags, want)
	}
	if len(ByTag(Parse(t, "<title>t</title><p>x"), "p")) != 1 {
		t.Error("Parse: no <p> in the document")
	}
}
