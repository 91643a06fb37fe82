package handlers_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"palaver/agents"
	"palaver/handlers"
)

// lockedBuffer is a log buffer written from turns' goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A model endpoint's error body can name internal hosts: the user reads a
// plain sentence, the log has the status, the body and the address.
func TestModelServerErrorsAreShownPlainAndLoggedInFull(t *testing.T) {
	llm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "upstream 10.0.0.7 refused", http.StatusBadGateway)
	}))
	t.Cleanup(llm.Close)
	var logs lockedBuffer
	a := newTestApp(t, func(d *handlers.Deps) {
		d.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		d.Agents = agents.New(d.Store, &agents.OpenAI{
			BaseURL: llm.URL + "/v1", Model: "m", MaxAttempts: 2, Backoff: time.Millisecond,
		}, agents.Options{Logger: d.Logger, Hub: d.Hub})
	})
	ann := a.apiClient("ann")
	out := ann.apiChat("are you there?", 0)
	const plain = "The assistant could not answer: the model's server answered 502."
	if out.ErrorCode != 500 || out.ErrorMessage != plain || out.ExchangeID == nil {
		t.Fatalf("answer %+v", out)
	}
	msgs := ann.apiMessages(*out.ExchangeID)
	if len(msgs) != 2 || msgs[0].Content != "are you there?" || msgs[1].Role != "error" || msgs[1].Content != plain {
		t.Fatalf("log %+v", msgs)
	}
	_, history := ann.api(http.MethodGet, "/api/chat/history", nil)
	for what, text := range map[string]string{"answer": out.Response + out.ErrorMessage, "history": string(history)} {
		if strings.Contains(text, "10.0.0.7") {
			t.Errorf("the %s names the internal host: %s", what, text)
		}
	}
	for _, want := range []string{"502", "upstream 10.0.0.7 refused", llm.URL + "/v1"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, logs.String())
		}
	}
}
