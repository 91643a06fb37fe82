package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"palaver/models"
)

// titleTimeout bounds the wait for a title: it is a nicety.
const titleTimeout = time.Minute

// maxTitleLength bounds a title a model makes, in characters.
const maxTitleLength = 80

// titleFor asks for a better title of a conversation whose first turn was
// just answered, in the background: the reply is already out, and a
// failure only leaves the first message's title. It is a general or page
// chat's first answered turn, under the title made from its first message
// (not renamed), on a provider that makes titles: OpenAI's (the builtin's
// titles stay the first message's). The title is set only if the exchange
// still bears the old one when it comes, and without touching its activity
// time; the open tabs are told.
func (s *Service) titleFor(ex *models.Exchange, query *models.Message, res *TurnResult) {
	titler, ok := s.provider.(*OpenAI)
	if !ok || res == nil || res.Failed || res.Stopped || res.Cached || res.Reply == nil || query == nil ||
		ex.TurnCount != 1 || (ex.Scope != models.ScopeGeneral && ex.Scope != models.ScopePage) ||
		ex.Title != models.TitleFrom(query.Content) {
		return
	}
	was, reply := ex.Title, res.Reply.Content
	s.wg.Add(1)
	s.background.Add(1)
	go func() {
		defer s.wg.Done()
		defer s.background.Done()
		ctx, cancel := context.WithTimeout(s.bg, titleTimeout)
		defer cancel()
		made, err := titler.Title(ctx, query.Content, reply)
		if err != nil {
			s.opts.Logger.Warn("title: the model could not make one", "exchange", ex.ID, "err", err)
			return
		}
		title := cleanTitle(made)
		if title == "" || title == was {
			s.opts.Logger.Debug("title: nothing better", "exchange", ex.ID, "answer", made)
			return
		}
		fresh, changed, err := s.store.ReplaceTitle(ctx, ex.UserID, ex.ID, was, title)
		if err != nil {
			s.opts.Logger.Warn("title", "exchange", ex.ID, "err", err)
			return
		}
		if !changed {
			s.opts.Logger.Debug("title: renamed meanwhile, kept", "exchange", ex.ID)
			return
		}
		s.publishTurn(fresh)
	}()
}

// cleanTitle makes a model's answer a title: its first line, without a
// "Title:" label, quotes or a closing period, whitespace collapsed, at most
// maxTitleLength characters (cut at a word). "" when nothing is left.
func cleanTitle(s string) string {
	line := ""
	for l := range strings.SplitSeq(s, "\n") {
		if line = strings.TrimSpace(l); line != "" {
			break
		}
	}
	if label, rest, ok := strings.Cut(line, ":"); ok && strings.EqualFold(strings.TrimSpace(label), "title") {
		line = rest
	}
	line = strings.Join(strings.Fields(line), " ")
	const quotes = "\"'`*_“”‘’«»「」"
	for {
		trimmed := strings.TrimRight(strings.Trim(line, quotes+" "), ".")
		if trimmed == line {
			break
		}
		line = trimmed
	}
	line = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, line)
	if utf8.RuneCountInString(line) <= maxTitleLength {
		return line
	}
	r := []rune(line)[:maxTitleLength-1]
	if i := strings.LastIndex(string(r), " "); i > len(string(r))/2 {
		r = []rune(string(r)[:i])
	}
	return strings.TrimRight(string(r), " .,;:") + "…"
}

// titlePrompt asks for a title.
const titlePrompt = "You name conversations. Answer with a title of at most six words that says what this " +
	"conversation is about, in the language of the conversation, without quotes and without a final period."

// titleInput bounds what of the first turn the model reads for a title.
const titleInput = 2000

// Title asks the model for a short title of a conversation from its first
// turn: one small request, not streamed, not retried.
func (o *OpenAI) Title(ctx context.Context, query, reply string) (string, error) {
	body := chatRequest{Model: o.Model, MaxTokens: 32, Messages: []chatMessage{
		{Role: "system", Content: titlePrompt},
		{Role: "user", Content: "The user wrote:\n" + bound(query, titleInput) + "\n\nThe assistant answered:\n" + bound(reply, titleInput)},
	}}
	payload, err := json.Marshal(body)
	if err != nil {
		return "", err
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost,
		strings.TrimRight(o.BaseURL, "/")+"/chat/completions", bytes.NewReader(payload))
	if err != nil {
		return "", err
	}
	hreq.Header.Set("Content-Type", "application/json")
	if o.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+o.APIKey)
	}
	res, err := o.client().Do(hreq)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 2048))
		return "", &httpStatusError{Status: res.StatusCode, Body: strings.TrimSpace(string(b))}
	}
	var out struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(&out); err != nil {
		return "", fmt.Errorf("%w: %w", errBadChunk, err)
	}
	if out.Error != nil {
		return "", fmt.Errorf("%w: %s", errReported, out.Error.Message)
	}
	if len(out.Choices) == 0 {
		return "", errors.New("the model's answer has no choices")
	}
	return out.Choices[0].Message.Content, nil
}
