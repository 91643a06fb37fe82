package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"time"
)

// The throughput figures' API clients run in a process of their own when
// the bench knows the palaver binary (`palaver bench-clients`, not listed
// in the help): the bench process is then the server alone, and its CPU
// time over the rounds is the server's (cpu_us_per_turn).

// clientJob is what the clients' process is told on its standard input.
type clientJob struct {
	Addr   string  `json:"addr"`
	APIKey string  `json:"api_key"`
	IDs    []int64 `json:"exchange_ids"` // one client per exchange
	Per    int     `json:"per"`          // turns per client
}

// clientResult is what it answers on its standard output.
type clientResult struct {
	ElapsedNS int64 `json:"elapsed_ns"`
}

// clientTurns runs per POST /api/chat turns from one client per exchange
// of ids, concurrently, through e's HTTP client, and says how long they
// took together.
func clientTurns(e *env, ids []int64, per int) (time.Duration, error) {
	return concurrently(len(ids), per, func(c, i int) error {
		_, err := e.chat(fmt.Sprintf("client %d turn %d", c, i), ids[c])
		return err
	})
}

// clientsProcess runs clientTurns in a child palaver process.
func (e *env) clientsProcess(ctx context.Context, ids []int64, per int) (time.Duration, error) {
	job, _ := json.Marshal(clientJob{Addr: e.addr, APIKey: e.apiKey, IDs: ids, Per: per})
	cmd := exec.CommandContext(ctx, e.palaver, "bench-clients")
	cmd.Stdin = bytes.NewReader(job)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("bench-clients: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var res clientResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return 0, fmt.Errorf("bench-clients answered %q: %w", stdout.String(), err)
	}
	return time.Duration(res.ElapsedNS), nil
}

// Clients is `palaver bench-clients`: it reads a clientJob from stdin,
// runs its turns and writes a clientResult to stdout.
func Clients(stdin io.Reader, stdout io.Writer) error {
	var job clientJob
	if err := json.NewDecoder(stdin).Decode(&job); err != nil {
		return fmt.Errorf("bench-clients: read the job: %w", err)
	}
	if job.Addr == "" || len(job.IDs) == 0 || job.Per <= 0 {
		return fmt.Errorf("bench-clients: an incomplete job %+v", job)
	}
	e := &env{addr: job.Addr, apiKey: job.APIKey,
		http: &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	elapsed, err := clientTurns(e, job.IDs, job.Per)
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(clientResult{ElapsedNS: int64(elapsed)})
}
