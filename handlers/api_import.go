package handlers

import "github.com/gofiber/fiber/v2"

// importAnswer is what POST /api/import answers.
type importAnswer struct {
	Imported importedCounts `json:"imported"`
	Skipped  skippedCounts  `json:"skipped"`
}

type importedCounts struct {
	Exchanges int `json:"exchanges"`
	Messages  int `json:"messages"`
	Pages     int `json:"pages"`
	Projects  int `json:"projects"`
	Memories  int `json:"memories"`
}

type skippedCounts struct {
	Exchanges int `json:"exchanges"`
	Pages     int `json:"pages"`
	Projects  int `json:"projects"`
	Memories  int `json:"memories"`
}

// apiImport reads a Palaver export or a ChatGPT export (the raw body, or a
// multipart form's field "file") into the user's account: a file that
// cannot be read is refused (400 naming the line or conversation, or the
// limit; 408 past the upload's deadline; 413 over 256 MiB) and nothing of
// it is stored.
func (h *Handlers) apiImport(c *fiber.Ctx) error {
	n, err := h.importUpload(c, nil)
	if err != nil {
		return err
	}
	return c.JSON(importAnswer{
		Imported: importedCounts{Exchanges: n.Exchanges, Messages: n.Messages, Pages: n.Pages, Projects: n.Projects, Memories: n.Memories},
		Skipped:  skippedCounts{Exchanges: n.SkippedExchanges, Pages: n.SkippedPages, Projects: n.SkippedProjects, Memories: n.SkippedMemories},
	})
}
