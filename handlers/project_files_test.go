package handlers_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"palaver/handlers"
	"palaver/internal/htmltest"
	"palaver/models"
	"palaver/paths"
)

// projectFileForm posts a file to a project's page as its no-JS form does.
func projectFileForm(c *client, projectID int64, name string, data []byte, csrf string) *http.Response {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	_ = w.WriteField("csrf_token", csrf)
	part, _ := w.CreateFormFile("file", name)
	_, _ = part.Write(data)
	_ = w.Close()
	req := httptest.NewRequest(http.MethodPost, paths.ProjectFiles(projectID), &b)
	req.Header.Set("Content-Type", w.FormDataContentType())
	return c.do(req)
}

// TestProjectFilesPage: the project page's form adds a file (a multipart
// upload, no JavaScript), lists it with its size and removes it; a refused
// file, another user's project, and a missing CSRF token change nothing.
func TestProjectFilesPage(t *testing.T) {
	a := newTestApp(t, func(d *handlers.Deps) { d.Config.MaxFileBytes = 1 << 20; d.Config.UserQuotaBytes = 3 << 20 })
	ann, bob := a.register("ann"), a.register("bob")
	ctx := context.Background()
	user, _ := a.store.UserByUsername(ctx, "ann")
	res := ann.postForm(paths.Projects+"/", url.Values{"name": {"Garden"}})
	mustStatus(t, res, http.StatusSeeOther)
	ps, _ := a.store.Projects(ctx, user.ID)
	id := ps[0].ID
	mustStatus(t, ann.get(paths.Project(id)), http.StatusOK)

	res = projectFileForm(ann, id, "roses.md", []byte("# Roses\nPrune in March.\n"), ann.csrf)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != paths.Project(id) {
		t.Fatalf("upload: %d %s", res.StatusCode, bodyOf(res))
	}
	doc := htmltest.Parse(t, bodyOf(ann.get(paths.Project(id))))
	items := htmltest.ByTestID(htmltest.One(t, doc, "project-files"), "project-file")
	if len(items) != 1 || !strings.Contains(htmltest.Text(items[0]), "roses.md") || !strings.Contains(htmltest.Text(items[0]), "B") {
		t.Fatalf("the page lists %d files", len(items))
	}
	files, _ := a.store.ProjectFiles(ctx, user.ID, id)
	if len(files) != 1 || files[0].Name != "roses.md" {
		t.Fatalf("stored: %+v", files)
	}

	// Refused, nothing stored: an empty form, bob's request, no CSRF
	// token. A file of no known kind is kept (only named to the model).
	mustStatus(t, projectFileForm(ann, id, "", nil, ann.csrf), http.StatusBadRequest)
	mustStatus(t, projectFileForm(bob, id, "x.txt", []byte("bob's"), bob.csrf), http.StatusNotFound)
	if res := projectFileForm(ann, id, "y.txt", []byte("no token"), ""); res.StatusCode < 400 || res.StatusCode >= 500 {
		t.Fatalf("without its token: %d", res.StatusCode)
	}
	mustStatus(t, projectFileForm(ann, id, "bin.dat", []byte("\x00\x01\x02 not text"), ann.csrf), http.StatusSeeOther)
	// The person's limits: a file over the limit a file, and one past the
	// quota, are refused on the page.
	res = projectFileForm(ann, id, "big.txt", bytes.Repeat([]byte("a"), 1<<20+1), ann.csrf)
	if res.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(bodyOf(res), "too large") {
		t.Fatalf("over the file limit: %d", res.StatusCode)
	}
	for i := range 3 {
		mustStatus(t, projectFileForm(ann, id, fmt.Sprintf("f%d.txt", i), bytes.Repeat([]byte{'a' + byte(i)}, 1<<20-100), ann.csrf), http.StatusSeeOther)
	}
	res = projectFileForm(ann, id, "over.txt", bytes.Repeat([]byte("z"), 1<<20-100), ann.csrf)
	if res.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(bodyOf(res), "quota") {
		t.Fatalf("past the quota: %d", res.StatusCode)
	}
	if n := a.countRows("files"); n != 5 {
		t.Fatalf("%d files after the refusals and four more files, want 5", n)
	}
	mustStatus(t, bob.postForm(paths.ProjectFileDelete(id, files[0].ID), nil), http.StatusNotFound)

	mustStatus(t, ann.postForm(paths.ProjectFileDelete(id, files[0].ID), nil), http.StatusSeeOther)
	if n := a.countRows("files"); n != 4 {
		t.Fatalf("%d files after the removal", n)
	}
	doc = htmltest.Parse(t, bodyOf(ann.get(paths.Project(id))))
	if n := len(htmltest.ByTestID(doc, "project-file")); n != 4 {
		t.Fatalf("the page still lists %d files", n)
	}
	mustStatus(t, ann.postForm(paths.ProjectFileDelete(id, files[0].ID), nil), http.StatusNotFound)
}

// TestProjectFilesInContext: a chat in a project sends the model its
// instructions, then its text files fenced under their names; an image is
// only named; the recorded hash covers them.
func TestProjectFilesInContext(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models":
			fmt.Fprint(w, `{"object":"list","data":[{"id":"gpt-fake"}]}`)
		case "/v1/chat/completions":
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			bodies = append(bodies, string(b))
			mu.Unlock()
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, `data: {"model":"gpt-fake","choices":[{"delta":{"content":"Noted."},"finish_reason":"stop"}]}`+"\n\n")
			fmt.Fprint(w, "data: [DONE]\n\n")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	a := newTestApp(t, withCatalog(t))
	admin := a.register("admin")
	admin.apiJSON("POST", "/api/admin/connections", map[string]any{"name": "fake", "kind": "openai", "base_url": srv.URL + "/v1", "api_key": "k"}, http.StatusCreated, nil)
	var model models.LLMModel
	ms, _ := a.store.LLMModels(context.Background())
	for _, m := range ms {
		if m.Model == "gpt-fake" {
			model = m
			admin.apiJSON("PUT", fmt.Sprintf("/api/admin/models/%d", m.ID), map[string]any{"enabled": true}, http.StatusOK, nil)
		}
	}
	if model.ID == 0 {
		t.Fatal("the fake's model is not listed")
	}
	ann := a.register("ann")
	annAPI := a.apiClient("ann")
	var garden apiProjectOut
	annAPI.apiJSON(http.MethodPost, "/api/projects", map[string]any{"name": "Garden", "instructions": "Talk about roses."}, http.StatusCreated, &garden)
	mustStatus(t, ann.get(paths.Project(garden.ID)), http.StatusOK)
	mustStatus(t, projectFileForm(ann, garden.ID, "roses.md", []byte("Prune in March.\n"), ann.csrf), http.StatusSeeOther)
	mustStatus(t, projectFileForm(ann, garden.ID, "bed.png", pngOf(t, 8, 8), ann.csrf), http.StatusSeeOther)

	var reply apiChatOut
	annAPI.apiJSON(http.MethodPost, "/api/chat", map[string]any{"query": "when to prune", "project_id": garden.ID, "model": model.ID}, http.StatusOK, &reply)
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 1 {
		t.Fatalf("the fake had %d requests", len(bodies))
	}
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(bodies[0]), &req); err != nil {
		t.Fatal(err)
	}
	if len(req.Messages) < 2 || req.Messages[0].Role != "system" {
		t.Fatalf("no system message first: %s", bodies[0])
	}
	system, _ := req.Messages[0].Content.(string)
	want := "Instructions of the project \"Garden\":\nTalk about roses.\n\nThe project's files:\n\nFile \"roses.md\":\n```\nPrune in March.\n```" +
		"\n\nNot shown to you (not text): \"bed.png\" (image/png)."
	if !strings.Contains(system, want) {
		t.Fatalf("system text:\n%s\nwant it to hold:\n%s", system, want)
	}
	hash := reply.AgentResponse.Metadata["instructions"].(map[string]any)["hash"]
	// The composed text is exactly that (no account instructions, no
	// memory): the recorded hash is its own.
	if sum := sha256.Sum256([]byte(want)); hash != hex.EncodeToString(sum[:]) {
		t.Fatalf("the recorded hash %v is not that of the text sent", hash)
	}
}

// TestProjectFilesAPI: GET/POST/DELETE /api/projects/{id}/files list, add
// and remove a project's files; another user's project or file is 404 and
// changes nothing; a file a project holds cannot be deleted on its own
// (409) and outlives the conversation that also held it.
func TestProjectFilesAPI(t *testing.T) {
	a := newTestApp(t)
	ann, bob := a.apiClient("ann"), a.apiClient("bob")
	var garden apiProjectOut
	ann.apiJSON(http.MethodPost, "/api/projects", map[string]any{"name": "Garden"}, http.StatusCreated, &garden)
	base := fmt.Sprintf("/api/projects/%d/files", garden.ID)
	f := ann.mustUpload("roses.txt", []byte("Prune in March.\n"))
	theirs := bob.mustUpload("bob.txt", []byte("bob's\n"))

	ann.apiJSON(http.MethodPost, base, map[string]any{"file_id": theirs.ID}, http.StatusNotFound, nil)
	bob.apiJSON(http.MethodPost, base, map[string]any{"file_id": theirs.ID}, http.StatusNotFound, nil)
	ann.apiJSON(http.MethodPost, base, map[string]any{"file_id": 0}, http.StatusBadRequest, nil)
	var added fileOut
	ann.apiJSON(http.MethodPost, base, map[string]any{"file_id": f.ID}, http.StatusCreated, &added)
	if added.ID != f.ID {
		t.Fatalf("added %+v", added)
	}
	var list struct {
		Files []fileOut `json:"files"`
	}
	ann.apiJSON(http.MethodGet, base, nil, http.StatusOK, &list)
	if len(list.Files) != 1 || list.Files[0].ID != f.ID {
		t.Fatalf("listed %+v", list)
	}
	bob.apiJSON(http.MethodGet, base, nil, http.StatusNotFound, nil)

	var out apiChatOut
	ann.apiJSON("POST", "/api/chat", map[string]any{"query": "the notes", "attachments": []int64{f.ID}}, http.StatusOK, &out)
	a.waitTurns()
	ann.apiJSON(http.MethodDelete, fmt.Sprintf("/api/chat/exchange/%d", *out.ExchangeID), nil, http.StatusOK, nil)
	ann.apiJSON(http.MethodDelete, fmt.Sprintf("/api/files/%d", f.ID), nil, http.StatusConflict, nil)
	if res, b := ann.api(http.MethodGet, fmt.Sprintf("/api/files/%d", f.ID), nil); res.StatusCode != http.StatusOK || string(b) != "Prune in March.\n" {
		t.Fatalf("the project's file after its conversation went: %d %q", res.StatusCode, b)
	}
	bob.apiJSON(http.MethodDelete, fmt.Sprintf("%s/%d", base, f.ID), nil, http.StatusNotFound, nil)
	ann.apiJSON(http.MethodDelete, fmt.Sprintf("%s/%d", base, f.ID), nil, http.StatusOK, nil)
	ann.apiJSON(http.MethodDelete, fmt.Sprintf("%s/%d", base, f.ID), nil, http.StatusNotFound, nil)
	if n := a.countRows("files"); n != 1 { // bob's
		t.Fatalf("%d files after the removal, want bob's alone", n)
	}
}

// TestProjectFilesExportImport: a project line lists its files' uids,
// after their file lines; with the project (and so its file) deleted, the
// import brings both back, the project holding the file with its bytes; a
// line naming a file neither in the export nor the account refuses the
// import, which stores nothing.
func TestProjectFilesExportImport(t *testing.T) {
	a := newTestApp(t)
	ann := a.apiClient("ann")
	var garden apiProjectOut
	ann.apiJSON(http.MethodPost, "/api/projects", map[string]any{"name": "Garden"}, http.StatusCreated, &garden)
	f := ann.mustUpload("roses.txt", []byte("Prune in March.\n"))
	ann.apiJSON(http.MethodPost, fmt.Sprintf("/api/projects/%d/files", garden.ID), map[string]any{"file_id": f.ID}, http.StatusCreated, nil)
	res, export := ann.api("GET", "/api/export", nil)
	mustStatus(t, res, http.StatusOK)
	fileAt, projectAt := -1, -1
	for i, l := range strings.Split(strings.TrimSpace(string(export)), "\n") {
		switch {
		case strings.HasPrefix(l, `{"type":"file",`):
			fileAt = i
		case strings.HasPrefix(l, `{"type":"project",`):
			projectAt = i
			if !strings.Contains(l, `"file_uids":["`+f.UID+`"]`) {
				t.Fatalf("project line lacks its file: %.500s", l)
			}
		}
	}
	if fileAt < 0 || projectAt < fileAt {
		t.Fatalf("file at line %d, project at %d", fileAt, projectAt)
	}
	ann.apiJSON(http.MethodDelete, fmt.Sprintf("/api/projects/%d?chats=keep", garden.ID), nil, http.StatusOK, nil)
	if n := a.countRows("files"); n != 0 {
		t.Fatalf("%d files after the project went", n)
	}

	// A project naming a file nowhere: refused, nothing stored.
	bad := strings.Replace(string(export), `"file_uids":["`+f.UID+`"]`, `"file_uids":["`+f.UID+`","0b8f8a3e-5a53-4c7e-9d3e-1f2a3b4c5d6e"]`, 1)
	if res, b := ann.importRaw("application/x-ndjson", []byte(bad)); res.StatusCode < 400 || res.StatusCode >= 500 {
		t.Fatalf("a project naming an unknown file: %d %s", res.StatusCode, b)
	}
	if a.countRows("files") != 0 || a.countRows("projects") != 0 {
		t.Fatalf("the refused import left %d files, %d projects", a.countRows("files"), a.countRows("projects"))
	}

	ann.importOK("application/x-ndjson", export)
	var ps []apiProjectOut
	ann.apiJSON(http.MethodGet, "/api/projects", nil, http.StatusOK, &ps)
	if len(ps) != 1 {
		t.Fatalf("%d projects after the import", len(ps))
	}
	var list struct {
		Files []fileOut `json:"files"`
	}
	ann.apiJSON(http.MethodGet, fmt.Sprintf("/api/projects/%d/files", ps[0].ID), nil, http.StatusOK, &list)
	if len(list.Files) != 1 || list.Files[0].UID != f.UID {
		t.Fatalf("the imported project's files: %+v", list)
	}
	if res, b := ann.api(http.MethodGet, fmt.Sprintf("/api/files/%d", list.Files[0].ID), nil); res.StatusCode != http.StatusOK || string(b) != "Prune in March.\n" {
		t.Fatalf("its bytes: %d %q", res.StatusCode, b)
	}
	ann.importOK("application/x-ndjson", export) // again: skipped, nothing doubled
	if a.countRows("files") != 1 || a.countRows("project_files") != 1 {
		t.Fatalf("after a second import: %d files, %d links", a.countRows("files"), a.countRows("project_files"))
	}
}

type projectModelOut struct {
	ID           int64  `json:"id"`
	DefaultModel *int64 `json:"default_model"`
}

// TestProjectModelForm: the project page's form sets the project's default
// model among those the person may pick, shows it chosen, and clears it;
// an unknown model or another user's project changes nothing.
func TestProjectModelForm(t *testing.T) {
	a := newTestApp(t, withCatalog(t))
	admin := a.register("admin")
	fake, _ := fakeModels(t, a, admin)
	ann, bob := a.register("ann"), a.register("bob")
	annAPI := a.apiClient("ann")
	var garden projectModelOut
	annAPI.apiJSON(http.MethodPost, "/api/projects", map[string]any{"name": "Garden"}, http.StatusCreated, &garden)
	if page := bodyOf(ann.get(paths.Project(garden.ID))); !strings.Contains(page, `data-testid="project-model"`) {
		t.Fatalf("no model form on the project page:\n%s", page)
	}
	mustStatus(t, ann.postForm(paths.ProjectModel(garden.ID), url.Values{"model": {"424242"}}), http.StatusBadRequest)
	mustStatus(t, ann.postForm(paths.ProjectModel(garden.ID), url.Values{"model": {"x"}}), http.StatusUnprocessableEntity)
	mustStatus(t, bob.postForm(paths.ProjectModel(garden.ID), url.Values{"model": {fmt.Sprint(fake.ID)}}), http.StatusNotFound)
	var got projectModelOut
	annAPI.apiJSON(http.MethodGet, fmt.Sprintf("/api/projects/%d", garden.ID), nil, http.StatusOK, &got)
	if got.DefaultModel != nil {
		t.Fatalf("refused forms set the default model: %v", *got.DefaultModel)
	}
	mustStatus(t, ann.postForm(paths.ProjectModel(garden.ID), url.Values{"model": {fmt.Sprint(fake.ID)}}), http.StatusSeeOther)
	annAPI.apiJSON(http.MethodGet, fmt.Sprintf("/api/projects/%d", garden.ID), nil, http.StatusOK, &got)
	if got.DefaultModel == nil || *got.DefaultModel != fake.ID {
		t.Fatalf("default model %v, want %d", got.DefaultModel, fake.ID)
	}
	doc := htmltest.Parse(t, bodyOf(ann.get(paths.Project(garden.ID))))
	chosen := ""
	for _, o := range htmltest.ByTag(htmltest.One(t, doc, "project-model"), "option") {
		if _, ok := htmltest.Attr(o, "selected"); ok {
			chosen, _ = htmltest.Attr(o, "value")
		}
	}
	if chosen != fmt.Sprint(fake.ID) {
		t.Fatalf("the page shows %q chosen, want %d", chosen, fake.ID)
	}
	mustStatus(t, ann.postForm(paths.ProjectModel(garden.ID), url.Values{"model": {"0"}}), http.StatusSeeOther)
	got = projectModelOut{}
	annAPI.apiJSON(http.MethodGet, fmt.Sprintf("/api/projects/%d", garden.ID), nil, http.StatusOK, &got)
	if got.DefaultModel != nil {
		t.Fatalf("cleared, yet %v", *got.DefaultModel)
	}
}
