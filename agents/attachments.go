package agents

import (
	"encoding/base64"
	"fmt"
	"strings"
	"unicode/utf8"

	"palaver/models"
)

// DefaultFileTextChars is how much of a text file the model is shown, in
// characters, unless Options.FileTextChars says otherwise.
const DefaultFileTextChars = 20_000

// baseType is a content type without its parameters.
func baseType(ct string) string {
	base, _, _ := strings.Cut(ct, ";")
	return strings.TrimSpace(base)
}

// attachedLines is the builtin agent's deterministic account of the
// attachments (API.md, "The builtin agent"): one line each, "You attached
// NAME (TYPE, N bytes[, W×H])", and for a text file "N lines; first line: …".
func attachedLines(files []models.FileWithData) string {
	var b strings.Builder
	for i, f := range files {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "You attached %s (%s, %d bytes", f.Name, baseType(f.ContentType), f.Size)
		if f.Width != nil && f.Height != nil {
			fmt.Fprintf(&b, ", %d×%d", *f.Width, *f.Height)
		}
		b.WriteString(")")
		if f.Kind == models.FileText {
			b.WriteString(",")
			text := strings.TrimSuffix(string(f.Data), "\n")
			lines := 0
			if text != "" || len(f.Data) > 0 {
				lines = strings.Count(text, "\n") + 1
			}
			first, _, _ := strings.Cut(text, "\n")
			first = strings.TrimRight(first, "\r")
			if utf8.RuneCountInString(first) > 200 {
				first = string([]rune(first)[:200]) + "…"
			}
			fmt.Fprintf(&b, " %d lines; first line: %s", lines, first)
		}
	}
	return b.String()
}

// contentPart is one part of a user message with images (OpenAI's vision
// format): text, or an image as a data URL.
type contentPart struct {
	Type     string    `json:"type"`
	Text     string    `json:"text,omitempty"`
	ImageURL *imageURL `json:"image_url,omitempty"`
}

type imageURL struct {
	URL string `json:"url"`
}

// filesForModel turns the attachments into what a model reads: the text
// files as fenced blocks headed by their names (each cut at textChars
// characters, saying so), a PDF by its name alone, the others named with
// their type and size; and the images, which each provider sends in its
// own format (openAIImages, anthropicImages).
func filesForModel(files []models.FileWithData, textChars int) (text string, images []models.FileWithData) {
	if textChars <= 0 {
		textChars = DefaultFileTextChars
	}
	var b strings.Builder
	for _, f := range files {
		switch f.Kind {
		case models.FileImage:
			images = append(images, f)
			fmt.Fprintf(&b, "\n\n(Attached image: %s)", f.Name)
		case models.FileText:
			body, cut := string(f.Data), ""
			if n := utf8.RuneCountInString(body); n > textChars {
				body = string([]rune(body)[:textChars])
				cut = fmt.Sprintf("\n[%s was truncated: the first %d of its %d characters are shown.]", f.Name, textChars, n)
			}
			fence := "```"
			for strings.Contains(body, fence) {
				fence += "`"
			}
			fmt.Fprintf(&b, "\n\n%s:\n%s\n%s\n%s%s", f.Name, fence, strings.TrimSuffix(body, "\n"), fence, cut)
		case models.FilePDF:
			// No text extraction: no well-kept PDF library is at hand
			// (README, "Attachments"). The model is told its name, only.
			fmt.Fprintf(&b, "\n\n(Attached PDF, its contents not shown to you: %s)", f.Name)
		default:
			fmt.Fprintf(&b, "\n\n(Attached file, not shown to you: %s, %s, %d bytes)", f.Name, baseType(f.ContentType), f.Size)
		}
	}
	return b.String(), images
}

// openAIImages are the images as OpenAI's data-URL parts (nil: none, and
// the message stays plain text).
func openAIImages(images []models.FileWithData) []contentPart {
	var out []contentPart
	for _, f := range images {
		out = append(out, contentPart{Type: "image_url", ImageURL: &imageURL{
			URL: "data:" + baseType(f.ContentType) + ";base64," + base64.StdEncoding.EncodeToString(f.Data)}})
	}
	return out
}

// anthropicImages are the images as Anthropic's image blocks (base64).
func anthropicImages(images []models.FileWithData) []aBlock {
	var out []aBlock
	for _, f := range images {
		out = append(out, aBlock{Type: "image", Source: &aSource{Type: "base64", MediaType: baseType(f.ContentType),
			Data: base64.StdEncoding.EncodeToString(f.Data)}})
	}
	return out
}
