package handlers_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// browserProjectFiles: a project page's form (a plain multipart form,
// which JavaScript leaves alone) adds a text file, which the page lists; a chat started in the project is told
// its contents (the builtin reply quotes the instructions in force); the
// file's remove button takes it off the page.
func browserProjectFiles(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	tab := s.window("pia")
	tab.register("pia")
	dir := t.TempDir()
	notes := filepath.Join(dir, "roses.md")
	if err := os.WriteFile(notes, []byte("Prune roses in March.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tab.visit("/projects")
	tab.typeInto(`form[data-testid=new-project] [data-testid=project-name]`, "Garden")
	tab.clickToLoad(`[data-testid=project-create]`)
	project := tab.location()
	tab.do("choose the file", chromedp.SetUploadFiles(chromedp.CSS(`[data-testid=project-file-input]`), []string{notes}))
	tab.clickToLoad(`[data-testid=project-file-add]`)
	if loc := tab.location(); loc != project {
		s.fatalf("the upload landed on %q, want %q", loc, project)
	}
	if got := browserTexts(tab, `[data-testid=project-file]`); len(got) != 1 || !strings.Contains(got[0], "roses.md") {
		s.fatalf("the project's files: %q", got)
	}

	tab.typeInto(`[data-testid=project-new-chat] [data-testid=chat-input]`, "when do I prune")
	tab.clickToLoad(`[data-testid=project-new-chat] [data-testid=chat-send]`)
	tab.waitFor("the link to what the agent was told", browserCount(browserAssistantMsg+" [data-testid=agent-told]")+" === 1")
	tab.clickToLoad(browserAssistantMsg + " [data-testid=agent-told]")
	if got := tab.text(`[data-testid=agent-told-text]`); !strings.Contains(got, `File "roses.md":`) || !strings.Contains(got, "Prune roses in March.") {
		s.fatalf("what the agent was told: %q", got)
	}

	tab.visit(project)
	tab.clickToLoad(`[data-testid=project-file-remove]`)
	if n := browserEval[int](tab, `document.querySelectorAll("[data-testid=project-file]").length`); n != 0 {
		s.fatalf("%d files on the page after the removal", n)
	}
}
