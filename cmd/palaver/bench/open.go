package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"palaver/agents"
)

// openSamples is how many times the big conversation is opened.
const openSamples = 21

// openFigures: opening a long conversation in the browser (issue 16).
// /chat/{id} of an exchange of size.AppendBig messages, as the signed-in
// bench user asks for it over the loopback listener: the p50 of the time
// until the whole page is read, and its size. The screen holds the latest
// window of the transcript; the rest loads as the person scrolls.
func openFigures(ctx context.Context, e *env, r report) error {
	first, err := e.svc.Send(ctx, agents.SendRequest{UserID: e.userID, AgentType: agents.AgentAuto, Query: "start the big conversation"})
	if err != nil {
		return err
	}
	if first.Failed {
		return errors.New("the first turn failed")
	}
	id := first.Exchange.ID
	if err := e.seedLog(ctx, id, 2, e.size.AppendBig); err != nil {
		return err
	}
	url := fmt.Sprintf("http://%s/chat/%d", e.addr, id)
	var ds []time.Duration
	size := 0
	for range openSamples {
		took, status, body, err := e.getTimed(ctx, url, "")
		if err != nil {
			return err
		}
		ds = append(ds, took)
		if status != http.StatusOK {
			return fmt.Errorf("GET /chat/%d: %d", id, status)
		}
		size = len(body)
	}
	r.line("open_big_p50_ms", ms(percentile(ds, 0.5)), "≤ 20")
	r.line("open_big_kb", float64(size)/1024, "≤ 300")
	return nil
}
