package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// File kinds: what a file is to the model (agents decide what each is shown).
const (
	FileImage = "image" // PNG, JPEG, GIF or WebP, decoded within bounds
	FileText  = "text"  // text-like: plain, Markdown, CSV, JSON, source, logs
	FilePDF   = "pdf"
	FileOther = "other" // stored and downloadable, not sent to the model
)

// ErrFileInUse means a message still holds the file, so it cannot be deleted.
var ErrFileInUse = errors.New("a message still holds this file: delete the conversation first")

// ErrOverQuota means the user's files would take more than their quota.
type ErrOverQuota struct{ Quota int64 }

func (e *ErrOverQuota) Error() string {
	return fmt.Sprintf("your files would take more than your quota of %d MiB", e.Quota>>20)
}

// Blob is the bytes of one upload, stored once per owner and content.
type Blob struct {
	ID        int64     `gorm:"primaryKey"`
	UserID    int64     `gorm:"not null"`
	SHA256    string    `gorm:"column:sha256;not null"`
	Size      int64     `gorm:"not null"`
	Data      []byte    `gorm:"not null"`
	Thumbnail []byte    // empty: none (not an image)
	CreatedAt time.Time `gorm:"not null"`
	// ObjectKey names the object holding the bytes in the S3-compatible
	// store (Data is then empty; blobs_s3.go); nil: they are in Data.
	ObjectKey *string
	// ThumbnailKey names the thumbnail's object, if it has one.
	ThumbnailKey *string
}

// File is one upload of a blob under a name: what a message attaches.
type File struct {
	ID          int64  `gorm:"primaryKey"`
	UID         string `gorm:"column:uid;not null"`
	UserID      int64  `gorm:"not null"`
	BlobID      int64  `gorm:"not null"`
	Name        string `gorm:"not null"`
	ContentType string `gorm:"not null"`
	Kind        string `gorm:"not null"`
	Size        int64  `gorm:"not null"`
	SHA256      string `gorm:"column:sha256;not null"`
	Width       *int64
	Height      *int64
	CreatedAt   time.Time `gorm:"not null"`
}

// BeforeCreate gives a new file its uid.
func (f *File) BeforeCreate(*gorm.DB) error { f.UID = orNewUID(f.UID); return nil }

// MessageAttachment says that a message holds a file.
type MessageAttachment struct {
	ID        int64 `gorm:"primaryKey"`
	MessageID int64 `gorm:"not null"`
	FileID    int64 `gorm:"not null"`
	Position  int64 `gorm:"not null"`
}

// FileHold keeps a file while the last message that held it is deleted
// (the trigger message_attachments_release passes it over): an undone
// import holds the files the account had before it, inside the undoing
// transaction, so that they stay as they were.
type FileHold struct {
	ID     int64 `gorm:"primaryKey"`
	FileID int64 `gorm:"not null"`
}

// NewFile is an upload to store: its record (ID, UID, BlobID left for the
// store), its bytes and, for an image, its thumbnail.
type NewFile struct {
	File      File
	Data      []byte
	Thumbnail []byte
}

// Where a blob's bytes are: in its row of the blobs table (the embedded
// default: a blob commits in the transaction of its file row, so neither
// exists without the other, whatever crashes), or, with --blob-store
// s3://…, in objects its row names (blobs_s3.go says how a crash leaves
// no orphan there either). Each row says which, so blobs stored before
// the S3 store was set stay readable where they are.

// onConflictDoNothing inserts a blob unless the owner has one of its sum.
var onConflictDoNothing = clause.OnConflict{DoNothing: true}

// CreateFile stores an upload: its blob (unless the user has these bytes
// already) and its file row, in one transaction, refused with
// *ErrOverQuota when the user's blobs would pass quota bytes (0: no quota).
func (s *Store) CreateFile(ctx context.Context, nf NewFile, quota int64) (*File, error) {
	f := nf.File
	// With the S3 store the objects are put first (blobs_s3.go), and
	// deleted again if no row takes them: an upload over the quota is
	// refused before (and again in the transaction, which decides).
	if s.objects != nil {
		if err := withinQuota(s.db.WithContext(ctx), &f, quota); err != nil {
			return nil, wrap("create file", err)
		}
	}
	staged, err := s.stageBlob(ctx, f.UserID, f.SHA256, nf.Data, nf.Thumbnail)
	if err != nil {
		return nil, wrap("create file", err)
	}
	// transactLarge: on SQLite the checkpoint of the blob's pages is left
	// to the background, not paid by this commit (checkpoint.go).
	err = s.transactLarge(ctx, func(tx *gorm.DB) error {
		if s.dialect == "postgres" {
			// One upload of a user at a time counts against the quota.
			if err := tx.Exec("SELECT id FROM users WHERE id = ? FOR UPDATE", f.UserID).Error; err != nil {
				return err
			}
		}
		at := now()
		if err := withinQuota(tx, &f, quota); err != nil {
			return err
		}
		id, err := s.putBlob(ctx, tx, staged, at)
		if err != nil {
			return err
		}
		f.BlobID, f.CreatedAt = id, at
		return tx.Create(&f).Error
	})
	s.settle(ctx, staged, err == nil)
	if err != nil {
		return nil, wrap("create file", err)
	}
	return &f, nil
}

// withinQuota refuses f with *ErrOverQuota when its new blob would take
// the user's blobs past quota bytes (0: no quota); bytes the user has
// already do not count again.
func withinQuota(tx *gorm.DB, f *File, quota int64) error {
	if quota <= 0 {
		return nil
	}
	var have int64
	if err := tx.Model(&Blob{}).Where("user_id = ? AND sha256 = ?", f.UserID, f.SHA256).Count(&have).Error; err != nil || have > 0 {
		return err // bytes the user has: the sum of all theirs is not read
	}
	used, err := usedBytes(tx, f.UserID)
	if err != nil {
		return err
	}
	if used+f.Size > quota {
		return &ErrOverQuota{Quota: quota}
	}
	return nil
}

func usedBytes(tx *gorm.DB, userID int64) (int64, error) {
	var used int64
	err := tx.Model(&Blob{}).Select("COALESCE(SUM(size), 0)").Where("user_id = ?", userID).Scan(&used).Error
	return used, err
}

// UsedBytes is what the user's files take, each stored blob counted once.
func (s *Store) UsedBytes(ctx context.Context, userID int64) (int64, error) {
	used, err := usedBytes(s.db.WithContext(ctx), userID)
	return used, wrap("used bytes", err)
}

// Files lists the user's files, newest first.
func (s *Store) Files(ctx context.Context, userID int64) ([]File, error) {
	var out []File
	err := s.db.WithContext(ctx).Where("user_id = ?", userID).Order("id DESC").Find(&out).Error
	return out, wrap("list files", err)
}

// FileByID is the user's file (another user's: ErrNotFound).
func (s *Store) FileByID(ctx context.Context, userID, id int64) (*File, error) {
	var f File
	err := s.db.WithContext(ctx).Where("id = ? AND user_id = ?", id, userID).Take(&f).Error
	if err != nil {
		return nil, wrap("file", err)
	}
	return &f, nil
}

// FileData gives the user's file and its bytes, or its thumbnail's (nil
// when it has none).
func (s *Store) FileData(ctx context.Context, userID, id int64, thumbnail bool) (*File, []byte, error) {
	f, err := s.FileByID(ctx, userID, id)
	if err != nil {
		return nil, nil, err
	}
	data, err := s.readBlob(ctx, userID, f.BlobID, thumbnail, 0)
	if err != nil {
		return nil, nil, wrap("file data", err)
	}
	return f, data, nil
}

// DeleteFile deletes the user's file, and its blob when no other file names
// it; ErrFileInUse while a message holds it, ErrFileInProject while a
// project does.
func (s *Store) DeleteFile(ctx context.Context, userID, id int64) error {
	err := s.transact(ctx, func(tx *gorm.DB) error {
		var f File
		if err := tx.Where("id = ? AND user_id = ?", id, userID).Take(&f).Error; err != nil {
			return err
		}
		var held int64
		if err := tx.Model(&MessageAttachment{}).Where("file_id = ?", id).Count(&held).Error; err != nil {
			return err
		}
		if held > 0 {
			return ErrFileInUse
		}
		if err := tx.Model(&ProjectFile{}).Where("file_id = ?", id).Count(&held).Error; err != nil {
			return err
		}
		if held > 0 {
			return ErrFileInProject
		}
		return tx.Delete(&File{}, id).Error // the trigger files_release takes the blob
	})
	return wrap("delete file", err)
}

// attachFiles makes msg hold the user's files, in order, in tx: a file
// that is not the user's gives ErrNotFound and nothing is attached.
func attachFiles(tx *gorm.DB, userID, messageID int64, fileIDs []int64) error {
	if len(fileIDs) == 0 {
		return nil
	}
	var n int64
	if err := tx.Model(&File{}).Where("user_id = ? AND id IN ?", userID, fileIDs).Count(&n).Error; err != nil {
		return err
	}
	if n != int64(len(fileIDs)) {
		return fmt.Errorf("attachments: %w", ErrNotFound)
	}
	rows := make([]MessageAttachment, len(fileIDs))
	for i, id := range fileIDs {
		rows[i] = MessageAttachment{MessageID: messageID, FileID: id, Position: int64(i)}
	}
	return tx.Create(&rows).Error
}

// Attachment is a file as a message carries it.
type Attachment struct {
	MessageID int64 `json:"-"`
	File
}

// Attachments gives the files each of the user's messages holds, in order,
// keyed by message id.
func (s *Store) Attachments(ctx context.Context, userID int64, messageIDs []int64) (map[int64][]File, error) {
	out := map[int64][]File{}
	if len(messageIDs) == 0 {
		return out, nil
	}
	var rows []Attachment
	err := s.db.WithContext(ctx).Table("message_attachments AS a").
		Select("a.message_id, f.*").
		Joins("JOIN files f ON f.id = a.file_id").
		Where("a.message_id IN ? AND f.user_id = ?", messageIDs, userID).
		Order("a.message_id, a.position").Scan(&rows).Error
	if err != nil {
		return nil, wrap("attachments", err)
	}
	for _, r := range rows {
		out[r.MessageID] = append(out[r.MessageID], r.File)
	}
	return out, nil
}

// FileWithData is a file and its bytes, as an agent reads it.
type FileWithData struct {
	File
	Data []byte
}

// MessageFiles gives the files a message of the user holds, with their
// bytes, in order. A file deleted meanwhile (its conversation went) is
// simply not there.
func (s *Store) MessageFiles(ctx context.Context, userID, messageID int64) ([]FileWithData, error) {
	// Most messages have none: one index probe, by a hand-written
	// statement, answers that before gorm builds the join (a turn asks
	// for every user message it answers).
	sqlDB, err := s.db.DB()
	if err != nil {
		return nil, wrap("message files", err)
	}
	var attached bool
	if err := sqlDB.QueryRowContext(ctx, hasAttachmentsStmt.in(s.dialect), messageID).Scan(&attached); err != nil {
		return nil, wrap("message files", err)
	}
	if !attached {
		return nil, nil
	}
	byMsg, err := s.Attachments(ctx, userID, []int64{messageID})
	if err != nil {
		return nil, err
	}
	var out []FileWithData
	for _, f := range byMsg[messageID] {
		data, err := s.readBlob(ctx, userID, f.BlobID, false, 0)
		if errors.Is(err, gorm.ErrRecordNotFound) {
			continue
		}
		if err != nil {
			return nil, wrap("message files", err)
		}
		out = append(out, FileWithData{File: f, Data: data})
	}
	return out, nil
}

// UnreferencedBlobs counts blobs no file names, and with the S3 store
// the objects no blob names (older than the grace): there should be none,
// as a blob and its file commit together, the last file takes its blob,
// and a blob's objects go through the deletion queue (blobs_s3.go).
func (s *Store) UnreferencedBlobs(ctx context.Context) (int64, error) {
	var n int64
	err := s.db.WithContext(ctx).Model(&Blob{}).
		Where("NOT EXISTS (SELECT 1 FROM files WHERE files.blob_id = blobs.id)").Count(&n).Error
	if err != nil {
		return 0, wrap("unreferenced blobs", err)
	}
	objects, err := s.countOrphanObjects(ctx)
	return n + objects, wrap("unreferenced blobs", err)
}

// PurgeUnreferencedBlobs deletes the blobs no file names, and the objects
// no blob names (there should be none: see UnreferencedBlobs), and says
// how many went and their bytes. One statement: a blob an upload attaches
// meanwhile commits with its file, so it is named and kept.
func (s *Store) PurgeUnreferencedBlobs(ctx context.Context) (n, bytes int64, err error) {
	err = s.transact(ctx, func(tx *gorm.DB) error {
		q := tx.Model(&Blob{}).Where("NOT EXISTS (SELECT 1 FROM files WHERE files.blob_id = blobs.id)")
		if err := q.Select("COALESCE(SUM(size), 0)").Row().Scan(&bytes); err != nil {
			return err
		}
		res := tx.Where("NOT EXISTS (SELECT 1 FROM files WHERE files.blob_id = blobs.id)").Delete(&Blob{})
		n = res.RowsAffected
		return res.Error
	})
	if err != nil {
		return 0, 0, wrap("purge unreferenced blobs", err)
	}
	if _, err := s.DrainBlobDeletions(ctx); err != nil { // the purged rows' objects
		return n, bytes, wrap("purge unreferenced blobs", err)
	}
	on, obytes, err := s.SweepOrphanObjects(ctx)
	return n + on, bytes + obytes, wrap("purge unreferenced blobs", err)
}

// StorageByUser is the bytes of blobs each user holds, by user id.
func (s *Store) StorageByUser(ctx context.Context) (map[int64]int64, error) {
	var rows []struct {
		UserID int64
		Bytes  int64
	}
	err := s.db.WithContext(ctx).Model(&Blob{}).Select("user_id, SUM(size) AS bytes").Group("user_id").Scan(&rows).Error
	out := make(map[int64]int64, len(rows))
	for _, r := range rows {
		out[r.UserID] = r.Bytes
	}
	return out, wrap("storage by user", err)
}

// BlobCounts are the files and blobs of every user, as housekeeping shows
// them: Unreferenced blobs (no file names them) should be none.
type BlobCounts struct {
	Files, Blobs, Bytes, Unreferenced int64
}

// CountBlobs counts every user's files and blobs.
func (s *Store) CountBlobs(ctx context.Context) (BlobCounts, error) {
	var c BlobCounts
	db := s.db.WithContext(ctx)
	if err := db.Model(&File{}).Count(&c.Files).Error; err != nil {
		return c, wrap("count files", err)
	}
	if err := db.Model(&Blob{}).Select("COUNT(*), COALESCE(SUM(size), 0)").Row().Scan(&c.Blobs, &c.Bytes); err != nil {
		return c, wrap("count blobs", err)
	}
	n, err := s.UnreferencedBlobs(ctx)
	c.Unreferenced = n
	return c, err
}

// file stores an imported file unless the account has its uid already
// (skipped); its blob is shared with the account's copy of the same bytes.
func (im *importer) file(nf *NewFile) error {
	f := nf.File
	uid, have, err := im.fileUID(f.UID)
	if err != nil {
		return err
	}
	if have != 0 {
		im.n.SkippedFiles++
		return nil
	}
	f.UID = uid
	staged := im.staged[nf]
	if staged == nil {
		staged = &stagedBlob{owner: im.userID, sum: f.SHA256, data: nf.Data, thumbnail: nf.Thumbnail}
	}
	id, err := im.store.putBlob(im.ctx, im.tx, staged, now())
	if err != nil {
		return err
	}
	f.ID, f.UserID, f.BlobID = 0, im.userID, id
	if err := im.tx.Create(&f).Error; err != nil {
		return err
	}
	im.fileIDs = append(im.fileIDs, f.ID)
	im.n.Files++
	return nil
}

// importedFileUIDs derives the uid an imported file takes in an account
// when another account has its uid already (a file's uid is unique across
// the database): the same for the same account and uid, so that importing
// the file again finds it, and an export of one account imports into
// another.
var importedFileUIDs = uuid.MustParse("6f1d3c8e-2b7a-4e59-9a41-0c5d2f8b7e13")

// fileUID says which uid a file of the import takes in the account, and
// the id of the account's file of that uid (0: none yet): the file's own
// uid, unless another account holds it; then one derived from it.
func (im *importer) fileUID(uid string) (string, int64, error) {
	for _, u := range []string{uid, uuid.NewSHA1(importedFileUIDs, []byte(fmt.Sprintf("%d/%s", im.userID, uid))).String()} {
		var rows []File
		if err := im.tx.Select("id", "user_id").Where("uid = ?", u).Limit(1).Find(&rows).Error; err != nil {
			return "", 0, err
		}
		if len(rows) == 0 {
			return u, 0, nil
		}
		if rows[0].UserID == im.userID {
			return u, rows[0].ID, nil
		}
	}
	return "", 0, &ImportError{Reason: fmt.Sprintf("file %s: its uid and the one derived from it belong to other accounts", uid)}
}

// attachments makes the imported messages hold their files, named by uid:
// files of the file (earlier lines) or of the account.
func (im *importer) attachments(e *ExportedExchange, msgs []Message) error {
	for _, m := range msgs {
		uids := e.Attachments[m.UID]
		for pos, uid := range uids {
			_, id, err := im.fileUID(uid)
			if err != nil {
				return err
			}
			if id == 0 {
				return &ImportError{Reason: fmt.Sprintf("message %s holds file %s, which is neither in the file (before it) nor in the account", m.UID, uid)}
			}
			if err := im.tx.Create(&MessageAttachment{MessageID: m.ID, FileID: id, Position: int64(pos)}).Error; err != nil {
				return err
			}
		}
	}
	return nil
}

// ExportFiles calls fn with each of the user's files and its bytes, oldest
// first, one at a time.
func (s *Store) ExportFiles(ctx context.Context, userID int64, fn func(*FileWithData) error) error {
	var ids []int64
	if err := s.db.WithContext(ctx).Model(&File{}).Where("user_id = ?", userID).Order("id").Pluck("id", &ids).Error; err != nil {
		return wrap("export files", err)
	}
	for _, id := range ids {
		f, data, err := s.FileData(ctx, userID, id, false)
		if errors.Is(err, ErrNotFound) {
			continue // deleted meanwhile
		}
		if err != nil {
			return err
		}
		if err := fn(&FileWithData{File: *f, Data: data}); err != nil {
			return err
		}
	}
	return nil
}

// ExportAttachments gives the uids of the files each of the user's
// messages holds, by the message's uid.
func (s *Store) ExportAttachments(ctx context.Context, userID int64) (map[string][]string, error) {
	var rows []struct{ MessageUID, FileUID string }
	err := s.db.WithContext(ctx).Table("message_attachments AS a").
		Select("m.uid AS message_uid, f.uid AS file_uid").
		Joins("JOIN files f ON f.id = a.file_id").Joins("JOIN messages m ON m.id = a.message_id").
		Where("f.user_id = ?", userID).Order("a.message_id, a.position").Scan(&rows).Error
	out := map[string][]string{}
	for _, r := range rows {
		out[r.MessageUID] = append(out[r.MessageUID], r.FileUID)
	}
	return out, wrap("export attachments", err)
}
