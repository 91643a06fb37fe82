package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"palaver/models"
)

// Shared pieces of the JSON API: strict body decoding, path and query
// parameters, and the shapes more than one route answers with.

// apiDecode reads the request body as exactly one JSON value into dst. A body
// that is not JSON, has a wrongly typed field, or has something after the
// value is the client's error: 400 saying which. Unknown fields are ignored,
// so clients written for Galaxy's API may send more than Palaver reads.
func apiDecode(c *fiber.Ctx, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(c.Body()))
	if err := dec.Decode(dst); err != nil {
		return apiBadJSON(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fiber.NewError(fiber.StatusBadRequest, "The body must hold a single JSON value")
	}
	return nil
}

// apiBadJSON says what is wrong with a body in words a client can act on,
// without echoing the body back.
func apiBadJSON(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		what := "the body"
		if te.Field != "" {
			what = fmt.Sprintf("%q", te.Field)
		}
		return fiber.NewError(fiber.StatusBadRequest,
			fmt.Sprintf("Invalid JSON body: %s must be %s, not %s", what, apiJSONKind(te.Type), te.Value))
	}
	return fiber.NewError(fiber.StatusBadRequest, "Invalid JSON body: send one JSON value with Content-Type application/json")
}

// apiJSONKind names a Go type the way a JSON client thinks of it.
func apiJSONKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Pointer:
		return apiJSONKind(t.Elem())
	default:
		return "an object"
	}
}

// pathID reads a positive integer id from the path (HTML and API routes).
// Anything else names no row, so it answers 404 exactly as a missing row does.
func pathID(c *fiber.Ctx, name string) (int64, error) {
	id, err := strconv.ParseInt(c.Params(name), 10, 64)
	if err != nil || id <= 0 {
		return 0, fmt.Errorf("%s %q: %w", name, c.Params(name), models.ErrNotFound)
	}
	return id, nil
}

// apiQueryInt reads an optional integer query parameter within [minimum,
// maximum]; an absent or empty one gives nil. Anything else is a 400 that
// states the rule.
func apiQueryInt(c *fiber.Ctx, name string, minimum, maximum int64, rule string) (*int64, error) {
	raw := c.Query(name)
	if raw == "" {
		return nil, nil
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n < minimum || n > maximum {
		return nil, fiber.NewError(fiber.StatusBadRequest, fmt.Sprintf("%s must be %s", name, rule))
	}
	return &n, nil
}

// apiNotice is the answer of routes that only confirm what they did.
type apiNotice struct {
	Message string `json:"message"`
}

// apiMessage is one log entry as the API shows it. agent_type,
// agent_response and feedback are present on assistant replies only (feedback
// null while unrated, as Galaxy sends it); feedback_comment only when set.
// Error rows have a null seq: they are shown but are not part of the log.
type apiMessage struct {
	ID              int64                 `json:"id"`
	Seq             *int64                `json:"seq"`
	Role            string                `json:"role"`
	Content         string                `json:"content"`
	Timestamp       time.Time             `json:"timestamp"`
	AgentType       *string               `json:"agent_type,omitempty"`
	AgentResponse   *models.AgentResponse `json:"agent_response,omitempty"`
	Feedback        **int64               `json:"feedback,omitempty"` // nil: absent; &nil: null
	FeedbackComment *string               `json:"feedback_comment,omitempty"`
}

// newAPIMessage shapes m for the API; the item points into m.
func newAPIMessage(m *models.Message) apiMessage {
	it := apiMessage{
		ID: m.ID, Seq: m.Seq, Role: m.Role, Content: m.Content, Timestamp: m.CreatedAt,
		FeedbackComment: m.FeedbackComment,
	}
	if m.Role == models.RoleAssistant {
		it.AgentType, it.AgentResponse, it.Feedback = m.AgentType, m.AgentResponse, &m.Feedback
	}
	if m.Tool != nil && (m.Role == models.RoleToolCall || m.Role == models.RoleToolResult) {
		it.AgentResponse = toolMetadata(m, "")
	}
	return it
}

// toolMetadata is a tool entry's agent_response: a call's {call_id, tool,
// arguments, tier, state} (state: the latest, when known, else as the entry
// wrote it), a result's {call_id, outcome, output?, error?}.
func toolMetadata(m *models.Message, latest string) *models.AgentResponse {
	f := m.Tool
	meta := map[string]any{"call_id": f.CallID, "tool": f.Name}
	if m.Role == models.RoleToolCall {
		state := f.State
		if latest != "" {
			state = latest
		} else if state == "" {
			state = models.ToolDone
		}
		args := f.Arguments
		if args == nil {
			args = map[string]any{}
		}
		meta["arguments"], meta["tier"], meta["state"] = args, f.Tier, state
		if f.Tier == "" {
			meta["tier"] = models.ToolTierServer
		}
	} else {
		outcome := f.Outcome
		if outcome == "" {
			outcome = models.ToolDone
		}
		meta["outcome"] = outcome
		if f.Output != nil {
			meta["output"] = f.Output
		} else if f.Result != nil {
			meta["output"] = f.Result
		}
		if f.Error != "" {
			meta["error"] = f.Error
		}
	}
	return &models.AgentResponse{Content: m.Content, Suggestions: []models.Suggestion{}, Metadata: meta}
}

// apiQueryBool reads an optional true/false query parameter (also 1/0, as
// Python clients send them); an absent or empty one gives nil.
func apiQueryBool(c *fiber.Ctx, name string) (*bool, error) {
	raw := c.Query(name)
	if raw == "" {
		return nil, nil
	}
	b, err := strconv.ParseBool(raw)
	if err != nil {
		return nil, fiber.NewError(fiber.StatusBadRequest, fmt.Sprintf("%s must be true or false", name))
	}
	return &b, nil
}

// maxJobID is the longest job id, in bytes (ASCII characters).
const maxJobID = 128

// validJobID says whether id can name a job: an opaque string of 1 to 128
// printable ASCII characters (Galaxy sends encoded ids like
// "f2db41e1fa331b3e"; other systems send their own).
func validJobID(id string) bool {
	if id == "" || len(id) > maxJobID {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < ' ' || id[i] > '~' {
			return false
		}
	}
	return true
}

// apiQueryJobID reads the optional job_id query parameter; given but not a
// job id (empty included) is a 400.
func apiQueryJobID(c *fiber.Ctx) (*string, error) {
	if !c.Request().URI().QueryArgs().Has("job_id") {
		return nil, nil
	}
	id := c.Query("job_id")
	if !validJobID(id) {
		return nil, fiber.NewError(fiber.StatusBadRequest,
			fmt.Sprintf("job_id must be 1 to %d printable ASCII characters", maxJobID))
	}
	id = utils.CopyString(id) // outlives the request buffer
	return &id, nil
}
