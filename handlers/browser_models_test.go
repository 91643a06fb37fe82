package handlers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

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
}
