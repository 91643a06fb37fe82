package agents

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"palaver/models"
)

func newCatalogService(t *testing.T, s *models.Store, openAIURL string) (*Service, *Catalog, []models.LLMModel) {
	t.Helper()
	ctx := context.Background()
	box, err := NewSecretBox("test secret")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureFlagConnection(ctx, models.LLMConnection{Name: "offline", Kind: models.KindBuiltin}, "builtin"); err != nil {
		t.Fatal(err)
	}
	key, _ := box.Seal("sk-test")
	if strings.Contains(key, "sk-test") {
		t.Fatal("the key is stored in clear")
	}
	if err := s.CreateConnection(ctx, &models.LLMConnection{Name: "fake", Kind: models.KindOpenAI, BaseURL: openAIURL, APIKeyEnc: key},
		[]string{"test-model", "off-model"}); err != nil {
		t.Fatal(err)
	}
	ms, _ := s.LLMModels(ctx)
	on, price := true, 1000.0
	for _, m := range ms {
		if m.Model == "test-model" {
			if _, err := s.UpdateLLMModel(ctx, m.ID, models.ModelPatch{Enabled: &on, InputPrice: &price, OutputPrice: &price}); err != nil {
				t.Fatal(err)
			}
		}
	}
	ms, _ = s.LLMModels(ctx)
	c := NewCatalog(s, box, &Builtin{})
	c.TTL = time.Millisecond
	return New(s, &Builtin{}, Options{Logger: quiet, Catalog: c}), c, ms
}

func modelID(ms []models.LLMModel, name string) int64 {
	for _, m := range ms {
		if m.Model == name {
			return m.ID
		}
	}
	return -1
}

func TestTurnsRunOnThePickedModelAndCountUsage(t *testing.T) {
	_, o := newFakeLLM(t, sse([]string{textChunk("From the fake."), finishChunk, usageChunk}, true))
	s := newStore(t)
	ann := newUser(t, s, "ann")
	svc, c, ms := newCatalogService(t, s, o.BaseURL)
	ctx := context.Background()

	choices, err := c.Choices(ctx)
	if err != nil || len(choices) != 2 || !choices[0].Default || choices[0].Connection != "offline" || choices[1].Name != "test-model" {
		t.Fatalf("choices %+v, %v", choices, err)
	}
	res, err := svc.Send(ctx, SendRequest{UserID: ann, AgentType: AgentRouter, Query: "hello there", Model: modelID(ms, "test-model")})
	if err != nil || res.Failed {
		t.Fatalf("%+v %v", res, err)
	}
	md := res.Reply.AgentResponse.Metadata
	if res.Reply.Content != "From the fake." || md["model"] != "test-model" || md["connection"] != "fake" || md["cost"] != 17*1000.0/1e6 {
		t.Fatalf("reply %q metadata %v", res.Reply.Content, md)
	}
	// A new chat without a model gets the default (a message in the same
	// chat would keep its last model: handlers' TestModelPreferences).
	res, err = svc.Send(ctx, SendRequest{UserID: ann, AgentType: AgentRouter, Query: "hello again"})
	if err != nil || res.Failed || !strings.HasPrefix(res.Reply.Content, "Hello!") || res.Reply.AgentResponse.Metadata["model"] != "builtin" {
		t.Fatalf("default model: %+v %v", res.Reply, err)
	}
	usage, _ := s.MonthUsage(ctx, ann, time.Now().UTC().Format("2006-01"))
	if len(usage) != 2 || usage[1].Model != "test-model" || usage[1].InputTokens != 12 || usage[1].OutputTokens != 5 ||
		usage[0].Model != "builtin" || usage[0].InputTokens != 2 {
		t.Fatalf("usage %+v", usage)
	}

	before := countMessages(t, s)
	for _, bad := range []int64{modelID(ms, "off-model"), 9999} {
		_, err = svc.Send(ctx, SendRequest{UserID: ann, AgentType: AgentRouter, Query: "hi", Model: bad})
		var in *InputError
		if !errors.As(err, &in) || !strings.Contains(in.Msg, "test-model") {
			t.Fatalf("model %d: %v", bad, err)
		}
	}
	if countMessages(t, s) != before {
		t.Fatal("a refused model stored a message")
	}
}

func TestOverBudgetKeepsTheMessageAndSaysWhy(t *testing.T) {
	s := newStore(t)
	ann := newUser(t, s, "ann")
	svc, _, _ := newCatalogService(t, s, "http://127.0.0.1:1/v1")
	ctx := context.Background()
	if err := s.SetBudget(ctx, models.BudgetDefault, nil, 10, 0); err != nil {
		t.Fatal(err)
	}
	res, err := svc.Send(ctx, SendRequest{UserID: ann, AgentType: AgentRouter, Query: "tell me a long story please"})
	if err != nil || res.Failed || res.OverBudget {
		t.Fatalf("first turn %+v %v", res, err)
	}
	res, err = svc.Send(ctx, SendRequest{UserID: ann, ExchangeID: res.Exchange.ID, AgentType: AgentRouter, Query: "more"})
	if err != nil || !res.Failed || !res.OverBudget || !strings.Contains(res.Reply.Content, "daily token budget (10 tokens)") ||
		!strings.Contains(res.Reply.Content, "resets at") {
		t.Fatalf("over budget %+v %v", res.Reply, err)
	}
	log := logOf(t, s, ann, res.Exchange.ID)
	if log[len(log)-2] != "user:more" {
		t.Fatalf("log %v", log)
	}
}
