package handlers

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"os"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"palaver/dataport"
	"palaver/models"
	"palaver/paths"
	"palaver/transfer"
)

// Limits of an import's upload.
const (
	importLimit     = transfer.DefaultMaxInputBytes // the file: 256 MiB
	importEnvelope  = 1 << 20                       // a multipart form's parts around the file
	importFieldMax  = 4 << 10                       // one form field before the file (csrf_token)
	importMaxFields = 16
	importIdle      = 30 * time.Second // the longest wait for the client's next bytes
	importDeadline  = 10 * time.Minute // the longest an upload may take, all of it
	importDrainMax  = 1 << 20          // what is read after the file to keep the connection
)

// importRoute says whether the request is an import, whose body may be up
// to importLimit and is read as a stream (limitBody leaves it alone).
func importRoute(c *fiber.Ctx) bool {
	return c.Method() == fiber.MethodPost && (c.Path() == paths.Import || c.Path() == paths.AccountImport)
}

// importUpload reads the request's file into the user's account. The
// upload is first copied whole to a temporary file, within its size limit
// and its deadline (idleReader), before the store is touched: a client
// that trickles its body holds a connection, never the database. The file
// is the raw body, or the part "file" of a multipart form, whose fields
// before it are given to check (the HTML form's CSRF token) before the
// file is read. An upload refused is a *fiber.Error (400, 408 or 413) that
// says why; the connection then closes, lingering, as the client may still
// be sending (limitBody). A file the reader refused is a Refusal (400)
// carrying the reader's *dataport.RefusedError.
func (h *Handlers) importUpload(c *fiber.Ctx, check func(fields map[string]string) error) (models.ImportCounts, error) {
	var n models.ImportCounts
	limit := cmp.Or(h.cfg.MaxImportBytes, importLimit)
	tooLarge := fiber.NewError(fiber.StatusRequestEntityTooLarge,
		fmt.Sprintf("The file is too large: an import can be at most %d MiB. Nothing was imported.", limit>>20))
	if int64(c.Request().Header.ContentLength()) > limit+importEnvelope {
		return n, tooLarge
	}
	deadline := cmp.Or(h.cfg.ImportDeadline, importDeadline)
	body := &idleReader{r: requestBody(c), conn: c.Context().Conn(), left: limit + importEnvelope, end: time.Now().Add(deadline)}
	upload, fields, err := uploadedFile(c, body)
	if err != nil {
		return n, uploadError(err, tooLarge, deadline)
	}
	if check != nil {
		if err := check(fields); err != nil {
			return n, err
		}
	}
	file, err := transfer.Spool(upload, limit, "")
	if err != nil {
		return n, uploadError(err, tooLarge, deadline)
	}
	defer transfer.RemoveSpool(file)
	// The rest of a form (its closing boundary) is read, so that the
	// connection can carry the next request; a client that sends more
	// after its file has its connection closed.
	if k, err := io.Copy(io.Discard, io.LimitReader(body, importDrainMax)); err == nil && k < importDrainMax {
		c.Locals(localBodyRead, true)
	}
	// Without a request's deadline for its database work: an import of a
	// large file rightly takes longer, in short transactions (Store.Import).
	ctx := context.WithoutCancel(c.UserContext())
	maxFile, _, _ := h.fileLimits()
	n, err = dataport.Import(ctx, h.store, currentUser(c).ID, file,
		transfer.Options{MaxInputBytes: limit, MaxStoredBytes: h.cfg.MaxImportStored, MaxFileBytes: max(maxFile, transfer.DefaultMaxFileBytes)})
	var refused *dataport.RefusedError
	switch {
	case errors.Is(err, transfer.ErrTooLarge):
		return n, tooLarge
	case errors.As(err, &refused):
		return n, refuse(fiber.StatusBadRequest, "Nothing was imported: "+sentence(refused.Reason)).because(err)
	}
	return n, err
}

// uploadError answers what went wrong while the upload was read.
func uploadError(err, tooLarge error, deadline time.Duration) error {
	var fe *fiber.Error
	switch {
	case errors.As(err, &fe):
		return err
	case errors.Is(err, transfer.ErrTooLarge):
		return tooLarge
	case errors.Is(err, errUploadTimeout), errors.Is(err, os.ErrDeadlineExceeded):
		return fiber.NewError(fiber.StatusRequestTimeout, fmt.Sprintf(
			"The upload took too long: a file must arrive within %s, with no pause over %s. Nothing was imported.", deadline, importIdle))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fiber.NewError(fiber.StatusBadRequest, "Nothing was imported: the upload ended before the end of its body.")
	}
	return err
}

// sentence ends a reason with a full stop.
func sentence(s string) string {
	if s != "" && !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

// requestBody is the request's body as a stream: fasthttp's, or the body
// already read (a request that did not take the import route's way).
func requestBody(c *fiber.Ctx) io.Reader {
	if s := c.Request().BodyStream(); s != nil {
		return s
	}
	return bytes.NewReader(c.Body())
}

// uploadedFile finds the file in an import request: the part "file" of a
// multipart form (its other fields before it returned, each at most
// importFieldMax), or else the whole body.
func uploadedFile(c *fiber.Ctx, body io.Reader) (io.Reader, map[string]string, error) {
	ctype := string(c.Request().Header.ContentType())
	media, params, err := mime.ParseMediaType(ctype)
	if err != nil || media != fiber.MIMEMultipartForm {
		return body, nil, nil
	}
	if params["boundary"] == "" {
		return nil, nil, fiber.NewError(fiber.StatusBadRequest, "A multipart form without a boundary.")
	}
	mr := multipart.NewReader(body, params["boundary"])
	fields := map[string]string{}
	for range importMaxFields {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, fiber.NewError(fiber.StatusBadRequest, "The form could not be read: "+err.Error())
		}
		if part.FormName() == "file" {
			return part, fields, nil
		}
		v, err := io.ReadAll(io.LimitReader(part, importFieldMax+1))
		if err != nil || len(v) > importFieldMax {
			return nil, nil, fiber.NewError(fiber.StatusBadRequest, fmt.Sprintf("The form's field %q could not be read, or is over %d bytes.", part.FormName(), importFieldMax))
		}
		fields[part.FormName()] = string(v)
	}
	return nil, nil, fiber.NewError(fiber.StatusBadRequest, `The form has no field "file" (the file to import).`)
}

// idleReader reads the request body with a deadline that moves on with
// every read, up to the upload's own end: an upload may take a while as
// long as it keeps coming (the server's ReadTimeout would cut a large one
// off), but never more than its deadline in all, so a client sending a
// byte now and then cannot hold it open. Past left bytes it fails with
// transfer.ErrTooLarge, past end with errUploadTimeout. Its end is sticky:
// a chunked body's stream would read on into the connection after its
// last chunk.
type idleReader struct {
	r    io.Reader
	conn interface{ SetReadDeadline(time.Time) error }
	left int64
	end  time.Time
	err  error
}

// errUploadTimeout is an upload past its deadline.
var errUploadTimeout = errors.New("the upload took too long")

func (r *idleReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if r.left <= 0 {
		return 0, transfer.ErrTooLarge
	}
	now := time.Now()
	if !now.Before(r.end) {
		r.err = errUploadTimeout
		return 0, r.err
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	if r.conn != nil {
		next := now.Add(importIdle)
		if r.end.Before(next) {
			next = r.end
		}
		_ = r.conn.SetReadDeadline(next) // a connection without deadlines (a test's) reads as before
	}
	k, err := r.r.Read(p)
	r.left -= int64(k)
	r.err = err
	return k, err
}
