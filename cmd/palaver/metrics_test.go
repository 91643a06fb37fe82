package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"palaver/handlers"
	"palaver/models"
)

// TestMetricsAndRequestLogs runs serve with --metrics-addr and
// --log-format json, sends an API turn and reads its messages, then scrapes
// /metrics: the series parse, turns and requests are counted, requests by
// route pattern (never a raw path), and the JSON log's request line and the
// turn's own lines carry the id the answer named.
func TestMetricsAndRequestLogs(t *testing.T) {
	db := dbPath(t)
	store, _, err := openStore(context.Background(), db, models.Options{})
	if err != nil {
		t.Fatal(err)
	}
	u, err := store.CreateUser(context.Background(), "ada", "x", false)
	if err != nil {
		t.Fatal(err)
	}
	key := "pal_metrics_test_key"
	if _, err := store.CreateAPIKey(context.Background(), u.ID, "test", handlers.HashAPIKey(key)); err != nil {
		t.Fatal(err)
	}
	store.Close()
	metricsAddr := freeTCPAddr(t)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var logs syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--db", db, "--metrics-addr", metricsAddr, "--log-format", "json"}, io.Discard, &logs)
	}()
	base := waitServing(t, &logs, done)

	call := func(method, path, body string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("x-api-key", key)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, b
	}
	res, b := call("POST", "/api/chat", `{"query": "count me"}`)
	var out struct {
		ExchangeID int64 `json:"exchange_id"`
	}
	if res.StatusCode != 200 || json.Unmarshal(b, &out) != nil {
		t.Fatalf("POST /api/chat: %d %s", res.StatusCode, b)
	}
	chatID := res.Header.Get("X-Request-Id")
	if chatID == "" {
		t.Fatal("no X-Request-Id on the answer")
	}
	call("GET", fmt.Sprintf("/api/chat/exchange/%d/messages", out.ExchangeID), "")
	call("GET", "/api/chat/exchange/999999/messages", "")

	// Scrape until the turn's end is counted (it ends after the answer).
	var families map[string]*dto.MetricFamily
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		families = scrape(t, "http://"+metricsAddr+"/metrics")
		if counter(families, "palaver_turns_total", map[string]string{"event": "finished"}) >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no finished turn counted")
		}
	}
	if n := counter(families, "palaver_turns_total", map[string]string{"event": "started"}); n != 1 {
		t.Errorf("turns started: %v, want 1", n)
	}
	if n := counter(families, "palaver_http_requests_total", map[string]string{"route": "/api/chat/exchange/:id/messages", "method": "GET", "status": "200"}); n != 1 {
		t.Errorf("messages requests answered 200: %v, want 1", n)
	}
	if n := counter(families, "palaver_http_requests_total", map[string]string{"route": "/api/chat/exchange/:id/messages", "method": "GET", "status": "404"}); n != 1 {
		t.Errorf("messages requests answered 404: %v, want 1", n)
	}
	for _, m := range families["palaver_http_requests_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "route" && strings.ContainsAny(l.GetValue(), "0123456789") {
				t.Errorf("a route label holds a raw path: %q", l.GetValue())
			}
		}
	}
	for _, name := range []string{"palaver_turn_duration_seconds", "palaver_live_connections", "palaver_group_commit_writes",
		"palaver_http_request_duration_seconds", "go_sql_open_connections", "go_goroutines"} {
		if families[name] == nil {
			t.Errorf("no %s series", name)
		}
	}

	// The JSON log: every line an object; the request and the turn it
	// started carry the same id.
	cancel()
	<-done
	var sawRequest, sawTurn bool
	sc := bufio.NewScanner(strings.NewReader(logs.String()))
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("log line %q is not JSON: %v", sc.Text(), err)
		}
		if line["request_id"] != chatID {
			continue
		}
		switch line["msg"] {
		case "request":
			sawRequest = line["route"] == "/api/chat" && line["status"] == float64(200)
		case "turn ended":
			sawTurn = line["outcome"] == "finished"
		}
	}
	if !sawRequest || !sawTurn {
		t.Errorf("request line %v, turn line %v with id %s in:\n%s", sawRequest, sawTurn, chatID, logs.String())
	}
}

// freeTCPAddr is a loopback address nothing listens on now.
func freeTCPAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// scrape reads and parses a Prometheus text exposition.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	p := expfmt.NewTextParser(model.LegacyValidation) // Prometheus's classic names: what Palaver exports
	families, err := p.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	return families
}

// counter is the value of a family's series with exactly these labels
// among its own (0 when none).
func counter(families map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	for _, m := range families[name].GetMetric() {
		match := 0
		for _, l := range m.GetLabel() {
			if v, ok := labels[l.GetName()]; ok && v == l.GetValue() {
				match++
			}
		}
		if match == len(labels) {
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

// TestMetricsLabelsMixedMethods sends requests of mixed methods over one
// kept-alive connection, so fasthttp reuses its request buffers between
// them, then scrapes /metrics: it answers 200 and every method label is a
// real method (an aliased label read "GETT" or "POSTTE" once the buffer
// held the next request, and duplicate series made /metrics answer 500).
func TestMetricsLabelsMixedMethods(t *testing.T) {
	db := dbPath(t)
	store, _, err := openStore(context.Background(), db, models.Options{})
	if err != nil {
		t.Fatal(err)
	}
	store.Close()
	metricsAddr := freeTCPAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var logs syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--db", db, "--metrics-addr", metricsAddr}, io.Discard, &logs)
	}()
	base := waitServing(t, &logs, done)
	defer func() { cancel(); <-done }()

	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
	for i := 0; i < 12; i++ {
		for _, method := range []string{"GET", "POST", "DELETE", "PATCH", "OPTIONS", "PUT"} {
			req, _ := http.NewRequest(method, base+"/api/chat/history", strings.NewReader("{}"))
			res, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
	}
	res, err := http.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("/metrics: %d %s", res.StatusCode, body)
	}
	families := scrape(t, "http://"+metricsAddr+"/metrics")
	methods := map[string]bool{}
	for _, m := range families["palaver_http_requests_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "method" {
				methods[l.GetValue()] = true
			}
		}
	}
	for m := range methods {
		switch m {
		case "GET", "POST", "DELETE", "PATCH", "OPTIONS", "PUT", "HEAD":
		default:
			t.Errorf("method label %q is not a method (all: %v)", m, methods)
		}
	}
	if !methods["PATCH"] || !methods["OPTIONS"] {
		t.Errorf("methods counted: %v, want each one sent", methods)
	}
}
