package handlers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// browserProjects: a project made on /projects, its instructions saved, a
// chat started in it whose (builtin) reply shows the instructions in force
// and links to what the agent was told; a chat moved into it from the
// move form (its count in the sidebar follows); the project page's search
// finds the project's chats only, and all of them with "All chats".
func browserProjects(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	tab := s.window("pat")
	tab.register("pat")

	outside := "" // a chat outside the project that mentions roses
	tab.send("roses outside the garden")
	outside = fmt.Sprintf("/chat/%d", tab.exchangeID())

	tab.visit("/projects")
	tab.typeInto(`form[data-testid=new-project] [data-testid=project-name]`, "Garden")
	tab.clickToLoad(`[data-testid=project-create]`)
	project := tab.location()
	if !strings.HasPrefix(project, "/projects/") {
		s.fatalf("the new project opened %q", project)
	}
	tab.typeInto(`[data-testid=project-instructions]`, "Always talk about roses.")
	tab.clickToLoad(`[data-testid=project-instructions-save]`)
	if got := browserEval[string](tab, `document.querySelector("[data-testid=project-instructions]").value`); got != "Always talk about roses." {
		s.fatalf("the saved instructions read %q", got)
	}

	// A chat in the project: the reply reflects the instructions.
	tab.typeInto(`[data-testid=project-new-chat] [data-testid=chat-input]`, "when do I prune")
	tab.clickToLoad(`[data-testid=project-new-chat] [data-testid=chat-send]`)
	inProject := tab.location()
	tab.waitFor("the reply with the instructions", browserHasText(browserAssistantMsg, "Always talk about roses."))
	tab.waitFor("the link to what the agent was told", browserCount(browserAssistantMsg+" [data-testid=agent-told]")+" === 1")
	tab.waitFor("the project in the sidebar with its chat", browserHasText(`[data-testid=project-item] [data-testid=project-count]`, "1"))
	tab.clickToLoad(browserAssistantMsg + " [data-testid=agent-told]")
	if got := tab.text(`[data-testid=agent-told-text]`); !strings.Contains(got, "Always talk about roses.") {
		s.fatalf("what the agent was told: %q", got)
	}

	// Another chat, moved into the project with the move form.
	tab.visit("/chat")
	tab.click(`[data-testid=new-chat]`)
	tab.waitFor("a new chat", `document.getElementById("composer-exchange").value === "0"`)
	tab.send("which roses for a gift")
	moved := tab.exchangeID()
	tab.visit(fmt.Sprintf("/chat/%d/project", moved))
	id := strings.TrimPrefix(project, "/projects/")
	browserEval[bool](tab, fmt.Sprintf(`document.querySelector("[data-testid=move-project-select]").value = %s, true`, browserQuote(id)))
	tab.clickToLoad(`[data-testid=confirm]`)
	if loc := tab.location(); loc != project {
		s.fatalf("the move landed on %q, want %q", loc, project)
	}
	tab.waitFor("both chats on the project page", browserCount(`[data-testid=project-chats] [data-testid=history-item]`)+" === 2")

	// The project page's search: the project's chats, then all of them.
	tab.waitFor("the search's script", `window.htmx`)
	tab.typeInto(`[data-testid=history-search]`, "roses")
	hits := func() []string {
		return browserEval[[]string](tab, `Array.from(document.querySelectorAll("#search-results [data-testid=search-hit]")).map((a) => a.getAttribute("href").split("?")[0])`)
	}
	tab.waitFor("the project's hits", browserCount("#search-results [data-testid=search-hit]")+" > 0")
	for _, h := range hits() {
		if h == outside {
			s.fatalf("the project's search found the chat outside it: %v", hits())
		}
	}
	if got := strings.Join(hits(), " "); !strings.Contains(got, inProject) || !strings.Contains(got, fmt.Sprintf("/chat/%d", moved)) {
		s.fatalf("the project's search: %v (want %s and /chat/%d)", hits(), inProject, moved)
	}
	tab.click(`[data-testid=search-all-chats]`)
	tab.waitFor("the hit outside the project", fmt.Sprintf(`Array.from(document.querySelectorAll("#search-results [data-testid=search-hit]")).some((a) => a.getAttribute("href").split("?")[0] === %s)`,
		browserQuote(outside)))

	// Drag and drop: the chat outside dragged onto the project in the
	// sidebar moves into it (the count follows, live).
	tab.visit(outside)
	tab.waitFor("the project in the sidebar", browserHasText(`#history [data-testid=project-item] [data-testid=project-count]`, "2"))
	browserEval[bool](tab, fmt.Sprintf(`(() => {
		const dt = new DataTransfer();
		const row = document.querySelector('#history [data-testid=history-item][data-exchange-id="%s"] a');
		const target = document.querySelector("#history [data-testid=project-item] a");
		row.dispatchEvent(new DragEvent("dragstart", { bubbles: true, cancelable: true, dataTransfer: dt }));
		target.dispatchEvent(new DragEvent("dragover", { bubbles: true, cancelable: true, dataTransfer: dt }));
		target.dispatchEvent(new DragEvent("drop", { bubbles: true, cancelable: true, dataTransfer: dt }));
		return true;
	})()`, strings.TrimPrefix(outside, "/chat/")))
	tab.waitFor("the dropped chat counted in the project", browserHasText(`#history [data-testid=project-item] [data-testid=project-count]`, "3"))
}
