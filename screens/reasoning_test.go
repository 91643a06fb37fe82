package screens_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"palaver/models"
	"palaver/screens"
	"palaver/views"
)

// A reply's reasoning is shown folded above it, with how long the model
// thought, and the reply names its model; a reply without reasoning has no
// Thinking section.
func TestReplyShowsReasoningAndModel(t *testing.T) {
	s, u := newStore(t)
	sc := screens.New(s, s, views.NewMarkdown())
	v := screens.Viewer{UserID: u.ID, CSRF: "tok"}
	reply := &models.Message{ID: 7, Role: models.RoleAssistant, Content: "The answer.", CreatedAt: time.Now(),
		AgentResponse: &models.AgentResponse{Content: "The answer.", Reasoning: "First <b>this</b>, then that.",
			Metadata: map[string]any{"model": "claude-test-1", "reasoning_ms": float64(3400)}}}
	e, ok := sc.Message(v, reply)
	if !ok || e.Reasoning != "First <b>this</b>, then that." || e.ThoughtFor != "3s" || e.Model != "claude-test-1" {
		t.Fatalf("entry %+v", e)
	}
	var b bytes.Buffer
	if err := views.Message(e).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	r := strings.Index(html, `data-testid="reasoning"`)
	body := strings.Index(html, `data-testid="message-body"`)
	if r < 0 || body < r || !strings.Contains(html, "First &lt;b&gt;this&lt;/b&gt;, then that.") ||
		!strings.Contains(html, "Thinking") || !strings.Contains(html, "3s") || strings.Contains(html, "<details open") ||
		!strings.Contains(html, `data-testid="message-model">claude-test-1<`) {
		t.Fatalf("rendered %s", html)
	}
	reply.AgentResponse.Reasoning = ""
	e, _ = sc.Message(v, reply)
	b.Reset()
	_ = views.Message(e).Render(context.Background(), &b)
	if strings.Contains(b.String(), `data-testid="reasoning"`) {
		t.Fatal("a Thinking section without reasoning")
	}
}
