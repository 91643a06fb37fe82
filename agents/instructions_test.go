package agents

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"palaver/models"
)

// TestComposedInstructionsReachTheModelInOrder: the person's instructions,
// the project's, the memory entries, then the log, in the system message
// the OpenAI-format fake receives; the reply records the project and the
// hash of that text, and the text is kept for its owner.
func TestComposedInstructionsReachTheModelInOrder(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	ann := newUser(t, s, "ann")
	f, o := newFakeLLM(t, sse([]string{textChunk("First."), finishChunk}, true))
	svc := New(s, o, Options{Logger: quiet})
	if _, err := s.SetInstructions(ctx, ann, "I keep bees.", "Answer in one line.", true); err != nil {
		t.Fatal(err)
	}
	p, err := s.CreateProject(ctx, ann, models.ProjectInput{Name: ptrTo("Hives"), Instructions: ptrTo("Talk about hives only.")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddMemory(ctx, ann, "Has three hives.", nil); err != nil {
		t.Fatal(err)
	}
	first, err := svc.Send(ctx, SendRequest{UserID: ann, Query: "earlier", ProjectID: &p.ID})
	if err != nil {
		t.Fatal(err)
	}
	nextChat(f)
	res, err := svc.Send(ctx, SendRequest{UserID: ann, ExchangeID: first.Exchange.ID, Query: "now"})
	if err != nil || res.Reply == nil {
		t.Fatalf("send: %+v, %v", res, err)
	}
	body := nextChat(f)
	sys := body.Messages[0].Content
	at := func(s string) int {
		i := strings.Index(sys, s)
		if i < 0 {
			t.Fatalf("system message lacks %q:\n%s", s, sys)
		}
		return i
	}
	if !(at("I keep bees.") < at("Answer in one line.") && at("Answer in one line.") < at("Talk about hives only.") &&
		at("Talk about hives only.") < at("- Has three hives.")) {
		t.Errorf("out of order:\n%s", sys)
	}
	var roles []string
	for _, m := range body.Messages {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, ",") != "system,user,assistant,user" || body.Messages[1].Content != "earlier" {
		t.Errorf("messages %v", roles)
	}
	in, _ := res.Reply.AgentResponse.Metadata["instructions"].(map[string]any)
	kept, err := s.MessageInstructions(ctx, ann, res.Reply.ID)
	if err != nil || !strings.Contains(sys, kept.Text) {
		t.Fatalf("kept text %+v, %v", kept, err)
	}
	sum := sha256.Sum256([]byte(kept.Text))
	if in["hash"] != hex.EncodeToString(sum[:]) || in["hash"] != kept.Hash || *(in["project_id"].(*int64)) != p.ID {
		t.Errorf("metadata %v, kept %s", in, kept.Hash)
	}
	bob := newUser(t, s, "bob")
	if _, err := s.MessageInstructions(ctx, bob, res.Reply.ID); err == nil {
		t.Error("another person read the instructions")
	}

	// Memory off for the project: the entries stay out.
	off := false
	if _, err := s.UpdateProject(ctx, ann, p.ID, models.ProjectInput{Memory: &off}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Send(ctx, SendRequest{UserID: ann, ExchangeID: first.Exchange.ID, Query: "again"}); err != nil {
		t.Fatal(err)
	}
	if sys := nextChat(f).Messages[0].Content; strings.Contains(sys, "three hives") || !strings.Contains(sys, "hives only") {
		t.Errorf("memory off, yet:\n%s", sys)
	}
}

// TestRememberSavesOnlyAfterApproval: the remember tool (confirm) writes a
// memory entry whose source is the chat once approved; denied, or in a
// temporary chat, nothing.
func TestRememberSavesOnlyAfterApproval(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	ann := newUser(t, s, "ann")
	svc := New(s, &Builtin{}, Options{Logger: quiet})
	res := pausedTurn(t, svc, SendRequest{UserID: ann, Query: "remember this: I like tea"})
	if mems, _ := s.Memories(ctx, ann); len(mems) != 0 {
		t.Fatalf("saved before approval: %+v", mems)
	}
	answer(t, svc, ann, res.Exchange.ID, ToolResult{CallID: res.Pending[0].CallID, Approved: yes()})
	mems, _ := s.Memories(ctx, ann)
	if len(mems) != 1 || mems[0].Content != "I like tea" || mems[0].Source != models.MemoryExchange || *mems[0].ExchangeID != res.Exchange.ID {
		t.Fatalf("after approval: %+v", mems)
	}
	res = pausedTurn(t, svc, SendRequest{UserID: ann, Query: "remember this: I hate coffee"})
	answer(t, svc, ann, res.Exchange.ID, ToolResult{CallID: res.Pending[0].CallID, Approved: no()})
	res = pausedTurn(t, svc, SendRequest{UserID: ann, Query: "remember this: secret", Temporary: true})
	answer(t, svc, ann, res.Exchange.ID, ToolResult{CallID: res.Pending[0].CallID, Approved: yes()})
	if mems, _ := s.Memories(ctx, ann); len(mems) != 1 {
		t.Fatalf("denied or temporary wrote memory: %+v", mems)
	}
}

// nextChat is the next request of a turn (the titler's are skipped).
func nextChat(f *fakeLLM) chatRequest {
	for {
		b := <-f.bodies
		if !strings.HasPrefix(b.Messages[0].Content, "You name conversations") {
			return b
		}
	}
}
