package agents

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"palaver/models"
)

func attachmentsFixture() []models.FileWithData {
	w, h := int64(2), int64(1)
	return []models.FileWithData{
		{File: models.File{Name: "dot.png", ContentType: "image/png", Kind: models.FileImage, Size: 5, Width: &w, Height: &h}, Data: []byte("\x89PNG!")},
		{File: models.File{Name: "notes.md", ContentType: "text/plain; charset=utf-8", Kind: models.FileText, Size: 24}, Data: []byte("# Title\nsecond\nthird ```\n")},
		{File: models.File{Name: "a.zip", ContentType: "application/zip", Kind: models.FileOther, Size: 9}, Data: []byte("PK\x03\x04zzzzz")},
	}
}

func TestBuiltinSaysWhatWasAttached(t *testing.T) {
	resp, err := (&Builtin{}).Execute(context.Background(), Request{AgentType: AgentRouter, Query: "what is this?",
		Attachments: attachmentsFixture()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"You attached dot.png (image/png, 5 bytes, 2×1)",
		"You attached notes.md (text/plain, 24 bytes), 3 lines; first line: # Title",
		"You attached a.zip (application/zip, 9 bytes)",
	} {
		if !strings.Contains(resp.Content, want) {
			t.Errorf("reply %q lacks %q", resp.Content, want)
		}
	}
}

// TestOpenAIVisionRequest: the user message goes as parts, the text with
// the text file fenced and headed by its name (cut at FileTextChars, said
// so) and the other file named, then the image as a data URL.
func TestOpenAIVisionRequest(t *testing.T) {
	bodies := make(chan []byte, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies <- b
		sse([]string{textChunk("ok"), finishChunk}, true)(w, r)
	}))
	defer srv.Close()
	o := &OpenAI{BaseURL: srv.URL + "/v1", Model: "m", Backoff: time.Millisecond, FileTextChars: 10}
	if _, err := o.Execute(context.Background(), Request{AgentType: AgentRouter, Query: "look", Attachments: attachmentsFixture()}, nil); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(<-bodies, &body); err != nil {
		t.Fatal(err)
	}
	last := body.Messages[len(body.Messages)-1]
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if err := json.Unmarshal(last.Content, &parts); err != nil || len(parts) != 2 {
		t.Fatalf("content %s: %v", last.Content, err)
	}
	text := parts[0].Text
	for _, want := range []string{"look", "notes.md:\n```\n# Title\nse\n```", "notes.md was truncated: the first 10 of its 25 characters", "a.zip"} {
		if !strings.Contains(text, want) {
			t.Errorf("text part %q lacks %q", text, want)
		}
	}
	if parts[1].Type != "image_url" || parts[1].ImageURL.URL != "data:image/png;base64,iVBORyE=" {
		t.Fatalf("image part %+v", parts[1])
	}
	// A message without images stays a plain string.
	if _, err := o.Execute(context.Background(), Request{AgentType: AgentRouter, Query: "plain"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(<-bodies, &body); err != nil || string(body.Messages[len(body.Messages)-1].Content) != `"plain"` {
		t.Fatalf("plain message %s %v", body.Messages[len(body.Messages)-1].Content, err)
	}
}

// TestOpenAIPDFToldOnlyItsName: a PDF's text is not extracted; the model
// reads the message and the PDF's name, and nothing of its bytes, type or
// size, through the OpenAI-format request.
func TestOpenAIPDFToldOnlyItsName(t *testing.T) {
	bodies := make(chan []byte, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies <- b
		sse([]string{textChunk("ok"), finishChunk}, true)(w, r)
	}))
	defer srv.Close()
	pdf := []byte("%PDF-1.4\n1 0 obj << >> stream\nBT (Quarterly secret figures) Tj ET\nendstream endobj\n%%EOF\n")
	files := []models.FileWithData{{File: models.File{Name: "report.pdf", ContentType: "application/pdf", Kind: models.FilePDF,
		Size: int64(len(pdf))}, Data: pdf}}
	o := &OpenAI{BaseURL: srv.URL + "/v1", Model: "m", Backoff: time.Millisecond}
	if _, err := o.Execute(context.Background(), Request{AgentType: AgentRouter, Query: "summarise it", Attachments: files}, nil); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(<-bodies, &body); err != nil {
		t.Fatal(err)
	}
	var text string // no image: the message is a plain string
	if err := json.Unmarshal(body.Messages[len(body.Messages)-1].Content, &text); err != nil {
		t.Fatalf("content %s: %v", body.Messages[len(body.Messages)-1].Content, err)
	}
	if !strings.Contains(text, "summarise it") || !strings.Contains(text, "report.pdf") {
		t.Fatalf("the model reads %q", text)
	}
	for _, leak := range []string{"Quarterly", "PDF-1.4", "application/pdf", strconv.Itoa(len(pdf))} {
		if strings.Contains(text, leak) {
			t.Errorf("the model reads %q, which holds %q", text, leak)
		}
	}
}
