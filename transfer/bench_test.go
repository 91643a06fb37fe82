package transfer_test

import (
	"bytes"
	"io"
	"testing"

	"palaver/transfer"
	"palaver/transfer/transfertest"
)

// The format's share of an export's or import's cost, in messages per
// second (palaver bench compares the whole against a raw SELECT).

func benchItems() ([]transfer.Item, int) {
	items := transfertest.New(42).Items(20, 500)
	n := 0
	for _, it := range items {
		if it.Exchange != nil {
			n += len(it.Exchange.Messages)
		}
	}
	return items, n
}

func BenchmarkWriter(b *testing.B) {
	items, msgs := benchItems()
	data := write(b, items)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		w, _ := transfer.NewWriter(io.Discard, exportedAt)
		for _, it := range items {
			if it.Page != nil {
				w.WritePage(it.Page)
			} else {
				w.WriteExchange(it.Exchange)
			}
		}
	}
	b.ReportMetric(float64(msgs*b.N)/b.Elapsed().Seconds(), "msgs/s")
}

func BenchmarkReader(b *testing.B) {
	items, msgs := benchItems()
	data := write(b, items)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		r, err := transfer.NewReader(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := r.Next(); err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(msgs*b.N)/b.Elapsed().Seconds(), "msgs/s")
}
