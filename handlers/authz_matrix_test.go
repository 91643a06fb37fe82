package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alexedwards/scs/v2"

	"palaver/accounts"
	"palaver/handlers"
	"palaver/internal/dbtest"
	"palaver/models"
	"palaver/uploads"
)

// The authorisation matrix: every route the app registers, taken from
// app.GetRoutes, is classified by rule and sent the requests its class must
// refuse, over a real loopback connection:
//
//	(a) a route with an id parameter, sent another user's real ids (each id
//	    alone too, the others the sender's own): 404, the body of a missing
//	    row's 404, HTML and API alike;
//	(b) an admin route, sent by a signed-in user who is not an administrator:
//	    the 404 of a page that does not exist;
//	(c) an unsafe HTML route without (or with a wrong) CSRF token, and an
//	    unsafe API route from a session without (or with a wrong)
//	    X-CSRF-Token header: 403;
//	(d) any route but the few public ones, sent by a visitor: the login page
//	    (303, or htmx's HX-Redirect), or 401.
//
// None of these changes a row. Then the same request from the owner (the
// administrator, for admin routes) with its own ids and a valid token must
// get past every check (no 400, 401, 403, 404, 405, 422 or 5xx): that proves
// the route, its parameters and its body are right, so each refusal above
// came from the check it tests and not from something earlier. A route the
// rules cannot classify or fill fails the test: coverage cannot shrink
// silently as routes are added.

// mxIDParams are the path parameters that name a row.
var mxIDParams = map[string]bool{"id": true, "page_id": true, "message_id": true, "msg": true, "ex": true, "rev": true, "job_id": true, "sub": true, "other": true, "file": true}

// mxPublic are the routes anyone may call: no account, no ids.
var mxPublic = map[string]bool{
	"GET /healthz": true, "GET /static/:name": true,
	"GET /login": true, "POST /login": true, "GET /register": true, "POST /register": true,
	"POST /logout":          true, // signing out needs no account (a visitor's just renews the session)
	"GET /api/openapi.json": true, // the API's reference describes routes, not data
	// Single sign-on's start and callback: a visitor's way in.
	"GET /auth/oidc/:name": true, "GET /auth/oidc/:name/callback": true,
	// A share link is for whoever holds its token (share_test.go checks
	// who may open which).
	"GET /s/:token": true, "GET /api/s/:token": true,
	// A share's files, which share_files_test.go checks: only the
	// snapshot's open, by the token alone.
	"GET /s/:token/files/:n": true, "GET /s/:token/files/:n/thumbnail": true,
}

// mxShareTokens are the tokens of the shares the matrix's rows hold, by
// share id: a :token parameter is filled with the token of the rows'
// share, never with an id.
var mxShareTokens sync.Map

// mxForms are the forms the unsafe HTML routes need to get past validation
// (the others need none). $user is the sender's name, $new a fresh one.
// Destructive forms are confirmed, so that a refusal that let them through
// would show in the database.
var mxForms = map[string]url.Values{
	"POST /login":                            {"username": {"$user"}, "password": {"correct horse"}},
	"POST /register":                         {"username": {"$new"}, "password": {"correct horse"}},
	"POST /chat/send":                        {"query": {"hello"}, "exchange_id": {"0"}},
	"POST /chat/clear":                       {"confirmed": {"1"}},
	"POST /chat/message/:id/feedback":        {"value": {"up"}},
	"POST /chat/:id/rename":                  {"title": {"Renamed"}},
	"POST /chat/:id/tools":                   {"call_id": {"none"}, "decision": {"approve"}},
	"POST /chat/:id/delete":                  {"confirmed": {"1"}},
	"POST /chat/message/:id/edit":            {"query": {"edited"}},
	"POST /chat/:id/continue":                {"at": {"0"}},
	"POST /pages/":                           {"title": {"Notes"}, "content": {"hello"}},
	"POST /pages/:id/save":                   {"title": {"Trip"}, "content": {"new content"}},
	"POST /pages/:id/preview":                {"content": {"# Preview"}},
	"POST /pages/:id/delete":                 {"confirmed": {"1"}},
	"POST /pages/:id/panel":                  {"panel": {"closed"}},
	"POST /pages/:id/chat":                   {"query": {"hello"}, "exchange_id": {"0"}},
	"POST /pages/:id/chat/clear":             {"confirmed": {"1"}},
	"POST /pages/:id/chat/:ex/delete":        {"confirmed": {"1"}},
	"POST /admin/exchanges/:id":              {"reason": {"curious"}},
	"POST /admin/users/:id/demote":           {"confirmed": {"1"}},
	"POST /admin/users/:id/disable":          {"confirmed": {"1"}},
	"POST /admin/users/:id/password":         {"password": {"a new password"}},
	"POST /admin/users/:id/delete":           {"confirmed": {"1"}},
	"POST /admin/housekeeping/orphans":       {"confirmed": {"1"}},
	"POST /admin/housekeeping/blobs":         {"confirmed": {"1"}},
	"POST /admin/housekeeping/retention":     {"enabled": {"1"}, "days": {"1"}},
	"POST /admin/housekeeping/retention/run": {"confirmed": {"1"}},
	// The owner changes the password to itself (the session is renewed, as
	// signing in renews it) and reaches the delete's confirmation page,
	// which deletes nothing.
	"POST /account/password":         {"current": {"correct horse"}, "password": {"correct horse"}},
	"POST /account/keys":             {"name": {"laptop"}},
	"POST /account/delete":           {"password": {"correct horse"}},
	"POST /account/oidc/link":        {"provider": {"corp"}},
	"POST /chat/:id/share":           {"visibility": {"link"}},
	"POST /account/tools":            {"remember": {"confirm"}},
	"POST /account/model":            {"model": {"0"}},
	"POST /account/models/favourite": {"model": {"$llm_model"}, "favourite": {"1"}},
	"POST /account/search-reasoning": {"on": {"1"}},
	"POST /account/memories":         {"content": {"likes tea"}},
	"POST /account/memories/:id":     {"content": {"likes green tea"}},
	"POST /projects/":                {"name": {"Matrix"}},
	"POST /projects/:id/chat":        {"query": {"hello"}},
	"POST /projects/:id/model":       {"model": {"0"}},
	"POST /projects/:id/delete":      {"chats": {"delete"}},
	// Models (issue 29): the connection's server is down, so adding or
	// testing one is refused (a flash) past every check.
	"POST /admin/connections":            {"name": {"x"}, "kind": {"openai"}, "base_url": {"http://127.0.0.1:1/v1"}},
	"POST /admin/connections/:id":        {"name": {"renamed"}, "base_url": {"http://127.0.0.1:1/v1"}},
	"POST /admin/connections/:id/delete": {"confirmed": {"1"}},
	"POST /admin/models/:id":             {"name": {"Renamed"}, "enabled": {"1"}, "input_price": {"1.5"}},
}

// mxJSON are the bodies the JSON API routes need ($kind: the sender's row).
var mxJSON = map[string]string{
	"POST /api/chat":                       `{"query": "hello"}`,
	"PUT /api/chat/exchange/:id/feedback":  `1`,
	"PUT /api/chat/exchanges/batch/delete": `{"ids": [$exchange]}`,
	"PUT /api/chat/message/:id/feedback":   `{"feedback": 1, "comment": "good"}`,
	"POST /api/pages":                      `{"title": "Notes", "content": "hello"}`,
	"PUT /api/pages/:id":                   `{"content": "new content"}`,
	"POST /api/keys":                       `{"name": "laptop"}`,
	"PATCH /api/chat/exchange/:id":         `{"title": "Renamed", "pinned": true}`,
	"POST /api/chat/exchange/:id/fork":     `{"seq": 1}`,
	"POST /api/import":                     `{"format": "palaver-export", "version": 1}`, // an empty export
	"POST /api/chat/exchange/:id/shares":   `{"visibility": "link"}`,
	"PATCH /api/shares/:id":                `{"update": true}`,
	// Turns that wait: nothing waits in the sender's exchange (409 is past every check).
	"POST /api/chat/exchange/:id/tool_results": `{"results": [{"call_id": "none", "approved": true}]}`,
	"PUT /api/account/tools":                   `{"remember": "confirm"}`,
	// Projects, instructions and memory.
	"POST /api/projects":            `{"name": "Matrix"}`,
	"PATCH /api/projects/:id":       `{"instructions": "Be brief."}`,
	"POST /api/projects/:id/files":  `{"file_id": $file}`,
	"PUT /api/account/instructions": `{"about": "a", "style": "b"}`,
	"POST /api/memories":            `{"content": "likes tea"}`,
	"PATCH /api/memories/:id":       `{"content": "likes green tea"}`,
	// Models (issue 29): the connection's server is down, so adding one is
	// refused (400) past every check.
	"PUT /api/account/budget":     `{"daily_tokens": 100000000}`, // a cap the later routes' turns stay under
	"PUT /api/models/favourites":  `{"model": $llm_model, "favourite": true}`,
	"POST /api/admin/connections": `{"name": "x", "kind": "openai", "base_url": "http://127.0.0.1:1/v1"}`,
	"PUT /api/admin/models/:id":   `{"enabled": true}`,
	"PUT /api/admin/quotas":       `{"daily_tokens": 1000, "user_id": $user}`,
}

// mxFiles are the routes that take a multipart form with a file: the form's
// fields go first, then the file (an empty export).
var mxFiles = map[string]string{
	"POST /account/import":     `{"format": "palaver-export", "version": 1}`,
	"POST /api/files":          "a note to attach\n",
	"POST /projects/:id/files": "project knowledge\n",
}

// mxQuery are the query strings routes need to get past validation.
var mxQuery = map[string]string{
	"PUT /api/chat/:job_id/feedback": "?feedback=1",
	"GET /api/chat/search":           "?q=hello",
	"GET /chat/search":               "?q=hello",
	"GET /chat/:id/messages":         "?before_seq=1",
	"GET /chat/:id/compare":          "?branch=1&branch=2",
}

// mxRoute is one registered route and what the rules make of it.
type mxRoute struct {
	method, pattern string
	ids             []string          // its id parameters, in path order
	others          int               // its other parameters (public routes only)
	kinds           map[string]string // id parameter -> kind of row
	api, admin      bool
	unsafe, public  bool
}

func (r mxRoute) key() string { return r.method + " " + r.pattern }

// mxKind names the kind of row an id parameter names, from its name and the
// path segment before it.
func mxKind(pattern, param string) (string, bool) {
	segs := strings.Split(pattern, "/")
	i := slices.Index(segs, ":"+param)
	if i < 1 {
		return "", false
	}
	switch param {
	case "page_id":
		return "page", true
	case "message_id", "msg":
		return "proposal", true
	case "ex":
		return "page_exchange", true
	case "rev":
		return "revision", true
	case "job_id":
		return "job", true
	case "sub":
		return "subrun", true
	case "other":
		return "exchange", true // compare/:other, a branch of :id's family
	case "file":
		return "project_file", true // projects/:id/files/:file, a file the project holds
	case "id":
		switch segs[i-1] {
		case "chat", "exchange", "exchanges":
			return "exchange", true
		case "message":
			if i+1 < len(segs) && segs[i+1] == "edit" {
				return "user_message", true // only a user message is edited
			}
			if i+1 < len(segs) && segs[i+1] == "instructions" {
				return "proposal", true // a reply a turn wrote records its instructions
			}
			return "message", true
		case "pages":
			return "page", true
		case "users":
			return "user", true
		case "keys":
			return "api_key", true
		case "identities":
			return "identity", true
		case "shares":
			return "share", true
		case "files":
			return "file", true
		case "projects":
			return "project", true
		case "memories":
			return "memory", true
		case "connections":
			return "connection", true
		case "models":
			return "llm_model", true
		}
	}
	return "", false
}

// mxClassify turns the app's routes into the matrix, failing on any it
// cannot place.
func mxClassify(t *testing.T, a *testApp) (routes []mxRoute, heads int) {
	t.Helper()
	gets := map[string]bool{}
	seen := map[string]bool{}
	for _, r := range a.app.GetRoutes(true) {
		if r.Method == http.MethodGet {
			gets[r.Path] = true
		}
	}
	for _, r := range a.app.GetRoutes(true) {
		k := r.Method + " " + r.Path
		if seen[k] {
			continue
		}
		seen[k] = true
		mr := mxRoute{method: r.Method, pattern: r.Path, kinds: map[string]string{},
			api: strings.HasPrefix(r.Path, "/api/"), admin: r.Path == "/admin" || strings.HasPrefix(r.Path, "/admin/") || strings.HasPrefix(r.Path, "/api/admin/"),
			public: mxPublic[k] || (r.Method == http.MethodHead && mxPublic["GET "+r.Path])}
		switch r.Method {
		case http.MethodGet:
		case http.MethodHead:
			// fiber registers a HEAD twin for every GET: same handler chain.
			if !gets[r.Path] {
				t.Errorf("route %s has no GET twin: the matrix cannot classify it", k)
			}
			heads++
		case http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch:
			mr.unsafe = true
		default:
			t.Errorf("route %s: method the matrix does not know", k)
			continue
		}
		for _, p := range r.Params {
			if p == "token" {
				continue // filled with the rows' share's token (mxShareTokens)
			}
			if !mxIDParams[p] {
				if !mr.public {
					t.Errorf("route %s has parameter :%s, which the matrix cannot fill: add it to mxIDParams (with a kind in mxKind) or to mxPublic", k, p)
				}
				mr.others++
				continue
			}
			kind, ok := mxKind(r.Path, p)
			if !ok {
				t.Errorf("route %s: the matrix cannot tell what :%s names: teach mxKind", k, p)
				continue
			}
			if mr.public {
				t.Errorf("public route %s takes the id :%s: it cannot be public", k, p)
			}
			mr.ids = append(mr.ids, p)
			mr.kinds[p] = kind
		}
		if r.Method != http.MethodHead {
			routes = append(routes, mr)
		}
	}
	// Every table entry must name a route: a stale entry hides a rename.
	for _, m := range []map[string]bool{mxPublic, setOf(maps.Keys(mxForms)), setOf(maps.Keys(mxJSON)), setOf(maps.Keys(mxQuery))} {
		for k := range m {
			if !seen[k] {
				t.Errorf("the matrix's tables list %s, which the app does not have", k)
			}
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	return routes, heads
}

func setOf(keys func(func(string) bool)) map[string]bool {
	out := map[string]bool{}
	for k := range keys {
		out[k] = true
	}
	return out
}

// mx is the app on a real listener and the matrix's cast.
type mx struct {
	t        *testing.T
	a        *testApp
	base     string
	http     *http.Client
	hash     string
	n        int
	model    int64   // an enabled model (the catalog's offline one)
	admin    *client // the administrator's browser
	alice    *client // the owner's browser
	mallory  *client // the intruder's browser
	aliceAPI *client
	malAPI   *client
}

// mxRes is a response with its body read (not for event streams).
type mxRes struct {
	status int
	header http.Header
	body   string
}

// send sends a request over the connection with c's cookies (and API key),
// and keeps the cookies and CSRF token it gets back.
func (m *mx) send(c *client, method, path, ctype, body string, hdr map[string]string) mxRes {
	m.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, m.base+path, strings.NewReader(body))
	if err != nil {
		m.t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if ck := c.cookieHeader(); ck != "" {
		req.Header.Set("Cookie", ck)
	}
	if c.apiKey != "" {
		req.Header.Set("x-api-key", c.apiKey)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := m.http.Do(req)
	if err != nil {
		m.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	for _, ck := range res.Cookies() {
		if ck.MaxAge < 0 {
			delete(c.cookies, ck.Name)
		} else {
			c.cookies[ck.Name] = ck.Value
		}
	}
	out := mxRes{status: res.StatusCode, header: res.Header}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		return out // a stream does not end: its status is the answer
	}
	b, err := io.ReadAll(res.Body)
	if err != nil {
		m.t.Fatalf("%s %s: read: %v", method, path, err)
	}
	out.body = string(b)
	if mm := csrfField.FindStringSubmatch(out.body); mm != nil {
		c.csrf = mm[1]
	}
	return out
}

// login signs name in on a fresh browser over the connection.
func (m *mx) login(name string) *client {
	m.t.Helper()
	c := m.a.anon()
	m.send(c, "GET", "/login", "", "", nil)
	res := m.send(c, "POST", "/login", "application/x-www-form-urlencoded",
		url.Values{"username": {name}, "password": {"correct horse"}, "csrf_token": {c.csrf}}.Encode(), nil)
	if res.status != http.StatusSeeOther {
		m.t.Fatalf("login %s: status %d", name, res.status)
	}
	m.send(c, "GET", "/chat", "", "", nil) // the signed-in session's token
	u, err := m.a.store.UserByUsername(context.Background(), name)
	if err != nil {
		m.t.Fatal(err)
	}
	c.user = u
	return c
}

// visitor is a browser with a session and its CSRF token, not signed in.
func (m *mx) visitor() *client {
	c := m.a.anon()
	m.send(c, "GET", "/login", "", "", nil)
	return c
}

// mxRows are one user's rows of each kind, fresh for each route so that the
// owner's request (which may delete them) touches nothing another route uses.
type mxRows map[string]int64

// rows makes a general exchange with a reply, a page with two revisions, a
// chat about the page whose reply is a proposal, a job's chat (under a job
// id no other user has) and a spare API key, for api's user.
func (m *mx) rows(api *client) mxRows {
	m.t.Helper()
	ctx, uid := context.Background(), api.user.ID
	r := mxRows{"user": uid, "llm_model": m.model} // the catalog's models are everyone's
	r["exchange"] = m.a.adminExchange(uid, adminEx{queries: []string{"a question"}})
	r["message"] = m.a.chatReply(uid, r["exchange"])
	r["user_message"] = m.a.chatMsgAt(uid, r["exchange"], 0)
	_, run, err := m.a.store.StartSubRun(ctx, models.SubRunStart{UserID: uid, ParentID: r["exchange"], ParentSeq: 1, Agent: "search", Task: "find it", Owner: "matrix"})
	if err != nil {
		m.t.Fatal(err)
	}
	if _, err := m.a.store.FinishSubRun(ctx, run.ExchangeID, "matrix", models.SubRunOK, "found it"); err != nil {
		m.t.Fatal(err)
	}
	r["subrun"] = run.ExchangeID
	p, err := m.a.store.CreatePage(ctx, uid, "Trip", pageTrip)
	if err != nil {
		m.t.Fatal(err)
	}
	if _, err := m.a.store.UpdatePage(ctx, uid, p.ID, nil, pageTrip+"\nMore notes.\n"); err != nil {
		m.t.Fatal(err)
	}
	r["page"] = p.ID
	r["revision"] = m.a.revisions(uid, p.ID)[0].ID
	var out apiChatOut
	body := fmt.Sprintf(`{"query": "replace \"Paris\" with \"Rome\"", "page_id": %d}`, p.ID)
	res := m.send(api, "POST", "/api/chat", "application/json", body, nil)
	if res.status != http.StatusOK || decodeJSON(res.body, &out) != nil || out.ExchangeID == nil || out.ErrorCode != 0 {
		m.t.Fatalf("page proposal: %d %s", res.status, res.body)
	}
	r["page_exchange"] = *out.ExchangeID
	r["proposal"] = m.a.chatReply(uid, *out.ExchangeID)
	m.n++
	key, err := m.a.store.CreateAPIKey(ctx, uid, "spare", handlers.HashAPIKey(fmt.Sprintf("pal_spare_%d", m.n)))
	if err != nil {
		m.t.Fatal(err)
	}
	r["api_key"] = key.ID
	ident := models.Identity{Provider: "corp", Issuer: "https://sso.example", Subject: fmt.Sprintf("matrix-%d", m.n)}
	if err := m.a.store.LinkIdentity(ctx, uid, ident); err != nil {
		m.t.Fatal(err)
	}
	ids, err := m.a.store.Identities(ctx, uid)
	if err != nil {
		m.t.Fatal(err)
	}
	r["identity"] = ids[0].ID
	r["share"] = m.share(uid, r["exchange"])
	// An image, so that its thumbnail is there for the owner.
	img := pngOf(m.t, 4+int(m.n%50), 4)
	info, err := uploads.Inspect("m.png", img)
	if err != nil {
		m.t.Fatal(err)
	}
	file, err := m.a.store.CreateFile(ctx, models.NewFile{File: models.File{UserID: uid, Name: info.Name, ContentType: info.ContentType,
		Kind: info.Kind, Size: int64(len(img)), SHA256: info.SHA256, Width: &info.Width, Height: &info.Height},
		Data: img, Thumbnail: info.Thumbnail}, 0)
	if err != nil {
		m.t.Fatal(err)
	}
	r["file"] = file.ID
	projectName := fmt.Sprintf("Project %d", m.n)
	project, err := m.a.store.CreateProject(ctx, uid, models.ProjectInput{Name: &projectName})
	if err != nil {
		m.t.Fatal(err)
	}
	r["project"] = project.ID
	pf := []byte(fmt.Sprintf("project knowledge %d\n", m.n))
	info, err = uploads.Inspect("knowledge.txt", pf)
	if err != nil {
		m.t.Fatal(err)
	}
	pfile, err := m.a.store.CreateFile(ctx, models.NewFile{File: models.File{UserID: uid, Name: info.Name, ContentType: info.ContentType,
		Kind: info.Kind, Size: int64(len(pf)), SHA256: info.SHA256}, Data: pf}, 0)
	if err != nil {
		m.t.Fatal(err)
	}
	if err := m.a.store.AddProjectFile(ctx, uid, project.ID, pfile.ID); err != nil {
		m.t.Fatal(err)
	}
	r["project_file"] = pfile.ID
	memory, err := m.a.store.AddMemory(ctx, uid, "likes tea", nil)
	if err != nil {
		m.t.Fatal(err)
	}
	r["memory"] = memory.ID
	r["job"] = int64(500_000 + m.n)
	m.a.adminExchange(uid, adminEx{scope: models.ScopeJob, job: strconv.FormatInt(r["job"], 10), queries: []string{"a job question"}})
	return r
}

// victim is a fresh account with an exchange, for the admin routes to act on.
func (m *mx) victim() mxRows {
	m.t.Helper()
	m.n++
	u, err := m.a.store.CreateUser(context.Background(), fmt.Sprintf("victim%d", m.n), m.hash, false)
	if err != nil {
		m.t.Fatal(err)
	}
	ex := m.a.adminExchange(u.ID, adminEx{queries: []string{"private"}})
	conn := &models.LLMConnection{Name: fmt.Sprintf("conn%d", m.n), Kind: models.KindOpenAI, BaseURL: "http://127.0.0.1:1/v1"}
	if err := m.a.store.CreateConnection(context.Background(), conn, []string{"m"}); err != nil {
		m.t.Fatal(err)
	}
	ms, err := m.a.store.LLMModels(context.Background())
	if err != nil {
		m.t.Fatal(err)
	}
	return mxRows{"user": u.ID, "exchange": ex, "share": m.share(u.ID, ex), "connection": conn.ID, "llm_model": ms[len(ms)-1].ID}
}

// share makes a link share of the user's exchange and returns its id.
func (m *mx) share(userID, exchangeID int64) int64 {
	m.t.Helper()
	m.n++
	token := fmt.Sprintf("matrix-share-token-%08d", m.n)
	sh, err := m.a.store.CreateShare(context.Background(), models.ShareNew{UserID: userID, ExchangeID: exchangeID,
		Visibility: models.ShareLink, Token: token, At: time.Now().UTC()})
	if err != nil {
		m.t.Fatal(err)
	}
	mxShareTokens.Store(sh.ID, token)
	return sh.ID
}

// path fills the route's pattern: each id from rows, unless override has it.
func (r mxRoute) path(rows mxRows, override map[string]int64) string {
	segs := strings.Split(r.pattern, "/")
	for i, s := range segs {
		p, ok := strings.CutPrefix(s, ":")
		if !ok {
			continue
		}
		if p == "token" {
			token, _ := mxShareTokens.Load(rows["share"])
			segs[i], _ = token.(string)
			continue
		}
		id, ok := override[p]
		if !ok {
			id = rows[r.kinds[p]]
		}
		segs[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(segs, "/") + mxQuery[r.key()]
}

// form is the route's form for sender c, with the CSRF field set to csrf
// unless it is "-" (none).
func (m *mx) form(r mxRoute, c *client, csrf string) string {
	f := url.Values{}
	for k, vs := range mxForms[r.key()] {
		for _, v := range vs {
			switch v {
			case "$user":
				v = c.user.Username
			case "$new":
				m.n++
				v = fmt.Sprintf("newcomer%d", m.n)
			case "$llm_model":
				v = strconv.FormatInt(m.model, 10)
			}
			f.Add(k, v)
		}
	}
	if csrf != "-" {
		f.Set("csrf_token", csrf)
	}
	return f.Encode()
}

// json is the route's JSON body with the $kind placeholders filled from rows.
func (r mxRoute) json(rows mxRows) string {
	b := mxJSON[r.key()]
	for kind, id := range rows {
		b = strings.ReplaceAll(b, "$"+kind, strconv.FormatInt(id, 10))
	}
	return b
}

// html sends an HTML request as a browser: a plain form post with csrf
// ("-": no field), or as htmx with the token in the header ("-": none).
func (m *mx) html(c *client, r mxRoute, method, path, csrf string, htmx bool) mxRes {
	m.t.Helper()
	if method == "GET" || method == "HEAD" {
		var h map[string]string
		if htmx {
			h = map[string]string{"HX-Request": "true"}
		}
		return m.send(c, method, path, "", "", h)
	}
	var h map[string]string
	if htmx {
		h = map[string]string{"HX-Request": "true"}
		if csrf != "-" {
			h["X-CSRF-Token"] = csrf
		}
		csrf = "-"
	}
	if file, ok := mxFiles[r.key()]; ok {
		var buf strings.Builder
		mw := multipart.NewWriter(&buf)
		if csrf != "-" {
			mw.WriteField("csrf_token", csrf)
		}
		fw, _ := mw.CreateFormFile("file", "export.ndjson")
		io.WriteString(fw, file)
		mw.Close()
		return m.send(c, method, path, mw.FormDataContentType(), buf.String(), h)
	}
	return m.send(c, method, path, "application/x-www-form-urlencoded", m.form(r, c, csrf), h)
}

// api sends an API request with the route's body; csrf is the X-CSRF-Token
// header ("-": none).
func (m *mx) api(c *client, r mxRoute, method, path string, rows mxRows, csrf string) mxRes {
	m.t.Helper()
	var h map[string]string
	if csrf != "-" {
		h = map[string]string{"X-CSRF-Token": csrf}
	}
	return m.send(c, method, path, "application/json", r.json(rows), h)
}

// mxAPIErr checks the API's error shape for status.
func mxAPIErr(t *testing.T, what string, res mxRes, status int) {
	t.Helper()
	if res.status != status {
		t.Errorf("%s: status %d, want %d: %.300s", what, res.status, status, res.body)
		return
	}
	if res.body == "" { // HEAD
		return
	}
	var e struct {
		ErrMsg  string `json:"err_msg"`
		ErrCode int    `json:"err_code"`
	}
	if err := decodeJSON(res.body, &e); err != nil || e.ErrCode != status || e.ErrMsg == "" {
		t.Errorf("%s: body %.300s is not the API error shape for %d", what, res.body, status)
	}
}

// mxSnapshot dumps every table (the columns a request may change; an API
// key's last use is bookkeeping, not a change) and every session's values.
// The messages' full-text indexes (messages_fts, messages_reasoning_fts and
// their tables) are left out:
// it follows the messages in batches, on its own schedule
// (models/search_index.go), and the messages themselves are dumped.
func (a *testApp) mxSnapshot() string {
	a.t.Helper()
	db, err := a.store.SQL()
	if err != nil {
		a.t.Fatal(err)
	}
	rows, err := db.Query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'messages_fts%' AND name NOT LIKE 'messages_reasoning_fts%' ORDER BY name")
	if err != nil {
		a.t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			a.t.Fatal(err)
		}
		tables = append(tables, n)
	}
	rows.Close()
	var b strings.Builder
	for _, table := range tables {
		q := "SELECT * FROM " + table
		switch table {
		case "api_keys":
			q = "SELECT id, user_id, key_hash FROM api_keys"
		case "sessions":
			q = "SELECT token, data FROM sessions ORDER BY token"
		}
		if table == "sessions" { // gob encodes a map in no set order: compare the values
			rs, err := db.Query(q)
			if err != nil {
				a.t.Fatal(err)
			}
			for rs.Next() {
				var token string
				var data []byte
				if err := rs.Scan(&token, &data); err != nil {
					a.t.Fatal(err)
				}
				_, values, err := scs.GobCodec{}.Decode(data)
				fmt.Fprintln(&b, token, values, err) // fmt prints a map sorted by key
			}
			rs.Close()
			continue
		}
		fmt.Fprintln(&b, "#", table)
		b.WriteString(dbtest.Dump(a.t, db, q))
	}
	return b.String()
}

// mxReached says whether a request got past every check: it was not refused
// as unauthorised, forbidden, missing, malformed, or failed. A redirect to
// /login (303 or HX-Redirect) is how an HTML route refuses a lost session,
// so it counts as refused, except for signing out, which ends there.
func mxReached(r mxRoute, res mxRes) bool {
	switch res.status {
	case 400, 401, 403, 404, 405, 422:
		return false
	}
	if r.key() != "POST /logout" && (mxToLogin(res.header.Get("Location")) || mxToLogin(res.header.Get("HX-Redirect"))) {
		return false
	}
	return res.status < 500
}

// mxToLogin says whether a redirect target is the sign-in page.
func mxToLogin(target string) bool {
	path, _, _ := strings.Cut(target, "?")
	return path == "/login"
}

// TestAuthorisationMatrix sends every route the requests its class must
// refuse, then the owner's request that must get through.
func TestAuthorisationMatrix(t *testing.T) {
	// In parallel with TestBrowser, which mostly waits: an app, a listener
	// and a provider of its own, and no timing.
	t.Parallel()
	_, providers := startOPs(t, "http://127.0.0.1", "corp") // linking an identity starts at a real provider
	// The catalog, as serve has it: a favourite model is one of its models.
	a := newTestApp(t, withOIDC(providers), withCatalog(t))
	a.register("ann") // the first account is the administrator
	a.register("alice")
	a.register("mallory")
	hash, err := accounts.HashPassword("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	m := &mx{t: t, a: a, base: "http://" + a.listen(), hash: hash,
		http: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	m.admin, m.alice, m.mallory = m.login("ann"), m.login("alice"), m.login("mallory")
	if ms, err := a.store.LLMModels(context.Background()); err != nil || len(ms) != 1 || !ms[0].Enabled {
		t.Fatalf("the catalog's models: %+v, %v", ms, err)
	} else {
		m.model = ms[0].ID
	}
	m.aliceAPI, m.malAPI = a.apiClient("alice"), a.apiClient("mallory")

	routes, heads := mxClassify(t, a)
	missingHTML := withoutTokens(m.send(m.mallory, "GET", "/no-such-page", "", "", nil).body)
	missingAdmin := withoutTokens(m.send(m.mallory, "GET", "/admin/no-such-thing", "", "", nil).body)
	if missingAdmin != missingHTML {
		t.Fatalf("a missing admin page differs from a missing page:\n%s\n---\n%s", missingAdmin, missingHTML)
	}
	const missing = 987654321 // names no row of any kind
	var counts struct{ ids, idRequests, admin, csrfHTML, csrfAPI, visitor, public int }

	for _, r := range routes {
		t.Run(r.key(), func(t *testing.T) {
			m.t = t
			defer func() { m.t = a.t }()
			var own, theirs mxRows
			owner, ownerAPI := m.alice, m.aliceAPI
			switch {
			case r.admin:
				own, owner = m.victim(), m.admin
			case len(r.ids) > 0:
				own, theirs = m.rows(m.aliceAPI), m.rows(m.malAPI)
			default:
				own = m.rows(m.aliceAPI)
			}
			path := r.path(own, nil)
			if r.admin && r.api { // the administrators' JSON API (issue 29)
				mxAdminAPI(t, m, r, path, own)
				return
			}
			visitor := m.visitor()
			// A turn an earlier route's seeding started (a project's new
			// chat) must not finish inside this route's snapshots.
			a.waitTurns()
			before := a.mxSnapshot()

			// (d) A visitor is sent to sign in.
			if !r.public {
				counts.visitor++
				v := visitor
				if r.api {
					mxAPIErr(t, "visitor", m.api(v, r, r.method, path, own, v.csrf), http.StatusUnauthorized)
				} else {
					for _, htmx := range []bool{false, true} {
						res := m.html(v, r, r.method, path, v.csrf, htmx)
						toLogin := res.status == http.StatusSeeOther && res.header.Get("Location") == "/login"
						if htmx {
							toLogin = res.header.Get("HX-Redirect") == "/login"
						}
						if !toLogin && res.status != http.StatusUnauthorized {
							t.Errorf("visitor (htmx %v): status %d, Location %q, HX-Redirect %q; want the login page or 401",
								htmx, res.status, res.header.Get("Location"), res.header.Get("HX-Redirect"))
						}
					}
				}
			} else {
				counts.public++
			}

			// (b) Anyone but an administrator gets the 404 of a page that
			// does not exist.
			if r.admin {
				counts.admin++
				for _, htmx := range []bool{false, true} {
					res := m.html(m.mallory, r, r.method, path, m.mallory.csrf, htmx)
					if res.status != http.StatusNotFound {
						t.Errorf("non-admin (htmx %v): status %d, want 404", htmx, res.status)
					} else if !htmx && withoutTokens(res.body) != missingHTML {
						t.Errorf("a non-admin's 404 differs from a missing page's:\n%s", res.body)
					}
				}
				if r.method == "GET" {
					if res := m.send(m.mallory, "HEAD", path, "", "", nil); res.status != http.StatusNotFound {
						t.Errorf("non-admin HEAD: status %d, want 404", res.status)
					}
				}
			}

			// (a) Another user's ids answer as missing ones do.
			if len(r.ids) > 0 && !r.admin {
				counts.ids++
				cases := []map[string]int64{nil} // every id the owner's
				if len(r.ids) > 1 {
					for _, p := range r.ids { // one id the owner's, the others the sender's own
						override := map[string]int64{}
						for _, q := range r.ids {
							override[q] = theirs[r.kinds[q]]
						}
						override[p] = own[r.kinds[p]]
						cases = append(cases, override)
					}
				}
				missingIDs := map[string]int64{}
				for _, p := range r.ids {
					missingIDs[p] = missing
				}
				if r.api {
					want := m.api(m.malAPI, r, r.method, r.path(theirs, missingIDs), theirs, "-")
					mxAPIErr(t, "missing ids", want, http.StatusNotFound)
					for _, o := range cases {
						p := r.path(own, o)
						counts.idRequests++
						res := m.api(m.malAPI, r, r.method, p, theirs, "-")
						mxAPIErr(t, "another user's "+p, res, http.StatusNotFound)
						if res.body != want.body {
							t.Errorf("another user's %s: %s, a missing one's: %s", p, res.body, want.body)
						}
						if r.method == "GET" {
							counts.idRequests++
							mxAPIErr(t, "HEAD another user's "+p, m.send(m.malAPI, "HEAD", p, "", "", nil), http.StatusNotFound)
						}
					}
				} else {
					want := m.html(m.mallory, r, r.method, r.path(theirs, missingIDs), m.mallory.csrf, false)
					if want.status != http.StatusNotFound {
						t.Errorf("missing ids: status %d, want 404", want.status)
					}
					for _, o := range cases {
						p := r.path(own, o)
						for _, htmx := range []bool{false, true} {
							counts.idRequests++
							res := m.html(m.mallory, r, r.method, p, m.mallory.csrf, htmx)
							if res.status != http.StatusNotFound {
								t.Errorf("another user's %s (htmx %v): status %d, want 404: %.300s", p, htmx, res.status, res.body)
							} else if !htmx && withoutTokens(res.body) != withoutTokens(want.body) {
								t.Errorf("another user's %s: the 404 differs from a missing one's", p)
							}
						}
						if r.method == "GET" {
							counts.idRequests++
							if res := m.send(m.mallory, "HEAD", p, "", "", nil); res.status != http.StatusNotFound {
								t.Errorf("HEAD another user's %s: status %d, want 404", p, res.status)
							}
						}
					}
				}
			}

			// (c) An unsafe request without the session's token is refused.
			if r.unsafe {
				sender := owner
				if r.api {
					counts.csrfAPI++
					for _, tok := range []string{"-", "wrong-token"} {
						mxAPIErr(t, "session without X-CSRF-Token "+tok, m.api(sender, r, r.method, path, own, tok), http.StatusForbidden)
					}
				} else {
					counts.csrfHTML++
					for _, tok := range []string{"-", "", "wrong-token"} {
						for _, htmx := range []bool{false, true} {
							if res := m.html(sender, r, r.method, path, tok, htmx); res.status != http.StatusForbidden {
								t.Errorf("CSRF token %q (htmx %v): status %d, want 403", tok, htmx, res.status)
							}
						}
					}
				}
			}

			if after := a.mxSnapshot(); after != before {
				t.Fatalf("refused requests changed the database:\n%s", mxDiff(before, after))
			}

			// The owner gets through: the route, ids, body and token are right.
			if r.others > 0 {
				return // a public route with a name parameter: nothing to fill it with
			}
			var res mxRes
			switch {
			case r.api && r.unsafe:
				res = m.api(m.alice, r, r.method, path, own, m.alice.csrf) // the session, with its token
			case r.api:
				res = m.api(ownerAPI, r, r.method, path, own, "-")
			default:
				token := owner.cookies["palaver_session"]
				res = m.html(owner, r, r.method, path, owner.csrf, false)
				// Signing in, up or out renews the session: take a fresh one.
				if owner.cookies["palaver_session"] != token {
					*owner = *m.login(owner.user.Username)
				}
			}
			if !mxReached(r, res) {
				t.Errorf("the owner's own request %s %s: status %d: %.300s", r.method, path, res.status, res.body)
			}
		})
	}
	a.waitTurns()
	t.Logf("authz matrix: %d routes (+%d HEAD twins): (a) %d id routes, %d cross-user requests; (b) %d admin routes; "+
		"(c) %d unsafe HTML + %d unsafe API routes without CSRF; (d) %d routes refuse visitors; %d public",
		len(routes), heads, counts.ids, counts.idRequests, counts.admin, counts.csrfHTML, counts.csrfAPI, counts.visitor, counts.public)
	// The floors are the counts today: raise them when routes are added, so
	// coverage cannot shrink unnoticed.
	if counts.ids < 35 || counts.idRequests < 88 || counts.admin < 18 || counts.csrfHTML < 35 ||
		counts.csrfAPI < 14 || counts.visitor < 67 || counts.public < 8 {
		t.Fatalf("the matrix covers fewer routes than the app has had: %+v", counts)
	}
}

func decodeJSON(s string, v any) error { return json.Unmarshal([]byte(s), v) }

// mxDiff shows the lines of one snapshot missing from the other.
func mxDiff(before, after string) string {
	b, a := strings.Split(before, "\n"), strings.Split(after, "\n")
	var out []string
	for _, l := range b {
		if !slices.Contains(a, l) {
			out = append(out, "- "+l)
		}
	}
	for _, l := range a {
		if !slices.Contains(b, l) {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}

// mxAdminAPI checks a route of the administrators' JSON API: a visitor gets
// 401, anyone but an administrator the API's 404 (by key or by session with
// its token), a session without its token 403, and an administrator gets
// through.
func mxAdminAPI(t *testing.T, m *mx, r mxRoute, path string, rows mxRows) {
	t.Helper()
	before := m.a.mxSnapshot()
	mxAPIErr(t, "visitor", m.api(m.visitor(), r, r.method, path, rows, "-"), http.StatusUnauthorized)
	mxAPIErr(t, "non-admin by key", m.api(m.malAPI, r, r.method, path, rows, "-"), http.StatusNotFound)
	mxAPIErr(t, "non-admin by session", m.api(m.mallory, r, r.method, path, rows, m.mallory.csrf), http.StatusNotFound)
	if r.unsafe {
		mxAPIErr(t, "admin without X-CSRF-Token", m.api(m.admin, r, r.method, path, rows, "-"), http.StatusForbidden)
	}
	if after := m.a.mxSnapshot(); after != before {
		t.Fatalf("refused requests changed the database:\n%s", mxDiff(before, after))
	}
	res := m.api(m.admin, r, r.method, path, rows, m.admin.csrf)
	// Adding a connection lists its models from its server, down here:
	// that refusal comes past every check.
	listed := res.status == http.StatusBadRequest && strings.Contains(res.body, "Listing the connection's models failed")
	if !listed && !mxReached(r, res) {
		t.Errorf("the administrator's request %s %s: status %d: %.300s", r.method, path, res.status, res.body)
	}
}
