package dataport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"palaver/agents"
	"palaver/models"
	"palaver/transfer"
	"palaver/uploads"
)

// RefusedError is a file an import refuses, for its content: Reason says
// why, for a person, naming the line or conversation (an HTTP layer
// answers 400 with it). Nothing of the file is stored.
type RefusedError struct {
	Reason string
	Err    error
}

func (e *RefusedError) Error() string { return "import refused: " + e.Reason }

func (e *RefusedError) Unwrap() error { return e.Err }

// FileError is a problem of the file that dataport finds (its forks, a
// message's JSON), in words; it matches transfer.ErrInvalid.
type FileError struct{ Reason string }

func (e *FileError) Error() string { return e.Reason }

// Is makes every FileError match transfer.ErrInvalid.
func (e *FileError) Is(target error) bool { return target == transfer.ErrInvalid }

func fileError(format string, args ...any) error {
	return &FileError{Reason: fmt.Sprintf(format, args...)}
}

// Import reads a file (a Palaver export, ChatGPT's conversations.json or
// its export .zip: transfer.Open tells them apart by content) into the
// user's account. It reads the file twice: first whole, checking every
// item, the limits (transfer.Options) and the forks between them (no
// cycle), before anything is stored; then again, for the store, which
// writes it in short transactions and undoes them if one fails. An r that
// is not a seekable *os.File is first copied to a temporary file (a
// request's body is spooled by its handler, which bounds its size and
// time). A file that cannot be read, or that the store cannot take, stores
// nothing: the error is a *RefusedError; transfer.ErrTooLarge: over the
// size limit.
func Import(ctx context.Context, store *models.Store, userID int64, r io.Reader, opts transfer.Options) (models.ImportCounts, error) {
	f, ok := r.(*os.File)
	if ok {
		if _, err := f.Seek(0, io.SeekCurrent); err != nil {
			ok = false // a pipe: read twice from a copy
		}
	}
	if !ok {
		limit := opts.MaxInputBytes
		if limit <= 0 {
			limit = transfer.DefaultMaxInputBytes
		}
		spooled, err := transfer.Spool(r, limit, opts.TempDir)
		if errors.Is(err, transfer.ErrTooLarge) {
			return models.ImportCounts{}, err
		}
		if err != nil {
			return models.ImportCounts{}, fmt.Errorf("import: %w", err)
		}
		defer transfer.RemoveSpool(spooled)
		f = spooled
	}
	if opts.InputSize <= 0 {
		if st, err := f.Stat(); err == nil {
			opts.InputSize = st.Size()
		}
	}
	if opts.AgentTypes == nil {
		opts.AgentTypes = AgentTypes()
	}
	start, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return models.ImportCounts{}, fmt.Errorf("import: %w", err)
	}
	if err := check(f, opts); err != nil {
		return models.ImportCounts{}, refused(err)
	}
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		return models.ImportCounts{}, fmt.Errorf("import: %w", err)
	}
	src, _, err := opts.Open(f)
	if err != nil {
		return models.ImportCounts{}, refused(err)
	}
	defer src.Close()
	n, err := store.Import(ctx, userID, func() (*models.ImportItem, error) {
		it, err := src.Next()
		if err != nil {
			return nil, err // io.EOF ends the import
		}
		return importItem(it)
	})
	return n, refused(err)
}

// AgentTypes are the agent types an imported exchange or message may name:
// those a request may, and the sub-runs' (a search's entries).
func AgentTypes() []string { return append(agents.AgentTypes(), agents.AgentSearch) }

// check reads the whole file as an import would, storing nothing: every
// item (its fields, the limits), and the forks between its exchanges,
// which must not form a cycle or nest deeper than the store walks
// (models.MaxForkDepth).
func check(r io.Reader, opts transfer.Options) error {
	src, _, err := opts.Open(r)
	if err != nil {
		return err
	}
	defer src.Close()
	forks := forkGraph{}
	for {
		it, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if _, err := importItem(it); err != nil {
			return err
		}
		if e := it.Exchange; e != nil && e.ForkedFrom != nil {
			forks[e.UID] = forkEdge{parent: e.ForkedFrom.ExchangeUID, where: it.Where}
		}
	}
	return forks.check()
}

// forkEdge is a fork of the file: the uid of its parent, and its place.
type forkEdge struct {
	parent transfer.UID
	where  string
}

type forkGraph map[transfer.UID]forkEdge

// check walks up from every fork, refusing a cycle (the store's family
// walks would otherwise go round it) and a chain deeper than the store's.
func (g forkGraph) check() error {
	depth := map[transfer.UID]int{} // known: steps up to a parent outside the file's forks
	for start := range g {
		var path []transfer.UID
		on := map[transfer.UID]int{} // uid → its index in path
		u := start
		for {
			if _, known := depth[u]; known {
				break
			}
			e, fork := g[u]
			if !fork {
				depth[u] = 0
				break
			}
			if i, seen := on[u]; seen {
				return fileError("forked_from makes a cycle: %s are forked from each other", strings.Join(cycleNames(g, path[i:]), ", "))
			}
			on[u] = len(path)
			path = append(path, u)
			u = e.parent
		}
		for i := len(path) - 1; i >= 0; i-- {
			d := depth[g[path[i]].parent] + 1
			if d > models.MaxForkDepth {
				return fileError("%s: forks nest more than %d deep", g[path[i]].where, models.MaxForkDepth)
			}
			depth[path[i]] = d
		}
	}
	return nil
}

// cycleNames names the exchanges of a cycle by place and uid.
func cycleNames(g forkGraph, cycle []transfer.UID) []string {
	names := make([]string, 0, min(len(cycle), 4))
	for i, u := range cycle {
		if i == 3 {
			names = append(names, fmt.Sprintf("and %d more", len(cycle)-i))
			break
		}
		names = append(names, fmt.Sprintf("%s (exchange %s)", g[u].where, u))
	}
	return names
}

// refused makes an error about the file's content a *RefusedError with
// the reason in words; other errors (reading the disk, the database) pass.
func refused(err error) error {
	var imp *models.ImportError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &imp):
		return &RefusedError{Reason: imp.Error(), Err: err}
	case errors.Is(err, transfer.ErrInvalid):
		return &RefusedError{Reason: err.Error(), Err: err}
	}
	return err
}

func importItem(it transfer.Item) (*models.ImportItem, error) {
	item := &models.ImportItem{Where: it.Where}
	var err error
	switch {
	case it.Page != nil:
		item.Page = importPage(it.Page)
	case it.Exchange != nil:
		if item.Exchange, err = importExchange(it.Exchange); err != nil {
			return nil, fileError("%s: %v", it.Where, err)
		}
	case it.File != nil:
		if item.File, err = importFile(it.File); err != nil {
			return nil, fileError("%s: %v", it.Where, err)
		}
	case it.Project != nil:
		item.Project = importProject(it.Project)
	case it.Instructions != nil:
		in := it.Instructions
		item.Instructions = &models.AccountInstructions{About: in.About, Style: in.Style, Memory: in.Memory, UpdatedAt: in.UpdatedAt}
	case it.Memory != nil:
		item.Memory = importMemory(it.Memory)
	default:
		return nil, fileError("%s: neither a page nor an exchange", it.Where)
	}
	return item, nil
}

func importPage(p *transfer.Page) *models.ExportedPage {
	out := &models.ExportedPage{Page: models.Page{UID: p.UID.String(), Title: p.Title, Content: p.Content,
		CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}}
	for _, r := range p.Revisions {
		rev := models.ExportedRevision{PageRevision: models.PageRevision{UID: r.UID.String(), Content: r.Content,
			EditSource: r.EditSource, CreatedAt: r.CreatedAt}}
		if r.MessageUID != nil {
			u := r.MessageUID.String()
			rev.MessageUID = &u
		}
		out.Revisions = append(out.Revisions, rev)
	}
	return out
}

func importExchange(e *transfer.Exchange) (*models.ExportedExchange, error) {
	out := &models.ExportedExchange{Exchange: models.Exchange{
		UID: e.UID.String(), Title: e.Title, AgentType: e.AgentType, Scope: e.Scope, JobID: e.JobID,
		Pinned: e.Pinned, Archived: e.Archived, CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt,
	}}
	if e.PageUID != nil {
		u := e.PageUID.String()
		out.PageUID = &u
	}
	if e.ProjectUID != nil {
		u := e.ProjectUID.String()
		out.ProjectUID = &u
	}
	if e.ForkedFrom != nil {
		u, seq := e.ForkedFrom.ExchangeUID.String(), e.ForkedFrom.Seq
		out.ParentUID, out.ForkedAtSeq = &u, &seq
	}
	for _, m := range e.Messages {
		msg := models.Message{
			UID: m.UID.String(), Seq: m.Seq, Role: m.Role, Content: m.Content, AgentType: m.AgentType,
			EditMode: m.EditMode, Feedback: m.Feedback, FeedbackComment: m.Comment, CreatedAt: m.Timestamp,
		}
		if len(m.AgentResponse) > 0 {
			msg.AgentResponse = new(models.AgentResponse)
			if err := json.Unmarshal(m.AgentResponse, msg.AgentResponse); err != nil {
				return nil, fmt.Errorf("message %s: agent_response: %s", m.UID, clipped(err))
			}
		}
		if len(m.Tool) > 0 {
			msg.Tool = new(models.ToolFields)
			if err := json.Unmarshal(m.Tool, msg.Tool); err != nil {
				return nil, fmt.Errorf("message %s: tool: %s", m.UID, clipped(err))
			}
		}
		out.Messages = append(out.Messages, msg)
		for _, fu := range m.Attachments {
			if out.Attachments == nil {
				out.Attachments = map[string][]string{}
			}
			out.Attachments[msg.UID] = append(out.Attachments[msg.UID], fu.String())
		}
	}
	return out, nil
}

// importFile checks a file line's bytes as an upload is checked: the type
// is sniffed again (never taken from the line), an image decoded within
// bounds and given its thumbnail.
func importFile(f *transfer.File) (*models.NewFile, error) {
	info, err := uploads.Inspect(f.Name, f.Data)
	if err != nil {
		return nil, fmt.Errorf("file %s: %v", f.UID, err)
	}
	nf := &models.NewFile{File: models.File{UID: f.UID.String(), Name: info.Name, ContentType: info.ContentType,
		Kind: info.Kind, Size: f.Size, SHA256: info.SHA256, CreatedAt: f.CreatedAt.UTC()}, Data: f.Data, Thumbnail: info.Thumbnail}
	if info.Kind == models.FileImage {
		nf.File.Width, nf.File.Height = &info.Width, &info.Height
	}
	return nf, nil
}

// clipped is a decoding error in at most a few hundred bytes: the
// decoder's error quotes a number whole, which may be megabytes long, and
// the reason goes back to the client and into the log.
func clipped(err error) string { return transfer.Clip(err.Error(), 300) }

func importProject(p *transfer.Project) *models.ExportedProject {
	out := &models.ExportedProject{Project: models.Project{UID: p.UID.String(), Name: p.Name, Instructions: p.Instructions,
		Memory: p.Memory, AgentType: p.AgentType, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}}
	if p.ParentUID != nil {
		u := p.ParentUID.String()
		out.ParentUID = &u
	}
	for _, u := range p.FileUIDs {
		out.FileUIDs = append(out.FileUIDs, u.String())
	}
	return out
}

func importMemory(m *transfer.Memory) *models.ExportedMemory {
	out := &models.ExportedMemory{Memory: models.Memory{UID: m.UID.String(), Content: m.Content, Source: m.Source,
		CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt}}
	if m.ExchangeUID != nil {
		u := m.ExchangeUID.String()
		out.ExchangeUID = &u
	}
	return out
}
