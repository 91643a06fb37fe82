package transfer_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"palaver/transfer"
	"palaver/transfer/transfertest"
)

var exportedAt = time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC)

// write makes an export of items.
func write(t testing.TB, items []transfer.Item) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := transfer.NewWriter(&buf, exportedAt)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if it.Page != nil {
			err = w.WritePage(it.Page)
		} else {
			err = w.WriteExchange(it.Exchange)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// readAll reads every item of a Palaver export, or the first error.
func readAll(data []byte) ([]transfer.Item, error) {
	r, err := transfer.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	var items []transfer.Item
	for {
		it, err := r.Next()
		if err == io.EOF {
			return items, nil
		}
		if err != nil {
			return items, err
		}
		items = append(items, it)
	}
}

func TestRoundTrip(t *testing.T) {
	g := transfertest.New(12)
	items := g.Items(40, 200)
	for _, e := range g.Edges() {
		items = append(items, transfer.Item{Exchange: e})
	}
	for _, it := range items { // the generator makes only what a reader accepts
		if it.Exchange != nil {
			if err := it.Exchange.Validate(); err != nil {
				t.Fatalf("generated exchange invalid: %v", err)
			}
		} else if err := it.Page.Validate(); err != nil {
			t.Fatalf("generated page invalid: %v", err)
		}
	}
	data := write(t, items)
	if lines := bytes.Count(data, []byte("\n")); lines != len(items)+1 {
		t.Errorf("%d lines for %d items and a header", lines, len(items))
	}
	got, err := readAll(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := transfertest.Equal(items, got); err != nil {
		t.Fatal(err)
	}
	if got[0].Where != "line 2" {
		t.Errorf("first item's Where = %q", got[0].Where)
	}
	// Written again, the same bytes: nothing is lost or reordered on the way.
	if again := write(t, got); !bytes.Equal(again, data) {
		t.Error("write → read → write changed the file")
	}
	if err := transfertest.EqualContent(items, got); err != nil {
		t.Error(err)
	}

	// The generator covers what it says it does.
	var forks, errorRows, tools, feedback, comments, pageChats, jobChats, emptyTitles, astral, rtl int
	for _, it := range items {
		e := it.Exchange
		if e == nil {
			continue
		}
		if e.ForkedFrom != nil {
			forks++
		}
		if e.Title == "" {
			emptyTitles++
		}
		switch e.Scope {
		case transfer.ScopePage:
			pageChats++
		case transfer.ScopeJob:
			jobChats++
		}
		for _, m := range e.Messages {
			switch {
			case m.Role == transfer.RoleError:
				errorRows++
			case m.Role == transfer.RoleToolCall:
				tools++
			}
			if m.Feedback != nil {
				feedback++
			}
			if m.Comment != nil {
				comments++
			}
			for _, r := range m.Content {
				if r > 0xffff {
					astral++
				}
				if r >= 0x0590 && r <= 0x06ff {
					rtl++
				}
			}
		}
	}
	for name, n := range map[string]int{"forks": forks, "error rows": errorRows, "tool calls": tools, "feedback": feedback,
		"comments": comments, "page chats": pageChats, "job chats": jobChats, "empty titles": emptyTitles,
		"astral characters": astral, "right-to-left characters": rtl} {
		if n < 3 {
			t.Errorf("only %d %s in the generated export", n, name)
		}
	}
}

// header is a valid first line.
const header = `{"format":"palaver-export","version":1,"exported_at":"2026-12-03T07:00:00Z"}` + "\n"

const u1, u2, u3, u4 = "0193a5e0-0000-7000-8000-000000000001", "0193a5e0-0000-7000-8000-000000000002",
	"0193a5e0-0000-7000-8000-000000000003", "0193a5e0-0000-7000-8000-000000000004"

// exchangeLine is a valid exchange line with the given messages.
func exchangeLine(uid, messages string) string {
	return `{"type":"exchange","uid":"` + uid + `","title":"t","agent_type":"router","scope":"general","pinned":false,"archived":false,` +
		`"created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z","messages":[` + messages + "]}\n"
}

func msg(uid, seq, role string) string {
	return `{"uid":"` + uid + `","seq":` + seq + `,"role":"` + role + `","content":"c","timestamp":"2026-01-01T00:00:01Z"}`
}

func TestReaderAccepts(t *testing.T) {
	valid := header +
		`{"type":"page","uid":"` + u4 + `","title":"p","content":"","created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z",` +
		`"revisions":[],"a_field_from_the_future":[1,2]}` + "\n\n" +
		exchangeLine(u1, msg(u2, "null", "error")+","+msg(u3, "0", "user"))
	for name, data := range map[string]string{
		"as written":              valid,
		"no newline at the end":   strings.TrimSuffix(valid, "\n"),
		"CRLF line ends":          strings.ReplaceAll(valid, "\n", "\r\n"),
		"a byte order mark":       "\xef\xbb\xbf" + valid,
		"trailing blank lines":    valid + "\n  \n",
		"seq missing on an error": strings.Replace(valid, `"seq":null,`, "", 1),
	} {
		items, err := readAll([]byte(data))
		if err != nil || len(items) != 2 {
			t.Errorf("%s: %d items, %v", name, len(items), err)
			continue
		}
		if e := items[1].Exchange; e == nil || len(e.Messages) != 2 || e.Messages[0].Seq != nil || *e.Messages[1].Seq != 0 {
			t.Errorf("%s: read %+v", name, items[1])
		}
	}
	r, err := transfer.NewReader(strings.NewReader(header))
	if err != nil {
		t.Fatal(err)
	}
	if !r.Header().ExportedAt.Equal(exportedAt) {
		t.Errorf("header %+v", r.Header())
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("an export of nothing: %v, want io.EOF", err)
	}
}

func TestReaderErrors(t *testing.T) {
	ex := func(messages string) string { return header + exchangeLine(u1, messages) }
	cases := []struct{ name, data, want string }{
		{"empty", "", "line 1: the file is empty"},
		{"not JSON", "hello\n", "line 1: not a JSON object"},
		{"no format", `{"version":1}` + "\n", `line 1: not a palaver-export header (no "format")`},
		{"other format", `{"format":"libre-export","version":1}` + "\n", `line 1: unknown format "libre-export"`},
		{"later version", `{"format":"palaver-export","version":2}` + "\n", "line 1: unsupported palaver-export version 2"},
		{"no version", `{"format":"palaver-export"}` + "\n", `line 1: the header has no "version"`},
		{"array line", header + "[1,2]\n", "line 2: not a JSON object (an array)"},
		{"string line", header + exchangeLine(u1, "") + `"x"` + "\n", "line 3: not a JSON object"},
		{"no type", header + `{"uid":"` + u1 + `"}` + "\n", `line 2: no "type"`},
		{"unknown type", header + "\n" + `{"type":"foo"}` + "\n", `line 3: unknown type "foo"`},
		{"no role", ex(msg(u2, "0", "user") + "," + msg(u3, "1", "")), "line 2: message 2: no role"},
		{"unknown role", ex(msg(u2, "0", "system")), `line 2: message 1: unknown role "system"`},
		{"error row with a seq", ex(msg(u2, "0", "error")), "line 2: message 1: an error row has a seq"},
		{"user without seq", ex(msg(u2, "null", "user")), "line 2: message 1: a user entry has no seq"},
		{"seq not from 0", ex(msg(u2, "1", "user")), "line 2: message 1: seq 1 where 0 was due"},
		{"seq gap", ex(msg(u2, "0", "user") + "," + msg(u3, "2", "assistant")), "line 2: message 2: seq 2 where 1 was due"},
		{"seq repeated", ex(msg(u2, "0", "user") + "," + msg(u3, "0", "assistant")), "line 2: message 2: seq 0 where 1 was due"},
		{"seq a string", ex(strings.Replace(msg(u2, "0", "user"), `"seq":0`, `"seq":"0"`, 1)), "line 2: field messages.seq: a JSON string where a whole number was due"},
		{"bad uid", ex(msg("not-a-uuid", "0", "user")), `line 2: "not-a-uuid" is not a UUID`},
		{"nil uid", ex(msg("00000000-0000-0000-0000-000000000000", "0", "user")), "line 2: message 1: no uid"},
		{"uid twice in an exchange", ex(msg(u2, "0", "user") + "," + msg(u2, "1", "assistant")), "line 2: uid " + u2 + " appears twice"},
		{"uid twice in the file", header + exchangeLine(u1, "") + exchangeLine(u1, ""), "line 3: uid " + u1 + " appears twice"},
		{"message uid = exchange uid", ex(msg(u1, "0", "user")), "line 2: uid " + u1 + " appears twice"},
		{"feedback 2", ex(strings.Replace(msg(u2, "0", "user"), `"content"`, `"feedback":2,"content"`, 1)), "line 2: message 1: feedback 2 (0, 1 or null)"},
		{"feedback true", ex(strings.Replace(msg(u2, "0", "user"), `"content"`, `"feedback":true,"content"`, 1)), "line 2: field messages.feedback: a JSON bool"},
		{"bad timestamp", ex(strings.Replace(msg(u2, "0", "user"), "2026-01-01T00:00:01Z", "yesterday", 1)), "line 2: "},
		{"no timestamp", ex(strings.Replace(msg(u2, "0", "user"), `,"timestamp":"2026-01-01T00:00:01Z"`, "", 1)), "line 2: message 1: no timestamp"},
		{"agent_response an array", ex(strings.Replace(msg(u2, "0", "user"), `"content"`, `"agent_response":[1],"content"`, 1)), "line 2: message 1: agent_response is not a JSON object"},
		{"unknown edit_mode", ex(strings.Replace(msg(u2, "0", "user"), `"content"`, `"edit_mode":"rewrite","content"`, 1)), `line 2: message 1: unknown edit_mode "rewrite"`},
		{"unknown scope", strings.Replace(ex(""), `"general"`, `"team"`, 1), `line 2: unknown scope "team"`},
		{"sub-run scope", strings.Replace(ex(""), `"general"`, `"subrun"`, 1), `line 2: a "subrun" exchange is never exported`},
		{"page scope without page", strings.Replace(ex(""), `"general"`, `"page"`, 1), `line 2: a "page" exchange has a page_uid`},
		{"fork past its log", strings.Replace(ex(""), `"messages"`, `"forked_from":{"exchange_uid":"`+u4+`","seq":1},"messages"`, 1), "line 2: forked_from.seq 1 is past the exchange's own 0 entries"},
		{"fork of itself", strings.Replace(ex(""), `"messages"`, `"forked_from":{"exchange_uid":"`+u1+`","seq":0},"messages"`, 1), "line 2: forked_from names the exchange itself"},
		{"bad edit_source", header + `{"type":"page","uid":"` + u1 + `","title":"","content":"","created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z","revisions":[{"uid":"` + u2 + `","content":"","edit_source":"robot","created_at":"2026-01-01T00:00:00Z"}]}` + "\n", `line 2: revision 1: unknown edit_source "robot"`},
		{"truncated last line", ex(msg(u2, "0", "user"))[:len(ex(msg(u2, "0", "user")))-20], "line 2: unexpected end"},
		{"truncated mid-string", header + exchangeLine(u1, "") + `{"type":"exchange","uid":"` + u2[:10], "line 3: unexpected end"},
		{"garbage after the object", header + `{"type":"exchange"} x` + "\n", "line 2: invalid JSON"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			items, err := readAll([]byte(c.data))
			if err == nil {
				t.Fatalf("no error; %d items", len(items))
			}
			if !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("error %q, want it to start with %q", err, c.want)
			}
			if !errors.Is(err, transfer.ErrInvalid) {
				t.Errorf("error %v does not match ErrInvalid", err)
			}
		})
	}
	var fe *transfer.FormatError
	if _, err := readAll([]byte(`{"format":"palaver-export","version":2}`)); !errors.As(err, &fe) || fe.Version != 2 {
		t.Errorf("a later version: %v, want a *FormatError with version 2", err)
	}
}

func TestReaderLineLimit(t *testing.T) {
	long := header + exchangeLine(u1, strings.Replace(msg(u2, "0", "user"), `"c"`, `"`+strings.Repeat("x", 5000)+`"`, 1))
	o := transfer.Options{MaxLineBytes: 4096}
	r, err := o.NewReader(strings.NewReader(long))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(); err == nil || !strings.HasPrefix(err.Error(), "line 2: longer than 4096 bytes") || !errors.Is(err, transfer.ErrInvalid) {
		t.Errorf("a long line: %v", err)
	}
	o.MaxLineBytes = 8192
	if r, err = o.NewReader(strings.NewReader(long)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(); err != nil {
		t.Errorf("a line under the limit: %v", err)
	}
}

// A file cut anywhere reads as an error, or (cut right after a newline) as
// the items before the cut: never as something else.
func TestReaderTruncated(t *testing.T) {
	items := transfertest.New(7).Items(3, 12)
	data := write(t, items)
	for cut := 0; cut < len(data); cut += 1 + cut/40 {
		got, err := readAll(data[:cut])
		if err == nil {
			if cut > 0 && data[cut-1] != '\n' {
				// The last line may be whole without its newline.
				if next := bytes.IndexByte(data[cut:], '\n'); next != 0 {
					t.Fatalf("cut at %d (mid-line): no error", cut)
				}
			}
			if e := transfertest.Equal(items[:len(got)], got); e != nil {
				t.Fatalf("cut at %d: %v", cut, e)
			}
			continue
		}
		if !errors.Is(err, transfer.ErrInvalid) {
			t.Fatalf("cut at %d: %v does not match ErrInvalid", cut, err)
		}
		if !strings.Contains(err.Error(), "unexpected end") && !strings.Contains(err.Error(), "empty") {
			t.Errorf("cut at %d: %v", cut, err)
		}
	}
}

type failingWriter struct{ n int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.n--; f.n < 0 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

func TestWriterStopsAfterAFailedWrite(t *testing.T) {
	w, err := transfer.NewWriter(&failingWriter{n: 2}, exportedAt)
	if err != nil {
		t.Fatal(err)
	}
	es := transfertest.New(1).Edges()
	if err := w.WriteExchange(es[0]); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteExchange(es[1]); err == nil {
		t.Fatal("no error from a failed write")
	}
	if err := w.WriteExchange(es[2]); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("a write after a failed one: %v", err)
	}
	if w.Exchanges() != 1 {
		t.Errorf("Exchanges() = %d", w.Exchanges())
	}
	// A value that cannot be marshalled writes nothing and breaks nothing.
	var buf bytes.Buffer
	w, _ = transfer.NewWriter(&buf, exportedAt)
	bad := *es[0]
	bad.Messages = []*transfer.Message{{Role: "user", AgentResponse: []byte("{not json")}}
	if err := w.WriteExchange(&bad); err == nil {
		t.Error("no error for invalid raw JSON")
	}
	if err := w.WriteExchange(es[0]); err != nil {
		t.Fatal(err)
	}
	if items, err := readAll(buf.Bytes()); err != nil || len(items) != 1 {
		t.Errorf("after a refused value: %d items, %v", len(items), err)
	}
}

func TestUID(t *testing.T) {
	u, err := transfer.ParseUID("0193A5E0-0000-7000-8000-00000000000F")
	if err != nil || u.String() != "0193a5e0-0000-7000-8000-00000000000f" {
		t.Errorf("%v %v", u, err)
	}
	for _, s := range []string{"", "0193a5e000007000800000000000000f", "{0193a5e0-0000-7000-8000-00000000000f}",
		"0193a5e0-0000-7000-8000-00000000000g", "0193a5e0+0000-7000-8000-00000000000f"} {
		if _, err := transfer.ParseUID(s); err == nil {
			t.Errorf("%q parsed", s)
		}
	}
	// RFC 9562's example of a v5 UUID: the DNS namespace and "www.example.com".
	dns, _ := transfer.ParseUID("6ba7b810-9dad-11d1-80b4-00c04fd430c8")
	if got := transfer.NameUID(dns, "www.example.com").String(); got != "2ed6657d-e927-568b-95e1-2665a8aea6a2" {
		t.Errorf("NameUID = %s", got)
	}
}

// EqualContent, for the store's round trip: new uids and re-encoded JSON
// compare equal, a changed field does not.
func TestEqualContent(t *testing.T) {
	items := transfertest.New(4).Items(3, 20)
	data := write(t, items)
	g := transfertest.New(99)
	renamed := map[string]string{}
	for _, u := range uidPattern.FindAll(data, -1) {
		if _, ok := renamed[string(u)]; !ok {
			renamed[string(u)] = g.UID().String()
		}
	}
	moved := uidPattern.ReplaceAllFunc(data, func(u []byte) []byte { return []byte(renamed[string(u)]) })
	got, err := readAll(moved)
	if err != nil {
		t.Fatal(err)
	}
	if transfertest.Equal(items, got) == nil {
		t.Error("Equal ignores new uids")
	}
	if err := transfertest.EqualContent(items, got); err != nil {
		t.Error(err)
	}
	// agent_response as a store re-encodes it: keys in another order.
	type reordered struct {
		Metadata    any `json:"metadata"`
		Suggestions any `json:"suggestions"`
		Confidence  any `json:"confidence"`
		AgentType   any `json:"agent_type"`
		Content     any `json:"content"`
	}
	n := 0
	for _, it := range got {
		for _, m := range messagesOf(it) {
			if m.AgentResponse != nil {
				var r reordered
				json.Unmarshal(m.AgentResponse, &r)
				m.AgentResponse, _ = json.Marshal(r)
				n++
			}
		}
	}
	if n == 0 {
		t.Fatal("no agent_response to reorder")
	}
	if err := transfertest.EqualContent(items, got); err != nil {
		t.Error(err)
	}
	if transfertest.Equal(items, got) == nil {
		t.Error("Equal ignores reordered keys")
	}
	for _, it := range got {
		if ms := messagesOf(it); len(ms) > 0 && ms[len(ms)-1].AgentResponse != nil {
			ms[len(ms)-1].AgentResponse = json.RawMessage(`{"content":"other"}`)
			break
		}
	}
	if transfertest.EqualContent(items, got) == nil {
		t.Error("EqualContent ignores a changed agent_response")
	}
	if got, err = readAll(moved); err != nil {
		t.Fatal(err)
	}
	got[len(got)-1].Exchange.Title += "!"
	if transfertest.EqualContent(items, got) == nil {
		t.Error("EqualContent ignores a changed title")
	}
}

var uidPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

func messagesOf(it transfer.Item) []*transfer.Message {
	if it.Exchange == nil {
		return nil
	}
	return it.Exchange.Messages
}
