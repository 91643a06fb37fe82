package transfer_test

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"palaver/transfer"
)

// streamMiB is the size of the streams below: several times the heap they
// are allowed.
const streamMiB = 64

// heapWatch samples the live heap while a stream is read.
type heapWatch struct{ base, peak uint64 }

func newHeapWatch() *heapWatch {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return &heapWatch{base: m.HeapAlloc}
}

func (h *heapWatch) sample() {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	if m.HeapAlloc > h.peak {
		h.peak = m.HeapAlloc
	}
}

func (h *heapWatch) check(t *testing.T, read int64) {
	t.Helper()
	grew := int64(h.peak) - int64(h.base)
	t.Logf("read %d MiB; the heap grew at most %d MiB", read>>20, grew>>20)
	if read < streamMiB<<20 {
		t.Errorf("only %d bytes streamed", read)
	}
	if grew > 32<<20 {
		t.Errorf("the heap grew by %d MiB while reading %d MiB", grew>>20, read>>20)
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n += int64(k)
	return k, err
}

// A Palaver export several times the allowed heap, written and read through
// a pipe: both ends hold one line at a time.
func TestPalaverStreamsInBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 64 MiB")
	}
	pr, pw := io.Pipe()
	content := strings.Repeat("Streaming keeps memory flat. ", 40) // ~1.2 KB
	go func() {
		w, err := transfer.NewWriter(pw, time.Now())
		if err != nil {
			pw.CloseWithError(err)
			return
		}
		at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		var written int64
		for i := 0; written < streamMiB<<20+1<<20; i++ {
			e := &transfer.Exchange{UID: transfer.NameUID(transfer.UID{}, fmt.Sprint("e", i)), Title: "t", AgentType: "router",
				Scope: "general", CreatedAt: at, UpdatedAt: at}
			for j := range 10 {
				s := int64(j)
				e.Messages = append(e.Messages, &transfer.Message{UID: transfer.NameUID(transfer.UID{}, fmt.Sprint("m", i, ".", j)),
					Seq: &s, Role: []string{"user", "assistant"}[j%2], Content: content, Timestamp: at})
				written += int64(len(content))
			}
			if err := w.WriteExchange(e); err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		pw.Close()
	}()
	h := newHeapWatch()
	cr := &countingReader{r: pr}
	r, err := transfer.NewReader(cr)
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; ; n++ {
		_, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if n%200 == 0 {
			h.sample()
		}
	}
	h.check(t, cr.n)
}

// A conversations.json several times the allowed heap: one conversation at
// a time.
func TestChatGPTStreamsInBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 64 MiB")
	}
	var nodes []node
	nodes = append(nodes, node{id: "root"})
	text := strings.Repeat("A long answer about streaming. ", 40)
	for i := 1; i <= 20; i++ {
		nodes = append(nodes, node{id: fmt.Sprint("n", i), parent: fmt.Sprint("n", i-1), role: []string{"user", "assistant"}[i%2], text: text})
	}
	nodes[1].parent = "root"
	pr, pw := io.Pipe()
	go func() {
		var written int64
		pw.Write([]byte("["))
		for i := 0; written < streamMiB<<20+1<<20; i++ {
			b, _ := json.Marshal(conversation(fmt.Sprint("conv-", i), "Streamed", "n20", nodes...))
			if i > 0 {
				pw.Write([]byte(","))
			}
			if _, err := pw.Write(b); err != nil {
				return
			}
			written += int64(len(b))
		}
		pw.Write([]byte("]"))
		pw.Close()
	}()
	h := newHeapWatch()
	cr := &countingReader{r: pr}
	r, err := transfer.NewChatGPTReader(cr)
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; ; n++ {
		it, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(it.Exchange.Messages) != 20 {
			t.Fatalf("%d messages", len(it.Exchange.Messages))
		}
		if n%100 == 0 {
			h.sample()
		}
	}
	h.check(t, cr.n)
}
