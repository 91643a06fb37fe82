package transfer

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Projects, the person's instructions and memory (issue 27) in an export.
// An export written before them has none of these lines, and imports as
// it always did.

// The limits of projects, instructions and memory: the API's (models).
const (
	MaxProjectName  = 200
	MaxInstructions = 20_000
	MaxMemory       = 2_000
	MaxProjectFiles = 10_000 // file uids one project line names
)

// Memory sources.
const (
	MemoryManual   = "manual"
	MemoryExchange = "exchange"
)

// Project is one of the person's projects, as one export line ({"type":
// "project", …}), written before the exchanges in it; a nested project
// after its parent.
type Project struct {
	UID          UID    `json:"uid"`
	Name         string `json:"name"`
	Instructions string `json:"instructions"`
	ParentUID    *UID   `json:"parent_uid,omitempty"`
	Memory       bool   `json:"memory"`               // memory entries go into its chats' context
	AgentType    string `json:"agent_type,omitempty"` // the agent a new chat in it starts with
	// FileUIDs are the files it holds as its knowledge, in order: file
	// lines written before it (or files the account has).
	FileUIDs  []UID     `json:"file_uids,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Instructions are the person's own instructions ("About me / How to
// answer") and the account's memory switch: at most one line
// ({"type": "instructions", …}).
type Instructions struct {
	About     string    `json:"about"`
	Style     string    `json:"style"`
	Memory    bool      `json:"memory"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Memory is one entry of the person's memory ({"type": "memory", …}),
// written after the exchanges, so that the chat it came from is known.
type Memory struct {
	UID         UID       `json:"uid"`
	Content     string    `json:"content"`
	Source      string    `json:"source"`                 // MemoryManual or MemoryExchange
	ExchangeUID *UID      `json:"exchange_uid,omitempty"` // the chat it came from, while it existed
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// Validate checks a project line.
func (p *Project) Validate() error {
	switch {
	case p.UID.IsZero():
		return errors.New("project has no uid")
	case p.ParentUID != nil && (p.ParentUID.IsZero() || *p.ParentUID == p.UID):
		return errors.New("project's parent_uid is empty or the project itself")
	case p.CreatedAt.IsZero() || p.UpdatedAt.IsZero():
		return errors.New("project has no created_at or updated_at")
	case len(p.FileUIDs) > MaxProjectFiles:
		return fmt.Errorf("project holds %d files: at most %d", len(p.FileUIDs), MaxProjectFiles)
	}
	for _, u := range p.FileUIDs {
		if u.IsZero() {
			return errors.New("project's file_uids name the nil UUID")
		}
	}
	return nil
}

// Validate checks a memory line.
func (m *Memory) Validate() error {
	switch {
	case m.UID.IsZero():
		return errors.New("memory entry has no uid")
	case m.Source != MemoryManual && m.Source != MemoryExchange:
		return fmt.Errorf("memory entry: unknown source %q", clip(m.Source))
	case m.ExchangeUID != nil && m.ExchangeUID.IsZero():
		return errors.New("memory entry: exchange_uid is the nil UUID")
	case m.CreatedAt.IsZero():
		return errors.New("memory entry has no created_at")
	}
	return nil
}

// cleanProject makes a project's text storable and checks the API's limits.
func (o *Options) cleanProject(p *Project) (int64, error) {
	p.Name, p.Instructions, p.AgentType = strings.TrimSpace(cleanText(p.Name)), cleanText(p.Instructions), cleanText(p.AgentType)
	p.CreatedAt, p.UpdatedAt = p.CreatedAt.UTC(), p.UpdatedAt.UTC()
	if utf8.RuneCountInString(p.Name) == 0 {
		return 0, errors.New("project has no name")
	}
	if err := checkChars("the project's name", p.Name, MaxProjectName); err != nil {
		return 0, err
	}
	if err := checkChars("the project's instructions", p.Instructions, MaxInstructions); err != nil {
		return 0, err
	}
	if p.AgentType != "" {
		if err := o.checkAgentType("the project's agent_type", p.AgentType); err != nil {
			return 0, err
		}
	}
	return int64(rowBytes + len(p.Name) + len(p.Instructions)), nil
}

// cleanInstructions is cleanProject for the account's instructions.
func (o *Options) cleanInstructions(in *Instructions) (int64, error) {
	in.About, in.Style, in.UpdatedAt = cleanText(in.About), cleanText(in.Style), in.UpdatedAt.UTC()
	if err := checkChars("about", in.About, MaxInstructions); err != nil {
		return 0, err
	}
	if err := checkChars("style", in.Style, MaxInstructions); err != nil {
		return 0, err
	}
	return int64(rowBytes + len(in.About) + len(in.Style)), nil
}

// cleanMemory is cleanProject for a memory entry.
func (o *Options) cleanMemory(m *Memory) (int64, error) {
	m.Content = strings.TrimSpace(cleanText(m.Content))
	m.CreatedAt, m.UpdatedAt = m.CreatedAt.UTC(), m.UpdatedAt.UTC()
	if m.UpdatedAt.IsZero() {
		m.UpdatedAt = m.CreatedAt
	}
	if utf8.RuneCountInString(m.Content) == 0 {
		return 0, errors.New("memory entry has no content")
	}
	if err := checkChars("the memory entry", m.Content, MaxMemory); err != nil {
		return 0, err
	}
	return int64(rowBytes + len(m.Content)), nil
}

type projectLine struct {
	Type string `json:"type"`
	*Project
}

type instructionsLine struct {
	Type string `json:"type"`
	*Instructions
}

type memoryLine struct {
	Type string `json:"type"`
	*Memory
}

// WriteProject writes one project line: before the exchanges in it, and
// after its parent.
func (w *Writer) WriteProject(p *Project) error {
	if err := w.write(projectLine{"project", p}); err != nil {
		return fmt.Errorf("write project %s: %w", p.UID, err)
	}
	return nil
}

// WriteInstructions writes the account's instructions line.
func (w *Writer) WriteInstructions(in *Instructions) error {
	if err := w.write(instructionsLine{"instructions", in}); err != nil {
		return fmt.Errorf("write instructions: %w", err)
	}
	return nil
}

// WriteMemory writes one memory line, after the exchanges.
func (w *Writer) WriteMemory(m *Memory) error {
	if err := w.write(memoryLine{"memory", m}); err != nil {
		return fmt.Errorf("write memory %s: %w", m.UID, err)
	}
	return nil
}
