package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"palaver/models"
)

// ListModels asks a connection's server which models it offers: GET
// /models of an OpenAI-compatible server, GET /v1/models of Anthropic's.
// A refusal (a key without the permission, say) comes back as an
// *InputError quoting the server, for the administrator to read.
func ListModels(ctx context.Context, kind, baseURL, apiKey string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	url := strings.TrimRight(baseURL, "/") + "/models"
	if kind == models.KindAnthropic {
		url = strings.TrimSuffix((&Anthropic{BaseURL: baseURL}).endpoint(), "/messages") + "/models?limit=1000"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, &InputError{Msg: "The base URL is not a URL: " + err.Error()}
	}
	if kind == models.KindAnthropic {
		req.Header.Set("anthropic-version", anthropicVersion)
		if apiKey != "" {
			req.Header.Set("x-api-key", apiKey)
		}
	} else if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	res, err := (&OpenAI{}).client().Do(req)
	if err != nil {
		return nil, &InputError{Msg: "Listing the connection's models failed: the server could not be reached"}
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 4<<20))
	if res.StatusCode != http.StatusOK {
		return nil, &InputError{Msg: fmt.Sprintf("Listing the connection's models failed: the server answered %d: %.300s",
			res.StatusCode, strings.TrimSpace(string(body)))}
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, &InputError{Msg: "Listing the connection's models failed: the answer is not a model list"}
	}
	out := make([]string, 0, len(list.Data))
	for _, d := range list.Data {
		if d.ID != "" {
			out = append(out, d.ID)
		}
	}
	return out, nil
}
