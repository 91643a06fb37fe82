package transfer_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"palaver/transfer"
)

// readChatGPT reads every exchange of a conversations.json, or the first error.
func readChatGPT(data string) ([]*transfer.Exchange, error) {
	r, err := transfer.NewChatGPTReader(strings.NewReader(data))
	if err != nil {
		return nil, err
	}
	var out []*transfer.Exchange
	for {
		it, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, it.Exchange)
	}
}

// summary is an exchange's log in short: "user:Plan a trip|assistant:…".
func summary(e *transfer.Exchange) string {
	var parts []string
	for _, m := range e.Messages {
		c := m.Content
		if len(c) > 12 {
			c = c[:12]
		}
		parts = append(parts, m.Role+":"+c)
	}
	return strings.Join(parts, "|")
}

func chatgptUID(name string) transfer.UID { return transfer.NameUID(transfer.ChatGPTNamespace, name) }

func TestChatGPTBranches(t *testing.T) {
	data, err := os.ReadFile("testdata/conversations.json")
	if err != nil {
		t.Fatal(err)
	}
	es, err := readChatGPT(string(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 4 {
		for _, e := range es {
			t.Log(summary(e))
		}
		t.Fatalf("%d exchanges, want 4 (a current path, 2 forks; a second conversation)", len(es))
	}
	const conv1 = "chatgpt:67a1b2c3-0000-4000-8000-000000000001"
	main, regen, edit, python := es[0], es[1], es[2], es[3]

	// The current path: the system message, the empty root and the
	// model_editable_context node are skipped; the image is dropped, its
	// text kept.
	if got, want := summary(main), "user:Plan a trip |assistant:Here is a th|user:Make it four|assistant:Four days: A"; got != want {
		t.Errorf("current path %q, want %q", got, want)
	}
	if main.Messages[2].Content != "Make it four days, here is a map" {
		t.Errorf("multimodal text: %q", main.Messages[2].Content)
	}
	if main.UID != chatgptUID(conv1) || main.ForkedFrom != nil || main.Title != "Trip plan" || main.Scope != "general" || main.AgentType != "router" {
		t.Errorf("current path exchange: %+v", main)
	}
	if want := time.Unix(1700000000, 250000000).UTC(); !main.CreatedAt.Equal(want) || !main.UpdatedAt.Equal(time.Unix(1700000900, 500000000)) {
		t.Errorf("times %v %v", main.CreatedAt, main.UpdatedAt)
	}
	if !main.Messages[0].Timestamp.Equal(time.Unix(1700000010, 500000000)) {
		t.Errorf("message time %v", main.Messages[0].Timestamp)
	}
	if main.Messages[0].UID != chatgptUID(conv1+"/u1") {
		t.Errorf("message uid %s", main.Messages[0].UID)
	}

	// The regenerated answer's older sibling: a fork at seq 1, holding a
	// copy of the user message before it.
	if got, want := summary(regen), "user:Plan a trip |assistant:Day 1: Alfam"; got != want {
		t.Errorf("regenerated fork %q, want %q", got, want)
	}
	if f := regen.ForkedFrom; f == nil || f.ExchangeUID != main.UID || f.Seq != 1 {
		t.Errorf("regenerated fork's forked_from %+v", f)
	}
	if regen.UID != chatgptUID(conv1+":a1") || regen.Messages[0].UID == main.Messages[0].UID {
		t.Errorf("fork uids: %s, first message %s", regen.UID, regen.Messages[0].UID)
	}
	if regen.Title != "Trip plan" || !regen.CreatedAt.Equal(time.Unix(1700000020, 0)) {
		t.Errorf("fork title %q created %v", regen.Title, regen.CreatedAt)
	}

	// The edited user message's original: a fork at seq 2, with its answer.
	if got, want := summary(edit), "user:Plan a trip |assistant:Here is a th|user:Make it two |assistant:Two days: Al"; got != want {
		t.Errorf("edited fork %q, want %q", got, want)
	}
	if f := edit.ForkedFrom; f == nil || f.ExchangeUID != main.UID || f.Seq != 2 {
		t.Errorf("edited fork's forked_from %+v", f)
	}

	// Tools: the assistant's code to python is a tool call, python's output
	// a tool result; whitespace-only text is skipped; a message without a
	// time takes the one before it.
	if got, want := summary(python), "user:What is 2**1|tool_call:print(2**100|tool_result:126765060022|assistant:It is 126765"; got != want {
		t.Errorf("tool conversation %q, want %q", got, want)
	}
	if string(python.Messages[1].Tool) != `{"name":"python"}` || string(python.Messages[2].Tool) != `{"name":"python"}` {
		t.Errorf("tool fields %s %s", python.Messages[1].Tool, python.Messages[2].Tool)
	}
	if !python.Messages[3].Timestamp.Equal(python.Messages[2].Timestamp) {
		t.Errorf("a message without a time: %v", python.Messages[3].Timestamp)
	}
	for _, e := range es {
		if err := e.Validate(); err != nil {
			t.Errorf("%s: %v", e.UID, err)
		}
	}

	// The same file again: the same uids, so a store skips them all.
	again, err := readChatGPT(string(data))
	if err != nil {
		t.Fatal(err)
	}
	for i := range es {
		if again[i].UID != es[i].UID || again[i].Messages[0].UID != es[i].Messages[0].UID {
			t.Errorf("exchange %d: uids differ on a second read", i)
		}
	}
}

// node is a mapping entry for hand-made conversations.
type node struct {
	id, parent, role, text string
	hidden                 bool
}

// conversation builds one conversation's JSON; nodes' children are listed
// in the order the nodes are given.
func conversation(id, title, current string, nodes ...node) map[string]any {
	mapping := map[string]any{}
	children := map[string][]string{}
	for _, n := range nodes {
		if n.parent != "" {
			children[n.parent] = append(children[n.parent], n.id)
		}
	}
	for i, n := range nodes {
		entry := map[string]any{"id": n.id, "children": append([]string{}, children[n.id]...), "parent": nil, "message": nil}
		if n.parent != "" {
			entry["parent"] = n.parent
		}
		if n.role != "" {
			entry["message"] = map[string]any{
				"id": n.id, "author": map[string]any{"role": n.role}, "create_time": 1700000000 + float64(i),
				"content":  map[string]any{"content_type": "text", "parts": []any{n.text}},
				"metadata": map[string]any{"is_visually_hidden_from_conversation": n.hidden},
			}
		}
		mapping[n.id] = entry
	}
	return map[string]any{"id": id, "title": title, "create_time": 1700000000.0, "update_time": 1700000100.0,
		"current_node": current, "mapping": mapping}
}

func conversations(convs ...map[string]any) string {
	b, err := json.Marshal(convs)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestChatGPTTree(t *testing.T) {
	// root ─ u0 ─ a0 ─ u1 ─ a1 ─ u2 ─ a2        (current: a2)
	//              │         ├ a1x ─ u2x ─ a2x  (regenerated at seq 3, then continued)
	//              │         │        └ u2y     (edited inside that fork: seq 4 of it)
	//              │         └ a1e (empty)  ─ u2z (only through an empty node)
	//              └ u1h (hidden) ─ a1h (hidden)
	nodes := []node{
		{id: "root"},
		{id: "u0", parent: "root", role: "user", text: "q0"},
		{id: "a0", parent: "u0", role: "assistant", text: "r0"},
		{id: "u1", parent: "a0", role: "user", text: "q1"},
		{id: "a1x", parent: "u1", role: "assistant", text: "r1x"},
		{id: "u2x", parent: "a1x", role: "user", text: "q2x"},
		{id: "a2x", parent: "u2x", role: "assistant", text: "r2x"},
		{id: "u2y", parent: "a1x", role: "user", text: "q2y"},
		{id: "a1e", parent: "u1", role: "assistant", text: "  "},
		{id: "u2z", parent: "a1e", role: "user", text: "q2z"},
		{id: "u1h", parent: "a0", role: "user", text: "hidden", hidden: true},
		{id: "a1h", parent: "u1h", role: "assistant", text: "hidden too", hidden: true},
		{id: "a1", parent: "u1", role: "assistant", text: "r1"},
		{id: "u2", parent: "a1", role: "user", text: "q2"},
		{id: "a2", parent: "u2", role: "assistant", text: "r2"},
		{id: "sys", parent: "root", role: "system", text: "You are ChatGPT"},
	}
	es, err := readChatGPT(conversations(conversation("c1", "Tree", "a2", nodes...)))
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		log    string
		parent int // index in es; -1: none
		seq    int64
	}
	wants := []want{
		{"user:q0|assistant:r0|user:q1|assistant:r1|user:q2|assistant:r2", -1, 0},
		// off u1 (path index 3: seq 3), in children order: a1x, then a1e.
		{"user:q0|assistant:r0|user:q1|assistant:r1x|user:q2y", 0, 3}, // a1x's last child is u2y
		{"user:q0|assistant:r0|user:q1|user:q2z", 0, 3},               // a1e is empty: its child forks at the same seq
		// u1h and a1h are hidden: no exchange. u2x ─ a2x: a fork of the a1x fork at seq 4.
		{"user:q0|assistant:r0|user:q1|assistant:r1x|user:q2x|assistant:r2x", 1, 4},
	}
	if len(es) != len(wants) {
		for _, e := range es {
			t.Log(summary(e), e.ForkedFrom)
		}
		t.Fatalf("%d exchanges, want %d", len(es), len(wants))
	}
	for i, w := range wants {
		e := es[i]
		if got := summary(e); got != w.log {
			t.Errorf("exchange %d: %s, want %s", i, got, w.log)
		}
		switch {
		case w.parent < 0 && e.ForkedFrom != nil:
			t.Errorf("exchange %d forked from %+v", i, e.ForkedFrom)
		case w.parent >= 0 && (e.ForkedFrom == nil || e.ForkedFrom.ExchangeUID != es[w.parent].UID || e.ForkedFrom.Seq != w.seq):
			t.Errorf("exchange %d forked_from %+v, want exchange %d at %d", i, e.ForkedFrom, w.parent, w.seq)
		}
		if w.parent >= 0 { // the copied start is the parent's, with the fork's own uids
			for j := int64(0); j < w.seq; j++ {
				pm, fm := es[w.parent].Messages[j], e.Messages[j]
				if pm.Content != fm.Content || pm.Role != fm.Role || !pm.Timestamp.Equal(fm.Timestamp) || pm.UID == fm.UID {
					t.Errorf("exchange %d message %d is not a copy of its parent's", i, j)
				}
			}
		}
	}
}

func TestChatGPTSkipsAndKeeps(t *testing.T) {
	conv := conversation("c", "", "a", node{id: "r"}, node{id: "u", parent: "r", role: "user", text: "hi"},
		node{id: "a", parent: "u", role: "assistant", text: "hello"})
	conv["is_archived"] = true
	m := conv["mapping"].(map[string]any)
	set := func(id string, content map[string]any) {
		m[id].(map[string]any)["message"].(map[string]any)["content"] = content
	}
	set("u", map[string]any{"content_type": "multimodal_text", "parts": []any{
		map[string]any{"content_type": "image_asset_pointer"}, "look", 42, nil, "", "at this"}})
	set("a", map[string]any{"content_type": "tether_browsing_display", "result": "x"})
	es, err := readChatGPT(conversations(conv))
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || len(es[0].Messages) != 1 || es[0].Messages[0].Content != "look\n\nat this" {
		t.Fatalf("%d exchanges: %q", len(es), summary(es[0]))
	}
	if es[0].Title != "" || !es[0].Archived {
		t.Errorf("title %q, archived %v", es[0].Title, es[0].Archived)
	}

	// Only a system message: an exchange with an empty log (its title is kept).
	es, err = readChatGPT(conversations(conversation("c2", "Empty", "s", node{id: "s", role: "system", text: "x"})))
	if err != nil || len(es) != 1 || len(es[0].Messages) != 0 || es[0].Title != "Empty" {
		t.Errorf("a conversation of nothing: %v %+v", err, es)
	}

	// An empty array: nothing, and no error.
	if es, err := readChatGPT(" [ ] "); err != nil || len(es) != 0 {
		t.Errorf("[]: %v %d", err, len(es))
	}

	// A second root: its messages are a fork at seq 0, not lost.
	es, err = readChatGPT(conversations(conversation("c3", "Two roots", "a",
		node{id: "u", role: "user", text: "one"}, node{id: "a", parent: "u", role: "assistant", text: "two"},
		node{id: "v", role: "user", text: "stray"})))
	if err != nil || len(es) != 2 || summary(es[1]) != "user:stray" || es[1].ForkedFrom == nil || es[1].ForkedFrom.Seq != 0 {
		t.Errorf("two roots: %v %d", err, len(es))
	}
}

func TestChatGPTErrors(t *testing.T) {
	ok := []node{{id: "r"}, {id: "u", parent: "r", role: "user", text: "hi"}}
	withParent := func(id, parent string) map[string]any {
		c := conversation("abc", "Trip plan", "u", ok...)
		c["mapping"].(map[string]any)[id].(map[string]any)["parent"] = parent
		return c
	}
	first := conversation("first", "Fine", "u", ok...)
	cases := []struct{ name, data, want string }{
		{"cycle", conversations(first, withParent("r", "u")), `conversation 2 ("Trip plan", id abc): mapping has a cycle`},
		{"self parent", conversations(withParent("r", "r")), `conversation 1 ("Trip plan", id abc): mapping has a cycle`},
		{"missing parent", conversations(withParent("r", "xyz")), `conversation 1 ("Trip plan", id abc): node r: parent xyz does not exist`},
		{"missing current_node", conversations(conversation("abc", "Trip plan", "gone", ok...)), `conversation 1 ("Trip plan", id abc): current_node gone not in mapping`},
		{"no id", conversations(conversation("", "T", "u", ok...)), `conversation 1 ("T"): no id or conversation_id`},
		{"same id twice", conversations(first, first), `conversation 2 ("Fine", id first): the same conversation id appears twice`},
		{"empty mapping", `[{"id":"e","title":"T","current_node":"x","mapping":{}}]`, `conversation 1 ("T", id e): mapping is empty`},
		{"null node", `[{"id":"e","current_node":"x","mapping":{"x":null}}]`, `conversation 1 (id e): node x is null`},
		{"bad time", `[{"id":"e","create_time":-5,"current_node":"x","mapping":{"x":{}}}]`, `conversation 1 (id e): create_time: -5 is not a time`},
		{"far time", `[{"id":"e","create_time":1e15,"current_node":"x","mapping":{"x":{}}}]`, `conversation 1 (id e): create_time: 1e+15 is not a time`},
		{"wrong type", `[{"id":"e","current_node":"x","mapping":{"x":{"children":"no"}}}]`, `conversation 1: field mapping.children: a JSON string where an array was due`},
		{"not an object", `[{"id":"e","create_time":1,"current_node":"x","mapping":{"x":{}}}, 5]`, `conversation 2: a JSON number where an object was due`},
		{"truncated", conversations(first)[:60], "conversation 1: unexpected end"},
		{"unclosed array", conversations(first)[:len(conversations(first))-1], "conversations.json after conversation 1: unexpected end"},
		{"after the array", conversations(first) + " []", "conversations.json: something follows"},
		{"not an array", `{"id":"e"}`, "conversations.json: not a JSON array"},
		{"no time anywhere", `[{"id":"e","current_node":"x","mapping":{"x":{"message":{"author":{"role":"user"},"content":{"content_type":"text","parts":["hi"]}}}}}]`, `conversation 1 (id e): node x has no create_time`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			es, err := readChatGPT(c.data)
			if err == nil {
				t.Fatalf("no error; %d exchanges", len(es))
			}
			if !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("error %q\nwant it to start with %q", err, c.want)
			}
			if !errors.Is(err, transfer.ErrInvalid) {
				t.Errorf("%v does not match ErrInvalid", err)
			}
		})
	}
}

// A long chain with a branch at every node: no recursion, and the branches
// come out in order without running out of stack or time.
func TestChatGPTDeepTree(t *testing.T) {
	const depth = 3000
	nodes := []node{{id: "n0", role: "user", text: "start"}}
	for i := 1; i < depth; i++ {
		role := []string{"user", "assistant"}[i%2]
		nodes = append(nodes, node{id: fmt.Sprint("n", i), parent: fmt.Sprint("n", i-1), role: role, text: "t"})
	}
	for i := 0; i < depth; i += 100 {
		nodes = append(nodes, node{id: fmt.Sprint("b", i), parent: fmt.Sprint("n", i), role: "user", text: "branch"})
	}
	es, err := readChatGPT(conversations(conversation("deep", "Deep", fmt.Sprint("n", depth-1), nodes...)))
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1+depth/100 {
		t.Errorf("%d exchanges, want the current path and %d forks", len(es), depth/100)
	}
	if len(es[0].Messages) != depth {
		t.Errorf("current path has %d messages", len(es[0].Messages))
	}
	for _, e := range es[1:] {
		if e.ForkedFrom == nil || int64(len(e.Messages)) != e.ForkedFrom.Seq+1 {
			t.Fatalf("fork %+v with %d messages", e.ForkedFrom, len(e.Messages))
		}
	}

	// The messages cap counts the copies forks make.
	r, err := transfer.Options{MaxMessages: depth * 3}.NewChatGPTReader(strings.NewReader(conversations(conversation("deep", "Deep", fmt.Sprint("n", depth-1), nodes...))))
	if err != nil {
		t.Fatal(err)
	}
	for {
		_, err = r.Next()
		if err != nil {
			break
		}
	}
	if err == io.EOF || !errors.Is(err, transfer.ErrInvalid) || !strings.Contains(err.Error(), "more than 9000 messages") {
		t.Errorf("past MaxMessages: %v", err)
	}
}

// Children lists that disagree with the parents: the parent field wins; a
// child listed twice or by the wrong node counts once, under its parent; a
// child its parent forgot is still a branch. Only conversation_id: the uid
// derives from it.
func TestChatGPTInconsistentChildren(t *testing.T) {
	conv := conversation("", "Odd", "a", node{id: "r"}, node{id: "u", parent: "r", role: "user", text: "q"},
		node{id: "a", parent: "u", role: "assistant", text: "r1"}, node{id: "b", parent: "u", role: "assistant", text: "r2"},
		node{id: "c", parent: "u", role: "assistant", text: "r3"})
	delete(conv, "id")
	conv["conversation_id"] = "only-conv-id"
	m := conv["mapping"].(map[string]any)
	m["u"].(map[string]any)["children"] = []string{"b", "b", "a", "ghost"} // c forgotten, b twice, a ghost
	m["r"].(map[string]any)["children"] = []string{"u", "c"}               // c claimed by the wrong parent
	es, err := readChatGPT(conversations(conv))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, summary(e))
	}
	want := []string{"user:q|assistant:r1", "user:q|assistant:r2", "user:q|assistant:r3"}
	if strings.Join(got, " / ") != strings.Join(want, " / ") {
		t.Errorf("got %q, want %q", got, want)
	}
	if es[0].UID != chatgptUID("chatgpt:only-conv-id") {
		t.Errorf("uid from conversation_id: %s", es[0].UID)
	}
	for _, e := range es[1:] {
		if e.ForkedFrom == nil || e.ForkedFrom.Seq != 1 {
			t.Errorf("fork %+v", e.ForkedFrom)
		}
	}
}
