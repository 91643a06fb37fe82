package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gofiber/fiber/v2"

	"palaver/agents"
	"palaver/models"
)

// Projects, the person's instructions and memory (issue 27), as the JSON
// API shows them.

// apiProject is a project as the API shows it.
type apiProject struct {
	ID            int64     `json:"id"`
	UID           string    `json:"uid"`
	Name          string    `json:"name"`
	Instructions  string    `json:"instructions"`
	ParentID      *int64    `json:"parent_id"`
	Memory        bool      `json:"memory"`
	AgentType     string    `json:"agent_type"`
	DefaultModel  *int64    `json:"default_model"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
	ExchangeCount int64     `json:"exchange_count"`
}

func newAPIProject(p *models.ProjectSummary) apiProject {
	return apiProject{ID: p.ID, UID: p.UID, Name: p.Name, Instructions: p.Instructions, ParentID: p.ParentID,
		Memory: p.Memory, AgentType: p.AgentType, DefaultModel: p.DefaultModelID, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt, ExchangeCount: p.ExchangeCount}
}

// optionalID is a JSON field that may be absent, null or an id: Set tells
// absent from null.
type optionalID struct {
	Set bool
	ID  *int64
}

func (o *optionalID) UnmarshalJSON(b []byte) error {
	o.Set = true
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	return json.Unmarshal(b, &o.ID)
}

// orZero is the id as models.ProjectInput takes a change: nil when absent,
// 0 for null.
func (o optionalID) orZero() *int64 {
	if !o.Set {
		return nil
	}
	if o.ID == nil {
		return new(int64)
	}
	return o.ID
}

// apiProjectPayload is the body of POST and PATCH /api/projects.
type apiProjectPayload struct {
	Name         *string    `json:"name"`
	Instructions *string    `json:"instructions"`
	ParentID     optionalID `json:"parent_id"`
	Memory       *bool      `json:"memory"`
	AgentType    *string    `json:"agent_type"`
	// DefaultModel is an id of GET /api/models the project's chats answer
	// with unless one is picked; null clears it.
	DefaultModel optionalID `json:"default_model"`
}

func (p apiProjectPayload) input() (models.ProjectInput, error) {
	if p.AgentType != nil {
		if err := agents.CheckProjectAgent(*p.AgentType); err != nil {
			return models.ProjectInput{}, err
		}
	}
	return models.ProjectInput{Name: p.Name, Instructions: p.Instructions, ParentID: p.ParentID.orZero(),
		Memory: p.Memory, AgentType: p.AgentType, DefaultModel: p.DefaultModel.orZero()}, nil
}

// checkModel refuses a model that is not one people may pick (400 naming
// the choices); 0 (none) passes.
func (h *Handlers) checkModel(c *fiber.Ctx, id *int64) error {
	if id == nil || *id == 0 {
		return nil
	}
	cat := h.agents.Catalog()
	if cat == nil {
		return refuse(fiber.StatusBadRequest, "This server offers no choice of models.")
	}
	return cat.Check(c.UserContext(), *id)
}

// apiProjects lists the user's projects.
func (h *Handlers) apiProjects(c *fiber.Ctx) error {
	ps, err := h.store.Projects(c.UserContext(), currentUser(c).ID)
	if err != nil {
		return err
	}
	out := make([]apiProject, len(ps))
	for i := range ps {
		out[i] = newAPIProject(&ps[i])
	}
	return c.JSON(out)
}

// apiProjectCreate makes a project: 201.
func (h *Handlers) apiProjectCreate(c *fiber.Ctx) error {
	var p apiProjectPayload
	if err := apiDecode(c, &p); err != nil {
		return err
	}
	if err := h.checkModel(c, p.DefaultModel.orZero()); err != nil {
		return err
	}
	in, err := p.input()
	if err != nil {
		return err
	}
	pr, err := h.store.CreateProject(c.UserContext(), currentUser(c).ID, in)
	if err != nil {
		return err
	}
	h.publishProjects(pr.UserID)
	return c.Status(fiber.StatusCreated).JSON(newAPIProject(pr))
}

// apiProject answers one of the user's projects.
func (h *Handlers) apiProject(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	pr, err := h.store.Project(c.UserContext(), currentUser(c).ID, id)
	if err != nil {
		return err
	}
	return c.JSON(newAPIProject(pr))
}

// apiProjectUpdate changes one of the user's projects.
func (h *Handlers) apiProjectUpdate(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	var p apiProjectPayload
	if err := apiDecode(c, &p); err != nil {
		return err
	}
	if err := h.checkModel(c, p.DefaultModel.orZero()); err != nil {
		return err
	}
	in, err := p.input()
	if err != nil {
		return err
	}
	pr, err := h.store.UpdateProject(c.UserContext(), currentUser(c).ID, id, in)
	if err != nil {
		return err
	}
	h.publishProjects(pr.UserID)
	return c.JSON(newAPIProject(pr))
}

// apiProjectDeleted is the answer of DELETE /api/projects/{id}.
type apiProjectDeleted struct {
	Message string `json:"message"`
	Moved   int64  `json:"moved"`
	Deleted int64  `json:"deleted"`
}

// apiProjectDelete deletes one of the user's projects; ?chats=keep (the
// default) moves its chats out, ?chats=delete deletes them.
func (h *Handlers) apiProjectDelete(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	chats := c.Query("chats", "keep")
	if chats != "keep" && chats != "delete" {
		return fiber.NewError(fiber.StatusBadRequest, `chats must be "keep" or "delete"`)
	}
	moved, deleted, err := h.store.DeleteProject(c.UserContext(), currentUser(c).ID, id, chats == "delete")
	if err != nil {
		return err
	}
	h.publishProjects(currentUser(c).ID)
	return c.JSON(apiProjectDeleted{Message: projectDeletedMessage(moved, deleted), Moved: moved, Deleted: deleted})
}

// projectDeletedMessage says what a project's deletion did to its chats.
func projectDeletedMessage(moved, deleted int64) string {
	switch {
	case deleted > 0:
		return fmt.Sprintf("Project deleted with its %s.", plural(deleted, "chat"))
	case moved > 0:
		return fmt.Sprintf("Project deleted; its %s moved out.", plural(moved, "chat"))
	}
	return "Project deleted."
}

func plural(n int64, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// projectParam reads ?project_id=, which must name one of the user's
// projects (another's, or none: 404).
func (h *Handlers) projectParam(c *fiber.Ctx) (*int64, error) {
	id, err := apiQueryInt(c, "project_id", 1, 1<<62, "a project's id")
	if err != nil || id == nil {
		return nil, err
	}
	if _, err := h.store.Project(c.UserContext(), currentUser(c).ID, *id); err != nil {
		return nil, err
	}
	return id, nil
}

// apiInstructions is the person's own instructions.
type apiInstructions struct {
	About  string `json:"about"`
	Style  string `json:"style"`
	Memory *bool  `json:"memory,omitempty"` // the account-wide memory switch
}

// apiAccountInstructions answers the user's own instructions.
func (h *Handlers) apiAccountInstructions(c *fiber.Ctx) error {
	ai, err := h.store.Instructions(c.UserContext(), currentUser(c).ID)
	if err != nil {
		return err
	}
	return c.JSON(apiInstructions{About: ai.About, Style: ai.Style, Memory: &ai.Memory})
}

// apiAccountInstructionsPut replaces the user's own instructions; memory,
// when absent, stays as it is.
func (h *Handlers) apiAccountInstructionsPut(c *fiber.Ctx) error {
	var p apiInstructions
	if err := apiDecode(c, &p); err != nil {
		return err
	}
	userID := currentUser(c).ID
	if p.Memory == nil {
		ai, err := h.store.Instructions(c.UserContext(), userID)
		if err != nil {
			return err
		}
		p.Memory = &ai.Memory
	}
	ai, err := h.store.SetInstructions(c.UserContext(), userID, p.About, p.Style, *p.Memory)
	if err != nil {
		return err
	}
	return c.JSON(apiInstructions{About: ai.About, Style: ai.Style, Memory: &ai.Memory})
}

// apiMemory is a memory entry as the API shows it.
type apiMemory struct {
	ID         int64     `json:"id"`
	Content    string    `json:"content"`
	Source     string    `json:"source"` // "manual" or "exchange"
	ExchangeID *int64    `json:"exchange_id"`
	CreatedAt  time.Time `json:"created_at"`
}

func newAPIMemory(m *models.Memory) apiMemory {
	return apiMemory{ID: m.ID, Content: m.Content, Source: m.Source, ExchangeID: m.ExchangeID, CreatedAt: m.CreatedAt}
}

// apiMemoryPayload is the body of POST and PATCH /api/memories.
type apiMemoryPayload struct {
	Content string `json:"content"`
}

// apiMemories lists the user's memory entries.
func (h *Handlers) apiMemories(c *fiber.Ctx) error {
	ms, err := h.store.Memories(c.UserContext(), currentUser(c).ID)
	if err != nil {
		return err
	}
	out := make([]apiMemory, len(ms))
	for i := range ms {
		out[i] = newAPIMemory(&ms[i])
	}
	return c.JSON(out)
}

// apiMemoryCreate adds a memory entry: 201.
func (h *Handlers) apiMemoryCreate(c *fiber.Ctx) error {
	var p apiMemoryPayload
	if err := apiDecode(c, &p); err != nil {
		return err
	}
	m, err := h.store.AddMemory(c.UserContext(), currentUser(c).ID, p.Content, nil)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(newAPIMemory(m))
}

// apiMemoryUpdate changes a memory entry's text.
func (h *Handlers) apiMemoryUpdate(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	var p apiMemoryPayload
	if err := apiDecode(c, &p); err != nil {
		return err
	}
	m, err := h.store.UpdateMemory(c.UserContext(), currentUser(c).ID, id, p.Content)
	if err != nil {
		return err
	}
	return c.JSON(newAPIMemory(m))
}

// apiMemoryDelete deletes a memory entry.
func (h *Handlers) apiMemoryDelete(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	if err := h.store.DeleteMemory(c.UserContext(), currentUser(c).ID, id); err != nil {
		return err
	}
	return c.JSON(apiNotice{Message: "Memory entry deleted."})
}

// apiMessageInstructionsText is what a reply's agent was told.
type apiMessageInstructionsText struct {
	Text string `json:"text"`
	Hash string `json:"hash"`
}

// apiMessageInstructions answers the system text one of the user's
// replies was given.
func (h *Handlers) apiMessageInstructions(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	t, err := h.store.MessageInstructions(c.UserContext(), currentUser(c).ID, id)
	if err != nil {
		return err
	}
	return c.JSON(apiMessageInstructionsText{Text: t.Text, Hash: t.Hash})
}

// apiProjectFiles lists the files one of the user's projects holds, in the
// order they were added.
func (h *Handlers) apiProjectFiles(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	files, err := h.store.ProjectFiles(c.UserContext(), currentUser(c).ID, id)
	if err != nil {
		return err
	}
	out := make([]fileRecord, len(files))
	for i := range files {
		out[i] = fileRecordOf(&files[i])
	}
	return c.JSON(fiber.Map{"files": out})
}

// apiProjectFileAdd makes one of the user's projects hold one of their
// files (uploaded with POST /api/files): {"file_id": N} → 201 and the
// file's record. Another user's project or file: 404.
func (h *Handlers) apiProjectFileAdd(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	var in struct {
		FileID int64 `json:"file_id"`
	}
	if err := apiDecode(c, &in); err != nil {
		return err
	}
	if in.FileID <= 0 {
		return refuse(fiber.StatusBadRequest, "file_id names the file to add: one of yours, uploaded with POST /api/files.")
	}
	uid := currentUser(c).ID
	if err := h.store.AddProjectFile(c.UserContext(), uid, id, in.FileID); err != nil {
		return err
	}
	f, err := h.store.FileByID(c.UserContext(), uid, in.FileID)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(fileRecordOf(f))
}

// apiProjectFileDelete lets a project go of a file; the file goes too
// unless a message or another project still holds it.
func (h *Handlers) apiProjectFileDelete(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	file, err := pathID(c, "file")
	if err != nil {
		return err
	}
	if err := h.store.RemoveProjectFile(c.UserContext(), currentUser(c).ID, id, file); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"message": "File removed from the project."})
}
