package dataport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"palaver/models"
	"palaver/transfer"
)

// Importer is what an import writes to.
type Importer interface {
	Import(ctx context.Context, userID int64, next func() (*models.ImportItem, error)) (models.ImportCounts, error)
}

// Import reads a file (a Palaver export, ChatGPT's conversations.json or
// its export .zip: transfer.Open tells them apart by content) into the
// user's account, in one transaction: a file that cannot be read, or that
// the store cannot take, stores nothing, and the error names the line or
// conversation (errors.Is(err, transfer.ErrInvalid) or models.ErrImport:
// the file's fault; transfer.ErrTooLarge: over the limit).
func Import(ctx context.Context, store Importer, userID int64, r io.Reader, opts transfer.Options) (models.ImportCounts, error) {
	src, _, err := opts.Open(r)
	if err != nil {
		return models.ImportCounts{}, err
	}
	defer src.Close()
	return store.Import(ctx, userID, func() (*models.ImportItem, error) {
		it, err := src.Next()
		if err != nil {
			return nil, err // io.EOF ends the import
		}
		item := &models.ImportItem{Where: it.Where}
		switch {
		case it.Page != nil:
			item.Page = importPage(it.Page)
		case it.Exchange != nil:
			if item.Exchange, err = importExchange(it.Exchange); err != nil {
				return nil, fmt.Errorf("%s: %w", it.Where, err)
			}
		default:
			return nil, errors.New(it.Where + ": neither a page nor an exchange")
		}
		return item, nil
	})
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
				return nil, fmt.Errorf("%w: message %s: agent_response: %v", transfer.ErrInvalid, m.UID, err)
			}
		}
		if len(m.Tool) > 0 {
			msg.Tool = new(models.ToolFields)
			if err := json.Unmarshal(m.Tool, msg.Tool); err != nil {
				return nil, fmt.Errorf("%w: message %s: tool: %v", transfer.ErrInvalid, m.UID, err)
			}
		}
		out.Messages = append(out.Messages, msg)
	}
	return out, nil
}
