package handlers

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gofiber/fiber/v2"

	"palaver/dataport"
)

// apiExport streams everything the user owns as a Palaver export (NDJSON):
// read from the database a batch at a time and written as it goes, so a
// large account neither waits nor sits in memory whole. The status is sent
// with the first line; a failure past it ends the stream early (and is
// logged). At most a few run at once (export_gate.go); one whose client
// stops reading, or goes away, ends at its next write.
func (h *Handlers) apiExport(c *fiber.Ctx) error {
	userID := currentUser(c).ID
	release, err := h.exports.acquire(userID)
	if err != nil {
		c.Set(fiber.HeaderRetryAfter, exportRetryAfter)
		return err
	}
	conn := c.Context().Conn()
	c.Context().SetConnectionClose() // the write deadline stays on the connection
	c.Set(fiber.HeaderContentType, "application/x-ndjson")
	c.Set(fiber.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="palaver-export-%s.ndjson"`, time.Now().UTC().Format("2006-01-02")))
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		defer release()
		// The request is over by now: the export has its own context, which
		// its first failed write cancels (the client gone, or not reading),
		// so that the batch being read beside the writes stops too.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		out := &deadlineWriter{w: w, conn: conn, timeout: h.cfg.ExportWriteTimeout, cancel: cancel}
		n, err := dataport.Export(ctx, h.store, userID, out, nil)
		if err == nil {
			err = out.Flush()
		}
		if err != nil {
			h.log.Warn("export ended early", "user", userID, "pages", n.Pages, "exchanges", n.Exchanges, "err", err)
		}
	})
	return nil
}

// apiExchangeExport downloads one exchange with its whole log: JSON (the
// export's exchange line) or Markdown (for a person).
func (h *Handlers) apiExchangeExport(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	format := c.Query("format", "json")
	if format != "json" && format != "md" {
		return fiber.NewError(fiber.StatusBadRequest, "format must be json or md")
	}
	ex, err := h.store.ExportExchange(c.UserContext(), currentUser(c).ID, id)
	if err != nil {
		return err
	}
	var body bytes.Buffer
	name := fmt.Sprintf("palaver-chat-%d", ex.ID)
	if format == "md" {
		if err := dataport.Markdown(&body, ex); err != nil {
			return err
		}
		c.Set(fiber.HeaderContentType, "text/markdown; charset=utf-8")
		name += ".md"
	} else {
		line, err := dataport.Exchange(ex)
		if err != nil {
			return err
		}
		enc := json.NewEncoder(&body)
		enc.SetIndent("", "  ")
		if err := enc.Encode(line); err != nil {
			return err
		}
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
		name += ".json"
	}
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="`+name+`"`)
	return c.Send(body.Bytes())
}
