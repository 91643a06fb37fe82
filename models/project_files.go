package models

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// ProjectFilesBudget bounds the characters of a project's text files
// inlined into one turn's context: the files that do not fit, or do not
// fit whole, are named to the model as left out or cut.
const ProjectFilesBudget = 20_000

// ErrFileInProject means a project still holds the file, so it cannot be
// deleted on its own.
var ErrFileInProject = errors.New("a project still holds this file: remove it from the project first")

// ProjectFile says that a project holds a file as its knowledge. A file a
// project holds is referenced like one a message holds (migration 00026):
// it outlives the messages that held it, and goes with its last project.
type ProjectFile struct {
	ID        int64     `gorm:"primaryKey"`
	ProjectID int64     `gorm:"not null"`
	FileID    int64     `gorm:"not null"`
	CreatedAt time.Time `gorm:"not null"`
}

// AddProjectFile makes one of the user's projects hold one of their files
// (held already: nothing changes); another user's project or file is
// ErrNotFound.
func (s *Store) AddProjectFile(ctx context.Context, userID, projectID, fileID int64) error {
	err := s.transact(ctx, func(tx *gorm.DB) error {
		var n int64
		if err := tx.Model(&Project{}).Where("id = ? AND user_id = ?", projectID, userID).Count(&n).Error; err != nil || n == 0 {
			return cmpErr(err, gorm.ErrRecordNotFound)
		}
		if err := tx.Model(&File{}).Where("id = ? AND user_id = ?", fileID, userID).Count(&n).Error; err != nil || n == 0 {
			return cmpErr(err, gorm.ErrRecordNotFound)
		}
		return tx.Clauses(clause.OnConflict{DoNothing: true}).
			Create(&ProjectFile{ProjectID: projectID, FileID: fileID, CreatedAt: now()}).Error
	})
	return wrap("add project file", err)
}

func cmpErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

// ProjectFiles lists the files one of the user's projects holds, in the
// order they were added (another user's project: ErrNotFound).
func (s *Store) ProjectFiles(ctx context.Context, userID, projectID int64) ([]File, error) {
	db := s.db.WithContext(ctx)
	var n int64
	if err := db.Model(&Project{}).Where("id = ? AND user_id = ?", projectID, userID).Count(&n).Error; err != nil {
		return nil, wrap("project files", err)
	}
	if n == 0 {
		return nil, fmt.Errorf("project files: %w", ErrNotFound)
	}
	return projectFiles(db, userID, projectID)
}

func projectFiles(db *gorm.DB, userID, projectID int64) ([]File, error) {
	var out []File
	err := db.Table("project_files AS p").Select("f.*").Joins("JOIN files f ON f.id = p.file_id").
		Where("p.project_id = ? AND f.user_id = ?", projectID, userID).Order("p.id").Scan(&out).Error
	return out, wrap("project files", err)
}

// RemoveProjectFile lets one of the user's projects go of a file; the file
// goes too unless a message or another project still holds it. A file the
// project does not hold is ErrNotFound.
func (s *Store) RemoveProjectFile(ctx context.Context, userID, projectID, fileID int64) error {
	err := s.transact(ctx, func(tx *gorm.DB) error {
		res := tx.Where("project_id = ? AND file_id = ? AND project_id IN (?)", projectID, fileID,
			tx.Model(&Project{}).Select("id").Where("user_id = ?", userID)).Delete(&ProjectFile{})
		if res.Error == nil && res.RowsAffected == 0 {
			return gorm.ErrRecordNotFound
		}
		return res.Error // the trigger project_files_release takes the file when nothing else holds it
	})
	return wrap("remove project file", err)
}

// projectKnowledge is the section of the composed instructions that
// carries a project's files: its text files inlined, each fenced under its
// name, within ProjectFilesBudget characters, and the model told by name
// which were cut, left out, or are not text. Without blobs, files are
// not read: a project with any gives errReadLater.
func (s *Store) projectKnowledge(db *gorm.DB, userID, projectID int64, blobs bool) (string, error) {
	files, err := projectFiles(db, userID, projectID)
	if err != nil || len(files) == 0 {
		return "", err
	}
	if !blobs {
		return "", errReadLater
	}
	var b strings.Builder
	var cut, left, notText []string
	used := 0
	for _, f := range files {
		if f.Kind != FileText {
			notText = append(notText, fmt.Sprintf("%q (%s)", f.Name, f.ContentType))
			continue
		}
		room := ProjectFilesBudget - used
		if room <= 0 {
			left = append(left, fmt.Sprintf("%q", f.Name))
			continue
		}
		// At most the bytes room characters can take (and a character's
		// worth more): a large file is not read whole on every turn.
		data, err := s.readBlob(db.Statement.Context, userID, f.BlobID, false, int64(room)*utf8.UTFMax+utf8.UTFMax)
		if errors.Is(err, gorm.ErrRecordNotFound) {
			continue
		}
		if err != nil {
			return "", err
		}
		text := strings.ToValidUTF8(string(data), "\uFFFD")
		if utf8.RuneCountInString(text) > room {
			text = string([]rune(text)[:room])
			cut = append(cut, fmt.Sprintf("%q (the first %d characters of its %d bytes)", f.Name, room, f.Size))
		}
		used += utf8.RuneCountInString(text)
		fence := "```"
		for strings.Contains(text, fence) {
			fence += "`"
		}
		fmt.Fprintf(&b, "\n\nFile %q:\n%s\n%s\n%s", f.Name, fence, strings.TrimRight(text, "\n"), fence)
	}
	out := "The project's files:" + b.String()
	if len(cut) > 0 {
		out += "\n\nCut short, to stay within " + fmt.Sprint(ProjectFilesBudget) + " characters of files: " + strings.Join(cut, ", ") + "."
	}
	if len(left) > 0 {
		out += "\n\nLeft out, to stay within " + fmt.Sprint(ProjectFilesBudget) + " characters of files: " + strings.Join(left, ", ") + "."
	}
	if len(notText) > 0 {
		out += "\n\nNot shown to you (not text): " + strings.Join(notText, ", ") + "."
	}
	return out, nil
}
