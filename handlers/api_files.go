package handlers

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"palaver/models"
	"palaver/paths"
	"palaver/screens"
	"palaver/transfer"
	"palaver/uploads"
	"palaver/views"
)

// Default limits of files (issue 26), each a flag of palaver serve.
const (
	defaultMaxFileBytes    = 20 << 20 // one file
	defaultMaxFilesPerMsg  = 10       // files one message holds
	defaultUserQuotaBytes  = 1 << 30  // all of one user's files
	defaultUploadDeadline  = 2 * time.Minute
	fileResponseCSP        = "sandbox; default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'"
	fileStoringAtOnce      = 4 // uploads read into memory, checked and stored at once, in this process
	fileEnvelope           = 64 << 10
	fileCacheControl       = "private, max-age=3600"
	fileAttachmentFallback = "file"
)

// fileLimits are the configured limits, defaults filled in.
func (h *Handlers) fileLimits() (maxFile int64, perMessage int, quota int64) {
	return cmp.Or(h.cfg.MaxFileBytes, defaultMaxFileBytes), cmp.Or(h.cfg.MaxFilesPerMessage, defaultMaxFilesPerMsg),
		cmp.Or(h.cfg.UserQuotaBytes, defaultUserQuotaBytes)
}

// fileRecord is a file as the API shows it (API.md, "Attachments").
type fileRecord struct {
	ID          int64     `json:"id"`
	UID         string    `json:"uid"`
	Name        string    `json:"name"`
	ContentType string    `json:"content_type"`
	Size        int64     `json:"size"`
	SHA256      string    `json:"sha256"`
	Width       *int64    `json:"width,omitempty"`
	Height      *int64    `json:"height,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
}

func fileRecordOf(f *models.File) fileRecord {
	return fileRecord{ID: f.ID, UID: f.UID, Name: f.Name, ContentType: f.ContentType, Size: f.Size, SHA256: f.SHA256,
		Width: f.Width, Height: f.Height, CreatedAt: f.CreatedAt}
}

// fileRoute says whether the request is an upload of a file, whose body
// may be larger than bodyLimit and is read as a stream (limitBody).
func fileRoute(c *fiber.Ctx) bool {
	return c.Method() == fiber.MethodPost && c.Path() == paths.Files
}

// apiFileUpload stores the multipart part "file" (or the raw body, named by
// ?name=) as one of the caller's files: 201 and its record.
func (h *Handlers) apiFileUpload(c *fiber.Ctx) error {
	f, err := h.receiveFile(c)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(fileRecordOf(f))
}

// receiveFile reads an upload within its limits and its deadline to an
// unlinked temporary file (a crash leaves nothing behind), then checks and
// stores it; a few at a time are held in memory to be checked and stored.
func (h *Handlers) receiveFile(c *fiber.Ctx) (*models.File, error) {
	maxFile, _, _ := h.fileLimits()
	tooLarge := refuse(fiber.StatusRequestEntityTooLarge,
		fmt.Sprintf("The file is too large: the limit is %d MiB a file. Nothing was stored.", maxFile>>20))
	if int64(c.Request().Header.ContentLength()) > maxFile+fileEnvelope {
		return nil, tooLarge
	}
	deadline := cmp.Or(h.cfg.UploadDeadline, defaultUploadDeadline)
	body := &idleReader{r: requestBody(c), conn: c.Context().Conn(), left: maxFile + fileEnvelope, end: time.Now().Add(deadline)}
	upload, _, err := uploadedFile(c, body)
	if err != nil {
		return nil, fileUploadError(err, tooLarge, deadline)
	}
	name := c.Query("name")
	if p, ok := upload.(*multipart.Part); ok {
		// The name as sent: Part.FileName would cut it to its base, and
		// a name with a path is refused, not silently changed.
		_, params, _ := mime.ParseMediaType(p.Header.Get("Content-Disposition"))
		name = params["filename"]
	}
	return h.storeUpload(c, name, upload, func() {
		if k, err := io.Copy(io.Discard, io.LimitReader(body, importDrainMax)); err == nil && k < importDrainMax {
			c.Locals(localBodyRead, true)
		}
	}, tooLarge, deadline)
}

// storeUpload spools r (at most the file limit), checks it and stores it;
// drain, when not nil, reads what follows the file in the request.
func (h *Handlers) storeUpload(c *fiber.Ctx, name string, r io.Reader, drain func(), tooLarge error, deadline time.Duration) (*models.File, error) {
	maxFile, _, quota := h.fileLimits()
	spool, err := os.CreateTemp("", "palaver-upload-*")
	if err != nil {
		return nil, fmt.Errorf("spool upload: %w", err)
	}
	_ = os.Remove(spool.Name()) // unlinked at once: only this process holds it, and not past a crash
	defer spool.Close()
	n, err := io.Copy(spool, io.LimitReader(r, maxFile+1))
	if err != nil {
		return nil, fileUploadError(err, tooLarge, deadline)
	}
	if n > maxFile {
		return nil, tooLarge
	}
	if drain != nil {
		drain()
	}
	select {
	case h.storing <- struct{}{}:
		defer func() { <-h.storing }()
	case <-c.UserContext().Done():
		return nil, c.UserContext().Err()
	}
	buf := uploadBuffers.Get().(*[]byte)
	defer uploadBuffers.Put(buf)
	if *buf == nil || int64(cap(*buf)) < n { // an empty file is bytes too: not NULL
		*buf = make([]byte, n)
	}
	data := (*buf)[:n]
	if _, err := spool.ReadAt(data, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read spooled upload: %w", err)
	}
	info, err := uploads.Inspect(name, data)
	var bad *uploads.Refused
	if errors.As(err, &bad) {
		return nil, refuse(fiber.StatusBadRequest, "The file was refused: "+sentence(bad.Reason)+" Nothing was stored.")
	}
	if err != nil {
		return nil, err
	}
	f := models.File{UserID: currentUser(c).ID, Name: info.Name, ContentType: info.ContentType, Kind: info.Kind,
		Size: n, SHA256: info.SHA256}
	if info.Kind == models.FileImage {
		f.Width, f.Height = &info.Width, &info.Height
	}
	stored, err := h.store.CreateFile(c.UserContext(), models.NewFile{File: f, Data: data, Thumbnail: info.Thumbnail}, quota)
	var over *models.ErrOverQuota
	if errors.As(err, &over) {
		return nil, refuse(fiber.StatusRequestEntityTooLarge, fmt.Sprintf(
			"The file would take your files past your quota of %d MiB a user. Nothing was stored.", quota>>20))
	}
	return stored, err
}

// uploadBuffers hold uploads read back to be checked and stored (at most
// fileStoringAtOnce at a time). A buffer is used again while uploads keep
// coming: memory fresh from the system costs a page fault every 4 KiB, and
// on these machines that was 15–20 ms for a 4 MiB upload, more than
// checking it. Nothing keeps a slice of one past storeUpload: the store
// copies what it writes. Idle, the garbage collector takes them back.
var uploadBuffers = sync.Pool{New: func() any { return new([]byte) }}

// fileUploadError answers what went wrong while an upload was read.
func fileUploadError(err, tooLarge error, deadline time.Duration) error {
	switch {
	case errors.Is(err, transfer.ErrTooLarge):
		return tooLarge
	case errors.Is(err, errUploadTimeout), errors.Is(err, os.ErrDeadlineExceeded):
		return refuse(fiber.StatusRequestTimeout, fmt.Sprintf(
			"The upload took too long: a file must arrive within %s, with no pause over %s. Nothing was stored.", deadline, importIdle))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return refuse(fiber.StatusBadRequest, "The upload ended before the end of its file. Nothing was stored.")
	}
	var fe *fiber.Error
	if errors.As(err, &fe) {
		return err
	}
	return refuse(fiber.StatusBadRequest, "The upload could not be read: "+err.Error()+". Nothing was stored.")
}

// apiFiles lists the caller's files and how much of the quota they use.
func (h *Handlers) apiFiles(c *fiber.Ctx) error {
	uid := currentUser(c).ID
	files, err := h.store.Files(c.UserContext(), uid)
	if err != nil {
		return err
	}
	used, err := h.store.UsedBytes(c.UserContext(), uid)
	if err != nil {
		return err
	}
	_, _, quota := h.fileLimits()
	out := make([]fileRecord, len(files))
	for i := range files {
		out[i] = fileRecordOf(&files[i])
	}
	return c.JSON(fiber.Map{"files": out, "used_bytes": used, "quota_bytes": quota})
}

// inlineTypes are the types a file is served as, inline: the images
// Palaver decodes. Everything else (SVG and HTML included) is a download.
var inlineTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// apiFile serves the bytes of one of the caller's files.
func (h *Handlers) apiFile(c *fiber.Ctx) error {
	return h.serveFile(c, false)
}

// apiFileThumbnail serves an image file's thumbnail (404 for other files).
func (h *Handlers) apiFileThumbnail(c *fiber.Ctx) error {
	return h.serveFile(c, true)
}

func (h *Handlers) serveFile(c *fiber.Ctx, thumbnail bool) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	f, data, err := h.store.FileData(c.UserContext(), currentUser(c).ID, id, thumbnail)
	if err != nil {
		return err
	}
	return sendFile(c, f, data, thumbnail)
}

// sendFile answers a file's bytes (or its thumbnail's) with the headers of
// API.md: images inline, everything else a download, never sniffed.
func sendFile(c *fiber.Ctx, f *models.File, data []byte, thumbnail bool) error {
	if thumbnail && len(data) == 0 {
		return fmt.Errorf("thumbnail of file %d: %w", f.ID, models.ErrNotFound)
	}
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderContentSecurityPolicy, fileResponseCSP)
	c.Set(fiber.HeaderCacheControl, fileCacheControl)
	base, _, _ := strings.Cut(f.ContentType, ";")
	switch {
	case thumbnail:
		c.Set(fiber.HeaderContentType, sniffThumb(data))
	case inlineTypes[base]:
		c.Set(fiber.HeaderContentType, base)
		c.Set(fiber.HeaderContentDisposition, "inline; "+dispositionName(f.Name))
	default:
		c.Set(fiber.HeaderContentType, fiber.MIMEOctetStream)
		c.Set(fiber.HeaderContentDisposition, "attachment; "+dispositionName(f.Name))
	}
	return c.Send(data)
}

// sniffThumb is a thumbnail's type: PNG or JPEG, as uploads makes them.
func sniffThumb(b []byte) string {
	if len(b) > 3 && b[0] == 0xFF && b[1] == 0xD8 {
		return "image/jpeg"
	}
	return "image/png"
}

// dispositionName is a Content-Disposition's filename parameters: an ASCII
// fallback and the UTF-8 name (RFC 6266).
func dispositionName(name string) string {
	ascii := strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' || r == ';' {
			return '_'
		}
		return r
	}, name)
	if ascii == "" {
		ascii = fileAttachmentFallback
	}
	return `filename="` + ascii + `"; filename*=UTF-8''` + url.PathEscape(name)
}

// apiFileDelete deletes one of the caller's files: 409 while a message
// holds it.
func (h *Handlers) apiFileDelete(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	if err := h.store.DeleteFile(c.UserContext(), currentUser(c).ID, id); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"message": "File deleted."})
}

// checkAttachments refuses more files than a message may hold, or the same
// file twice.
func (h *Handlers) checkAttachments(ids []int64) error {
	_, perMessage, _ := h.fileLimits()
	if len(ids) > perMessage {
		return refuse(fiber.StatusBadRequest, fmt.Sprintf(
			"A message can hold at most %d files a message; this one has %d. Nothing was sent.", perMessage, len(ids)))
	}
	seen := make(map[int64]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			return refuse(fiber.StatusBadRequest, fmt.Sprintf("File %d is attached twice.", id))
		}
		seen[id] = true
	}
	return nil
}

// composerUpload says whether the request is a composer's send as a
// multipart form, which may carry a file without JavaScript, or a
// project page's upload of a file.
func composerUpload(c *fiber.Ctx) bool {
	if c.Method() != fiber.MethodPost || !strings.HasPrefix(string(c.Request().Header.ContentType()), fiber.MIMEMultipartForm) {
		return false
	}
	p := c.Path()
	return p == paths.ChatSend || strings.HasPrefix(p, paths.Pages+"/") && strings.HasSuffix(p, "/chat") ||
		strings.HasPrefix(p, paths.Projects+"/") && strings.HasSuffix(p, "/files")
}

// composerBodyLimit is the largest composer form: one file at the file
// limit and the form around it (more files go one by one with JavaScript).
func (h *Handlers) composerBodyLimit() int64 {
	maxFile, _, _ := h.fileLimits()
	return maxFile + fileEnvelope
}

// composerAttachments reads the files a composer's message holds: the ids
// of files app.js uploaded ("attachments"), and, without JavaScript, the
// form's own files ("file"), stored here first. Too many is refused before
// anything is stored; so is a form with files and no text.
func (h *Handlers) composerAttachments(c *fiber.Ctx, query string) ([]int64, error) {
	var ids []int64
	parse := func(vs []string) error {
		for _, v := range vs {
			id, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil || id <= 0 {
				return refuse(fiber.StatusBadRequest, fmt.Sprintf("%q is not a file's id.", v))
			}
			ids = append(ids, id)
		}
		return nil
	}
	var raw []string
	for _, v := range c.Request().PostArgs().PeekMulti("attachments") {
		raw = append(raw, string(v))
	}
	if err := parse(raw); err != nil {
		return nil, err
	}
	if !composerUpload(c) {
		return ids, h.checkAttachments(ids)
	}
	form, err := c.MultipartForm()
	if err != nil {
		return nil, refuse(fiber.StatusBadRequest, "The form could not be read: "+err.Error())
	}
	if err := parse(form.Value["attachments"]); err != nil {
		return nil, err
	}
	var uploads []*multipart.FileHeader
	for _, fh := range form.File["file"] {
		if fh.Filename != "" || fh.Size > 0 { // an empty file input still sends its part
			uploads = append(uploads, fh)
		}
	}
	_, perMessage, _ := h.fileLimits()
	if err := h.checkAttachments(ids); err != nil || len(uploads) == 0 {
		return ids, err
	}
	if len(ids)+len(uploads) > perMessage {
		return nil, h.checkAttachments(make([]int64, len(ids)+len(uploads)))
	}
	if strings.TrimSpace(query) == "" {
		return nil, refuse(fiber.StatusUnprocessableEntity, "Write a message to send with the file. Nothing was stored.")
	}
	maxFile, _, _ := h.fileLimits()
	tooLarge := refuse(fiber.StatusRequestEntityTooLarge,
		fmt.Sprintf("The file is too large: the limit is %d MiB a file. Nothing was stored.", maxFile>>20))
	for _, fh := range uploads {
		r, err := fh.Open()
		if err != nil {
			return nil, fmt.Errorf("open uploaded file: %w", err)
		}
		f, err := h.storeUpload(c, fh.Filename, r, nil, tooLarge, defaultUploadDeadline)
		_ = r.Close()
		if err != nil {
			return nil, err
		}
		ids = append(ids, f.ID)
	}
	return ids, nil
}

// accountFiles is the account page's files section: limits and usage.
func (h *Handlers) accountFiles(c *fiber.Ctx) (views.AccountFiles, error) {
	maxFile, perMessage, quota := h.fileLimits()
	uid := currentUser(c).ID
	used, err := h.store.UsedBytes(c.UserContext(), uid)
	if err != nil {
		return views.AccountFiles{}, err
	}
	files, err := h.store.Files(c.UserContext(), uid)
	if err != nil {
		return views.AccountFiles{}, err
	}
	return views.AccountFiles{Count: len(files), Used: screens.HumanBytes(used), Quota: screens.HumanBytes(quota),
		PerFile: screens.HumanBytes(maxFile), PerMessage: perMessage, UsedPercent: int(min(100, used*100/max(quota, 1)))}, nil
}
