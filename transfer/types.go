package transfer

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The header of a Palaver export.
const (
	FormatName = "palaver-export"
	Version    = 1
)

// Roles of a log entry. These and the scopes are the store's values
// (models), written again here so that the format imports nothing; a test
// in models checks that the two lists agree, name for name.
const (
	RoleUser       = "user"
	RoleAssistant  = "assistant"
	RoleToolCall   = "tool_call"
	RoleToolResult = "tool_result"
	RoleError      = "error"
)

// Exchange scopes.
const (
	ScopeGeneral = "general"
	ScopePage    = "page"
	ScopeJob     = "job"
	// ScopeSubRun is an agent's delegated work, reached through its parent:
	// an export leaves sub-runs out, and Validate refuses one.
	ScopeSubRun = "subrun"
)

// Where a page revision came from.
const (
	EditUser    = "user"
	EditAgent   = "agent"
	EditRestore = "restore"
)

// Kinds of page proposal (a message's edit_mode).
const (
	EditFullReplacement = "full_replacement"
	EditSectionPatch    = "section_patch"
)

// Header is the first line of a Palaver export.
type Header struct {
	Format     string    `json:"format"`
	Version    int       `json:"version"`
	ExportedAt time.Time `json:"exported_at"`
}

// Exchange is one conversation with its whole log, as one export line
// ({"type": "exchange", …}) or as a ChatGPT conversation becomes it.
type Exchange struct {
	UID       UID     `json:"uid"`
	Title     string  `json:"title"`
	AgentType string  `json:"agent_type"`
	PageUID   *UID    `json:"page_uid,omitempty"` // scope "page": the page it is about
	JobID     *string `json:"job_id,omitempty"`   // scope "job"
	// ProjectUID names the project the chat is in (a project line earlier
	// in the file, or one the importing account has).
	ProjectUID *UID       `json:"project_uid,omitempty"`
	Scope      string     `json:"scope"`
	Pinned     bool       `json:"pinned"`
	Archived   bool       `json:"archived"`
	ForkedFrom *ForkRef   `json:"forked_from,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	UpdatedAt  time.Time  `json:"updated_at"` // last activity
	Messages   []*Message `json:"messages"`   // the log in order, error rows in their place
}

// ForkRef names the exchange a fork was made from and the seq it forked at:
// the fork's log holds a copy of that exchange's entries 0..Seq-1. It names
// the parent by uid, not id, so an export stays portable (the API's history
// item names it by id).
type ForkRef struct {
	ExchangeUID UID   `json:"exchange_uid"`
	Seq         int64 `json:"seq"`
}

// Message is one entry of an exchange's log.
type Message struct {
	UID       UID       `json:"uid"`
	Seq       *int64    `json:"seq"` // null exactly for error rows
	Role      string    `json:"role"`
	Content   string    `json:"content"`
	Timestamp time.Time `json:"timestamp"`
	AgentType *string   `json:"agent_type,omitempty"`
	// AgentResponse and Tool are JSON objects kept as they are (compacted
	// when written), so a field a later Palaver adds survives a round trip.
	AgentResponse json.RawMessage `json:"agent_response,omitempty"`
	Tool          json.RawMessage `json:"tool,omitempty"`
	EditMode      *string         `json:"edit_mode,omitempty"`
	Feedback      *int64          `json:"feedback,omitempty"` // 0 (down), 1 (up) or absent
	Comment       *string         `json:"comment,omitempty"`  // the feedback's comment
	// Attachments are the uids of the files the message holds, each
	// written as a file line before the exchange (issue 26).
	Attachments []UID `json:"attachments,omitempty"`

	assets []asset // a ChatGPT message's files, until the reader resolves them
}

// File is an attached file with its bytes, as one export line ({"type":
// "file", …}), written before the first exchange that holds it.
type File struct {
	UID         UID       `json:"uid"`
	Name        string    `json:"name"`
	ContentType string    `json:"content_type"`
	Size        int64     `json:"size"`
	SHA256      string    `json:"sha256"`
	CreatedAt   time.Time `json:"created_at"`
	Data        []byte    `json:"data"` // base64
}

// Validate checks that a file's bytes are what its line says.
func (f *File) Validate() error {
	sum := sha256.Sum256(f.Data)
	switch {
	case int64(len(f.Data)) != f.Size:
		return fmt.Errorf("file %s: size %d, but its data has %d bytes", f.UID, f.Size, len(f.Data))
	case hex.EncodeToString(sum[:]) != strings.ToLower(f.SHA256):
		return fmt.Errorf("file %s: its data does not have the sha256 its line gives", f.UID)
	}
	return nil
}

// Page is a Markdown page with its revisions, as one export line
// ({"type": "page", …}).
type Page struct {
	UID       UID         `json:"uid"`
	Title     string      `json:"title"`
	Content   string      `json:"content"`
	CreatedAt time.Time   `json:"created_at"`
	UpdatedAt time.Time   `json:"updated_at"`
	Revisions []*Revision `json:"revisions"` // oldest first
}

// Revision is one saved state of a page.
type Revision struct {
	UID        UID       `json:"uid"`
	Content    string    `json:"content"`
	EditSource string    `json:"edit_source"`
	MessageUID *UID      `json:"message_uid,omitempty"` // an agent revision's accepted proposal
	CreatedAt  time.Time `json:"created_at"`
}

// Item is what a reader yields: exactly one of its lines is set.
type Item struct {
	Exchange     *Exchange
	Page         *Page
	File         *File
	Project      *Project
	Instructions *Instructions
	Memory       *Memory
	// Where names the item's place in the file ("line 5", "conversation 3
	// (\"Trip plan\", id …)"), for an error the store finds later (a
	// page_uid that names no page) to say where it is.
	Where string
}

// maxJobID is the longest job id the API accepts.
const maxJobID = 128

// Validate checks what a store relies on: known roles, scopes and edit
// sources, seq null exactly for error rows and 0, 1, 2… otherwise, uids
// present, times set, feedback 0, 1 or absent, agent_response and tool JSON
// objects. It does not check that uids are unique across a file (the reader
// does) nor that page_uid and forked_from name something (the store knows).
func (e *Exchange) Validate() error {
	if e.UID.IsZero() {
		return errors.New("exchange has no uid")
	}
	if e.AgentType == "" {
		return errors.New("exchange has no agent_type")
	}
	switch e.Scope {
	case ScopeGeneral:
		if e.PageUID != nil || e.JobID != nil {
			return errors.New(`a "general" exchange has no page_uid or job_id`)
		}
	case ScopePage:
		if e.PageUID == nil || e.PageUID.IsZero() || e.JobID != nil {
			return errors.New(`a "page" exchange has a page_uid and no job_id`)
		}
	case ScopeJob:
		if e.JobID == nil || e.PageUID != nil {
			return errors.New(`a "job" exchange has a job_id and no page_uid`)
		}
		if err := checkJobID(*e.JobID); err != nil {
			return err
		}
	case ScopeSubRun:
		return errors.New(`a "subrun" exchange is never exported (it belongs to its parent's run)`)
	case "":
		return errors.New("exchange has no scope")
	default:
		return fmt.Errorf("unknown scope %q", clip(e.Scope))
	}
	if e.CreatedAt.IsZero() || e.UpdatedAt.IsZero() {
		return errors.New("exchange has no created_at or updated_at")
	}
	var next int64 // the seq the next non-error entry must have
	for i, m := range e.Messages {
		if m == nil {
			return fmt.Errorf("message %d is null", i+1)
		}
		if err := m.validate(next); err != nil {
			return fmt.Errorf("message %d: %w", i+1, err)
		}
		if m.Seq != nil {
			next++
		}
	}
	if f := e.ForkedFrom; f != nil {
		switch {
		case f.ExchangeUID.IsZero():
			return errors.New("forked_from has no exchange_uid")
		case f.ExchangeUID == e.UID:
			return errors.New("forked_from names the exchange itself")
		case f.Seq < 0:
			return fmt.Errorf("forked_from.seq %d is negative", f.Seq)
		case f.Seq > next:
			// A fork's log starts with a copy of its parent's 0..seq-1.
			return fmt.Errorf("forked_from.seq %d is past the exchange's own %d entries", f.Seq, next)
		}
	}
	return nil
}

func (m *Message) validate(wantSeq int64) error {
	if m.UID.IsZero() {
		return errors.New("no uid")
	}
	switch m.Role {
	case RoleUser, RoleAssistant, RoleToolCall, RoleToolResult:
		if m.Seq == nil {
			return fmt.Errorf("a %s entry has no seq (only error rows have none)", m.Role)
		}
		if *m.Seq != wantSeq {
			return fmt.Errorf("seq %d where %d was due (seqs go 0, 1, 2… in log order)", *m.Seq, wantSeq)
		}
	case RoleError:
		if m.Seq != nil {
			return errors.New("an error row has a seq (it must be null)")
		}
	case "":
		return errors.New("no role")
	default:
		return fmt.Errorf("unknown role %q", clip(m.Role))
	}
	if m.Timestamp.IsZero() {
		return errors.New("no timestamp")
	}
	if m.Feedback != nil && *m.Feedback != 0 && *m.Feedback != 1 {
		return fmt.Errorf("feedback %d (0, 1 or null)", *m.Feedback)
	}
	if m.EditMode != nil && *m.EditMode != EditFullReplacement && *m.EditMode != EditSectionPatch {
		return fmt.Errorf("unknown edit_mode %q", clip(*m.EditMode))
	}
	if !isObject(m.AgentResponse) {
		return errors.New("agent_response is not a JSON object")
	}
	if !isObject(m.Tool) {
		return errors.New("tool is not a JSON object")
	}
	return nil
}

// Validate checks a page the way Exchange.Validate checks an exchange.
func (p *Page) Validate() error {
	if p.UID.IsZero() {
		return errors.New("page has no uid")
	}
	if p.CreatedAt.IsZero() || p.UpdatedAt.IsZero() {
		return errors.New("page has no created_at or updated_at")
	}
	for i, r := range p.Revisions {
		if r == nil {
			return fmt.Errorf("revision %d is null", i+1)
		}
		if r.UID.IsZero() {
			return fmt.Errorf("revision %d has no uid", i+1)
		}
		switch r.EditSource {
		case EditUser, EditAgent, EditRestore:
		case "":
			return fmt.Errorf("revision %d has no edit_source", i+1)
		default:
			return fmt.Errorf("revision %d: unknown edit_source %q", i+1, clip(r.EditSource))
		}
		if r.MessageUID != nil && r.MessageUID.IsZero() {
			return fmt.Errorf("revision %d: message_uid is the nil UUID", i+1)
		}
		if r.CreatedAt.IsZero() {
			return fmt.Errorf("revision %d has no created_at", i+1)
		}
	}
	return nil
}

// isObject reports whether raw is absent or a JSON object.
func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	return len(raw) == 0 || raw[0] == '{'
}

func checkJobID(id string) error {
	if id == "" || len(id) > maxJobID {
		return fmt.Errorf("job_id of %d characters (1–%d)", len(id), maxJobID)
	}
	for i := 0; i < len(id); i++ {
		if id[i] < ' ' || id[i] > '~' { // as the API checks it
			return fmt.Errorf("job_id %q has a character that is not printable ASCII", clip(id))
		}
	}
	return nil
}
