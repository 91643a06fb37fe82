package models

import (
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
)

// Roles of a log entry.
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
	// ScopeSubRun is an agent's delegated work (SubRun): never in a
	// person's history or search, reached through its parent.
	ScopeSubRun = "subrun"
)

// Turn states of an exchange.
const (
	TurnIdle    = "idle"
	TurnRunning = "running"
	TurnFailed  = "failed"
	// TurnPaused is no turn_status: it is how an idle exchange whose calls
	// wait (TurnWaiting) is shown (RunState).
	TurnPaused = "paused"
)

// RunState is the exchange's run state as clients see it: running, paused,
// idle or failed.
func (e *Exchange) RunState() string {
	if e.TurnWaiting && e.TurnStatus != TurnRunning {
		return TurnPaused
	}
	if e.TurnStatus == "" {
		return TurnIdle
	}
	return e.TurnStatus
}

// Feedback values, as Galaxy's API sends them.
const (
	FeedbackDown = 0
	FeedbackUp   = 1
)

// User is an account. The first one registered becomes admin.
type User struct {
	ID           int64     `gorm:"primaryKey"`
	Username     string    `gorm:"not null"`
	UsernameKey  *string   // accounts.Key(Username), unique; NULL for a later account of two whose names clashed before keys (UsernameClashes)
	PasswordHash string    `gorm:"not null"`
	IsAdmin      bool      `gorm:"not null"`
	CreatedAt    time.Time `gorm:"not null"`
	Disabled     bool      `gorm:"not null"` // cannot sign in; API keys refused
	SessionEpoch int64     `gorm:"not null"` // sessions signed in under another epoch are over
	// DefaultModelID is the model the person picks by default (issue 29);
	// nil: the administrators' default.
	DefaultModelID *int64
	// SearchReasoning lets search match replies' reasoning too (opt-in).
	SearchReasoning bool `gorm:"not null"`
}

// APIKey is a hashed key that authenticates JSON API calls as its user.
type APIKey struct {
	ID         int64     `gorm:"primaryKey"`
	UserID     int64     `gorm:"not null"`
	Name       string    `gorm:"not null"` // the owner's label for it
	KeyHash    string    `gorm:"not null"`
	CreatedAt  time.Time `gorm:"not null"`
	LastUsedAt *time.Time
}

// TableName keeps GORM from naming the table "api_keys" differently.
func (APIKey) TableName() string { return "api_keys" }

// Page is a Markdown document a user edits with an agent's help.
type Page struct {
	ID        int64     `gorm:"primaryKey"`
	UID       string    `gorm:"column:uid"` // stable identity (exports, imports): set once by BeforeCreate
	UserID    int64     `gorm:"not null"`
	Title     string    `gorm:"not null"`
	Content   string    `gorm:"not null"`
	CreatedAt time.Time `gorm:"not null"`
	UpdatedAt time.Time `gorm:"not null"`
	DeletedAt *time.Time
}

// PageRevision is one saved state of a page and where it came from.
type PageRevision struct {
	ID         int64     `gorm:"primaryKey"`
	UID        string    `gorm:"column:uid"` // stable identity (exports, imports): set once by BeforeCreate
	PageID     int64     `gorm:"not null"`
	Content    string    `gorm:"not null"`
	EditSource string    `gorm:"not null"`
	MessageID  *int64    // the accepted proposal, for agent revisions
	CreatedAt  time.Time `gorm:"not null"`
}

// Exchange is one conversation: a header row over an append-only log of
// messages, plus the lease of the turn that may be running on it.
type Exchange struct {
	ID              int64  `gorm:"primaryKey"`
	UID             string `gorm:"column:uid"` // stable identity (exports, imports): set once by BeforeCreate
	UserID          int64  `gorm:"not null"`
	Scope           string `gorm:"not null"`
	PageID          *int64
	JobID           *string // a job chat's opaque job id (Galaxy's encoded ids)
	Title           string  `gorm:"not null"`
	AgentType       string  `gorm:"not null"` // the agent used last
	ForkedFromID    *int64
	ForkedAtSeq     *int64
	Pinned          bool      `gorm:"not null"`
	Archived        bool      `gorm:"not null"`
	TurnCount       int64     `gorm:"not null"` // user messages in the log
	CreatedAt       time.Time `gorm:"not null"`
	UpdatedAt       time.Time `gorm:"not null"` // last activity
	TurnStatus      string    `gorm:"not null"`
	TurnOwner       *string
	TurnHeartbeatAt *time.Time
	TurnAttempts    int64 `gorm:"not null"`
	// TurnWaiting says the log ends with tool calls that wait for a person
	// or the browser: the turn is paused (TurnStatus idle, no lease).
	TurnWaiting bool `gorm:"not null"`
	// TurnActiveMS is how long the turn has run so far, in milliseconds,
	// kept when it pauses: the turn timeout counts running time only, so
	// a resumed turn gets what is left of it.
	TurnActiveMS int64 `gorm:"column:turn_active_ms;not null"`
	// ProjectID is the project the chat belongs to, if any (a fork starts
	// in its parent's).
	ProjectID *int64
	// Temporary chats stay out of history, search and memory, and go
	// TemporaryRetention after their last activity (UpdatedAt).
	Temporary bool `gorm:"not null"`
	// Cancelled, on the header StartTurn returns, are the results it wrote
	// for calls that waited (the person moved on): for the live tabs.
	Cancelled []*Message `gorm:"-"`
	// ParentID and ParentSeq, for a sub-run (ScopeSubRun), are the exchange
	// and the entry of its log that spawned it.
	ParentID  *int64
	ParentSeq *int64
	// StoredBytes is what the log stores (content, agent_response and tool
	// JSON, in UTF-8 bytes), kept by database triggers: read-only here.
	StoredBytes int64 `gorm:"->;not null"`
	// FirstQueryID, FirstReplyID and LastReplyID name the log's first user
	// message, first reply and latest reply, which the history lists show
	// (migration 00011): kept by database triggers and the fork's copy,
	// read-only here.
	FirstQueryID *int64 `gorm:"->"`
	FirstReplyID *int64 `gorm:"->"`
	LastReplyID  *int64 `gorm:"->"`
}

// Message is one entry of an exchange's log. Seq is nil for error rows.
type Message struct {
	ID              int64  `gorm:"primaryKey"`
	UID             string `gorm:"column:uid"` // stable identity (exports, imports): set once by BeforeCreate
	ExchangeID      int64  `gorm:"not null"`
	Seq             *int64 // position in the log; nil for error rows
	Role            string `gorm:"not null"`
	Content         string `gorm:"not null"`
	AgentType       *string
	AgentResponse   *AgentResponse `gorm:"type:text;serializer:json"`
	Tool            *ToolFields    `gorm:"type:text;serializer:json"`
	EditMode        *string        // the proposal's kind, for page_assistant proposals
	Feedback        *int64         // FeedbackDown, FeedbackUp or nil
	FeedbackComment *string
	CreatedAt       time.Time `gorm:"not null"`
	// CopyOf is set on an entry a fork copied from its parent: the original
	// row it copies (forks.go). Search finds the original only; nil for an
	// entry written in this exchange, or a copy promoted when its original
	// was deleted.
	CopyOf *int64
}

// AgentResponse is what an agent returned for a turn, in Galaxy's shape.
type AgentResponse struct {
	Content     string         `json:"content"`
	AgentType   string         `json:"agent_type"`
	Confidence  string         `json:"confidence"`
	Suggestions []Suggestion   `json:"suggestions"`
	Metadata    map[string]any `json:"metadata"`
	Reasoning   string         `json:"reasoning,omitempty"`
}

// Suggestion is an action an agent offers alongside its answer.
type Suggestion struct {
	ActionType  string         `json:"action_type"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters,omitempty"`
	Confidence  string         `json:"confidence,omitempty"`
	Priority    int            `json:"priority,omitempty"`
}

// ToolFields describe a tool_call or tool_result entry. A call's state
// changes by appending: a later tool_call with the same CallID (approved:
// running), then its tool_result (Outcome).
type ToolFields struct {
	CallID    string         `json:"call_id"`
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments,omitempty"`
	Result    any            `json:"result,omitempty"`
	Tier      string         `json:"tier,omitempty"`    // a call's: ToolTierServer or ToolTierBrowser
	State     string         `json:"state,omitempty"`   // a call's state as this entry wrote it
	Outcome   string         `json:"outcome,omitempty"` // a result's: done, denied, cancelled or failed
	Output    any            `json:"output,omitempty"`  // a result's output (bounded)
	Error     string         `json:"error,omitempty"`   // why a result is not done
	By        string         `json:"by,omitempty"`      // who decided: "person", "policy", "system"
}

// ProposalRejection records that a person dismissed a proposal.
type ProposalRejection struct {
	MessageID int64     `gorm:"primaryKey;autoIncrement:false"`
	UserID    int64     `gorm:"not null"`
	CreatedAt time.Time `gorm:"not null"`
}

// newUID is a new stable identity: a time-ordered UUID (v7), so that rows
// made one after the other sort near each other in the uid indexes.
func newUID() string { return uuid.Must(uuid.NewV7()).String() }

// BeforeCreate gives a new exchange its uid.
func (e *Exchange) BeforeCreate(*gorm.DB) error { e.UID = orNewUID(e.UID); return nil }

// BeforeCreate gives a new message its uid.
func (m *Message) BeforeCreate(*gorm.DB) error { m.UID = orNewUID(m.UID); return nil }

// BeforeCreate gives a new page its uid.
func (p *Page) BeforeCreate(*gorm.DB) error { p.UID = orNewUID(p.UID); return nil }

// BeforeCreate gives a new revision its uid.
func (r *PageRevision) BeforeCreate(*gorm.DB) error { r.UID = orNewUID(r.UID); return nil }

// orNewUID keeps a uid given by the caller (an import) and makes one
// otherwise.
func orNewUID(uid string) string {
	if uid != "" {
		return uid
	}
	return newUID()
}
