package screens

import (
	"context"
	"fmt"

	"palaver/models"
	"palaver/paths"
	"palaver/views"
)

// WithFiles gives the user messages among entries the files they hold.
func (s *Screens) WithFiles(ctx context.Context, v Viewer, entries []views.ChatMessage) error {
	var ids []int64
	for _, e := range entries {
		if e.Role == views.RoleUser {
			ids = append(ids, e.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	byMsg, err := s.store.Attachments(ctx, v.UserID, ids)
	if err != nil || len(byMsg) == 0 {
		return err
	}
	for i := range entries {
		entries[i].Files = FileChips(byMsg[entries[i].ID])
	}
	return nil
}

// FileChips maps a message's files to its chips, encoded as
// ChatMessage.Files holds them.
func FileChips(files []models.File) string {
	out := make([]views.FileChip, 0, len(files))
	for _, f := range files {
		out = append(out, fileChip(f))
	}
	return views.EncodeFiles(out)
}

// SharedFileChips are the chips of a shared entry's files, which open
// through the share link's own route, never the owner's.
func SharedFileChips(token string, files []models.File) []views.FileChip {
	var out []views.FileChip
	for _, f := range files {
		c := fileChip(f)
		c.Href, c.Thumb = paths.ShareFile(token, f.ID), paths.ShareFileThumbnail(token, f.ID)
		out = append(out, c)
	}
	return out
}

func fileChip(f models.File) views.FileChip {
	c := views.FileChip{ID: f.ID, Name: f.Name, Size: HumanBytes(f.Size), Type: f.ContentType, Image: f.Kind == models.FileImage}
	if f.Width != nil && f.Height != nil {
		c.Width, c.Height = *f.Width, *f.Height
	}
	return c
}

// HumanBytes is a size as a person reads it: "512 B", "12 KB", "3.4 MB".
func HumanBytes(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000_000:
		return fmt.Sprintf("%d KB", (n+500)/1000)
	case n < 1000_000_000:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%.2f GB", float64(n)/1e9)
}
