package handlers

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"palaver/agents"
	"palaver/models"
)

// apiChatPayload is the input of POST /api/chat (Galaxy's ChatPayload). As in
// Galaxy, query, exchange_id, page_id, regenerate and after_seq may come as
// query parameters instead of in the body, and the body may then be absent;
// a field the body gives wins over its query parameter. The pointers tell a
// field left out from one given.
type apiChatPayload struct {
	Query      *string `json:"query"`
	Context    string  `json:"context"`
	ExchangeID *int64  `json:"exchange_id"`
	PageID     *int64  `json:"page_id"`
	Regenerate *bool   `json:"regenerate"`
	// AfterSeq is the last seq the client has seen: when the log holds
	// newer entries, the message forks there instead of landing after them.
	AfterSeq *int64 `json:"after_seq"`
	// Attachments are ids of the caller's files (POST /api/files) the
	// message holds, at most the per-message limit.
	Attachments []int64 `json:"attachments"`
	// ProjectID and Temporary are for a new chat: the project it starts
	// in, and whether it is temporary (issue 27).
	ProjectID *int64 `json:"project_id"`
	Temporary bool   `json:"temporary"`
	// Model is an id of GET /api/models (absent: the default).
	Model *int64 `json:"model"`
}

// apiChatResponse is Galaxy's ChatResponse. A refused query also carries the
// API's err_msg and err_code, so that clients of either convention read it.
type apiChatResponse struct {
	Response       string                `json:"response"`
	ErrorCode      int                   `json:"error_code"`
	ErrorMessage   string                `json:"error_message"`
	AgentResponse  *models.AgentResponse `json:"agent_response"`
	ExchangeID     *int64                `json:"exchange_id"`
	ProcessingTime float64               `json:"processing_time"`
	ErrMsg         string                `json:"err_msg,omitempty"`
	ErrCode        int                   `json:"err_code,omitempty"`
	// Forked says the turn ran in a new fork (exchange_id): the message was
	// written against an older view of the log (after_seq), or is an edit
	// or a regeneration.
	Forked bool `json:"forked,omitempty"`
}

// apiChat sends a message to an agent: it starts an exchange, continues one,
// or answers about a job (from the job's first answer unless regenerating).
func (h *Handlers) apiChat(c *fiber.Ctx) error {
	start := time.Now()
	req, err := apiChatRequest(c)
	if err == nil {
		err = h.checkAttachments(req.Attachments)
	}
	if err != nil {
		return apiChatRefused(c, start, err)
	}
	res, err := h.sendTurn(c, req)
	if errors.Is(err, agents.ErrTooManyTurns) {
		return apiChatRefused(c, start, err)
	}
	if err != nil {
		return err
	}
	return c.JSON(apiChatResult(res, start))
}

// apiChatResult shapes a finished turn as a ChatResponse.
func apiChatResult(res *agents.TurnResult, start time.Time) apiChatResponse {
	id := res.Exchange.ID
	if res.Paused { // the turn waits for tool answers: what was written so far, and what waits
		return apiChatResponse{Response: res.Text, ExchangeID: &id, Forked: res.Forked,
			AgentResponse: &models.AgentResponse{Content: res.Text, AgentType: res.Exchange.AgentType, Suggestions: []models.Suggestion{},
				Metadata: map[string]any{"paused": true, "pending": res.Pending}},
			ProcessingTime: time.Since(start).Seconds()}
	}
	out := apiChatResponse{Response: res.Reply.Content, AgentResponse: res.Reply.AgentResponse, ExchangeID: &id, Forked: res.Forked}
	if res.Failed {
		// The agent failing is the turn's outcome, not the client's error: the
		// user message is kept and Reply is the error row saying why.
		out.ErrorCode, out.ErrorMessage = fiber.StatusInternalServerError, res.Reply.Content
		if res.OverBudget { // Galaxy's shape: 200, the budget in error_code
			out.ErrorCode = fiber.StatusTooManyRequests
		}
	}
	out.ProcessingTime = time.Since(start).Seconds()
	return out
}

// apiChatRequest reads the body and the query parameters into a Send.
func apiChatRequest(c *fiber.Ctx) (agents.SendRequest, error) {
	p, err := apiChatInput(c)
	if err != nil {
		return agents.SendRequest{}, err
	}
	if err := agents.ValidateQuery(*p.Query); err != nil {
		return agents.SendRequest{}, err
	}
	jobID, err := apiQueryJobID(c)
	if err != nil {
		return agents.SendRequest{}, err
	}
	req := agents.SendRequest{
		UserID: currentUser(c).ID, JobID: jobID, Query: *p.Query, Context: p.Context,
		Regenerate: p.Regenerate != nil && *p.Regenerate,
		AgentType:  utils.CopyString(c.Query("agent_type", agents.AgentAuto)), // outlives the request buffer
	}
	if p.ExchangeID != nil {
		if *p.ExchangeID <= 0 { // names no exchange; null or absent starts one
			return agents.SendRequest{}, fmt.Errorf("exchange %d: %w", *p.ExchangeID, models.ErrNotFound)
		}
		req.ExchangeID = *p.ExchangeID
	}
	req.AfterSeq = p.AfterSeq
	if p.Model != nil {
		req.Model = *p.Model
	}
	req.Attachments = p.Attachments
	if p.ProjectID != nil || p.Temporary {
		if req.ExchangeID != 0 {
			return agents.SendRequest{}, &agents.InputError{Msg: "project_id and temporary are for a new chat: move a chat with PATCH /api/chat/exchange/{id}"}
		}
		if p.ProjectID != nil && *p.ProjectID <= 0 {
			return agents.SendRequest{}, fmt.Errorf("project %d: %w", *p.ProjectID, models.ErrNotFound)
		}
		req.ProjectID, req.Temporary = p.ProjectID, p.Temporary
	}
	if p.PageID != nil {
		if *p.PageID <= 0 { // names no page
			return agents.SendRequest{}, fmt.Errorf("page %d: %w", *p.PageID, models.ErrNotFound)
		}
		// The service looks the page up scoped to the user (another user's
		// or a deleted page: 404), runs the page assistant (auto picks it)
		// on the page's content, and refuses an exchange of another page.
		req.PageID = p.PageID
	}
	return req, nil
}

// apiChatInput decodes the body, when there is one, and fills each field it
// leaves out from its query parameter. Query is never nil afterwards (an
// empty query is ValidateQuery's to refuse).
func apiChatInput(c *fiber.Ctx) (apiChatPayload, error) {
	var p apiChatPayload
	if len(c.Body()) > 0 {
		if err := apiDecode(c, &p); err != nil {
			return p, err
		}
	}
	if p.Query == nil {
		q := utils.CopyString(c.Query("query")) // outlives the request buffer
		p.Query = &q
	}
	var err error
	for _, f := range []struct {
		name string
		dst  **int64
	}{{"exchange_id", &p.ExchangeID}, {"page_id", &p.PageID}, {"after_seq", &p.AfterSeq}} {
		if *f.dst == nil {
			if *f.dst, err = apiQueryInt(c, f.name, math.MinInt64, math.MaxInt64, "an integer"); err != nil {
				return p, err
			}
		}
	}
	if p.Regenerate == nil {
		if p.Regenerate, err = apiQueryBool(c, "regenerate"); err != nil {
			return p, err
		}
	}
	return p, nil
}

// apiChatRefused refuses input that cannot be sent (a body or a query
// parameter that does not parse, an empty or too long query: 400; the
// user's running turns at their limit: 429) with the ChatResponse shape
// API.md prescribes; nothing has been stored. Any other error (an exchange
// that is not the user's: 404) is returned as it is.
func apiChatRefused(c *fiber.Ctx, start time.Time, err error) error {
	r := refusalOf(err, fiber.StatusBadRequest, fiber.StatusTooManyRequests)
	if r == nil {
		return err
	}
	return r.onAPI(func(r *Refusal) error {
		return c.Status(r.Status).JSON(apiChatResponse{
			ErrorCode: r.Status, ErrorMessage: r.Reason,
			ErrMsg: r.Reason, ErrCode: r.Status,
			ProcessingTime: time.Since(start).Seconds(),
		})
	})
}
