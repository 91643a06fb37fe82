package handlers

import (
	"context"
	"fmt"
	"mime/multipart"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"palaver/agents"
	"palaver/models"
	"palaver/paths"
	"palaver/screens"
	"palaver/views"
)

// The HTML of projects, the person's instructions and memory (issue 27):
// plain forms that answer 303, so that all of it works without JavaScript.

// projects shows /projects: the list and the new-project form.
func (h *Handlers) projects(c *fiber.Ctx) error {
	links, err := h.screens.ProjectLinks(c.UserContext(), h.viewer(c), 0)
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, views.Projects(views.ProjectsScreen{Base: h.base(c, "Projects", "chat"), Projects: links}))
}

// projectCreate makes a project and opens its page; a refused name shows
// the list again with the reason.
func (h *Handlers) projectCreate(c *fiber.Ctx) error {
	name := c.FormValue("name")
	parent, _ := strconv.ParseInt(c.FormValue("parent_id"), 10, 64)
	p, err := h.store.CreateProject(c.UserContext(), currentUser(c).ID, models.ProjectInput{Name: &name, ParentID: &parent})
	if r := refusalOf(err, fiber.StatusBadRequest, fiber.StatusConflict); r != nil {
		return r.onPage(func(r *Refusal) error {
			links, err := h.screens.ProjectLinks(c.UserContext(), h.viewer(c), 0)
			if err != nil {
				return err
			}
			return render(c, r.Status, views.Projects(views.ProjectsScreen{Base: h.base(c, "Projects", "chat"), Projects: links, Error: r.Reason}))
		})
	}
	if err != nil {
		return err
	}
	h.publishProjects(p.UserID)
	return redirect(c, paths.Project(p.ID))
}

// project shows a project's page.
func (h *Handlers) project(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	return h.projectPage(c, id, nil)
}

// projectModel sets a project's default model (0: none, the person's
// own default applies), one of the models the person may pick.
func (h *Handlers) projectModel(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	model, err := strconv.ParseInt(c.FormValue("model"), 10, 64)
	if err != nil || model < 0 {
		return refuse(fiber.StatusUnprocessableEntity, "Choose one of the models offered.")
	}
	uid := currentUser(c).ID
	if _, err := h.store.Project(c.UserContext(), uid, id); err != nil {
		return err
	}
	if err := h.checkModel(c, &model); err != nil {
		return err
	}
	if _, err := h.store.UpdateProject(c.UserContext(), uid, id, models.ProjectInput{DefaultModel: &model}); err != nil {
		return err
	}
	h.sessions.Put(c.UserContext(), sessAccountFlash, "Default model saved.")
	return redirect(c, paths.Project(id))
}

// projectInstructions saves a project's instructions and memory switch.
func (h *Handlers) projectInstructions(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	text, memory := c.FormValue("instructions"), c.FormValue("memory") == "on"
	if _, err := h.store.UpdateProject(c.UserContext(), currentUser(c).ID, id, models.ProjectInput{Instructions: &text, Memory: &memory}); err != nil {
		return err
	}
	h.sessions.Put(c.UserContext(), sessAccountFlash, "Instructions saved.")
	return redirect(c, paths.Project(id))
}

// projectDelete deletes a project, keeping or deleting its chats as the
// form chose.
func (h *Handlers) projectDelete(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	moved, deleted, err := h.store.DeleteProject(c.UserContext(), currentUser(c).ID, id, c.FormValue("chats") == "delete")
	if err != nil {
		return err
	}
	h.publishProjects(currentUser(c).ID)
	h.sessions.Put(c.UserContext(), sessAccountFlash, projectDeletedMessage(moved, deleted))
	return redirect(c, paths.Projects)
}

// projectChat starts a chat in a project with its first message and opens
// it while the reply is written.
func (h *Handlers) projectChat(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	query := c.FormValue("query")
	if err := agents.ValidateQuery(query); err != nil {
		return err
	}
	t, err := h.agents.Start(c.UserContext(), agents.SendRequest{UserID: currentUser(c).ID, Query: query, AgentType: agents.AgentAuto, ProjectID: &id})
	if err != nil {
		return err
	}
	h.sessions.Put(c.UserContext(), sessExchange, t.Exchange.ID)
	return redirect(c, paths.Chat(t.Exchange.ID))
}

// chatTold shows what the agent was told for one of the user's replies:
// the instructions and memory its turn was given.
func (h *Handlers) chatTold(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	t, err := h.store.MessageInstructions(c.UserContext(), currentUser(c).ID, id)
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, views.Told(views.ToldScreen{Base: h.base(c, "What the agent was told", "chat"), Text: t.Text, Hash: t.Hash}))
}

// chatMoveForm is the form that moves a chat into a project, or out.
func (h *Handlers) chatMoveForm(c *fiber.Ctx) error {
	ex, err := h.chatExchange(c)
	if err != nil {
		return err
	}
	links, err := h.screens.ProjectLinks(c.UserContext(), h.viewer(c), 0)
	if err != nil {
		return err
	}
	p := views.MoveScreen{Base: h.base(c, "Move to project", "chat"), ExchangeID: ex.ID, Title: ex.Title, Projects: links}
	if ex.ProjectID != nil {
		p.Current = *ex.ProjectID
	}
	return render(c, fiber.StatusOK, views.Move(p))
}

// chatMove moves a chat (its family) into the chosen project, or out with
// 0; every open tab redraws its sidebar.
func (h *Handlers) chatMove(c *fiber.Ctx) error {
	ex, err := h.chatExchange(c)
	if err != nil {
		return err
	}
	var to *int64
	if n, _ := strconv.ParseInt(c.FormValue("project_id"), 10, 64); n > 0 {
		to = &n
	}
	if ex, err = h.store.MoveToProject(c.UserContext(), currentUser(c).ID, ex.ID, to); err != nil {
		return err
	}
	h.publishRegroup(ex)
	if to != nil {
		return redirect(c, paths.Project(*to))
	}
	return redirect(c, paths.Chat(ex.ID))
}

// chatKeep makes a temporary chat a normal one.
func (h *Handlers) chatKeep(c *fiber.Ctx) error {
	ex, err := h.chatExchange(c)
	if err != nil {
		return err
	}
	if ex, err = h.store.KeepExchange(c.UserContext(), currentUser(c).ID, ex.ID); err != nil {
		return err
	}
	h.publishRegroup(ex)
	return redirect(c, paths.Chat(ex.ID))
}

// accountInstructions saves About me / How to answer and the memory switch.
func (h *Handlers) accountInstructions(c *fiber.Ctx) error {
	_, err := h.store.SetInstructions(c.UserContext(), currentUser(c).ID, c.FormValue("about"), c.FormValue("style"), c.FormValue("memory") == "on")
	if err != nil {
		return err
	}
	return h.accountDone(c, "Your instructions are saved.")
}

// accountMemoryAdd adds a memory entry.
func (h *Handlers) accountMemoryAdd(c *fiber.Ctx) error {
	if _, err := h.store.AddMemory(c.UserContext(), currentUser(c).ID, c.FormValue("content"), nil); err != nil {
		return err
	}
	return h.accountDone(c, "Remembered.")
}

// accountMemoryEdit changes a memory entry.
func (h *Handlers) accountMemoryEdit(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	if _, err := h.store.UpdateMemory(c.UserContext(), currentUser(c).ID, id, c.FormValue("content")); err != nil {
		return err
	}
	return h.accountDone(c, "Memory entry saved.")
}

// accountMemoryDelete deletes a memory entry.
func (h *Handlers) accountMemoryDelete(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	if err := h.store.DeleteMemory(c.UserContext(), currentUser(c).ID, id); err != nil {
		return err
	}
	return h.accountDone(c, "Memory entry deleted.")
}

// projectPage renders a project's page, with a refusal's reason when r is
// not nil.
func (h *Handlers) projectPage(c *fiber.Ctx, id int64, r *Refusal) error {
	p, err := h.screens.Project(c.UserContext(), h.viewer(c), h.base(c, "Project", "chat"), id)
	if err != nil {
		return err
	}
	maxFile, _, _ := h.fileLimits()
	p.Title, p.FileLimit = p.Name, screens.HumanBytes(maxFile)
	if p.Models, err = h.defaultModelChoices(c); err != nil {
		return err
	}
	for i := range p.Models {
		p.Models[i].Default = p.Models[i].ID == p.DefaultModel
	}
	status := fiber.StatusOK
	if r != nil {
		p.Error, status = r.Reason, r.Status
	} else {
		p.Notice = h.sessions.PopString(c.UserContext(), sessAccountFlash)
	}
	return render(c, status, views.Project(p))
}

// projectFileAdd stores the form's file ("file", a multipart upload within
// the person's file limits and quota, checked as the composer's are) and
// makes the project hold it as its knowledge. Another user's project is
// not found, before anything is stored.
func (h *Handlers) projectFileAdd(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	uid := currentUser(c).ID
	if _, err := h.store.Project(c.UserContext(), uid, id); err != nil {
		return err
	}
	f, err := h.projectUpload(c)
	if r := refusalOf(err, fiber.StatusBadRequest, fiber.StatusRequestEntityTooLarge, fiber.StatusRequestTimeout); r != nil {
		return r.onPage(func(r *Refusal) error { return h.projectPage(c, id, r) })
	}
	if err != nil {
		return err
	}
	if err := h.store.AddProjectFile(c.UserContext(), uid, id, f.ID); err != nil {
		_ = h.store.DeleteFile(context.WithoutCancel(c.UserContext()), uid, f.ID) // the project went meanwhile
		return err
	}
	h.sessions.Put(c.UserContext(), sessAccountFlash, "File added: "+f.Name+".")
	return redirect(c, paths.Project(id))
}

// projectUpload stores the multipart form's one file.
func (h *Handlers) projectUpload(c *fiber.Ctx) (*models.File, error) {
	if !composerUpload(c) {
		return nil, refuse(fiber.StatusBadRequest, "Send the file as a multipart form. Nothing was stored.")
	}
	form, err := c.MultipartForm()
	if err != nil {
		return nil, refuse(fiber.StatusBadRequest, "The form could not be read: "+err.Error())
	}
	var fh *multipart.FileHeader
	for _, part := range form.File["file"] {
		if part.Filename == "" && part.Size == 0 { // an empty file input still sends its part
			continue
		}
		if fh != nil {
			return nil, refuse(fiber.StatusBadRequest, "Add one file at a time. Nothing was stored.")
		}
		fh = part
	}
	if fh == nil {
		return nil, refuse(fiber.StatusBadRequest, "Choose a file to add. Nothing was stored.")
	}
	maxFile, _, _ := h.fileLimits()
	tooLarge := refuse(fiber.StatusRequestEntityTooLarge,
		fmt.Sprintf("The file is too large: the limit is %d MiB a file. Nothing was stored.", maxFile>>20))
	r, err := fh.Open()
	if err != nil {
		return nil, fmt.Errorf("open uploaded file: %w", err)
	}
	defer r.Close()
	return h.storeUpload(c, fh.Filename, r, nil, tooLarge, defaultUploadDeadline)
}

// projectFileDelete lets a project go of a file; the file goes too unless
// a message or another project still holds it.
func (h *Handlers) projectFileDelete(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	file, err := pathID(c, "file")
	if err != nil {
		return err
	}
	if err := h.store.RemoveProjectFile(c.UserContext(), currentUser(c).ID, id, file); err != nil {
		return err
	}
	h.sessions.Put(c.UserContext(), sessAccountFlash, "File removed from the project.")
	return redirect(c, paths.Project(id))
}
