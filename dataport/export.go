// Package dataport moves a user's data in and out of Palaver: it maps the
// store's rows to the export format of package transfer (and back, for
// imports). The HTTP API and the command line both use it.
//
// A line of a file has two shapes on its way to the rows, each owned by
// the package whose rules it carries: transfer's Item is the file format
// (versioned, fuzzed, importing nothing of Palaver), and models' Exported
// and ImportItem types are the store's (a row with its references by uid,
// which only the store can resolve, inside its transactions). dataport is
// the one place that knows both, so neither the format depends on GORM
// nor the store on a file format.
package dataport

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"palaver/models"
	"palaver/transfer"
)

// Counts says how much an export wrote.
type Counts struct {
	Pages, Exchanges, Messages int
	Files                      int
	Projects, Memories         int
}

// Export writes everything the user owns to w as a Palaver export (NDJSON):
// the header, then each page with its revisions, then each exchange with its
// whole log, so that a page's line comes before its exchanges'. It reads and
// writes a batch at a time: memory stays bounded whatever the account
// holds. progress, when set, hears the counts after each line.
func Export(ctx context.Context, store *models.Store, userID int64, w io.Writer, progress func(Counts)) (Counts, error) {
	var n Counts
	out, err := transfer.NewWriter(w, time.Now().UTC())
	if err != nil {
		return n, err
	}
	err = store.ExportPages(ctx, userID, func(p *models.ExportedPage) error {
		tp, err := Page(p)
		if err != nil {
			return err
		}
		if err := out.WritePage(tp); err != nil {
			return err
		}
		n.Pages++
		if progress != nil {
			progress(n)
		}
		return nil
	})
	if err != nil {
		return n, err
	}
	// Files (issue 26) come before every exchange, so before the first
	// that holds each; the messages name them by uid.
	err = store.ExportFiles(ctx, userID, func(f *models.FileWithData) error {
		uid, err := parseUID("file", f.ID, f.UID)
		if err != nil {
			return err
		}
		if err := out.WriteFile(&transfer.File{UID: uid, Name: f.Name, ContentType: f.ContentType, Size: f.Size,
			SHA256: f.SHA256, CreatedAt: f.CreatedAt.UTC(), Data: f.Data}); err != nil {
			return err
		}
		n.Files++
		return nil
	})
	if err != nil {
		return n, err
	}
	// Projects (issue 27) come before the exchanges in them, a parent
	// before the projects inside it; then the person's instructions.
	if n.Projects, err = exportProjects(ctx, store, userID, out); err != nil {
		return n, err
	}
	attached, err := store.ExportAttachments(ctx, userID)
	if err != nil {
		return n, err
	}
	// The database is read in one goroutine and the lines encoded and
	// written in this one, a few exchanges apart: each takes about half of
	// the time, and a second core does one while the other does the other.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	read := make(chan models.ExportedExchange, exportAhead)
	var readErr error
	go func() {
		defer close(read)
		readErr = store.ExportExchanges(ctx, userID, func(e *models.ExportedExchange) error {
			select {
			case read <- *e: // a copy: the store lets go of its log, this one keeps it
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	for e := range read {
		e.Attachments = attached
		te, err := Exchange(&e)
		if err == nil {
			err = out.WriteExchange(te)
		}
		if err != nil {
			cancel()
			for range read { // until the reader has stopped
			}
			return n, err
		}
		n.Exchanges++
		n.Messages += len(te.Messages)
		if progress != nil {
			progress(n)
		}
	}
	if readErr != nil {
		return n, readErr
	}
	// Memory entries last: the chats they came from are written.
	n.Memories, err = exportMemories(ctx, store, userID, out)
	return n, err
}

// exportProjects writes the user's projects and own instructions.
func exportProjects(ctx context.Context, store *models.Store, userID int64, out *transfer.Writer) (int, error) {
	ps, err := store.ExportProjects(ctx, userID)
	if err != nil {
		return 0, err
	}
	for i := range ps {
		p := &ps[i]
		uid, err := parseUID("project", p.ID, p.UID)
		if err != nil {
			return i, err
		}
		tp := &transfer.Project{UID: uid, Name: p.Name, Instructions: p.Instructions, Memory: p.Memory,
			AgentType: p.AgentType, CreatedAt: p.CreatedAt.UTC(), UpdatedAt: p.UpdatedAt.UTC()}
		if p.ParentUID != nil && *p.ParentUID != "" {
			pu, err := parseUID("project", *p.ParentID, *p.ParentUID)
			if err != nil {
				return i, err
			}
			tp.ParentUID = &pu
		}
		for _, u := range p.FileUIDs {
			fu, err := parseUID("project file of project", p.ID, u)
			if err != nil {
				return i, err
			}
			tp.FileUIDs = append(tp.FileUIDs, fu)
		}
		if err := out.WriteProject(tp); err != nil {
			return i, err
		}
	}
	in, err := store.ExportInstructions(ctx, userID)
	if err != nil || in == nil {
		return len(ps), err
	}
	return len(ps), out.WriteInstructions(&transfer.Instructions{About: in.About, Style: in.Style, Memory: in.Memory,
		UpdatedAt: in.UpdatedAt.UTC()})
}

// exportMemories writes the user's memory entries.
func exportMemories(ctx context.Context, store *models.Store, userID int64, out *transfer.Writer) (int, error) {
	ms, err := store.ExportMemories(ctx, userID)
	if err != nil {
		return 0, err
	}
	for i := range ms {
		m := &ms[i]
		uid, err := parseUID("memory", m.ID, m.UID)
		if err != nil {
			return i, err
		}
		tm := &transfer.Memory{UID: uid, Content: m.Content, Source: m.Source, CreatedAt: m.CreatedAt.UTC(), UpdatedAt: m.UpdatedAt.UTC()}
		if m.ExchangeUID != nil && *m.ExchangeUID != "" {
			eu, err := parseUID("exchange", *m.ExchangeID, *m.ExchangeUID)
			if err != nil {
				return i, err
			}
			tm.ExchangeUID = &eu
		}
		if err := out.WriteMemory(tm); err != nil {
			return i, err
		}
	}
	return len(ms), nil
}

// exportAhead is how many exchanges the database reader may be ahead of the
// writer: what an export holds beyond the line being written.
const exportAhead = 4

// Page maps a stored page to its export line.
func Page(p *models.ExportedPage) (*transfer.Page, error) {
	uid, err := parseUID("page", p.ID, p.UID)
	if err != nil {
		return nil, err
	}
	out := &transfer.Page{UID: uid, Title: p.Title, Content: p.Content, CreatedAt: p.CreatedAt.UTC(), UpdatedAt: p.UpdatedAt.UTC(),
		Revisions: make([]*transfer.Revision, len(p.Revisions))}
	for i, r := range p.Revisions {
		ruid, err := parseUID("revision", r.ID, r.UID)
		if err != nil {
			return nil, err
		}
		tr := &transfer.Revision{UID: ruid, Content: r.Content, EditSource: r.EditSource, CreatedAt: r.CreatedAt.UTC()}
		if r.MessageUID != nil && *r.MessageUID != "" {
			mu, err := parseUID("message", *r.MessageID, *r.MessageUID)
			if err != nil {
				return nil, err
			}
			tr.MessageUID = &mu
		}
		out.Revisions[i] = tr
	}
	return out, nil
}

// Exchange maps a stored exchange and its log to its export line.
func Exchange(e *models.ExportedExchange) (*transfer.Exchange, error) {
	uid, err := parseUID("exchange", e.ID, e.UID)
	if err != nil {
		return nil, err
	}
	out := &transfer.Exchange{
		UID: uid, Title: e.Title, AgentType: e.AgentType, JobID: e.JobID, Scope: e.Scope,
		Pinned: e.Pinned, Archived: e.Archived, CreatedAt: e.CreatedAt.UTC(), UpdatedAt: e.UpdatedAt.UTC(),
		Messages: make([]*transfer.Message, len(e.Messages)),
	}
	if e.PageUID != nil && *e.PageUID != "" {
		pu, err := parseUID("page", *e.PageID, *e.PageUID)
		if err != nil {
			return nil, err
		}
		out.PageUID = &pu
	}
	if e.ProjectUID != nil && *e.ProjectUID != "" {
		pu, err := parseUID("project", *e.ProjectID, *e.ProjectUID)
		if err != nil {
			return nil, err
		}
		out.ProjectUID = &pu
	}
	if e.ParentUID != nil && *e.ParentUID != "" && e.ForkedAtSeq != nil {
		fu, err := parseUID("exchange", *e.ForkedFromID, *e.ParentUID)
		if err != nil {
			return nil, err
		}
		out.ForkedFrom = &transfer.ForkRef{ExchangeUID: fu, Seq: *e.ForkedAtSeq}
	}
	for i := range e.Messages {
		m := &e.Messages[i]
		mu, err := parseUID("message", m.ID, m.UID)
		if err != nil {
			return nil, err
		}
		tm := &transfer.Message{
			UID: mu, Seq: m.Seq, Role: m.Role, Content: m.Content, Timestamp: m.CreatedAt.UTC(),
			AgentType: m.AgentType, EditMode: m.EditMode, Feedback: m.Feedback, Comment: m.FeedbackComment,
		}
		if len(e.StoredJSON) == len(e.Messages) { // as stored: no need to parse and encode them again
			tm.AgentResponse, tm.Tool = e.StoredJSON[i].AgentResponse, e.StoredJSON[i].Tool
		}
		if m.AgentResponse != nil {
			if tm.AgentResponse, err = json.Marshal(m.AgentResponse); err != nil {
				return nil, err
			}
		}
		if m.Tool != nil {
			if tm.Tool, err = json.Marshal(m.Tool); err != nil {
				return nil, err
			}
		}
		for _, fu := range e.Attachments[m.UID] {
			u, err := parseUID("file", 0, fu)
			if err != nil {
				return nil, err
			}
			tm.Attachments = append(tm.Attachments, u)
		}
		out.Messages[i] = tm
	}
	return out, nil
}

// parseUID reads a row's uid; a row without one (written by hand, outside
// the store) cannot be exported faithfully, and says which.
func parseUID(what string, id int64, uid string) (transfer.UID, error) {
	u, err := transfer.ParseUID(strings.TrimSpace(uid))
	if err != nil {
		return u, fmt.Errorf("export: %s %d has no valid uid (%q): %w", what, id, uid, err)
	}
	return u, nil
}
