package views

import (
	"strings"
	"testing"
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
	raw, doc := renderHTML(t, Proposal(sectionCard(false), false))
	card := one(t, doc, "proposal")
	mustAttr(t, card, "data-stale", "false")
	mustAttr(t, card, "id", "proposal-42")
	if _, ok := attr(card, "hx-swap-oob"); ok {
		t.Fatal("an in-place card is marked out of band")
	}
	secs := byTestID(doc, "proposal-section")
	if len(secs) != 3 {
		t.Fatalf("%d section blocks", len(secs))
	}
	for i, want := range []struct{ kind, name, key string }{{"changed", "## Plan", "2 Plan#0"}, {"new", "## New <b>", "2 New <b>#0"}, {"removed", "(preamble)", "P#0"}} {
		mustAttr(t, secs[i], "data-kind", want.kind)
		mustAttr(t, secs[i], "data-section", want.name)
		box := one(t, secs[i], "proposal-section-check")
		mustAttr(t, box, "name", "sections")
		mustAttr(t, box, "value", want.key)
		if _, ok := attr(box, "checked"); !ok {
			t.Fatalf("section %d is not checked at first", i)
		}
		if _, ok := attr(box, "disabled"); ok {
			t.Fatalf("section %d disabled on a fresh card", i)
		}
		if len(byTestID(secs[i], "proposal-diff")) != 1 {
			t.Fatalf("section %d has no diff of its own", i)
		}
	}
	if strings.Contains(raw, "<b>") {
		t.Fatal("a heading became markup")
	}
	accept := one(t, doc, "proposal-accept")
	if _, ok := attr(accept, "disabled"); ok || textOf(accept) != "Accept (3)" {
		t.Fatalf("accept button %q", textOf(accept))
	}
	// The checkboxes, the pick marker and the CSRF token post with the accept form.
	form := byTag(doc, "form")[0]
	mustAttr(t, form, "action", "/pages/3/proposals/42/accept")
	if v, _ := formValue(form, "pick"); v != "1" {
		t.Fatal("no pick marker")
	}
	if v, _ := formValue(form, "csrf_token"); v != "tok" {
		t.Fatal("no CSRF token in the accept form")
	}
	reject := one(t, doc, "proposal-reject")
	mustAttr(t, reject, "form", "proposal-42-reject")
	mustAttr(t, reject, "type", "submit")
	if !strings.Contains(textOf(card), "+3 / -2") || !strings.Contains(textOf(card), "Because.") {
		t.Fatalf("card text %q", textOf(card))
	}
	if len(byTestID(doc, "proposal-stale")) != 0 {
		t.Fatal("a fresh card says it is stale")
	}
}

func TestProposalCardStale(t *testing.T) {
	_, doc := renderHTML(t, Proposal(sectionCard(true), true))
	card := one(t, doc, "proposal")
	mustAttr(t, card, "data-stale", "true")
	mustAttr(t, card, "hx-swap-oob", "true")
	if !strings.Contains(textOf(one(t, doc, "proposal-stale")), StaleReason) {
		t.Fatal("a stale card does not say why")
	}
	if _, ok := attr(one(t, doc, "proposal-accept"), "disabled"); !ok {
		t.Fatal("a stale card can be applied")
	}
	if _, ok := attr(one(t, doc, "proposal-reject"), "disabled"); ok {
		t.Fatal("a stale card cannot be rejected")
	}
	for _, box := range byTestID(doc, "proposal-section-check") {
		if _, ok := attr(box, "disabled"); !ok {
			t.Fatal("a stale card's sections can be checked")
		}
	}
}

func TestProposalCardFullAndApplied(t *testing.T) {
	full := ProposalCard{PageID: 1, MessageID: 7, Mode: ModeFull, Diff: UnifiedDiff("a\n", "b\n"), Added: 1, Deleted: 1}
	_, doc := renderHTML(t, Proposal(full, false))
	if textOf(one(t, doc, "proposal-accept")) != "Accept" || len(byTestID(doc, "proposal-section")) != 0 {
		t.Fatal("a full replacement card")
	}
	diff := one(t, doc, "proposal-diff")
	if got := textOf(diff); got != "@@ -1 +1 @@-a+b" {
		t.Fatalf("diff %q", got)
	}
	full.Applied = true
	_, doc = renderHTML(t, Proposal(full, false))
	note := one(t, doc, "proposal-applied")
	mustAttr(t, note, "id", "proposal-7")
	if len(byTestID(doc, "proposal")) != 0 || len(byTestID(doc, "proposal-accept")) != 0 {
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
	_, doc := renderHTML(t, PageEdit(p))
	ta := one(t, doc, "page-content")
	mustAttr(t, ta, "name", "content")
	if textOf(ta) != "# T <script>x</script>" || len(byTag(doc, "script")) != 3 {
		// three: the layout's htmx, its ws extension and app.js; nothing from the page
		t.Fatalf("editor text %q, %d scripts", textOf(ta), len(byTag(doc, "script")))
	}
	mustAttr(t, one(t, doc, "page-save"), "form", "page-form")
	mustAttr(t, one(t, doc, "page-title"), "form", "page-form")
	panel := one(t, doc, "page-chat")
	if len(byTestID(panel, "chat-input")) != 1 || len(byTestID(panel, "chat-send")) != 1 {
		t.Fatal("the panel has no composer of its own")
	}
	form := byTag(panel, "form")
	composer := form[len(form)-1]
	mustAttr(t, composer, "action", "/pages/5/chat")
	p.Panel.Open = false
	_, doc = renderHTML(t, PageEdit(p))
	if len(byTestID(doc, "page-chat")) != 0 || len(byTestID(doc, "page-chat-open")) != 1 {
		t.Fatal("a closed panel")
	}
}
