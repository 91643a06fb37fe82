package bench

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fasthttp/websocket"
)

// fanoutFigures: a turn's message reaching many websockets watching its
// exchange.
func fanoutFigures(ctx context.Context, e *env, r report) error {
	p99, first, lead, cpu, err := e.fanout(ctx)
	if err != nil {
		return err
	}
	r.line("fanout_p99_ms", ms(p99), "≤ 30; the rounds after the first")
	r.line("fanout_first_max_ms", ms(first), "≤ 60; the first message to the freshly opened sockets, not in the p99")
	r.anchor("fanout_lead_max_ms", ms(lead), "the slowest round after the first until its first socket had the message: the POST, its durable commit and the publish, before any fan-out")
	r.anchor("fanout_cpu_us_per_socket", float64(cpu.Microseconds())/float64(e.size.FanoutClients*e.size.FanoutRounds),
		"the process's CPU per socket and round after the first: the server's and the reading clients', which run in this process; it does not swing with the machine's load")
	return nil
}

// fanoutRound is one published message: its marker and when it was sent.
type fanoutRound struct {
	marker string
	t0     time.Time
	mu     sync.Mutex
	got    map[int]time.Duration
	all    chan struct{}
	want   int
}

// fanout opens size.fanoutClients websockets watching one exchange, posts a
// turn on it size.fanoutRounds times and measures, per client, the time from
// the POST to the frame carrying the new user message. It returns the p99,
// and apart the slowest delivery of a first round, which meets connections
// that have sent nothing yet (their buffers and stacks not grown): the
// steady state is the target, the first message is shown beside it.
// fanoutRoundWait bounds how long a round waits for every socket. A
// message that never arrives still fails the round; the bound is wide
// because make test runs this beside the other packages' PostgreSQL and
// browser tests, where two fresh-clone runs saw the last sockets of a
// round (3 and 13 of 200) still waiting at 10 s.
const fanoutRoundWait = 30 * time.Second

func (e *env) fanout(ctx context.Context) (p99, first, lead, cpu time.Duration, err error) {
	exID, err := e.chat("fanout start", 0)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	var cur atomic.Pointer[fanoutRound]
	conns := make([]*websocket.Conn, 0, e.size.FanoutClients)
	var readers, watching sync.WaitGroup
	defer readers.Wait()
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	for i := range e.size.FanoutClients {
		conn, err := e.dial()
		if err != nil {
			return 0, 0, 0, 0, err
		}
		conns = append(conns, conn)
		// Since 0: the catch-up sends the start's reply, which tells the
		// client its watch was taken.
		watch := fmt.Sprintf(`{"type":"watch","exchange_id":%d,"since":%d}`, exID, 0)
		if err := conn.WriteMessage(websocket.TextMessage, []byte(watch)); err != nil {
			return 0, 0, 0, 0, err
		}
		readers.Add(1)
		watching.Add(1)
		go func() {
			defer readers.Done()
			answered := false
			defer func() {
				if !answered {
					watching.Done()
				}
			}()
			var buf bytes.Buffer // reused: the clients' own cost stays small
			for {
				_, rd, err := conn.NextReader()
				if err != nil {
					return
				}
				if !answered { // the watch's answer: the server took it
					answered = true
					watching.Done()
				}
				buf.Reset()
				if _, err := buf.ReadFrom(rd); err != nil {
					return
				}
				now := time.Now()
				r := cur.Load()
				if r == nil || !bytes.Contains(buf.Bytes(), []byte(r.marker)) {
					continue
				}
				r.mu.Lock()
				if _, seen := r.got[i]; !seen {
					r.got[i] = now.Sub(r.t0)
					if len(r.got) == r.want {
						close(r.all)
					}
				}
				r.mu.Unlock()
			}
		}()
	}
	// Every watch answered before the first round: a loaded machine can
	// take seconds to accept 200 sockets' watches.
	taken := make(chan struct{})
	go func() { watching.Wait(); close(taken) }()
	select {
	case <-taken:
	case <-time.After(fanoutRoundWait):
		return 0, 0, 0, 0, fmt.Errorf("the server answered not every one of %d watches in %v", len(conns), fanoutRoundWait)
	case <-ctx.Done():
		return 0, 0, 0, 0, ctx.Err()
	}
	var ds []time.Duration
	var cpu0 time.Duration
	for round := range e.size.FanoutRounds + 1 {
		if round == 1 {
			if cpu0, err = cpuTime(); err != nil {
				return 0, 0, 0, 0, err
			}
		}
		r := &fanoutRound{marker: fmt.Sprintf("fanout-%d-%s", round, randHex(4)), got: map[int]time.Duration{}, all: make(chan struct{}), want: len(conns)}
		r.t0 = time.Now()
		cur.Store(r)
		if _, err := e.chat(r.marker, exID); err != nil {
			return 0, 0, 0, 0, err
		}
		select {
		case <-r.all:
		case <-time.After(fanoutRoundWait):
			r.mu.Lock()
			n := len(r.got)
			r.mu.Unlock()
			return 0, 0, 0, 0, fmt.Errorf("round %d: %d of %d subscribers got the message", round, n, r.want)
		case <-ctx.Done():
			return 0, 0, 0, 0, ctx.Err()
		}
		r.mu.Lock()
		soonest := time.Duration(math.MaxInt64)
		for _, d := range r.got {
			if round == 0 {
				first = max(first, d)
			} else {
				ds = append(ds, d)
				soonest = min(soonest, d)
			}
		}
		r.mu.Unlock()
		if round > 0 {
			lead = max(lead, soonest)
		}
	}
	cpu1, err := cpuTime()
	if err != nil {
		return 0, 0, 0, 0, err
	}
	return percentile(ds, 0.99), first, lead, cpu1 - cpu0, nil
}
