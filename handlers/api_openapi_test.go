package handlers_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"palaver/handlers"
)

// openAPIMethods are the keys of an OpenAPI path item that are operations.
var openAPIMethods = []string{"get", "put", "post", "delete", "patch", "head", "options", "trace"}

// fiberParam is a path parameter as fiber writes it.
var fiberParam = regexp.MustCompile(`:([A-Za-z0-9_]+)`)

// templateParam is a path parameter as OpenAPI writes it.
var templateParam = regexp.MustCompile(`\{([^}]+)\}`)

// statusKey is a key of an operation's responses.
var statusKey = regexp.MustCompile(`^([1-5][0-9][0-9]|[1-5]XX|default)$`)

// openAPIDoc reads handlers/openapi.json, the document the binary embeds.
func openAPIDoc(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("openapi.json is not JSON: %v", err)
	}
	return doc
}

// TestOpenAPICoversRoutes walks the route table: every /api route must be in
// the document, and every operation of the document must be a route.
func TestOpenAPICoversRoutes(t *testing.T) {
	a := newTestApp(t)
	doc := openAPIDoc(t)
	paths, _ := doc["paths"].(map[string]any)

	documented := map[string]bool{}
	for path, item := range paths {
		ops, _ := item.(map[string]any)
		for _, m := range openAPIMethods {
			if ops[m] != nil {
				documented[strings.ToUpper(m)+" "+path] = true
			}
		}
	}
	served := map[string]bool{}
	for _, r := range a.app.GetRoutes(true) { // true: without the Use middleware (apiAuth, apiNotFound)
		if r.Method == http.MethodHead || !strings.HasPrefix(r.Path, "/api/") {
			continue // fiber's HEAD twin of a GET is the GET
		}
		served[r.Method+" "+fiberParam.ReplaceAllString(r.Path, "{$1}")] = true
	}
	if len(served) < 20 {
		t.Fatalf("only %d /api routes found: is the route table read right? %v", len(served), served)
	}
	for k := range served {
		if !documented[k] {
			t.Errorf("%s is served but not in handlers/openapi.json", k)
		}
	}
	for k := range documented {
		if !served[k] {
			t.Errorf("handlers/openapi.json documents %s, which the app does not serve", k)
		}
	}
}

// TestOpenAPIDocument checks the document is OpenAPI 3.1 and whole: each
// operation answers something, each answer is a status with a description,
// each operation declares its path parameters, and every $ref names a
// component that exists.
func TestOpenAPIDocument(t *testing.T) {
	doc := openAPIDoc(t)
	if doc["openapi"] != "3.1.0" {
		t.Fatalf("openapi = %v, want \"3.1.0\"", doc["openapi"])
	}
	info, _ := doc["info"].(map[string]any)
	if info["title"] == nil || info["version"] == nil {
		t.Errorf("info lacks title or version: %v", info)
	}
	components, _ := doc["components"].(map[string]any)
	schemes, _ := components["securitySchemes"].(map[string]any)
	for name, want := range map[string][2]string{"apiKey": {"header", "x-api-key"}, "session": {"cookie", "palaver_session"}, "csrfToken": {"header", "X-CSRF-Token"}} {
		s, _ := schemes[name].(map[string]any)
		if s["type"] != "apiKey" || s["in"] != want[0] || s["name"] != want[1] {
			t.Errorf("security scheme %s = %v, want an apiKey in %s named %s", name, s, want[0], want[1])
		}
	}

	paths, _ := doc["paths"].(map[string]any)
	if len(paths) == 0 {
		t.Fatal("no paths")
	}
	operations := 0
	opIDs := map[string]string{}
	for path, item := range paths {
		ops, _ := item.(map[string]any)
		var inPath []string
		for _, m := range templateParam.FindAllStringSubmatch(path, -1) {
			inPath = append(inPath, m[1])
		}
		for _, m := range openAPIMethods {
			op, ok := ops[m].(map[string]any)
			if !ok {
				continue
			}
			operations++
			where := strings.ToUpper(m) + " " + path
			res, _ := op["responses"].(map[string]any)
			if len(res) == 0 {
				t.Errorf("%s has no responses", where)
			}
			for code, r := range res {
				if !statusKey.MatchString(code) {
					t.Errorf("%s answers %q, which is no status", where, code)
				}
				if d, _ := resolve(t, doc, r)["description"].(string); d == "" {
					t.Errorf("%s answers %s without a description (OpenAPI requires one)", where, code)
				}
			}
			if id, _ := op["operationId"].(string); id == "" {
				t.Errorf("%s has no operationId", where)
			} else if other, dup := opIDs[id]; dup {
				t.Errorf("%s and %s share the operationId %s", where, other, id)
			} else {
				opIDs[id] = where
			}
			var declared []string
			params, _ := op["parameters"].([]any)
			for _, p := range params {
				p := resolve(t, doc, p)
				if p["in"] == "path" {
					if p["required"] != true {
						t.Errorf("%s: path parameter %v is not required", where, p["name"])
					}
					declared = append(declared, p["name"].(string))
				}
			}
			slices.Sort(declared)
			want := slices.Clone(inPath)
			slices.Sort(want)
			if !slices.Equal(declared, want) {
				t.Errorf("%s declares path parameters %v, its path has %v", where, declared, want)
			}
		}
	}
	if operations < 20 {
		t.Errorf("only %d operations", operations)
	}
	checkRefs(t, doc, doc)
}

// resolve follows a $ref to its component.
func resolve(t *testing.T, doc map[string]any, v any) map[string]any {
	t.Helper()
	m, _ := v.(map[string]any)
	ref, ok := m["$ref"].(string)
	if !ok {
		return m
	}
	target := lookupRef(doc, ref)
	if target == nil {
		t.Fatalf("$ref %s names nothing", ref)
	}
	return target
}

// lookupRef finds a local reference ("#/components/schemas/Error").
func lookupRef(doc map[string]any, ref string) map[string]any {
	path, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil
	}
	var cur any = doc
	for _, seg := range strings.Split(path, "/") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[seg]
	}
	target, _ := cur.(map[string]any)
	return target
}

// checkRefs walks v and fails on a $ref that names nothing.
func checkRefs(t *testing.T, doc map[string]any, v any) {
	t.Helper()
	switch v := v.(type) {
	case map[string]any:
		if ref, ok := v["$ref"].(string); ok && lookupRef(doc, ref) == nil {
			t.Errorf("$ref %s names nothing", ref)
		}
		for _, e := range v {
			checkRefs(t, doc, e)
		}
	case []any:
		for _, e := range v {
			checkRefs(t, doc, e)
		}
	}
}

// TestOpenAPIServed: anyone may read the document, as the binary embeds it,
// without a session being made for them.
func TestOpenAPIServed(t *testing.T) {
	a := newTestApp(t)
	want, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.app.Test(httptest.NewRequest(http.MethodGet, "/api/openapi.json", nil), -1)
	if err != nil {
		t.Fatal(err)
	}
	got := bodyOf(res)
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET /api/openapi.json: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	if got != string(want) {
		t.Fatal("the served document is not handlers/openapi.json")
	}
	if ck := res.Header.Values("Set-Cookie"); len(ck) != 0 {
		t.Fatalf("reading the document set cookies: %v", ck)
	}
	// An API key is not needed, and one that is wrong does not matter.
	req := httptest.NewRequest(http.MethodGet, "/api/openapi.json", nil)
	req.Header.Set("x-api-key", "not-a-key")
	if res, err := a.app.Test(req, -1); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("with a wrong key: %v %v", res.StatusCode, err)
	}
}

// TestOpenAPIPayloadsMatchHandlers: each request schema lists exactly the
// fields its handler decodes (a field the handler takes but the document
// leaves out, such as the chat's model, fails here).
func TestOpenAPIPayloadsMatchHandlers(t *testing.T) {
	doc := openAPIDoc(t)
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	for name, payload := range handlers.OpenAPIPayloads {
		schema, _ := schemas[name].(map[string]any)
		if schema == nil {
			t.Errorf("no schema %s", name)
			continue
		}
		props, _ := schema["properties"].(map[string]any)
		documented := slices.Sorted(maps.Keys(props))
		var decoded []string
		rt := reflect.TypeOf(payload)
		for i := range rt.NumField() {
			if tag, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ","); tag != "" && tag != "-" {
				decoded = append(decoded, tag)
			}
		}
		slices.Sort(decoded)
		if !slices.Equal(documented, decoded) {
			t.Errorf("schema %s documents %v; its handler decodes %v", name, documented, decoded)
		}
	}
}
