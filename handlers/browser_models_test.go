package handlers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"palaver/agents"
	"palaver/models"
)

// browserModelPicker: a person picks a model in the composer's picker,
// sends, and the reply is credited to that model (with the Thinking
// section of its reasoning); the picker then keeps the choice for the
// conversation, after a reload too.
func browserModelPicker(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root, withCatalog(t))
	srv := fakeOpenAIServer(t)
	ctx := context.Background()
	box, err := agents.NewSecretBox("test secret")
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := box.Seal("sk-secret-key")
	if err != nil {
		t.Fatal(err)
	}
	conn := &models.LLMConnection{Name: "fake", Kind: models.KindOpenAI, BaseURL: srv.URL + "/v1", APIKeyEnc: sealed}
	if err := s.app.store.CreateConnection(ctx, conn, []string{"gpt-fake", "gpt-other"}); err != nil {
		t.Fatal(err)
	}
	ms, _ := s.app.store.LLMModels(ctx)
	var other int64
	on := true
	for _, m := range ms {
		if m.ConnectionID != conn.ID {
			continue
		}
		name := "Fake " + strings.TrimPrefix(m.Model, "gpt-")
		if _, err := s.app.store.UpdateLLMModel(ctx, m.ID, models.ModelPatch{Enabled: &on, Name: &name}); err != nil {
			t.Fatal(err)
		}
		if m.Model == "gpt-other" {
			other = m.ID
		}
	}

	w := s.window("ada")
	w.register("ada")
	w.waitVisible("[data-testid=model-picker]")
	if got := browserEval[int](w, `document.querySelectorAll("[data-testid=model-picker] option").length`); got != 3 {
		s.fatalf("the picker offers %d models, want 3", got)
	}
	browserEval[bool](w, fmt.Sprintf(`(() => { const p = document.querySelector("[data-testid=model-picker]"); p.value = "%d"; p.dispatchEvent(new Event("change", {bubbles: true})); return true; })()`, other))
	reply := w.send("which model are you?")
	if !strings.Contains(reply, "From the fake.") {
		s.fatalf("the reply reads %q", reply)
	}
	last := `[...document.querySelectorAll("#transcript [data-testid=message][data-role=assistant]")].pop()`
	if got := browserEval[string](w, last+`.querySelector("[data-testid=message-model]").textContent.trim()`); got != "gpt-other" {
		s.fatalf("the reply is credited to %q, want gpt-other", got)
	}
	if got := browserEval[string](w, last+`.querySelector("[data-testid=reasoning]").textContent`); !strings.Contains(got, "hmm") {
		s.fatalf("the reply's Thinking section reads %q", got)
	}
	w.waitFor("the conversation's URL", `location.pathname.startsWith("/chat/")`)
	w.reload()
	if got := browserEval[string](w, `document.querySelector("[data-testid=model-picker]").value`); got != fmt.Sprint(other) {
		s.fatalf("after a reload the picker shows model %s, want the conversation's %d", got, other)
	}

	// The star next to the picker makes the chosen model a favourite: the
	// picker comes back with a Favourites group first, the model in it and
	// still chosen, and the message typed meanwhile stays unsent.
	const firstGroup = `document.querySelector("[data-testid=model-picker] optgroup")`
	if got := browserEval[string](w, firstGroup+`.label`); got == "Favourites" {
		s.fatalf("a Favourites group before any star")
	}
	w.typeInto("[data-testid=chat-input]", "not yet")
	w.click("[data-testid=model-favourite]")
	w.waitFor("the Favourites group", firstGroup+`.label === "Favourites"`)
	if got := browserEval[string](w, firstGroup+`.querySelector("option").value + "/" + document.querySelector("[data-testid=model-picker]").value`); got != fmt.Sprintf("%d/%d", other, other) {
		s.fatalf("the favourite group's first model / the chosen one: %s, want %d/%d", got, other, other)
	}
	if got := browserEval[string](w, `document.querySelector("[data-testid=model-favourite]").getAttribute("aria-pressed") + "/" + document.querySelector("[data-testid=chat-input]").value`); got != "true/not yet" {
		s.fatalf("the star's state / the composer's text: %q", got)
	}
	// Another model chosen: the star says it is none.
	browserEval[bool](w, `(() => { const p = document.querySelector("[data-testid=model-picker]"); p.value = p.querySelectorAll("optgroup")[1].querySelector("option").value; p.dispatchEvent(new Event("change", {bubbles: true})); return true; })()`)
	if got := browserEval[string](w, `document.querySelector("[data-testid=model-favourite]").getAttribute("aria-pressed")`); got != "false" {
		s.fatalf("the star of a model not starred is pressed: %q", got)
	}

	// The account page: the favourite starred in its list, this month's
	// tokens charted per day (inline SVG), the usage table.
	w.visit("/account")
	w.waitVisible("[data-testid=usage-chart] svg")
	if got := browserEval[int](w, `document.querySelectorAll("[data-testid=usage-chart] svg rect[data-value]").length`); got != time.Now().UTC().Day() {
		s.fatalf("the usage chart has %d bars, want one per day of the month so far", got)
	}
	if got := browserEval[string](w, `[...document.querySelectorAll("[data-testid=usage-chart] svg rect[data-value]")].pop().getAttribute("data-value")`); got == "0" {
		s.fatalf("today's bar is empty after a reply")
	}
	if got := browserEval[int](w, `document.querySelectorAll("[data-testid=model-favourite-toggle][aria-pressed=true]").length`); got != 1 {
		s.fatalf("the account page shows %d starred models, want 1", got)
	}
	// Unstarred there (htmx puts the list back), the picker has no
	// Favourites group any more.
	w.click("[data-testid=model-favourite-toggle][aria-pressed=true]")
	w.waitFor("the star taken back", `document.querySelectorAll("[data-testid=model-favourite-toggle][aria-pressed=true]").length === 0`)
	w.visit("/chat")
	w.waitVisible("[data-testid=model-picker]")
	if got := browserEval[string](w, firstGroup+`.label`); got == "Favourites" {
		s.fatalf("the Favourites group outlived its only model's star")
	}

	// Without JavaScript the star is a form button: it stars the chosen
	// model and comes back to the same page, nothing sent.
	w.disableJavaScript()
	w.visit("/chat")
	before := browserEval[string](w, `location.pathname`)
	w.clickToLoad("[data-testid=model-favourite]")
	if got := browserEval[string](w, `location.pathname + " " + `+firstGroup+`.label`); got != before+" Favourites" {
		s.fatalf("without JavaScript the star led to %q, want %s with the Favourites group", got, before)
	}
}

// browserBudgetLive: the reply that spends the person's budget brings the
// composer's warning with it, without a reload.
func browserBudgetLive(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root, withCatalog(t))
	// The offline agent counts words as tokens: one exchange spends these.
	if err := s.app.store.SetBudget(context.Background(), models.BudgetDefault, nil, 5, 0); err != nil {
		t.Fatal(err)
	}
	w := s.window("ada")
	w.register("ada")
	if got := browserEval[int](w, `document.querySelectorAll("[data-testid=budget-warning]").length`); got != 0 {
		s.fatalf("a budget warning before any reply")
	}
	w.send("tell me a little about the weather in the hills today")
	w.waitFor("the budget warning", `!!document.querySelector("#composer-budget [data-testid=budget-warning][data-spent]")`)
}

// browserModelSearchEnter: Enter in the picker's search field filters; it
// neither sends the message nor presses the favourite star (the form's
// first button, which the browser would take for an implicit submission).
func browserModelSearchEnter(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root, withCatalog(t))
	ctx := context.Background()
	names := make([]string, 10)
	for i := range names {
		names[i] = fmt.Sprintf("m%02d", i)
	}
	conn := &models.LLMConnection{Name: "many", Kind: models.KindOpenAI, BaseURL: "http://127.0.0.1:1/v1"}
	if err := s.app.store.CreateConnection(ctx, conn, names); err != nil {
		t.Fatal(err)
	}
	ms, _ := s.app.store.LLMModels(ctx)
	on := true
	for _, m := range ms {
		if _, err := s.app.store.UpdateLLMModel(ctx, m.ID, models.ModelPatch{Enabled: &on}); err != nil {
			t.Fatal(err)
		}
	}
	w := s.window("ada")
	w.register("ada")
	w.waitVisible("[data-testid=model-search]")
	w.typeInto("[data-testid=chat-input]", "kept")
	w.typeInto("[data-testid=model-search]", "m07\n")
	if got := browserEval[string](w, `document.querySelector("[data-testid=model-picker]").selectedOptions[0].textContent`); got != "m07" {
		s.fatalf("the search chose %q, want m07", got)
	}
	s.settle()
	u, err := s.app.store.UserByUsername(ctx, "ada")
	if err != nil {
		t.Fatal(err)
	}
	if favs, err := s.app.store.FavouriteModels(ctx, u.ID); err != nil || len(favs) != 0 {
		s.fatalf("Enter in the search starred %v (%v)", favs, err)
	}
	if got := browserEval[string](w, `document.querySelector("[data-testid=chat-input]").value`); got != "kept" {
		s.fatalf("Enter in the search sent the message: the composer holds %q", got)
	}
}
