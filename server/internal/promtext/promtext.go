// Package promtext owns the /metrics exposition of the server: counters,
// gauges and histograms (with or without labels) written in the Prometheus
// text format 0.0.4, HELP text included, and the go_* and process_*
// metrics that the Prometheus Go client's default collectors export, under
// the same names, types and HELP text.
//
// It replaces the Prometheus Go client, whose packages (with protobuf and
// procfs) cost every logdex process — a one-shot `logdex search` too —
// about a millisecond of package initialisation and 4 MB of binary, though
// only `logdex serve` exposes metrics (docs/benchmarks.md). Nothing here
// runs at package initialisation.
package promtext

import (
	"bufio"
	"compress/gzip"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// Type is a metric family's type, as written on its TYPE line.
type Type string

// The types a family can have.
const (
	Counter   Type = "counter"
	Gauge     Type = "gauge"
	Histogram Type = "histogram"
	Summary   Type = "summary"
)

// Family is one metric family as collected at a scrape.
type Family struct {
	Name, Help string
	Type       Type
	Labels     []string // label names; each Metric has values for them, in this order
	Metrics    []Metric
}

// Metric is one sample set of a family. Counters and gauges use Value;
// histograms Bounds, Counts (cumulative, one per bound, +Inf excluded),
// Sum and Count; summaries Quantiles, Values, Sum and Count.
type Metric struct {
	LabelValues []string
	Value       float64

	Bounds, Quantiles, Values []float64
	Counts                    []uint64
	Sum                       float64
	Count                     uint64
}

// Registry holds the collectors of one exposition. Its zero value is
// ready; registering is safe concurrently with writing.
type Registry struct {
	mu         sync.Mutex
	collectors []func() []Family
}

// Collector adds f, called at every scrape for the families it reports.
func (r *Registry) Collector(f func() []Family) {
	r.mu.Lock()
	r.collectors = append(r.collectors, f)
	r.mu.Unlock()
}

// GaugeFunc adds a gauge whose value f returns at every scrape.
func (r *Registry) GaugeFunc(name, help string, f func() float64) {
	r.Collector(func() []Family {
		return []Family{{Name: name, Help: help, Type: Gauge, Metrics: []Metric{{Value: f()}}}}
	})
}

// Counter adds an unlabelled counter.
func (r *Registry) Counter(name, help string) *CounterValue {
	c := new(CounterValue)
	r.Collector(func() []Family {
		return []Family{{Name: name, Help: help, Type: Counter, Metrics: []Metric{{Value: float64(c.n.Load())}}}}
	})
	return c
}

// CounterVec adds a counter with labels; like the Prometheus client, it
// reports nothing until a child was made with With.
func (r *Registry) CounterVec(name, help string, labels ...string) *CounterVec {
	v := &CounterVec{}
	v.vec.init(labels, func() *CounterValue { return new(CounterValue) })
	r.Collector(func() []Family {
		f := Family{Name: name, Help: help, Type: Counter, Labels: labels}
		v.vec.each(func(values []string, c *CounterValue) {
			f.Metrics = append(f.Metrics, Metric{LabelValues: values, Value: float64(c.n.Load())})
		})
		return []Family{f}
	})
	return v
}

// HistogramVec adds a histogram with labels and the given bucket upper
// bounds (ascending; +Inf is implied).
func (r *Registry) HistogramVec(name, help string, bounds []float64, labels ...string) *HistogramVec {
	v := &HistogramVec{}
	v.vec.init(labels, func() *HistogramValue {
		return &HistogramValue{bounds: bounds, counts: make([]uint64, len(bounds))}
	})
	r.Collector(func() []Family {
		f := Family{Name: name, Help: help, Type: Histogram, Labels: labels}
		v.vec.each(func(values []string, h *HistogramValue) {
			f.Metrics = append(f.Metrics, h.snapshot(values))
		})
		return []Family{f}
	})
	return v
}

// CounterValue is a monotonic count.
type CounterValue struct{ n atomic.Uint64 }

// Inc adds one.
func (c *CounterValue) Inc() { c.n.Add(1) }

// Add adds n.
func (c *CounterValue) Add(n uint64) { c.n.Add(n) }

// CounterVec is a counter per combination of label values.
type CounterVec struct{ vec vec[*CounterValue] }

// With returns the counter of the label values (one per label name).
func (v *CounterVec) With(values ...string) *CounterValue { return v.vec.with(values) }

// HistogramValue counts observations into buckets.
type HistogramValue struct {
	bounds []float64
	mu     sync.Mutex // keeps counts, sum and count consistent for a scrape
	counts []uint64   // per bucket, not cumulative; the +Inf bucket is count
	sum    float64
	count  uint64
}

// Observe records v.
func (h *HistogramValue) Observe(v float64) {
	i, _ := slices.BinarySearch(h.bounds, v) // first bound >= v: "le" is inclusive
	h.mu.Lock()
	if i < len(h.counts) {
		h.counts[i]++
	}
	h.sum += v
	h.count++
	h.mu.Unlock()
}

func (h *HistogramValue) snapshot(values []string) Metric {
	m := Metric{LabelValues: values, Bounds: h.bounds, Counts: make([]uint64, len(h.bounds))}
	h.mu.Lock()
	var cum uint64
	for i, n := range h.counts {
		cum += n
		m.Counts[i] = cum
	}
	m.Sum, m.Count = h.sum, h.count
	h.mu.Unlock()
	return m
}

// HistogramVec is a histogram per combination of label values.
type HistogramVec struct{ vec vec[*HistogramValue] }

// With returns the histogram of the label values (one per label name).
func (v *HistogramVec) With(values ...string) *HistogramValue { return v.vec.with(values) }

// vec maps label values to children made on first use.
type vec[T any] struct {
	labels   []string
	newChild func() T
	mu       sync.RWMutex
	children map[string]child[T]
}

type child[T any] struct {
	values []string
	v      T
}

func (v *vec[T]) init(labels []string, newChild func() T) {
	v.labels, v.newChild, v.children = labels, newChild, map[string]child[T]{}
}

func (v *vec[T]) with(values []string) T {
	// A wrong number of values is a programming error; rather than panic
	// (as the Prometheus client does) the values are padded or cut.
	values = append([]string(nil), values...)
	for len(values) < len(v.labels) {
		values = append(values, "")
	}
	values = values[:len(v.labels)]
	key := strings.Join(values, "\xff")
	v.mu.RLock()
	c, ok := v.children[key]
	v.mu.RUnlock()
	if ok {
		return c.v
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if c, ok := v.children[key]; ok {
		return c.v
	}
	c = child[T]{values: values, v: v.newChild()}
	v.children[key] = c
	return c.v
}

func (v *vec[T]) each(f func(values []string, c T)) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	for _, c := range v.children {
		f(c.values, c.v)
	}
}

// Gather runs every collector and returns the families with samples,
// sorted by name, each one's metrics sorted by label values (label names
// taken in alphabetical order), as the Prometheus client orders them.
func (r *Registry) Gather() []Family {
	r.mu.Lock()
	collectors := slices.Clone(r.collectors)
	r.mu.Unlock()
	var fams []Family
	for _, c := range collectors {
		for _, f := range c() {
			if len(f.Metrics) > 0 {
				fams = append(fams, f)
			}
		}
	}
	slices.SortStableFunc(fams, func(a, b Family) int { return strings.Compare(a.Name, b.Name) })
	for _, f := range fams {
		order := sortedLabels(f.Labels)
		slices.SortStableFunc(f.Metrics, func(a, b Metric) int {
			for _, i := range order {
				if c := strings.Compare(value(a.LabelValues, i), value(b.LabelValues, i)); c != 0 {
					return c
				}
			}
			return 0
		})
	}
	return fams
}

// sortedLabels returns the indexes of labels in alphabetical order of
// their names.
func sortedLabels(labels []string) []int {
	order := make([]int, len(labels))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(labels[a], labels[b]) })
	return order
}

func value(values []string, i int) string {
	if i < len(values) {
		return values[i]
	}
	return ""
}

// ContentType is the Content-Type of the text format, as the Prometheus
// client sends it.
const ContentType = "text/plain; version=0.0.4; charset=utf-8; escaping=underscores"

// ServeHTTP writes the exposition, gzip-compressed when the client
// accepts it (as Prometheus does).
func (r *Registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	h := w.Header()
	h.Set("Content-Type", ContentType)
	h.Add("Vary", "Accept-Encoding")
	var out io.Writer = w
	if acceptsGzip(req.Header.Get("Accept-Encoding")) {
		h.Set("Content-Encoding", "gzip")
		gz := gzip.NewWriter(w)
		defer gz.Close()
		out = gz
	}
	r.WriteText(out) // a write error means the client went away
}

// acceptsGzip reads an Accept-Encoding header: gzip listed, not with q=0.
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.TrimSpace(coding) != "gzip" {
			continue
		}
		q, ok := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q=")
		if f, err := strconv.ParseFloat(q, 64); ok && err == nil && f == 0 {
			return false
		}
		return true
	}
	return false
}

// WriteText writes every family with samples in the text format.
func (r *Registry) WriteText(w io.Writer) error {
	b := bufio.NewWriter(w)
	for _, f := range r.Gather() {
		writeFamily(b, &f)
	}
	return b.Flush()
}

func writeFamily(b *bufio.Writer, f *Family) {
	b.WriteString("# HELP ")
	b.WriteString(f.Name)
	b.WriteByte(' ')
	writeEscaped(b, f.Help, false)
	b.WriteString("\n# TYPE ")
	b.WriteString(f.Name)
	b.WriteByte(' ')
	b.WriteString(string(f.Type))
	b.WriteByte('\n')
	order := sortedLabels(f.Labels)
	for _, m := range f.Metrics {
		switch f.Type {
		case Histogram:
			for i, bound := range m.Bounds {
				writeSample(b, f, order, &m, "_bucket", "le", bound, float64(m.Counts[i]))
			}
			writeSample(b, f, order, &m, "_bucket", "le", math.Inf(1), float64(m.Count))
			writeSample(b, f, order, &m, "_sum", "", 0, m.Sum)
			writeSample(b, f, order, &m, "_count", "", 0, float64(m.Count))
		case Summary:
			for i, q := range m.Quantiles {
				writeSample(b, f, order, &m, "", "quantile", q, m.Values[i])
			}
			writeSample(b, f, order, &m, "_sum", "", 0, m.Sum)
			writeSample(b, f, order, &m, "_count", "", 0, float64(m.Count))
		default:
			writeSample(b, f, order, &m, "", "", 0, m.Value)
		}
	}
}

// writeSample writes one line: name+suffix, the labels in alphabetical
// order then extra (le, quantile) if given, and v.
func writeSample(b *bufio.Writer, f *Family, order []int, m *Metric, suffix, extra string, extraValue, v float64) {
	b.WriteString(f.Name)
	b.WriteString(suffix)
	sep := byte('{')
	for _, i := range order {
		b.WriteByte(sep)
		b.WriteString(f.Labels[i])
		b.WriteString(`="`)
		writeEscaped(b, value(m.LabelValues, i), true)
		b.WriteByte('"')
		sep = ','
	}
	if extra != "" {
		b.WriteByte(sep)
		b.WriteString(extra)
		b.WriteString(`="`)
		writeFloat(b, extraValue)
		b.WriteByte('"')
		sep = ','
	}
	if sep == ',' {
		b.WriteByte('}')
	}
	b.WriteByte(' ')
	writeFloat(b, v)
	b.WriteByte('\n')
}

// writeEscaped writes s with backslash and newline escaped, and the
// double quote too in a label value (quote). Invalid UTF-8, which the
// format does not allow (the Prometheus client panics on it), becomes
// U+FFFD.
func writeEscaped(b *bufio.Writer, s string, quote bool) {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '"' && quote:
			b.WriteString(`\"`)
		default:
			b.WriteByte(c)
		}
	}
}

// writeFloat formats v as the Prometheus client does: shortest 'g', and
// +Inf, -Inf, NaN.
func writeFloat(b *bufio.Writer, v float64) {
	switch {
	case math.IsNaN(v):
		b.WriteString("NaN")
	case math.IsInf(v, 1):
		b.WriteString("+Inf")
	case math.IsInf(v, -1):
		b.WriteString("-Inf")
	default:
		var buf [32]byte
		b.Write(strconv.AppendFloat(buf[:0], v, 'g', -1, 64))
	}
}
