package handlers

import (
	"github.com/gofiber/fiber/v2"

	"palaver/views"
)

// importRefusal is a refused import file (r, from importUpload) as the
// account page says it: a file too large says so plainly; one that could
// not be read says that in a person's words, with what the reader found (a
// line, a parser's complaint) as the detail, folded away.
func importRefusal(r *Refusal) *Refusal {
	if r.Status == fiber.StatusRequestEntityTooLarge {
		return r
	}
	return refuse(r.Status, "Nothing was imported: this file could not be read as a Palaver export or a ChatGPT export (conversations.json or its .zip).").
		detailed(r.Reason).because(r.Cause)
}

// accountImport reads the import form's file into the user's account (the
// CSRF token from the htmx header or the form's field before the file) and
// shows the account page with the counts imported and skipped, or why the
// file was refused (nothing of it stored).
func (h *Handlers) accountImport(c *fiber.Ctx) error {
	n, err := h.importUpload(c, func(fields map[string]string) error {
		token := c.Get("X-CSRF-Token")
		if token == "" {
			token = fields["csrf_token"]
		}
		if !h.csrfMatches(c, token) {
			return errCSRF
		}
		return nil
	})
	if r := refusalOf(err, fiber.StatusBadRequest, fiber.StatusRequestEntityTooLarge); r != nil {
		return h.accountRefused(c, importRefusal(r), func(p *views.AccountScreen, r *Refusal) { p.ImportError, p.ImportDetail = r.Reason, r.Detail })
	}
	if err != nil {
		return err
	}
	p, err := h.accountScreen(c)
	if err != nil {
		return err
	}
	p.Imported = &views.AccountImported{Exchanges: n.Exchanges, Messages: n.Messages, Pages: n.Pages,
		SkippedExchanges: n.SkippedExchanges, SkippedPages: n.SkippedPages,
		Conversations: n.Conversations, SkippedConversations: n.SkippedConversations}
	return render(c, fiber.StatusOK, views.Account(p))
}
