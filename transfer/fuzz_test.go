package transfer_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"testing"

	"palaver/transfer"
	"palaver/transfer/transfertest"
)

// fuzzOptions keep one input cheap.
var fuzzOptions = transfer.Options{MaxInputBytes: 1 << 20, MaxLineBytes: 256 << 10, MaxUncompressedBytes: 4 << 20, MaxMessages: 20_000, MaxZipEntries: 100}

// FuzzPalaverReader: any input gives an error or items that pass the checks,
// and the items write and read back as they were.
func FuzzPalaverReader(f *testing.F) {
	f.Add(write(f, transfertest.New(1).Items(2, 4)))
	edges := transfertest.New(2).Edges()
	var items []transfer.Item
	for _, e := range edges[:4] {
		items = append(items, transfer.Item{Exchange: e})
	}
	f.Add(write(f, items))
	f.Add([]byte(header + exchangeLine(u1, msg(u2, "null", "error")+","+msg(u3, "0", "user"))))
	f.Add([]byte(header + `{"type":"page","uid":"` + u1 + `","revisions":[{"uid":"` + u2 + `","edit_source":"agent","message_uid":"` + u3 + `"}]}`))
	f.Add([]byte(`{"format":"palaver-export","version":2}`))
	f.Add([]byte(header + "[1]\n{\"type\":\"foo\"}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := fuzzOptions.NewReader(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, transfer.ErrInvalid) {
				t.Fatalf("header error %v does not match ErrInvalid", err)
			}
			return
		}
		var got []transfer.Item
		for {
			it, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				if !errors.Is(err, transfer.ErrInvalid) {
					t.Fatalf("error %v does not match ErrInvalid", err)
				}
				return
			}
			checkItem(t, it)
			got = append(got, it)
		}
		again, err := readAll(write(t, got))
		if err != nil {
			t.Fatalf("what was read does not read back once written: %v", err)
		}
		if err := transfertest.Equal(compacted(got), again); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzChatGPTReader: any input, as conversations.json or through Open
// (which also takes it as a zip or a Palaver export), gives an error or
// exchanges that pass the checks, each fork after the exchange it forks
// from, with a log that starts with a copy of that exchange's.
func FuzzChatGPTReader(f *testing.F) {
	data, err := os.ReadFile("testdata/conversations.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add(makeZip(f, zipEntry{"conversations.json", data}))
	f.Add([]byte(conversations(conversation("c", "t", "b", node{id: "r"}, node{id: "a", parent: "r", role: "user", text: "x"},
		node{id: "b", parent: "a", role: "assistant", text: "y"}, node{id: "c", parent: "a", role: "assistant", text: "z"},
		node{id: "d", parent: "r", role: "user", text: "w"}))))
	f.Add([]byte(`[{"id":"e","current_node":"x","mapping":{"x":{"parent":"y"},"y":{"parent":"x"}}}]`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := fuzzOptions.NewChatGPTReader(bytes.NewReader(data))
		if err == nil {
			drainChatGPT(t, r, true)
		} else if !errors.Is(err, transfer.ErrInvalid) {
			t.Fatalf("error %v does not match ErrInvalid", err)
		}
		o := fuzzOptions
		o.TempDir = t.TempDir()
		src, format, err := o.Open(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, transfer.ErrInvalid) && !errors.Is(err, transfer.ErrTooLarge) {
				t.Fatalf("Open: %v matches neither ErrInvalid nor ErrTooLarge", err)
			}
			return
		}
		defer src.Close()
		drainChatGPT(t, src, format != transfer.FormatPalaver)
	})
}

func drainChatGPT(t *testing.T, r interface{ Next() (transfer.Item, error) }, forks bool) {
	t.Helper()
	seen := map[transfer.UID]*transfer.Exchange{}
	for {
		it, err := r.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			if !errors.Is(err, transfer.ErrInvalid) && !errors.Is(err, transfer.ErrTooLarge) {
				t.Fatalf("error %v matches neither ErrInvalid nor ErrTooLarge", err)
			}
			return
		}
		checkItem(t, it)
		e := it.Exchange
		if !forks {
			continue // a Palaver export through Open: its forks may name anything
		}
		if f := e.ForkedFrom; f != nil {
			parent, ok := seen[f.ExchangeUID]
			if !ok {
				t.Fatalf("%s forks from %s, not yielded before it", e.UID, f.ExchangeUID)
			}
			for i := int64(0); i < f.Seq; i++ {
				if parent.Messages[i].Content != e.Messages[i].Content || parent.Messages[i].Role != e.Messages[i].Role {
					t.Fatalf("fork %s: message %d is not its parent's", e.UID, i)
				}
			}
		}
		seen[e.UID] = e
	}
}

func checkItem(t *testing.T, it transfer.Item) {
	t.Helper()
	switch {
	case it.Exchange != nil && it.Page == nil:
		if err := it.Exchange.Validate(); err != nil {
			t.Fatalf("a yielded exchange fails the checks: %v", err)
		}
	case it.Page != nil && it.Exchange == nil:
		if err := it.Page.Validate(); err != nil {
			t.Fatalf("a yielded page fails the checks: %v", err)
		}
	default:
		t.Fatalf("an item with %v exchange and %v page", it.Exchange != nil, it.Page != nil)
	}
}

// compacted is items with their raw JSON as a writer writes it (compact).
func compacted(items []transfer.Item) []transfer.Item {
	compact := func(raw json.RawMessage) json.RawMessage {
		if raw == nil {
			return nil
		}
		var buf bytes.Buffer
		if json.Compact(&buf, raw) != nil {
			return raw
		}
		return buf.Bytes()
	}
	for _, it := range items {
		if it.Exchange != nil {
			for _, m := range it.Exchange.Messages {
				m.AgentResponse, m.Tool = compact(m.AgentResponse), compact(m.Tool)
			}
		}
	}
	return items
}
