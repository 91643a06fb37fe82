package agents

import (
	"context"
	"testing"
	"time"

	"palaver/internal/pgtest"
	"palaver/models"
)

// Two processes on one PostgreSQL: a connection an administrator adds
// through one is offered and used by the other without a restart.
func TestCatalogSeesAnotherProcessesConnection(t *testing.T) {
	here := pgtest.Fresh(t)
	there, err := models.Open(pgtest.DSN(t), models.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { there.Close() })
	ctx := context.Background()
	box, _ := NewSecretBox("shared secret")
	if err := here.EnsureFlagConnection(ctx, models.LLMConnection{Name: "offline", Kind: models.KindBuiltin}, "builtin"); err != nil {
		t.Fatal(err)
	}
	cat := NewCatalog(here, box, &Builtin{})
	cat.TTL = 50 * time.Millisecond
	svc := New(here, &Builtin{}, Options{Logger: quiet, Catalog: cat})
	if ch, err := cat.Choices(ctx); err != nil || len(ch) != 1 {
		t.Fatalf("choices %+v %v", ch, err)
	}

	_, o := newFakeLLM(t, sse([]string{textChunk("From the other process's connection."), finishChunk}, true))
	key, _ := box.Seal("sk-test")
	if err := there.CreateConnection(ctx, &models.LLMConnection{Name: "fake", Kind: models.KindOpenAI, BaseURL: o.BaseURL, APIKeyEnc: key}, []string{"test-model"}); err != nil {
		t.Fatal(err)
	}
	ms, _ := there.LLMModels(ctx)
	on := true
	if _, err := there.UpdateLLMModel(ctx, ms[len(ms)-1].ID, models.ModelPatch{Enabled: &on}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // past the cache
	ch, err := cat.Choices(ctx)
	if err != nil || len(ch) != 2 || ch[1].Connection != "fake" {
		t.Fatalf("choices after the other process's change %+v %v", ch, err)
	}
	ann := newUser(t, here, "ann")
	res, err := svc.Send(ctx, SendRequest{UserID: ann, AgentType: AgentRouter, Query: "hi", Model: ch[1].ID})
	if err != nil || res.Failed || res.Reply.Content != "From the other process's connection." {
		t.Fatalf("%+v %v", res, err)
	}
}
