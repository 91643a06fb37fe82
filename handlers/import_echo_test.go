package handlers_test

import (
	"net/http"
	"strings"
	"testing"
)

// A file whose number is megabytes long is refused with a short reason:
// the decoder's error quotes the number whole, and the 400 (and the log
// line of the refusal) carried all 8 MB of it back, each attempt, after
// holding several copies of it in memory.
func TestImportRefusalDoesNotEchoAHugeNumber(t *testing.T) {
	huge := "1" + strings.Repeat("1", 8<<20)
	header := `{"format":"palaver-export","version":1,"exported_at":"2026-12-04T19:00:00Z"}` + "\n"
	exchange := func(message string) []byte {
		return []byte(header + `{"type":"exchange","uid":"01a24275-f8c7-75c4-9aaf-1b27330f3d2b","title":"t","agent_type":"router",` +
			`"scope":"general","pinned":false,"archived":false,"created_at":"2026-12-04T19:00:00Z","updated_at":"2026-12-04T19:00:00Z",` +
			`"messages":[{"uid":"01a24275-f8c7-7da0-86fa-abc647fe5ba7",` + message + `,"timestamp":"2026-12-04T19:00:00Z"}]}` + "\n")
	}
	a := newTestApp(t)
	c := a.apiClient("ann")
	for name, file := range map[string][]byte{
		"seq":            exchange(`"seq":` + huge + `,"role":"user","content":"x"`),
		"agent_response": exchange(`"seq":0,"role":"assistant","content":"x","agent_response":{"metadata":{"n":` + huge + `}}`),
	} {
		t.Run(name, func(t *testing.T) {
			before := a.chatSnapshot()
			res, body := c.importRaw("application/x-ndjson", file)
			if res.StatusCode != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %.300s", res.StatusCode, body)
			}
			if len(body) > 2000 {
				t.Fatalf("the refusal is %d bytes: %.300s…", len(body), body)
			}
			if !strings.Contains(string(body), "Nothing was imported") {
				t.Fatalf("refusal %s", body)
			}
			if after := a.chatSnapshot(); after != before {
				t.Fatal("a refused import changed the database")
			}
		})
	}
}
