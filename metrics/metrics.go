// Package metrics counts what an operator watches, in the Prometheus text
// format on an address of its own (palaver serve --metrics-addr): turns and
// their durations, live connections, group-commit sizes, HTTP requests by
// route pattern and status, and the database pool. It implements the
// observer interfaces of the packages it watches (agents.Observer,
// handlers.Observer, the store's group-commit hook), so none of them
// imports it.
package metrics

import (
	"database/sql"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics holds every series Palaver exports, on its own registry (no
// global state: two servers in one test process count apart).
type Metrics struct {
	reg *prometheus.Registry

	turns        *prometheus.CounterVec // by event: started, finished, failed, stopped
	turnDuration prometheus.Histogram
	live         *prometheus.GaugeVec // by kind: websocket, stream
	groupCommit  prometheus.Histogram
	requests     *prometheus.CounterVec // by route pattern, method and status
	requestTime  *prometheus.HistogramVec
}

// New makes the series, with the Go runtime's and the process's own.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		turns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "palaver_turns_total", Help: "Turns by what happened: started, finished, failed or stopped.",
		}, []string{"event"}),
		turnDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "palaver_turn_duration_seconds", Help: "How long turns took, from the user message to the reply or failure.",
			Buckets: []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600},
		}),
		live: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "palaver_live_connections", Help: "Open live connections: websocket (tabs) or stream (SSE readers).",
		}, []string{"kind"}),
		groupCommit: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "palaver_group_commit_writes", Help: "Writes that shared one SQLite commit.",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64},
		}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "palaver_http_requests_total", Help: "HTTP requests by route pattern, method and status.",
		}, []string{"route", "method", "status"}),
		requestTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "palaver_http_request_duration_seconds", Help: "HTTP request durations by route pattern.",
			Buckets: prometheus.DefBuckets,
		}, []string{"route"}),
	}
	m.reg.MustRegister(m.turns, m.turnDuration, m.live, m.groupCommit, m.requests, m.requestTime,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, e := range []string{"started", "finished", "failed", "stopped"} {
		m.turns.WithLabelValues(e) // present from the start, at 0
	}
	for _, k := range []string{"websocket", "stream"} {
		m.live.WithLabelValues(k)
	}
	return m
}

// WatchDB exports the database pool's use (open, in use, idle connections,
// waits) under db_name.
func (m *Metrics) WatchDB(name string, db *sql.DB) {
	m.reg.MustRegister(collectors.NewDBStatsCollector(db, name))
}

// Handler serves the series in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// TurnStarted counts a turn that began (agents.Observer).
func (m *Metrics) TurnStarted() { m.turns.WithLabelValues("started").Inc() }

// TurnEnded counts a turn's end and its duration (agents.Observer): outcome
// is finished, failed or stopped.
func (m *Metrics) TurnEnded(outcome string, took time.Duration) {
	m.turns.WithLabelValues(outcome).Inc()
	m.turnDuration.Observe(took.Seconds())
}

// LiveOpened and LiveClosed follow the open live connections of a kind,
// websocket or stream (handlers.Observer).
func (m *Metrics) LiveOpened(kind string) { m.live.WithLabelValues(kind).Inc() }

// LiveClosed: see LiveOpened.
func (m *Metrics) LiveClosed(kind string) { m.live.WithLabelValues(kind).Dec() }

// Request counts an HTTP request by its route pattern (never the raw path,
// which would make a series per id) (handlers.Observer).
func (m *Metrics) Request(route, method string, status int, took time.Duration) {
	m.requests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
	m.requestTime.WithLabelValues(route).Observe(took.Seconds())
}

// GroupCommit records how many writes shared one commit (the store's hook).
func (m *Metrics) GroupCommit(writes int) { m.groupCommit.Observe(float64(writes)) }
