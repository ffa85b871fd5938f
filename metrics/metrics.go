package metrics

import (
	"database/sql"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Unmatched is the route label of requests for a path no route serves.
const Unmatched = "unmatched"

// Metrics holds the collectors of the handlers and stores. Create it with New; it is safe
// for concurrent use.
type Metrics struct {
	requests  *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	inFlight  *prometheus.GaugeVec
	bytes     *prometheus.CounterVec
	refusals  *prometheus.CounterVec
	storeTime *prometheus.HistogramVec
	storeErrs *prometheus.CounterVec
}

// New returns the Metrics, its collectors registered on reg.
func New(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "kmkit", Name: "http_requests_total",
			Help: "HTTP requests answered, by API, route template, method and status code.",
		}, []string{"api", "route", "method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "kmkit", Name: "http_request_duration_seconds",
			Help:    "Time from a request's arrival to its answer's last byte, by API, route template and method.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"api", "route", "method"}),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "kmkit", Name: "http_requests_in_flight",
			Help: "Requests being served, by API.",
		}, []string{"api"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "kmkit", Name: "http_response_bytes_total",
			Help: "Bytes of response bodies, by API, route template and method.",
		}, []string{"api", "route", "method"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "kmkit", Name: "limiter_refusals_total",
			Help: "Requests refused with 429 by a rate or concurrency limit, by API and limit (budget, burst, concurrency).",
		}, []string{"api", "reason"}),
		storeTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "kmkit", Name: "store_query_duration_seconds",
			Help:    "Duration of Store calls, by backend and kind (the Store method).",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"backend", "kind"}),
		storeErrs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "kmkit", Name: "store_errors_total",
			Help: "Store calls that returned an error (not found included), by backend and kind.",
		}, []string{"backend", "kind"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration, m.inFlight, m.bytes, m.refusals, m.storeTime, m.storeErrs} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// RegisterRuntime registers the Go runtime's collector (memory, garbage collection,
// goroutines, scheduler) and the process collector (CPU, resident memory, open files).
func RegisterRuntime(reg prometheus.Registerer) error {
	if err := reg.Register(collectors.NewGoCollector()); err != nil {
		return err
	}
	return reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
}

// RegisterSQL registers the pool statistics of db (open, in use and idle connections,
// waits and their duration) as go_sql_* series labelled db_name=name.
func RegisterSQL(reg prometheus.Registerer, db *sql.DB, name string) error {
	return reg.Register(collectors.NewDBStatsCollector(db, name))
}

// LimitRefused counts a request to api (an auth.Policy's Name, such as APIKM) refused by a
// limit. Use it as auth.Config.Refused.
func (m *Metrics) LimitRefused(api, reason string) {
	m.refusals.WithLabelValues(api, reason).Inc()
}

// API names of the kmkit APIs, the values of the api label; Route functions return them.
const (
	APIKM        = "km"
	APIOData     = "odata"
	APISCIM      = "scim"
	APIReporting = "reporting"
)

// Route tells the API and the route template of a request; api "" counts the request as
// api "other", route "" as Unmatched.
type Route func(r *http.Request) (api, route string)

// Handler returns next measured: every request counts once, by the API and route template
// route gives it, its method and the status of its answer. The time runs until next
// returns.
func (m *Metrics) Handler(route Route, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		api, tmpl := route(r)
		if api == "" {
			api = "other"
		}
		if tmpl == "" {
			tmpl = Unmatched
		}
		method := methodLabel(r.Method)
		g := m.inFlight.WithLabelValues(api)
		g.Inc()
		defer g.Dec()
		rec := &recorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		m.requests.WithLabelValues(api, tmpl, method, strconv.Itoa(rec.status)).Inc()
		m.duration.WithLabelValues(api, tmpl, method).Observe(time.Since(start).Seconds())
		m.bytes.WithLabelValues(api, tmpl, method).Add(float64(rec.bytes))
	})
}

// methodLabel bounds the method label to the standard methods.
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions:
		return method
	}
	return "OTHER"
}

// recorder records the status and body size of an answer.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *recorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *recorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }
