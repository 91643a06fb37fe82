package views

import (
	"strings"
	"testing"

	"palaver/internal/htmltest"
)

func sectionCard(stale bool) ProposalCard {
	return ProposalCard{
		PageID: 3, MessageID: 42, Mode: ModeSection, Reasoning: "Because.", Stale: stale, CSRF: "tok",
		Sections: []SectionBlock{
			{Key: "2 Plan#0", Name: "## Plan", Kind: "changed", Diff: UnifiedDiff("## Plan\na\n", "## Plan\nb\n")},
			{Key: "2 New <b>#0", Name: "## New <b>", Kind: "new", Diff: UnifiedDiff("", "## New <b>\nx\n")},
			{Key: "P#0", Name: "(preamble)", Kind: "removed", Diff: UnifiedDiff("intro\n", "")},
		},
		Added: 3, Deleted: 2,
	}
}

func TestProposalCardSections(t *testing.T) {
	raw, doc := htmltest.Render(t, Proposal(sectionCard(false), false))
	card := htmltest.One(t, doc, "proposal")
	htmltest.MustAttr(t, card, "data-stale", "false")
	htmltest.MustAttr(t, card, "id", "proposal-42")
	if _, ok := htmltest.Attr(card, "hx-swap-oob"); ok {
		t.Fatal("an in-place card is marked out of band")
	}
	secs := htmltest.ByTestID(doc, "proposal-section")
	if len(secs) != 3 {
		t.Fatalf("%d section blocks", len(secs))
	}
	for i, want := range []struct{ kind, name, key string }{{"changed", "## Plan", "2 Plan#0"}, {"new", "## New <b>", "2 New <b>#0"}, {"removed", "(preamble)", "P#0"}} {
		htmltest.MustAttr(t, secs[i], "data-kind", want.kind)
		htmltest.MustAttr(t, secs[i], "data-section", want.name)
		box := htmltest.One(t, secs[i], "proposal-section-check")
		htmltest.MustAttr(t, box, "name", "sections")
		htmltest.MustAttr(t, box, "value", want.key)
		if _, ok := htmltest.Attr(box, "checked"); !ok {
			t.Fatalf("section %d is not checked at first", i)
		}
		if _, ok := htmltest.Attr(box, "disabled"); ok {
			t.Fatalf("section %d disabled on a fresh card", i)
		}
		if len(htmltest.ByTestID(secs[i], "proposal-diff")) != 1 {
			t.Fatalf("section %d has no diff of its own", i)
		}
	}
	if strings.Contains(raw, "<b>") {
		t.Fatal("a heading became markup")
	}
	accept := htmltest.One(t, doc, "proposal-accept")
	if _, ok := htmltest.Attr(accept, "disabled"); ok || htmltest.Text(accept) != "Accept (3)" {
		t.Fatalf("accept button %q", htmltest.Text(accept))
	}
	// The checkboxes, the pick marker and the CSRF token post with the accept form.
	form := htmltest.ByTag(doc, "form")[0]
	htmltest.MustAttr(t, form, "action", "/pages/3/proposals/42/accept")
	if v, _ := htmltest.FormValue(form, "pick"); v != "1" {
		t.Fatal("no pick marker")
	}
	if v, _ := htmltest.FormValue(form, "csrf_token"); v != "tok" {
		t.Fatal("no CSRF token in the accept form")
	}
	reject := htmltest.One(t, doc, "proposal-reject")
	htmltest.MustAttr(t, reject, "form", "proposal-42-reject")
	htmltest.MustAttr(t, reject, "type", "submit")
	if !strings.Contains(htmltest.Text(card), "+3 / -2") || !strings.Contains(htmltest.Text(card), "Because.") {
		t.Fatalf("card text %q", htmltest.Text(card))
	}
	if len(htmltest.ByTestID(doc, "proposal-stale")) != 0 {
		t.Fatal("a fresh card says it is stale")
	}
}

func TestProposalCardStale(t *testing.T) {
	_, doc := htmltest.Render(t, Proposal(sectionCard(true), true))
	card := htmltest.One(t, doc, "proposal")
	htmltest.MustAttr(t, card, "data-stale", "true")
	htmltest.MustAttr(t, card, "hx-swap-oob", "true")
	if !strings.Contains(htmltest.Text(htmltest.One(t, doc, "proposal-stale")), StaleReason) {
		t.Fatal("a stale card does not say why")
	}
	if _, ok := htmltest.Attr(htmltest.One(t, doc, "proposal-accept"), "disabled"); !ok {
		t.Fatal("a stale card can be applied")
	}
	if _, ok := htmltest.Attr(htmltest.One(t, doc, "proposal-reject"), "disabled"); ok {
		t.Fatal("a stale card cannot be rejected")
	}
	for _, box := range htmltest.ByTestID(doc, "proposal-section-check") {
		if _, ok := htmltest.Attr(box, "disabled"); !ok {
			t.Fatal("a stale card's sections can be checked")
		}
	}
}

func TestProposalCardFullAndApplied(t *testing.T) {
	full := ProposalCard{PageID: 1, MessageID: 7, Mode: ModeFull, Diff: UnifiedDiff("a\n", "b\n"), Added: 1, Deleted: 1}
	_, doc := htmltest.Render(t, Proposal(full, false))
	if htmltest.Text(htmltest.One(t, doc, "proposal-accept")) != "Accept" || len(htmltest.ByTestID(doc, "proposal-section")) != 0 {
		t.Fatal("a full replacement card")
	}
	diff := htmltest.One(t, doc, "proposal-diff")
	if got := htmltest.Text(diff); got != "@@ -1 +1 @@-a+b" {
		t.Fatalf("diff %q", got)
	}
	full.Applied = true
	_, doc = htmltest.Render(t, Proposal(full, false))
	note := htmltest.One(t, doc, "proposal-applied")
	htmltest.MustAttr(t, note, "id", "proposal-7")
	if len(htmltest.ByTestID(doc, "proposal")) != 0 || len(htmltest.ByTestID(doc, "proposal-accept")) != 0 {
		t.Fatal("an applied proposal is actionable")
	}
}

// The page editor's hooks: the text area and save button belong to the
// editor's form, and the chat panel holds its own composer.
func TestPageEditHooks(t *testing.T) {
	p := PageEditScreen{
		Base:   testBase(),
		Editor: PageEditor{ID: 5, Title: "T", Content: "# T\n<script>x</script>", CSRF: "tok"},
		Panel:  PagePanel{PageID: 5, Open: true, CSRF: "tok", Composer: Composer{MaxLength: 10}},
	}
	_, doc := htmltest.Render(t, PageEdit(p))
	ta := htmltest.One(t, doc, "page-content")
	htmltest.MustAttr(t, ta, "name", "content")
	if htmltest.Text(ta) != "# T <script>x</script>" || len(htmltest.ByTag(doc, "script")) != 3 {
		// three: the layout's htmx, its ws extension and app.js; nothing from the page
		t.Fatalf("editor text %q, %d scripts", htmltest.Text(ta), len(htmltest.ByTag(doc, "script")))
	}
	htmltest.MustAttr(t, htmltest.One(t, doc, "page-save"), "form", "page-form")
	htmltest.MustAttr(t, htmltest.One(t, doc, "page-title"), "form", "page-form")
	panel := htmltest.One(t, doc, "page-chat")
	if len(htmltest.ByTestID(panel, "chat-input")) != 1 || len(htmltest.ByTestID(panel, "chat-send")) != 1 {
		t.Fatal("the panel has no composer of its own")
	}
	form := htmltest.ByTag(panel, "form")
	composer := form[len(form)-1]
	htmltest.MustAttr(t, composer, "action", "/pages/5/chat")
	p.Panel.Open = false
	_, doc = htmltest.Render(t, PageEdit(p))
	if len(htmltest.ByTestID(doc, "page-chat")) != 0 || len(htmltest.ByTestID(doc, "page-chat-open")) != 1 {
		t.Fatal("a closed panel")
	}
}
