package models

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"
)

// Limits of projects, instructions and memory (issue 27).
const (
	MaxProjectName     = 200    // characters of a project's name
	MaxInstructions    = 20_000 // characters of a project's or the account's instructions
	MaxMemory          = 2_000  // characters of one memory entry
	MaxMemories        = 1_000  // memory entries per person
	TemporaryRetention = 24 * time.Hour
)

// ErrProjectNameTaken means the person has a project of that name under
// the same parent.
var ErrProjectNameTaken = errors.New("you already have a project of that name here")

// ErrMemoryFull means the person has MaxMemories entries already.
var ErrMemoryFull = fmt.Errorf("your memory holds %d entries, the most it keeps: delete some first", MaxMemories)

// InvalidError is input the store refuses as it stands (too long, nested
// too deep): Msg is the sentence a person reads.
type InvalidError struct{ Msg string }

func (e *InvalidError) Error() string { return e.Msg }

func invalid(format string, a ...any) error { return &InvalidError{Msg: fmt.Sprintf(format, a...)} }

// Project groups a person's chats and carries instructions.
type Project struct {
	ID           int64  `gorm:"primaryKey"`
	UID          string `gorm:"column:uid;not null"`
	UserID       int64  `gorm:"not null"`
	ParentID     *int64
	Name         string `gorm:"not null"`
	Instructions string `gorm:"not null"`
	Memory       bool   `gorm:"not null"` // memory entries go into its chats' context
	AgentType    string `gorm:"not null"` // the agent a new chat in it starts with; "" the default
	// DefaultModelID is the model its chats answer with unless one is
	// picked (it wins over the person's default); nil: none.
	DefaultModelID *int64
	CreatedAt      time.Time `gorm:"not null"`
	UpdatedAt      time.Time `gorm:"not null"`
}

// BeforeCreate gives a new project its uid.
func (p *Project) BeforeCreate(*gorm.DB) error { p.UID = orNewUID(p.UID); return nil }

// ProjectSummary is a project with how many chats it holds (temporary ones
// left out).
type ProjectSummary struct {
	Project
	ExchangeCount int64
}

// AccountInstructions are the person's own instructions ("About me / How
// to answer") and the account-wide memory switch.
type AccountInstructions struct {
	ID        int64     `gorm:"primaryKey"`
	UserID    int64     `gorm:"not null"`
	About     string    `gorm:"not null"`
	Style     string    `gorm:"not null"`
	Memory    bool      `gorm:"not null"`
	UpdatedAt time.Time `gorm:"not null"`
}

// Memory sources.
const (
	MemoryManual   = "manual"
	MemoryExchange = "exchange"
)

// Memory is one entry of a person's memory.
type Memory struct {
	ID         int64     `gorm:"primaryKey"`
	UID        string    `gorm:"column:uid;not null"`
	UserID     int64     `gorm:"not null"`
	Content    string    `gorm:"not null"`
	Source     string    `gorm:"not null"` // MemoryManual or MemoryExchange
	ExchangeID *int64    // with MemoryExchange: the chat it came from, while it exists
	CreatedAt  time.Time `gorm:"not null"`
	UpdatedAt  time.Time `gorm:"not null"`
}

// BeforeCreate gives a new memory entry its uid.
func (m *Memory) BeforeCreate(*gorm.DB) error { m.UID = orNewUID(m.UID); return nil }

// ProjectInput is a new project, or with nil fields left alone, a change.
type ProjectInput struct {
	Name         *string
	Instructions *string
	// ParentID: nil leaves it; a pointer to 0 makes it top level.
	ParentID  *int64
	Memory    *bool
	AgentType *string
	// DefaultModel: nil leaves it; a pointer to 0 clears it. The caller
	// checks it is a model people may pick.
	DefaultModel *int64
}

func (in ProjectInput) check() error {
	if in.Name != nil {
		name := strings.TrimSpace(*in.Name)
		if name == "" {
			return invalid("A project needs a name.")
		}
		if utf8.RuneCountInString(name) > MaxProjectName {
			return invalid("A project's name is at most %d characters.", MaxProjectName)
		}
	}
	if in.Instructions != nil && utf8.RuneCountInString(*in.Instructions) > MaxInstructions {
		return invalid("Instructions are at most %d characters.", MaxInstructions)
	}
	return nil
}

// projectsWithCounts reads projects with their chat counts.
func projectsWithCounts(tx *gorm.DB) *gorm.DB {
	return tx.Table("projects p").Select(`p.*, (SELECT COUNT(*) FROM exchanges e
		WHERE e.project_id = p.id AND e.temporary = ? AND e.scope = ?) AS exchange_count`, false, ScopeGeneral)
}

// Projects lists the user's projects, top level and nested, by name.
func (s *Store) Projects(ctx context.Context, userID int64) ([]ProjectSummary, error) {
	var out []ProjectSummary
	err := projectsWithCounts(s.db.WithContext(ctx)).Where("p.user_id = ?", userID).
		Order("p.name, p.id").Scan(&out).Error
	return out, wrap("list projects", err)
}

// Project is one of the user's projects.
func (s *Store) Project(ctx context.Context, userID, id int64) (*ProjectSummary, error) {
	var out []ProjectSummary
	err := projectsWithCounts(s.db.WithContext(ctx)).Where("p.id = ? AND p.user_id = ?", id, userID).Scan(&out).Error
	if err == nil && len(out) == 0 {
		err = gorm.ErrRecordNotFound
	}
	if err != nil {
		return nil, wrap("project", err)
	}
	return &out[0], nil
}

// checkParent refuses a parent that is not the user's, is nested itself,
// or is the project (id) or would nest under it a project that has
// children: projects nest one level at most, so no cycle can form.
func checkParent(tx *gorm.DB, userID, id, parentID int64) error {
	var parent Project
	if err := tx.Where("id = ? AND user_id = ?", parentID, userID).Take(&parent).Error; err != nil {
		return err
	}
	if parent.ID == id {
		return invalid("A project cannot be inside itself.")
	}
	if parent.ParentID != nil {
		return invalid("Projects nest one level at most: %q is inside another project already.", parent.Name)
	}
	if id != 0 {
		var children int64
		if err := tx.Model(&Project{}).Where("parent_id = ?", id).Count(&children).Error; err != nil {
			return err
		}
		if children > 0 {
			return invalid("Projects nest one level at most: this project has projects inside it.")
		}
	}
	return nil
}

// CreateProject makes a project for the user.
func (s *Store) CreateProject(ctx context.Context, userID int64, in ProjectInput) (*ProjectSummary, error) {
	if in.Name == nil {
		in.Name = new(string)
	}
	if err := in.check(); err != nil {
		return nil, err
	}
	at := now()
	p := Project{UserID: userID, Name: strings.TrimSpace(*in.Name), Memory: true, CreatedAt: at, UpdatedAt: at}
	if in.Instructions != nil {
		p.Instructions = *in.Instructions
	}
	if in.Memory != nil {
		p.Memory = *in.Memory
	}
	if in.AgentType != nil {
		p.AgentType = *in.AgentType
	}
	if in.DefaultModel != nil && *in.DefaultModel != 0 {
		p.DefaultModelID = in.DefaultModel
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if in.ParentID != nil && *in.ParentID != 0 {
			if err := checkParent(tx, userID, 0, *in.ParentID); err != nil {
				return err
			}
			p.ParentID = in.ParentID
		}
		return tx.Create(&p).Error
	})
	if err != nil {
		return nil, projectErr("create project", err)
	}
	return &ProjectSummary{Project: p}, nil
}

// projectErr wraps a project write's error, a duplicate name said so.
func projectErr(op string, err error) error {
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return fmt.Errorf("%s: %w", op, ErrProjectNameTaken)
	}
	var inv *InvalidError
	if errors.As(err, &inv) {
		return err
	}
	return wrap(op, err)
}

// UpdateProject changes one of the user's projects.
func (s *Store) UpdateProject(ctx context.Context, userID, id int64, in ProjectInput) (*ProjectSummary, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	cols := map[string]any{"updated_at": now()}
	if in.Name != nil {
		cols["name"] = strings.TrimSpace(*in.Name)
	}
	if in.Instructions != nil {
		cols["instructions"] = *in.Instructions
	}
	if in.Memory != nil {
		cols["memory"] = *in.Memory
	}
	if in.AgentType != nil {
		cols["agent_type"] = *in.AgentType
	}
	if in.DefaultModel != nil {
		cols["default_model_id"] = nullID(*in.DefaultModel)
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("id = ? AND user_id = ?", id, userID).Take(&Project{}).Error; err != nil {
			return err
		}
		if in.ParentID != nil {
			if *in.ParentID == 0 {
				cols["parent_id"] = nil
			} else {
				if err := checkParent(tx, userID, id, *in.ParentID); err != nil {
					return err
				}
				cols["parent_id"] = *in.ParentID
			}
		}
		return tx.Model(&Project{}).Where("id = ? AND user_id = ?", id, userID).UpdateColumns(cols).Error
	})
	if err != nil {
		return nil, projectErr("update project", err)
	}
	return s.Project(ctx, userID, id)
}

// DeleteProject deletes one of the user's projects and those inside it.
// Their chats move out (deleteChats false) or are deleted; it says how
// many of each. A turn running in a moved chat finishes where it is; one
// running in a deleted chat finds its exchange gone (ErrExchangeGone).
func (s *Store) DeleteProject(ctx context.Context, userID, id int64, deleteChats bool) (moved, deleted int64, err error) {
	var ids []int64
	err = s.db.WithContext(ctx).Model(&Project{}).Where("user_id = ? AND (id = ? OR parent_id = ?)", userID, id, id).
		Pluck("id", &ids).Error
	if err == nil && len(ids) == 0 {
		err = gorm.ErrRecordNotFound
	}
	if err != nil {
		return 0, 0, wrap("delete project", err)
	}
	if deleteChats {
		var chats []int64
		if err := s.db.WithContext(ctx).Model(&Exchange{}).Where("user_id = ? AND project_id IN ?", userID, ids).
			Pluck("id", &chats).Error; err != nil {
			return 0, 0, wrap("delete project", err)
		}
		if deleted, err = s.DeleteExchanges(ctx, userID, chats); err != nil {
			return 0, 0, fmt.Errorf("delete project: %w", err)
		}
	}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&Exchange{}).Where("user_id = ? AND project_id IN ?", userID, ids).UpdateColumn("project_id", nil)
		if res.Error != nil {
			return res.Error
		}
		moved = res.RowsAffected
		return tx.Where("user_id = ? AND id IN ?", userID, ids).Delete(&Project{}).Error
	})
	return moved, deleted, wrap("delete project", err)
}

// MoveToProject moves one of the user's chats, with its whole family (the
// sidebar shows a family as one chat), into a project of theirs or, with
// projectID nil, out of any.
func (s *Store) MoveToProject(ctx context.Context, userID, exchangeID int64, projectID *int64) (*Exchange, error) {
	family, err := s.Family(ctx, userID, exchangeID)
	if err != nil {
		return nil, fmt.Errorf("move to project: %w", err)
	}
	ids := make([]int64, len(family))
	for i, ex := range family {
		ids[i] = ex.ID
	}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if projectID != nil {
			if err := tx.Where("id = ? AND user_id = ?", *projectID, userID).Take(&Project{}).Error; err != nil {
				return err
			}
		}
		return tx.Model(&Exchange{}).Where("user_id = ? AND id IN ?", userID, ids).UpdateColumn("project_id", projectID).Error
	})
	if err != nil {
		return nil, wrap("move to project", err)
	}
	return s.Exchange(ctx, userID, exchangeID)
}

// KeepExchange makes a temporary chat a normal one.
func (s *Store) KeepExchange(ctx context.Context, userID, id int64) (*Exchange, error) {
	res := s.db.WithContext(ctx).Model(&Exchange{}).Where("id = ? AND user_id = ?", id, userID).UpdateColumn("temporary", false)
	if res.Error == nil && res.RowsAffected == 0 {
		res.Error = gorm.ErrRecordNotFound
	}
	if res.Error != nil {
		return nil, wrap("keep exchange", res.Error)
	}
	return s.Exchange(ctx, userID, id)
}

// PurgeTemporary deletes every temporary chat whose last activity is
// TemporaryRetention before now, and says how many went.
func (s *Store) PurgeTemporary(ctx context.Context, at time.Time) (int64, error) {
	type owned struct{ ID, UserID int64 }
	var rows []owned
	err := s.db.WithContext(ctx).Model(&Exchange{}).Select("id, user_id").
		Where("temporary AND updated_at < ? AND turn_status <> ? AND NOT turn_waiting", at.UTC().Add(-TemporaryRetention), TurnRunning).
		Scan(&rows).Error
	if err != nil {
		return 0, wrap("purge temporary chats", err)
	}
	byUser := map[int64][]int64{}
	for _, r := range rows {
		byUser[r.UserID] = append(byUser[r.UserID], r.ID)
	}
	var n int64
	for user, ids := range byUser {
		k, err := s.DeleteExchanges(ctx, user, ids)
		if err != nil {
			return n, fmt.Errorf("purge temporary chats: %w", err)
		}
		n += k
	}
	return n, nil
}

// DeleteTemporary deletes all of the user's temporary chats (at sign-out).
func (s *Store) DeleteTemporary(ctx context.Context, userID int64) (int64, error) {
	var ids []int64
	if err := s.db.WithContext(ctx).Model(&Exchange{}).Where("user_id = ? AND temporary", userID).Pluck("id", &ids).Error; err != nil {
		return 0, wrap("delete temporary chats", err)
	}
	return s.DeleteExchanges(ctx, userID, ids)
}

// Instructions are the user's own instructions; none saved reads as empty,
// memory on.
func (s *Store) Instructions(ctx context.Context, userID int64) (*AccountInstructions, error) {
	var rows []AccountInstructions
	if err := s.db.WithContext(ctx).Where("user_id = ?", userID).Limit(1).Find(&rows).Error; err != nil {
		return nil, wrap("account instructions", err)
	}
	if len(rows) == 0 {
		return &AccountInstructions{UserID: userID, Memory: true}, nil
	}
	return &rows[0], nil
}

// SetInstructions saves the user's own instructions and memory switch.
func (s *Store) SetInstructions(ctx context.Context, userID int64, about, style string, memory bool) (*AccountInstructions, error) {
	if utf8.RuneCountInString(about) > MaxInstructions || utf8.RuneCountInString(style) > MaxInstructions {
		return nil, invalid("Instructions are at most %d characters.", MaxInstructions)
	}
	at := now()
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&AccountInstructions{}).Where("user_id = ?", userID).
			UpdateColumns(map[string]any{"about": about, "style": style, "memory": memory, "updated_at": at})
		if res.Error != nil || res.RowsAffected > 0 {
			return res.Error
		}
		return tx.Create(&AccountInstructions{UserID: userID, About: about, Style: style, Memory: memory, UpdatedAt: at}).Error
	})
	if err != nil {
		return nil, wrap("set account instructions", err)
	}
	return s.Instructions(ctx, userID)
}

// Memories lists the user's memory entries, oldest first.
func (s *Store) Memories(ctx context.Context, userID int64) ([]Memory, error) {
	var out []Memory
	err := s.db.WithContext(ctx).Where("user_id = ?", userID).Order("id").Find(&out).Error
	return out, wrap("list memories", err)
}

func checkMemory(content string) (string, error) {
	content = strings.TrimSpace(content)
	if content == "" {
		return "", invalid("A memory entry needs some text.")
	}
	if utf8.RuneCountInString(content) > MaxMemory {
		return "", invalid("A memory entry is at most %d characters.", MaxMemory)
	}
	return content, nil
}

// AddMemory saves a memory entry: typed by the person (exchangeID nil) or
// approved in a chat. A temporary chat never writes memory.
func (s *Store) AddMemory(ctx context.Context, userID int64, content string, exchangeID *int64) (*Memory, error) {
	content, err := checkMemory(content)
	if err != nil {
		return nil, err
	}
	at := now()
	m := Memory{UserID: userID, Content: content, Source: MemoryManual, CreatedAt: at, UpdatedAt: at}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if exchangeID != nil {
			var ex Exchange
			if err := tx.Select("id, temporary").Where("id = ? AND user_id = ?", *exchangeID, userID).Take(&ex).Error; err != nil {
				return err
			}
			if ex.Temporary {
				return invalid("A temporary chat does not write memory.")
			}
			m.Source, m.ExchangeID = MemoryExchange, exchangeID
		}
		var n int64
		if err := tx.Model(&Memory{}).Where("user_id = ?", userID).Count(&n).Error; err != nil {
			return err
		}
		if n >= MaxMemories {
			return ErrMemoryFull
		}
		return tx.Create(&m).Error
	})
	var inv *InvalidError
	if errors.As(err, &inv) {
		return nil, err
	}
	if err != nil {
		return nil, wrap("add memory", err)
	}
	return &m, nil
}

// UpdateMemory changes the text of one of the user's memory entries.
func (s *Store) UpdateMemory(ctx context.Context, userID, id int64, content string) (*Memory, error) {
	content, err := checkMemory(content)
	if err != nil {
		return nil, err
	}
	res := s.db.WithContext(ctx).Model(&Memory{}).Where("id = ? AND user_id = ?", id, userID).
		UpdateColumns(map[string]any{"content": content, "updated_at": now()})
	if res.Error == nil && res.RowsAffected == 0 {
		res.Error = gorm.ErrRecordNotFound
	}
	if res.Error != nil {
		return nil, wrap("update memory", res.Error)
	}
	var m Memory
	return &m, wrap("update memory", s.db.WithContext(ctx).Where("id = ? AND user_id = ?", id, userID).Take(&m).Error)
}

// DeleteMemory deletes one of the user's memory entries.
func (s *Store) DeleteMemory(ctx context.Context, userID, id int64) error {
	res := s.db.WithContext(ctx).Where("id = ? AND user_id = ?", id, userID).Delete(&Memory{})
	if res.Error == nil && res.RowsAffected == 0 {
		res.Error = gorm.ErrRecordNotFound
	}
	return wrap("delete memory", res.Error)
}

// TableName keeps the table's name as the migration spells it.
func (AccountInstructions) TableName() string { return "account_instructions" }

// nullID is id, or NULL for 0.
func nullID(id int64) *int64 {
	if id == 0 {
		return nil
	}
	return &id
}
