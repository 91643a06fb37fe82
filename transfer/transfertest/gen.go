// Package transfertest makes random, valid Palaver exports for round-trip
// tests: forks, error rows, tool calls and results, feedback and comments,
// page chats with proposals, Unicode from every plane, empty titles. The
// transfer package's tests use it for write → read; a store's tests can use
// it for export → import → export.
package transfertest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"time"

	"palaver/transfer"
)

// Gen makes random exports; the same seed gives the same export.
type Gen struct {
	r   *rand.Rand
	now time.Time // advances with every timestamp handed out
}

// New returns a generator seeded with seed.
func New(seed uint64) *Gen {
	return &Gen{
		r:   rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		now: time.Date(2024, 2, 29, 23, 59, 58, 123456000, time.UTC),
	}
}

// Export makes pages and exchanges in the order a file holds them (pages
// first, a fork after the exchange it forks from). Some exchanges are chats
// about the pages, some job chats, some forks.
func (g *Gen) Export(pages, exchanges int) ([]*transfer.Page, []*transfer.Exchange) {
	ps := make([]*transfer.Page, 0, pages)
	for range pages {
		ps = append(ps, g.Page())
	}
	es := make([]*transfer.Exchange, 0, exchanges)
	for range exchanges {
		es = append(es, g.Exchange(ps, es))
	}
	g.linkProposals(ps, es)
	return ps, es
}

// Items is Export as a reader yields it.
func (g *Gen) Items(pages, exchanges int) []transfer.Item {
	ps, es := g.Export(pages, exchanges)
	items := make([]transfer.Item, 0, len(ps)+len(es))
	for _, p := range ps {
		items = append(items, transfer.Item{Page: p})
	}
	for _, e := range es {
		items = append(items, transfer.Item{Exchange: e})
	}
	return items
}

// UID returns a random version 4 UUID.
func (g *Gen) UID() transfer.UID {
	var u transfer.UID
	for i := range u {
		u[i] = byte(g.r.UintN(256))
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return u
}

// Time returns a moment after every earlier one, to the microsecond (what
// SQLite and PostgreSQL both keep), in UTC.
func (g *Gen) Time() time.Time {
	g.now = g.now.Add(time.Duration(1+g.r.IntN(90_000_000)) * time.Microsecond)
	return g.now
}

// Pieces of text: scripts, emoji (astral plane), right-to-left, Markdown,
// JSON's special characters, HTML. No NUL: PostgreSQL's text refuses it.
var pieces = []string{
	"hello", "world", "the quick brown fox", "Ünïcödé", "naïve café",
	"日本語のテキスト", "中文", "한국어", "Ελληνικά", "Кириллица",
	"😀", "🧑‍🚀", "👍🏽", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "𠜎𠜱", "🇫🇷",
	"مرحبا بالعالم", "שלום עולם", "\u200fRTL mark", "\u202eoverride\u202c",
	"# Heading", "## Section", "- item", "```go\nfmt.Println(1)\n```", "**bold**",
	`"quoted"`, `back\slash`, "tab\there", "line\nbreak", "crlf\r\n", "\u2028\u2029",
	"<script>alert(1)</script>", "a & b < c > d", "\x01\x1f", "  ", "",
}

// Text returns a random string of up to about 40 pieces.
func (g *Gen) Text() string {
	n := g.r.IntN(12)
	if g.r.IntN(20) == 0 {
		n = 40
	}
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString([]string{" ", "\n", "", "\n\n"}[g.r.IntN(4)])
		}
		b.WriteString(pieces[g.r.IntN(len(pieces))])
	}
	return b.String()
}

// Title returns a title, sometimes empty.
func (g *Gen) Title() string {
	if g.r.IntN(6) == 0 {
		return ""
	}
	t := g.Text()
	if len(t) > 200 {
		t = t[:strings.LastIndexAny(t[:200], " \n")+1]
	}
	return t
}

// Page returns a page with one to four revisions, oldest first.
func (g *Gen) Page() *transfer.Page {
	p := &transfer.Page{UID: g.UID(), Title: g.Title(), CreatedAt: g.Time(), Revisions: []*transfer.Revision{}}
	for i := range 1 + g.r.IntN(4) {
		src := transfer.EditUser
		if i > 0 {
			src = []string{transfer.EditUser, transfer.EditAgent, transfer.EditRestore}[g.r.IntN(3)]
		}
		r := &transfer.Revision{UID: g.UID(), Content: g.Text(), EditSource: src, CreatedAt: g.Time()}
		p.Revisions = append(p.Revisions, r)
		p.Content = r.Content
	}
	p.UpdatedAt = p.Revisions[len(p.Revisions)-1].CreatedAt
	return p
}

// Exchange returns an exchange: a general, page or job chat, or a fork of
// one of earlier.
func (g *Gen) Exchange(pages []*transfer.Page, earlier []*transfer.Exchange) *transfer.Exchange {
	e := &transfer.Exchange{
		UID: g.UID(), Title: g.Title(), AgentType: "router", Scope: transfer.ScopeGeneral,
		Pinned: g.r.IntN(5) == 0, Archived: g.r.IntN(7) == 0, CreatedAt: g.Time(),
		Messages: []*transfer.Message{},
	}
	var seq int64
	switch k := g.r.IntN(10); {
	case k < 3 && len(earlier) > 0:
		parent := earlier[g.r.IntN(len(earlier))]
		if parent.Scope != transfer.ScopeJob { // one exchange per job: no forks of those
			seq = g.forkOf(e, parent)
		}
	case k < 5 && len(pages) > 0:
		p := pages[g.r.IntN(len(pages))].UID
		e.Scope, e.PageUID, e.AgentType = transfer.ScopePage, &p, "page_assistant"
	case k < 6:
		id := g.jobID()
		e.Scope, e.JobID = transfer.ScopeJob, &id
	}
	for range g.r.IntN(5) {
		seq = g.turn(e, seq)
	}
	e.UpdatedAt = e.CreatedAt
	if n := len(e.Messages); n > 0 {
		e.UpdatedAt = e.Messages[n-1].Timestamp
	}
	return e
}

// forkOf makes e a fork of parent at a random seq: e's log starts with a
// copy (new uids) of the parent's entries before it. It returns the seq.
func (g *Gen) forkOf(e, parent *transfer.Exchange) int64 {
	var n int64
	for _, m := range parent.Messages {
		if m.Seq != nil {
			n++
		}
	}
	at := g.r.Int64N(n + 1)
	e.Scope, e.PageUID, e.AgentType, e.Title = parent.Scope, parent.PageUID, parent.AgentType, parent.Title
	e.ForkedFrom = &transfer.ForkRef{ExchangeUID: parent.UID, Seq: at}
	for _, m := range parent.Messages {
		if m.Seq != nil && *m.Seq >= at {
			break
		}
		c := *m
		c.UID = g.UID()
		e.Messages = append(e.Messages, &c)
	}
	return at
}

// turn appends a user message and what followed it: tool calls and their
// results, then an answer or an error row.
func (g *Gen) turn(e *transfer.Exchange, seq int64) int64 {
	add := func(m *transfer.Message) {
		m.UID, m.Timestamp = g.UID(), g.Time()
		if m.Role != transfer.RoleError {
			s := seq
			m.Seq = &s
			seq++
		}
		e.Messages = append(e.Messages, m)
	}
	add(&transfer.Message{Role: transfer.RoleUser, Content: g.Text()})
	for range g.r.IntN(3) / 2 * (1 + g.r.IntN(2)) {
		call := fmt.Sprintf("call_%d", g.r.IntN(1_000_000))
		add(&transfer.Message{Role: transfer.RoleToolCall, Content: "", Tool: g.object(map[string]any{
			"call_id": call, "name": "search_chats", "arguments": map[string]any{"query": g.Text()}})})
		add(&transfer.Message{Role: transfer.RoleToolResult, Content: g.Text(), Tool: g.object(map[string]any{
			"call_id": call, "name": "search_chats", "result": []any{g.Text(), 3.5, nil, true}})})
	}
	if g.r.IntN(6) == 0 {
		add(&transfer.Message{Role: transfer.RoleError, Content: "The agent failed: " + g.Text()})
		return seq
	}
	agent := e.AgentType
	m := &transfer.Message{Role: transfer.RoleAssistant, Content: g.Text(), AgentType: &agent}
	meta := map[string]any{"model": "builtin", "elapsed_ms": g.r.IntN(5000)}
	if e.Scope == transfer.ScopePage && g.r.IntN(2) == 0 {
		mode := []string{transfer.EditFullReplacement, transfer.EditSectionPatch}[g.r.IntN(2)]
		m.EditMode = &mode
		meta["edit_mode"], meta["content"], meta["original_content_hash"] = mode, g.Text(), "0f923099"
	}
	m.AgentResponse = g.object(map[string]any{
		"content": m.Content, "agent_type": agent, "confidence": "high",
		"suggestions": []any{}, "metadata": meta,
	})
	switch g.r.IntN(4) {
	case 0:
		f := int64(g.r.IntN(2))
		m.Feedback = &f
		if g.r.IntN(2) == 0 {
			c := g.Text()
			m.Comment = &c
		}
	case 1:
		c := g.Text() // a comment kept after the thumb was taken back
		m.Comment = &c
	}
	add(m)
	return seq
}

// linkProposals points agent revisions at a proposal made in a chat about
// their page, where there is one.
func (g *Gen) linkProposals(pages []*transfer.Page, exchanges []*transfer.Exchange) {
	proposals := map[transfer.UID][]transfer.UID{}
	for _, e := range exchanges {
		if e.PageUID == nil {
			continue
		}
		for _, m := range e.Messages {
			if m.EditMode != nil {
				proposals[*e.PageUID] = append(proposals[*e.PageUID], m.UID)
			}
		}
	}
	for _, p := range pages {
		for _, r := range p.Revisions {
			if ms := proposals[p.UID]; r.EditSource == transfer.EditAgent && len(ms) > 0 {
				u := ms[g.r.IntN(len(ms))]
				r.MessageUID = &u
			}
		}
	}
}

func (g *Gen) jobID() string {
	const chars = "0123456789abcdef"
	b := make([]byte, 16)
	for i := range b {
		b[i] = chars[g.r.IntN(len(chars))]
	}
	return string(b)
}

func (g *Gen) object(v map[string]any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only maps of plain values: cannot fail
	}
	return b
}

// Edges returns hand-made exchanges at the edges of the format: no
// messages, only error rows, an error row first, a fork at seq 0 and at its
// parent's end, a message as long as allowed, every optional field set.
func (g *Gen) Edges() []*transfer.Exchange {
	base := func(title string) *transfer.Exchange {
		t := g.Time()
		return &transfer.Exchange{UID: g.UID(), Title: title, AgentType: "router", Scope: transfer.ScopeGeneral,
			CreatedAt: t, UpdatedAt: t, Messages: []*transfer.Message{}}
	}
	msg := func(role string, seq *int64, content string) *transfer.Message {
		return &transfer.Message{UID: g.UID(), Seq: seq, Role: role, Content: content, Timestamp: g.Time()}
	}
	i := func(n int64) *int64 { return &n }
	empty := base("")
	errorsOnly := base("only errors")
	errorsOnly.Messages = append(errorsOnly.Messages, msg(transfer.RoleError, nil, "first failure"), msg(transfer.RoleError, nil, ""))
	errorFirst := base("🧑‍🚀 مرحبا 𠜎")
	errorFirst.Messages = append(errorFirst.Messages, msg(transfer.RoleError, nil, "boom"), msg(transfer.RoleUser, i(0), "again?"),
		msg(transfer.RoleError, nil, "boom again"), msg(transfer.RoleAssistant, i(1), strings.Repeat("long 😀 ", transfer.MaxContentChars/7))) // at the limit
	atZero := base("fork at 0")
	atZero.ForkedFrom = &transfer.ForkRef{ExchangeUID: errorFirst.UID, Seq: 0}
	atEnd := base("fork at the end")
	atEnd.ForkedFrom = &transfer.ForkRef{ExchangeUID: errorFirst.UID, Seq: 2}
	for _, m := range errorFirst.Messages {
		c := *m
		c.UID = g.UID()
		atEnd.Messages = append(atEnd.Messages, &c)
	}
	full := base("every field")
	agent, mode, comment, fb := "page_assistant", transfer.EditSectionPatch, "", int64(0)
	a := msg(transfer.RoleAssistant, i(1), "")
	a.AgentType, a.EditMode, a.Comment, a.Feedback = &agent, &mode, &comment, &fb
	// Deep, with every kind of JSON value, in the shape models.AgentResponse
	// has (so a store that decodes it into that struct keeps all of it).
	a.AgentResponse = json.RawMessage(`{"content":"","agent_type":"page_assistant","confidence":"low",` +
		`"suggestions":[{"action_type":"open","description":"d","parameters":{"a":[1,2.5,{"x":null}],"b":true}}],` +
		`"metadata":{"nested":{"deep":[1,"two",{"x":null,"y":false}]},"edit_mode":"section_patch"}}`)
	full.Messages = append(full.Messages, msg(transfer.RoleUser, i(0), ""), a)
	full.Pinned, full.Archived = true, true
	job := base("job")
	id := "!~ job id with spaces and symbols ~!"
	job.Scope, job.JobID = transfer.ScopeJob, &id
	return []*transfer.Exchange{empty, errorsOnly, errorFirst, atZero, atEnd, full, job}
}

// Equal reports whether two item lists are the same, field by field (the
// raw JSON byte for byte, times as instants), and where they first differ.
// Where is not compared.
func Equal(want, got []transfer.Item) error {
	return compare(canonical(want, false), canonical(got, false))
}

// EqualContent is Equal for a round trip through a store: every uid (and
// every reference to one) is replaced by the order in which it first
// appears, and agent_response and tool are compared by meaning (a store
// that decodes and encodes them again may order their keys otherwise).
func EqualContent(want, got []transfer.Item) error {
	return compare(canonical(want, true), canonical(got, true))
}

func compare(want, got []transfer.Item) error {
	if len(want) != len(got) {
		return fmt.Errorf("%d items, want %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(want[i], got[i]) {
			w, _ := json.Marshal(want[i])
			g, _ := json.Marshal(got[i])
			return fmt.Errorf("item %d differs:\n got %s\nwant %s", i, g, w)
		}
	}
	return nil
}

// canonical deep-copies items with times in UTC and Where dropped; with
// content set, uids renumbered and raw JSON re-encoded from its meaning.
func canonical(items []transfer.Item, content bool) []transfer.Item {
	ids := map[transfer.UID]transfer.UID{}
	re := func(u transfer.UID) transfer.UID {
		if !content {
			return u
		}
		if v, ok := ids[u]; ok {
			return v
		}
		var v transfer.UID
		n := len(ids) + 1
		v[12], v[13], v[14], v[15] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
		ids[u] = v
		return v
	}
	reP := func(u *transfer.UID) *transfer.UID {
		if u == nil {
			return nil
		}
		v := re(*u)
		return &v
	}
	raw := func(r json.RawMessage) json.RawMessage {
		if !content || r == nil {
			return r
		}
		var v any
		if json.Unmarshal(r, &v) != nil {
			return r
		}
		b, _ := json.Marshal(v)
		return b
	}
	out := make([]transfer.Item, len(items))
	for i, it := range items {
		switch {
		case it.Page != nil:
			p := *it.Page
			p.UID = re(p.UID)
			p.CreatedAt, p.UpdatedAt = p.CreatedAt.UTC(), p.UpdatedAt.UTC()
			p.Revisions = make([]*transfer.Revision, len(it.Page.Revisions))
			for j, r := range it.Page.Revisions {
				c := *r
				c.UID, c.MessageUID, c.CreatedAt = re(c.UID), reP(c.MessageUID), c.CreatedAt.UTC()
				p.Revisions[j] = &c
			}
			out[i] = transfer.Item{Page: &p}
		case it.Exchange != nil:
			e := *it.Exchange
			e.UID, e.PageUID, e.ProjectUID = re(e.UID), reP(e.PageUID), reP(e.ProjectUID)
			e.CreatedAt, e.UpdatedAt = e.CreatedAt.UTC(), e.UpdatedAt.UTC()
			if e.ForkedFrom != nil {
				f := *e.ForkedFrom
				f.ExchangeUID = re(f.ExchangeUID)
				e.ForkedFrom = &f
			}
			e.Messages = make([]*transfer.Message, len(it.Exchange.Messages))
			for j, m := range it.Exchange.Messages {
				c := *m
				c.UID, c.Timestamp = re(c.UID), c.Timestamp.UTC()
				c.AgentResponse, c.Tool = raw(c.AgentResponse), raw(c.Tool)
				if c.Attachments != nil {
					c.Attachments = make([]transfer.UID, len(m.Attachments))
					for k, u := range m.Attachments {
						c.Attachments[k] = re(u)
					}
				}
				e.Messages[j] = &c
			}
			out[i] = transfer.Item{Exchange: &e}
		case it.File != nil:
			f := *it.File
			f.UID, f.CreatedAt = re(f.UID), f.CreatedAt.UTC()
			out[i] = transfer.Item{File: &f}
		case it.Project != nil:
			p := *it.Project
			p.UID, p.ParentUID = re(p.UID), reP(p.ParentUID)
			p.CreatedAt, p.UpdatedAt = p.CreatedAt.UTC(), p.UpdatedAt.UTC()
			out[i] = transfer.Item{Project: &p}
		case it.Instructions != nil:
			in := *it.Instructions
			in.UpdatedAt = in.UpdatedAt.UTC()
			out[i] = transfer.Item{Instructions: &in}
		case it.Memory != nil:
			m := *it.Memory
			m.UID, m.ExchangeUID = re(m.UID), reP(m.ExchangeUID)
			m.CreatedAt, m.UpdatedAt = m.CreatedAt.UTC(), m.UpdatedAt.UTC()
			out[i] = transfer.Item{Memory: &m}
		}
	}
	return out
}
