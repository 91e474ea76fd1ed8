// Command gateway measures what convo gateway adds to a streamed exchange,
// beside net/http/httputil.ReverseProxy, on the same fake upstream in the
// same run: time to first byte and total time (p50, p99), throughput, CPU
// time and resident memory of the proxy process, at several numbers of
// concurrent streams.
//
// Each proxy runs in its own child process (this program, re-executed), so
// its memory and CPU are its own; the fake upstream runs in another and
// replays, at full speed unless paced, one of two stream sets (-stream):
//
//   - text: a real OpenAI Chat stream of 303 chunks (300 text deltas and a
//     usage chunk, gpt-4.1-nano; the Vercel AI SDK's fixture
//     vercel-openai-text.chunks.txt), and for translation the same deltas
//     as an Anthropic stream, written as a recorded claude-haiku-4-5
//     stream is (package longstream). The client speaks OpenAI Chat,
//     streaming.
//   - tool: a recorded Anthropic stream with thinking, text and a tool
//     call (tool_use.sse, 13 events). Pass-through's client speaks
//     Anthropic, translation's OpenAI Chat.
//
// The modes, interleaved:
//
//   - reverse: httputil.ReverseProxy (FlushInterval -1), the baseline,
//     to the stream pass-through gets;
//   - passthrough (not recorded): the gateway passing through for a client
//     that sends Convo-Record: off;
//   - passthrough: the gateway passing through, recording every exchange
//     into SQLite, its spool on (convo gateway's default);
//   - passthrough (spool off): the same with no spool (--spool off);
//   - translate: the gateway translating the OpenAI Chat client to the
//     Anthropic upstream, recording, its spool on.
//
// The gateway runs as convo gateway does by default: its own upstream
// client, prices, the shipped model catalogue. After each level a summary
// gives issue 35's figures (CPU per exchange over ReverseProxy's, the
// first byte recording − not recording) and issue 30's (what translation
// adds over ReverseProxy divided by what pass-through adds).
//
// With -before BIN, a build of this program from an earlier commit also
// serves the two gateway modes ("passthrough (before)", "translate
// (before)"), interleaved with the others in the same run, so a change is
// measured against what it replaced on the same machine at the same time
// (a build from before the text stream, 6 December 2026, serves the tool
// stream only: its process fails to start on the text one).
//
// With -control, a second ReverseProxy ("reverse (control)") runs too:
// its difference to the first is what identical code differs by in the
// same run, the resolution of every other difference.
//
// Each round starts one mode later than the round before, so that over
// the rounds every mode runs in every place of a round; a mode's place
// sways its times.
//
// Each round of each level starts the proxies anew (-fresh, the default):
// on this 2-core machine a long-lived process kept a bias of its own — the
// same code in two processes differed by 100 µs to the first byte over six
// interleaved rounds — which fresh processes spread over the rounds. A
// mode's RSS is the most of its processes' peaks at that level.
// -fresh=false keeps one process per mode for the whole run.
//
// With GWBENCH_PROFILE=DIR in the environment (and -fresh=false, or the
// last round's process overwrites the others'), each proxy writes its CPU
// profile to DIR/MODE.cpu, its allocation profile to DIR/MODE.heap and its
// heap profile at the peak of its heap in use to DIR/MODE.peak when it
// ends, and prints its peak heap and stacks; a labelled mode writes its
// own to DIR/LABEL: DIR/before, DIR/control, DIR/notrecorded.
//
// With -rate R the load is an open loop: exchanges start R a second, evenly
// spaced, whatever the earlier ones are doing, and the upstream paces its
// stream (its events evenly spaced, each sent when due) so that it lasts
// streams/R — as many streams in flight as the level, at the same rate and
// so the same CPU load at every level. Below saturation the times are then
// the proxies' own, not queueing, and the difference to the reverse proxy
// at each level is what the gateway adds at that concurrency. The upstream
// shares the machine, so its stream takes longer while a proxy busies the
// CPU; the report gives the upstream's own time for each mode, and the
// difference to the reverse proxy with that time taken out.
//
// Usage: go run ./gateway [-stream text,tool] [-levels 1,64,512] [-requests N] [-rounds R] [-rate R] [-control] [-before BIN]
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/convo-go/convo/gateway"
	"github.com/convo-go/convo/internal/longstream"
	"github.com/convo-go/convo/pricing"
	"github.com/convo-go/convo/store/sqlite"
)

func main() {
	if len(os.Args) > 2 && os.Args[1] == "child" {
		child(os.Args[2], os.Args[3:])
		return
	}
	levels := flag.String("levels", "1,64,512", "concurrent streams")
	requests := flag.Int("requests", 2000, "exchanges per mode and level (at least 8 per stream)")
	rounds := flag.Int("rounds", 1, "rounds, the modes interleaved in each")
	before := flag.String("before", "", "a build of this program from an earlier commit: its gateway modes run too")
	fresh := flag.Bool("fresh", true, "start every mode's process anew for each round and level, so that no process's luck (its placement on the machine) sways every round")
	control := flag.Bool("control", false, "run a second ReverseProxy, \"reverse (control)\": its difference to the first is what identical code differs by in this run")
	streamsFlag := flag.String("stream", "text,tool", "the upstream streams, each measured in turn: text (a real 303-chunk OpenAI Chat stream, and the same text as an Anthropic stream) and tool (a recorded Anthropic stream with thinking and a tool call)")
	rate := flag.Float64("rate", 0, "open loop: start `R` exchanges a second, the upstream pacing its stream so that as many as the level are in flight (0: closed loop)")
	warmup := flag.Int("warmup", 0, "before each level's measured rounds, every process serves `N` exchanges at that level unmeasured (with -fresh, in each round): what a process that has run a while costs, without its first exchanges' one-time costs")
	flag.Parse()

	up := spawn(modeSpec{bin: os.Args[0], mode: "upstream"})
	defer up.stop()
	for _, set := range strings.Split(*streamsFlag, ",") {
		if _, ok := streamSets[set]; !ok {
			log.Fatalf("-stream: unknown stream %q (want text or tool)", set)
		}
		fmt.Printf("Stream %q: %s.\n", set, streamSets[set])
		measure(up, set, *levels, plan{requests: *requests, rounds: *rounds, warmup: *warmup, rate: *rate, fresh: *fresh}, starter(up, set, *before, *control))
	}
}

// plan is how each level is measured (the flags of the same names).
type plan struct {
	requests, rounds, warmup int
	rate                     float64
	fresh                    bool
}

// measure runs every level of one stream set and prints its tables.
func measure(up *proc, set, levels string, cfg plan, start func() []*proc) {
	requests, rounds, rate, fresh := cfg.requests, cfg.rounds, cfg.rate, cfg.fresh
	var modes []*proc
	if !fresh {
		modes = start()
		defer func() { stopAll(modes) }()
	}
	fmt.Printf("GOMAXPROCS-visible CPUs: %s; requests per mode and level: %d; rounds: %d", cpus(), requests, rounds)
	if cfg.warmup > 0 {
		fmt.Printf("; each process first served %d exchanges unmeasured", cfg.warmup)
	}
	if rate > 0 {
		fmt.Printf("; open loop at %g exchanges/s, the upstream's stream lasting streams/rate", rate)
	}
	fmt.Print("\n\n")
	var sums []summary
	fmt.Println("| streams | mode | TTFB p50 | TTFB p99 | total p50 | total p99 | TTFB p50 − reverse | total p50 − reverse | upstream's stream p50 | total p50 − reverse, upstream's time out | the same per round: median (least … most) | exchanges/s | proxy CPU / exchange | CPU / reverse's | proxy RSS (peak) | failed | recorded / dropped / spooled | system calls / exchange: read, write |")
	fmt.Println("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, ls := range strings.Split(levels, ",") {
		c, err := strconv.Atoi(ls)
		if err != nil {
			log.Fatal(err)
		}
		n := max(requests, 8*c)
		run := func(m *proc) *result { return load(m, set, c, n) }
		if rate > 0 {
			// Little's law: c streams in flight at rate exchanges a second
			// when each lasts c/rate.
			up.pace(time.Duration(float64(c) / rate * float64(time.Second)))
			run = func(m *proc) *result { return loadOpen(m, set, rate, n) }
		}
		res := map[string]*result{}
		var names []string
		if !fresh {
			warm(up, modes, set, c, cfg.warmup)
		}
		for r := 0; r < rounds; r++ {
			if fresh {
				modes = start()
				warm(up, modes, set, c, cfg.warmup)
			}
			// Each mode's own time, CPU an exchange and first byte in this
			// round, for the table of rounds.
			own, cpu, ttfb := make([]time.Duration, len(modes)), make([]time.Duration, len(modes)), make([]time.Duration, len(modes))
			for _, i := range placeOrder(r, len(modes)) {
				m := modes[i]
				up.took() // another mode's, or none
				one := run(m)
				one.upstream = up.took()
				one.rss = m.rss()
				own[i], cpu[i], ttfb[i] = one.own(), one.cpuPer(), one.pct(one.ttfb, 50)
				res[m.name] = res[m.name].merge(one)
			}
			names = names[:0]
			for i, m := range modes {
				res[m.name].rounds = append(res[m.name].rounds, own[i]-own[0])
				res[m.name].ttfbRounds = append(res[m.name].ttfbRounds, ttfb[i])
				if cpu[0] > 0 {
					res[m.name].cpuRounds = append(res[m.name].cpuRounds, float64(cpu[i])/float64(cpu[0]))
				}
				names = append(names, m.name)
			}
			if fresh {
				stopAll(modes)
			}
		}
		report(c, names, res)
		sums = append(sums, summarize(c, names, res))
	}
	printSummary(sums)
	printRounds(sums)
	fmt.Println()
}

// warm has every mode serve n exchanges at c streams, unmeasured, its
// recordings written before it returns.
func warm(up *proc, modes []*proc, set string, c, n int) {
	if n <= 0 {
		return
	}
	for _, m := range modes {
		load(m, set, c, max(n, c))
	}
	up.took()
}

// placeOrder returns the order in which round r runs n modes, by their
// index: each round starts one mode later than the last. A mode's place in
// a round sways its times (two ReverseProxy processes in fourth and fifth
// place measured 60 µs apart at one stream), so over n rounds every mode
// runs in every place once.
func placeOrder(r, n int) []int {
	o := make([]int, n)
	for k := range o {
		o[k] = (k + r) % n
	}
	return o
}

// report prints one level's rows; the differences are against the first
// mode, the reverse proxy.
func report(c int, names []string, res map[string]*result) {
	base := res[names[0]]
	for _, name := range names {
		r := res[name]
		failMu.Lock()
		failed := failures[name]
		delete(failures, name)
		failMu.Unlock()
		if len(r.total) == 0 {
			fmt.Printf("| %d | %s | | | | | | | | | | | | | %s | %d | %s | |\n", c, name, mib(r.rss), failed, r.recorded())
			continue
		}
		rs := slices.Sorted(slices.Values(r.rounds))
		fmt.Printf("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s (%s … %s) | %.0f | %s | %.2f× | %s | %d | %s | %s |\n", c, name,
			us(r.pct(r.ttfb, 50)), us(r.pct(r.ttfb, 99)), us(r.pct(r.total, 50)), us(r.pct(r.total, 99)),
			signed(r.pct(r.ttfb, 50)-base.pct(base.ttfb, 50)), signed(r.pct(r.total, 50)-base.pct(base.total, 50)),
			us(r.pct(r.upstream, 50)), signed(r.own()-base.own()), signed(rs[len(rs)/2]), signed(rs[0]), signed(rs[len(rs)-1]),
			float64(len(r.total))/r.wall.Seconds(), us(r.cpuPer()), float64(r.cpuPer())/float64(base.cpuPer()), mib(r.rss), failed, r.recorded(), r.syscallsPer())
	}
}

// summary is one level's figures against the issues' targets.
type summary struct {
	c                     int
	cpu                   map[string]float64   // CPU per exchange / reverse's, by mode
	cpuRounds             map[string][]float64 // the same in each round, by mode
	ttfbRounds            []time.Duration      // ttfbRecMinusOff in each round
	ttfbRecMinusOff       time.Duration        // pass-through's TTFB p50 recording − not recording
	addTotal, addCPU      [2]time.Duration     // translation's and pass-through's p50 total and CPU per exchange − reverse's
	translateOverPassthru [2]float64           // addTotal[0]/addTotal[1], addCPU[0]/addCPU[1]
}

// summarize takes a level's figures against the targets from res, the
// first mode being the reverse proxy.
func summarize(c int, names []string, res map[string]*result) summary {
	base := res[names[0]]
	s := summary{c: c, cpu: map[string]float64{}, cpuRounds: map[string][]float64{}}
	for _, n := range names {
		if r := res[n]; len(r.total) > 0 && base.cpuPer() > 0 {
			s.cpu[n] = float64(r.cpuPer()) / float64(base.cpuPer())
			s.cpuRounds[n] = r.cpuRounds
		}
	}
	pass, off, tr := res["passthrough"], res["passthrough"+unrecordedLabel], res["translate"]
	if pass == nil || off == nil || tr == nil || len(pass.total) == 0 || len(off.total) == 0 || len(tr.total) == 0 {
		return s
	}
	s.ttfbRecMinusOff = pass.pct(pass.ttfb, 50) - off.pct(off.ttfb, 50)
	for i := range min(len(pass.ttfbRounds), len(off.ttfbRounds)) {
		s.ttfbRounds = append(s.ttfbRounds, pass.ttfbRounds[i]-off.ttfbRounds[i])
	}
	bt := base.pct(base.total, 50)
	s.addTotal = [2]time.Duration{tr.pct(tr.total, 50) - bt, pass.pct(pass.total, 50) - bt}
	s.addCPU = [2]time.Duration{tr.cpuPer() - base.cpuPer(), pass.cpuPer() - base.cpuPer()}
	s.translateOverPassthru = [2]float64{ratio(s.addTotal), ratio(s.addCPU)}
	return s
}

// ratio is d[0]/d[1], NaN when d[1] is not above zero: what pass-through
// adds must be something for translation's to be a multiple of it.
func ratio(d [2]time.Duration) float64 {
	if d[1] <= 0 {
		return math.NaN()
	}
	return float64(d[0]) / float64(d[1])
}

// printSummary prints the figures of issue 35 (CPU per exchange against
// ReverseProxy's, first byte recording against not) and issue 30
// (translation's addition over pass-through's) at every level.
func printSummary(sums []summary) {
	fmt.Println()
	fmt.Println("| streams | CPU / reverse: not recorded (≤ 1.1) | recording, spool on (≤ 1.5) | recording, spool off (≤ 1.5) | translating, recording (≤ 1.5) | TTFB p50 recording − not recording (≤ 100 µs) | total p50 − reverse: translation / pass-through | (translation − reverse) / (pass-through − reverse): total p50 (≤ 2) | the same, CPU per exchange |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, s := range sums {
		fmt.Printf("| %d | %.2f× | %.2f× | %.2f× | %.2f× | %s | %s / %s | %s | %s |\n", s.c,
			s.cpu["passthrough"+unrecordedLabel], s.cpu["passthrough"], s.cpu["passthrough"+spoolOffLabel], s.cpu["translate"],
			signed(s.ttfbRecMinusOff), signed(s.addTotal[0]), signed(s.addTotal[1]), times(s.translateOverPassthru[0]), times(s.translateOverPassthru[1]))
	}
}

// printRounds prints the CPU ratios and the first-byte difference of
// printSummary round by round: the reverse proxy's own CPU an exchange
// moves by up to a quarter from one fresh process to the next
// (docs/benchmarks.md), and a pooled figure does not show how far one
// round's is from another's.
func printRounds(sums []summary) {
	fmt.Println()
	fmt.Println("| streams | each round's CPU / that round's reverse, median (least … most): not recorded | recording, spool on | recording, spool off | translating, recording | each round's TTFB p50 recording − not recording |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|")
	for _, s := range sums {
		fmt.Printf("| %d | %s | %s | %s | %s | %s |\n", s.c, spread(s.cpuRounds["passthrough"+unrecordedLabel]), spread(s.cpuRounds["passthrough"]),
			spread(s.cpuRounds["passthrough"+spoolOffLabel]), spread(s.cpuRounds["translate"]), spreadTimes(s.ttfbRounds))
	}
}

// spread is the median of ratios and their least and most, as
// "1.50× (1.41 … 1.62)"; empty for none.
func spread(ratios []float64) string {
	if len(ratios) == 0 {
		return ""
	}
	med, least, most := middle(ratios)
	return fmt.Sprintf("%.2f× (%.2f … %.2f)", med, least, most)
}

// spreadTimes is spread for durations, as "+43 µs (-20 µs … +130 µs)".
func spreadTimes(ds []time.Duration) string {
	if len(ds) == 0 {
		return ""
	}
	med, least, most := middle(ds)
	return fmt.Sprintf("%s (%s … %s)", signed(med), signed(least), signed(most))
}

// middle returns the median of xs (the mean of the middle two when they
// are even in number), the least and the most; xs is not empty.
func middle[T ~float64 | ~int64](xs []T) (med, least, most T) {
	s := slices.Sorted(slices.Values(xs))
	med = s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return med, s[0], s[len(s)-1]
}

func times(f float64) string {
	if math.IsNaN(f) {
		return "n/a (pass-through ≤ reverse)"
	}
	return fmt.Sprintf("%.2f×", f)
}

// failures counts failed exchanges by mode; they are left out of the
// times and reported.
var (
	failMu   sync.Mutex
	failures = map[string]int{}
)

func fail(mode string, err error) {
	failMu.Lock()
	defer failMu.Unlock()
	if failures[mode] == 0 {
		log.Printf("%s: %v", mode, err)
	}
	failures[mode]++
}

// us and signed print a time in µs, or in ms from 10 ms on.
func us(d time.Duration) string {
	if d >= 10*time.Millisecond {
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
}

func signed(d time.Duration) string {
	if d >= 10*time.Millisecond || d <= -10*time.Millisecond {
		return fmt.Sprintf("%+.1f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%+.0f µs", float64(d)/float64(time.Microsecond))
}
func mib(kb int64) string { return fmt.Sprintf("%.1f MiB", float64(kb)/1024) }

func cpus() string {
	b, _ := exec.Command("nproc").Output()
	return strings.TrimSpace(string(b))
}

// result holds one mode's measurements at one level.
type result struct {
	ttfb, total []time.Duration
	upstream    []time.Duration // the upstream's streams, first write to last
	rounds      []time.Duration // own() − the reverse proxy's, in each round
	cpuRounds   []float64       // CPU per exchange / the reverse proxy's, in each round
	ttfbRounds  []time.Duration // TTFB p50 in each round
	wall, cpu   time.Duration
	sys         [2]int64       // the proxy's read and write system calls
	rss         int64          // the process's peak resident set, KiB (the most of the rounds)
	rec         *gateway.Stats // a gateway's recordings, summed over the rounds
}

// recorded is what a gateway recorded, dropped and spooled; empty for
// the reverse proxy.
func (r *result) recorded() string {
	if r.rec == nil {
		return ""
	}
	return fmt.Sprintf("%d / %d / %d", r.rec.Recorded, r.rec.Dropped, r.rec.Spooled)
}

// syscallsPer is the proxy's read and write system calls per exchange
// (reads include receives, writes sends): a write a flush, so it tells
// how an exchange's stream was cut into the client's packets.
func (r *result) syscallsPer() string {
	if len(r.total) == 0 {
		return ""
	}
	n := float64(len(r.total))
	return fmt.Sprintf("%.0f, %.0f", float64(r.sys[0])/n, float64(r.sys[1])/n)
}

// cpuPer is the proxy's CPU time per exchange measured.
func (r *result) cpuPer() time.Duration {
	if len(r.total) == 0 {
		return 0
	}
	return r.cpu / time.Duration(len(r.total))
}

func (r *result) merge(o *result) *result {
	if r == nil {
		return o
	}
	r.ttfb, r.total = append(r.ttfb, o.ttfb...), append(r.total, o.total...)
	r.upstream = append(r.upstream, o.upstream...)
	r.wall += o.wall
	r.cpu += o.cpu
	r.sys[0], r.sys[1] = r.sys[0]+o.sys[0], r.sys[1]+o.sys[1]
	r.rss = max(r.rss, o.rss)
	if o.rec != nil {
		if r.rec == nil {
			r.rec = &gateway.Stats{}
		}
		r.rec.Recorded += o.rec.Recorded
		r.rec.Dropped += o.rec.Dropped
		r.rec.Failed += o.rec.Failed
		r.rec.Spooled += o.rec.Spooled
	}
	return r
}

// own is the total's p50 with the upstream's own stream time (p50) taken
// out. The upstream shares the machine: its stream takes longer while a
// proxy uses more CPU, which a remote provider's would not.
func (r *result) own() time.Duration {
	return r.pct(r.total, 50) - r.pct(r.upstream, 50)
}

func (r *result) pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, len(s)*p/100)]
}

// target is where and what a mode's client sends.
type target struct {
	m              *proc
	url, body, hdr string
	unrecorded     bool // the client asks the gateway to record nothing
	model          string
	client         *http.Client
	mu             sync.Mutex
	res            *result
}

// newTarget is what m's client sends for stream set: with the tool
// stream an Anthropic client (an OpenAI Chat one when m translates), with
// the text stream an OpenAI Chat client, its model routing it to the
// OpenAI upstream or, when m translates, to the Anthropic one. The reverse
// proxy forwards to the set's path on the upstream itself.
func newTarget(m *proc, set string, n int) (*target, func()) {
	tr := &http.Transport{MaxIdleConns: 2048, MaxIdleConnsPerHost: 2048, MaxConnsPerHost: 0}
	t := &target{m: m, client: &http.Client{Transport: tr},
		res: &result{ttfb: make([]time.Duration, 0, n), total: make([]time.Duration, 0, n)}}
	translate := m.spec.mode == "translate"
	switch {
	case set == "tool" && !translate:
		t.url, t.model, t.hdr = "/v1/messages", "claude-sonnet-4-5", "X-Api-Key"
	case set == "tool":
		t.url, t.model, t.hdr = "/v1/chat/completions", "claude-sonnet-4-5", "Authorization"
	case translate:
		t.url, t.model, t.hdr = "/v1/chat/completions", "claude-haiku-4-5", "Authorization"
	default:
		t.url, t.model, t.hdr = "/v1/chat/completions", "gpt-4.1-nano", "Authorization"
	}
	t.body = fmt.Sprintf(chatRequest, t.model)
	if t.hdr == "X-Api-Key" {
		t.body = fmt.Sprintf(anthropicRequest, t.model)
	}
	t.url = "http://" + m.addr + t.url
	t.unrecorded = m.spec.noRecord
	return t, tr.CloseIdleConnections
}

// exchange makes one exchange and records its times, or its failure.
func (t *target) exchange(buf []byte) {
	req, _ := http.NewRequest("POST", t.url, strings.NewReader(t.body))
	req.Header.Set("Content-Type", "application/json")
	if t.hdr == "Authorization" {
		req.Header.Set(t.hdr, "Bearer tok")
	} else {
		req.Header.Set(t.hdr, "tok")
	}
	if t.unrecorded {
		req.Header.Set("Convo-Record", "off")
	}
	t0 := time.Now()
	resp, err := t.client.Do(req)
	if err != nil {
		fail(t.m.name, err)
		return
	}
	k, err := resp.Body.Read(buf[:1])
	t1 := time.Now()
	if k == 0 || (err != nil && err != io.EOF) || resp.StatusCode != 200 {
		fail(t.m.name, fmt.Errorf("first byte: %v (status %d)", err, resp.StatusCode))
		resp.Body.Close()
		return
	}
	_, err = io.CopyBuffer(io.Discard, resp.Body, buf)
	resp.Body.Close()
	t2 := time.Now()
	if err != nil {
		fail(t.m.name, err)
		return
	}
	t.mu.Lock()
	t.res.ttfb = append(t.res.ttfb, t1.Sub(t0))
	t.res.total = append(t.res.total, t2.Sub(t0))
	t.mu.Unlock()
}

// load runs n exchanges through m with c concurrent clients, each starting
// its next exchange when the last ends (closed loop).
func load(m *proc, set string, c, n int) *result {
	t, done := newTarget(m, set, n)
	defer done()
	jobs := make(chan struct{}, n)
	for i := 0; i < n; i++ {
		jobs <- struct{}{}
	}
	close(jobs)
	rec0 := m.stats()
	cpu0, sys0 := m.cpu(), m.syscalls()
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < c; w++ {
		wg.Add(1)
		go func(buf []byte) {
			defer wg.Done()
			for range jobs {
				t.exchange(buf)
			}
		}(make([]byte, 32<<10))
	}
	wg.Wait()
	t.res.wall = time.Since(start)
	t.res.rec = m.drain(rec0, n)
	t.res.cpu = m.settled() - cpu0
	sys := m.syscalls()
	t.res.sys = [2]int64{sys[0] - sys0[0], sys[1] - sys0[1]}
	return t.res
}

// loadOpen starts n exchanges through m at rate a second, evenly spaced,
// whether or not the earlier ones have ended (open loop): below saturation
// an exchange's time is the proxy's and the upstream's, not time spent
// waiting for the exchanges before it.
func loadOpen(m *proc, set string, rate float64, n int) *result {
	t, done := newTarget(m, set, n)
	defer done()
	bufs := sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}
	every := time.Duration(float64(time.Second) / rate)
	rec0 := m.stats()
	cpu0, sys0 := m.cpu(), m.syscalls()
	start := time.Now()
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		time.Sleep(time.Until(start.Add(time.Duration(i) * every)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			bp := bufs.Get().(*[]byte)
			t.exchange(*bp)
			bufs.Put(bp)
		}()
	}
	wg.Wait()
	t.res.wall = time.Since(start)
	t.res.rec = m.drain(rec0, n)
	t.res.cpu = m.settled() - cpu0
	sys := m.syscalls()
	t.res.sys = [2]int64{sys[0] - sys0[0], sys[1] - sys0[1]}
	return t.res
}

// The clients' requests, their model filled in.
const anthropicRequest = `{"model":%q,"max_tokens":1024,"stream":true,"messages":[{"role":"user","content":"Weather in Paris?"}]}`
const chatRequest = `{"model":%q,"stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Weather in Paris?"}]}`

// streamSets describes the upstream's streams, by the name -stream takes.
var streamSets = map[string]string{
	"text": "a real OpenAI Chat stream of 303 chunks (300 text deltas, 1,730 bytes of text, usage last: vercel-openai-text.chunks.txt) " +
		"for pass-through, and for translation the same deltas as an Anthropic stream (derived, framed as a recorded claude-haiku-4-5 stream); the client speaks OpenAI Chat",
	"tool": "a recorded Anthropic stream with thinking, text and a tool call (13 events: tool_use.sse); " +
		"pass-through's client speaks Anthropic, translation's OpenAI Chat",
}

// modeSpec is how a mode's process starts: this program or the -before
// build, the mode, and the label its results carry; whether its client
// asks for no recording (Convo-Record: off) and whether the gateway runs
// without its spool (convo gateway --spool off; on is the command's
// default).
type modeSpec struct {
	bin, mode, label   string
	noRecord, spoolOff bool
}

// The labels of the pass-through modes beside the default one (recording,
// spool on).
const (
	unrecordedLabel = " (not recorded)"
	spoolOffLabel   = " (spool off)"
)

// specs lists the modes: ReverseProxy first (every difference is to it),
// the gateway passing through without recording, recording with its
// spool and without, translating (recording, spool on); a second reverse
// proxy with control, and before's gateway modes when it is set.
func specs(before string, control bool) []modeSpec {
	me := os.Args[0]
	sp := []modeSpec{
		{bin: me, mode: "reverse"},
		{bin: me, mode: "passthrough", label: unrecordedLabel, noRecord: true},
		{bin: me, mode: "passthrough"},
		{bin: me, mode: "passthrough", label: spoolOffLabel, spoolOff: true},
		{bin: me, mode: "translate"},
	}
	if control {
		sp = append(sp, modeSpec{bin: me, mode: "reverse", label: " (control)"})
	}
	if before != "" {
		sp = append(sp, modeSpec{bin: before, mode: "passthrough", label: " (before)"}, modeSpec{bin: before, mode: "translate", label: " (before)"})
	}
	return sp
}

// starter returns what starts the modes' processes for stream set, in
// front of up.
func starter(up *proc, set, before string, control bool) func() []*proc {
	sp := specs(before, control)
	return func() []*proc {
		modes := make([]*proc, len(sp))
		for i, s := range sp {
			modes[i] = spawn(s, up.addr, set)
		}
		return modes
	}
}

func stopAll(modes []*proc) {
	for _, m := range modes {
		m.stop()
	}
}

// proc is a child process serving one mode.
type proc struct {
	name, addr string
	spec       modeSpec
	cmd        *exec.Cmd
}

// spawn starts sp's process with args (the upstream's address and the
// stream set), named mode+label in the results.
func spawn(sp modeSpec, args ...string) *proc {
	bin, mode, label := sp.bin, sp.mode, sp.label
	cmd := exec.Command(bin, append([]string{"child", mode}, args...)...)
	cmd.Stderr = os.Stderr
	cmd.Env = append(os.Environ(), "GWBENCH_LABEL="+label)
	if sp.spoolOff {
		cmd.Env = append(cmd.Env, "GWBENCH_SPOOL=off")
	}
	if dir := os.Getenv("GWBENCH_PROFILE"); dir != "" && label != "" {
		// A labelled mode's profiles (another build's, the control's) go
		// apart, not over those of the mode it shares a name with.
		dir = filepath.Join(dir, strings.NewReplacer(" ", "", "(", "", ")", "").Replace(label))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			log.Fatal(err)
		}
		cmd.Env = append(cmd.Env, "GWBENCH_PROFILE="+dir)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		log.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		log.Fatalf("%s: %v", mode, err)
	}
	return &proc{name: mode + label, addr: strings.TrimSpace(line), spec: sp, cmd: cmd}
}

func (p *proc) stop() {
	_ = p.cmd.Process.Signal(os.Interrupt)
	_ = p.cmd.Wait()
}

// cpu is the child's user and system CPU time so far.
func (p *proc) cpu() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}

// statsPath is where a gateway mode's process answers with its
// gateway's Stats as JSON: beside the gateway's own paths, for the load
// generator only.
const statsPath = "/gwbench/stats"

// stats is the gateway's recording counts in a gateway mode's process
// (the process serves one round of one level), nil for another mode or
// an earlier build that does not answer.
func (p *proc) stats() *gateway.Stats {
	if p.spec.mode == "reverse" {
		return nil
	}
	resp, err := http.Get("http://" + p.addr + statsPath)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var s gateway.Stats
	if resp.StatusCode != 200 || json.NewDecoder(resp.Body).Decode(&s) != nil {
		return nil
	}
	return &s
}

// withStats serves gw, and its Stats at statsPath.
func withStats(gw *gateway.Gateway) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == statsPath {
			_ = json.NewEncoder(w).Encode(gw.Stats())
			return
		}
		gw.ServeHTTP(w, r)
	})
}

// drain waits, at most a minute, until a recording gateway's process has
// recorded, dropped or failed each of the n exchanges it was sent since
// its Stats were since: its writer may wait on the disk, which an idle
// CPU does not show. It returns the process's recordings of those n
// exchanges (nil for a mode that does not answer).
func (p *proc) drain(since *gateway.Stats, n int) *gateway.Stats {
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		s := p.stats()
		if s == nil {
			return nil
		}
		if since != nil {
			s.Recorded, s.Dropped, s.Failed, s.Spooled = s.Recorded-since.Recorded, s.Dropped-since.Dropped, s.Failed-since.Failed, s.Spooled-since.Spooled
		}
		if p.spec.noRecord || s.Recorded+s.Dropped+s.Failed >= int64(n) {
			return s
		}
		if time.Now().After(deadline) {
			log.Printf("%s: recordings still pending a minute after the batch", p.name)
			return s
		}
	}
}

// settled waits until the child stops using CPU (no tick for 100 ms:
// the recording writer has caught up with the batch), at most 30 s, and
// returns its CPU time then: a gateway's recording of the batch's last
// exchanges is part of the batch's cost, not of the next mode's round.
func (p *proc) settled() time.Duration {
	last := p.cpu()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		now := p.cpu()
		if now == last {
			return now
		}
		last = now
	}
	return last
}

// syscalls is the child's read and write system calls so far
// (/proc/PID/io's syscr and syscw).
func (p *proc) syscalls() (n [2]int64) {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/io", p.cmd.Process.Pid))
	for _, line := range strings.Split(string(b), "\n") {
		for i, key := range [...]string{"syscr: ", "syscw: "} {
			if v, ok := strings.CutPrefix(line, key); ok {
				n[i], _ = strconv.ParseInt(v, 10, 64)
			}
		}
	}
	return n
}

// rss is the child's peak resident set (VmHWM) in KiB.
func (p *proc) rss() int64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return n
		}
	}
	return 0
}

// spoolDir is the spool of a gateway mode's process: in dir, as convo
// gateway keeps one beside its database by default, unless the process
// runs "passthrough (spool off)".
func spoolDir(dir string) string {
	if os.Getenv("GWBENCH_SPOOL") == "off" {
		return ""
	}
	return filepath.Join(dir, "spool")
}

// child serves one mode and prints its address on stdout.
func child(mode string, args []string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	var h http.Handler
	var gw *gateway.Gateway
	switch mode {
	case "upstream":
		sets, err := loadStreams("..")
		if err != nil {
			log.Fatal(err)
		}
		h = upstream(sets)
	case "reverse":
		h = reverseProxy(args[0] + setPath(args))
	case "passthrough", "translate":
		dir, err := os.MkdirTemp("", "gwbench")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(dir)
		st, err := sqlite.Open(context.Background(), filepath.Join(dir, "gw.db"))
		if err != nil {
			log.Fatal(err)
		}
		defer st.Close()
		if gw, err = newGateway(st, "http://"+args[0]+setPath(args), spoolDir(dir)); err != nil {
			log.Fatal(err)
		}
		h = withStats(gw)
	default:
		log.Fatalf("unknown mode %q", mode)
	}
	srv := &http.Server{Handler: h}
	if dir := os.Getenv("GWBENCH_PROFILE"); dir != "" && mode != "upstream" {
		stop := profile(filepath.Join(dir, strings.ReplaceAll(mode, " ", "")))
		defer stop()
	}
	fmt.Println(ln.Addr().String())
	go func() { _ = srv.Serve(ln) }()
	sig := make(chan os.Signal, 1)
	signalNotify(sig)
	<-sig
	_ = srv.Close()
	if gw != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = gw.Close(ctx)
		s := gw.Stats()
		fmt.Fprintf(os.Stderr, "%s%s: recorded %d, dropped %d, failed %d, spooled %d\n", mode, os.Getenv("GWBENCH_LABEL"), s.Recorded, s.Dropped, s.Failed, s.Spooled)
	}
}

// reverseProxy is the baseline: httputil.ReverseProxy to the upstream at
// addr, flushing every write, with the same pooled transport as the
// gateway, and the request body read whole first, as the gateway reads it.
// Streamed, it fails some exchanges: net/http's server closes the request
// body when the response starts, and the transport's last read of it then
// tears down the upstream connection mid-reply ("use of closed network
// connection", golang/go#40747).
func reverseProxy(addr string) http.Handler {
	u, _ := url.Parse("http://" + addr)
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	rp.Transport = pooled()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		rp.ServeHTTP(w, r)
	})
}

// profile starts a CPU profile written to base+".cpu" and returns the
// function that ends it and writes the allocation profile to base+".heap"
// and the heap profile taken when the heap in use was largest to
// base+".peak".
func profile(base string) func() {
	f, err := os.Create(base + ".cpu")
	if err != nil {
		log.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		log.Fatal(err)
	}
	done := make(chan struct{})
	var peak bytes.Buffer
	var most, stacks, sys uint64
	go func() {
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			stacks, sys = max(stacks, ms.StackInuse), max(sys, ms.Sys)
			if ms.HeapInuse > most {
				most = ms.HeapInuse
				peak.Reset()
				_ = pprof.Lookup("heap").WriteTo(&peak, 0)
			}
		}
	}()
	return func() {
		close(done)
		pprof.StopCPUProfile()
		_ = f.Close()
		h, err := os.Create(base + ".heap")
		if err != nil {
			log.Fatal(err)
		}
		defer h.Close()
		_ = pprof.Lookup("allocs").WriteTo(h, 0)
		_ = os.WriteFile(base+".peak", peak.Bytes(), 0o644)
		fmt.Fprintf(os.Stderr, "%s: peak Go heap in use %.1f MiB, stacks %.1f MiB, runtime total %.1f MiB\n", filepath.Base(base), float64(most)/(1<<20), float64(stacks)/(1<<20), float64(sys)/(1<<20))
	}
}

// setPath is where the upstream serves the stream set named in a child's
// arguments: the tool stream at the root (as an earlier build, with
// -before, expects), the others under their name.
func setPath(args []string) string {
	if len(args) < 2 || args[1] == "tool" {
		return ""
	}
	return "/" + args[1]
}

// newGateway is the gateway as convo gateway runs it by default (its own
// upstream client, prices, the shipped model catalogue, a spool when
// spool is set), recording into st, with an Anthropic upstream at base
// and an OpenAI one at base/v1, routed by model name.
func newGateway(st *sqlite.Store, base, spool string) (*gateway.Gateway, error) {
	pr, err := pricing.Default("", nil)
	if err != nil {
		return nil, err
	}
	return gateway.New(gateway.Options{
		Config: gateway.Config{
			Upstreams: []gateway.Upstream{
				{Name: "a", Protocol: "anthropic", URL: base},
				{Name: "o", Protocol: "openai", URL: base + "/v1"},
			},
			Routes: []gateway.Route{{Model: "claude-*", Upstream: "a"}, {Model: "gpt-*", Upstream: "o"}},
		},
		Store:    st,
		Tokens:   map[string]string{"tok": "bench"},
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		SpoolDir: spool,
		Pricer:   pr,
	})
}

// streams is one stream set's replies as the upstream sends them, cut
// into events: Anthropic's, and OpenAI Chat's (none for the tool set).
type streams struct{ anthropic, chat [][]byte }

// loadStreams reads the recorded streams from the repository at root.
func loadStreams(root string) (map[string]streams, error) {
	tool, err := os.ReadFile(filepath.Join(root, "provider", "anthropic", "testdata", "reply", "tool_use.sse"))
	if err != nil {
		return nil, err
	}
	chat, anth, err := longstream.Load(root)
	if err != nil {
		return nil, err
	}
	return map[string]streams{"tool": {anthropic: events(tool)}, "text": {anthropic: anth, chat: chat}}, nil
}

// events cuts an SSE stream into its events.
func events(data []byte) [][]byte {
	ev := bytes.SplitAfter(data, []byte("\n\n"))
	if len(ev[len(ev)-1]) == 0 {
		ev = ev[:len(ev)-1]
	}
	return ev
}

// upstream replays data, event by event, flushed, as a provider streams.
// POST /pace?stream=D (from the load generator, not through a proxy) makes
// every stream after it last about D, its events evenly spaced; the first
// is sent at once. Event i is due at i·D/(events−1) after the first, not
// that long after the one before: a late wake-up (the machine is shared
// with the proxy under test) delays one event, not every event after it,
// as a remote provider's stream would not slow down with the proxy's
// machine. GET /took returns how long each stream took from its first
// write to its last, one count of nanoseconds a line, since the last GET.
//
// A request whose path begins with a set's name (/text/…) gets that set's
// stream, any other the tool set's; one whose path ends in
// /chat/completions gets the OpenAI Chat stream, any other the Anthropic
// one. The pace is one for every stream: events evenly spaced over D.
func upstream(sets map[string]streams) http.Handler {
	var gap atomic.Int64
	var mu sync.Mutex
	var took []time.Duration
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/pace":
			d, err := time.ParseDuration(r.URL.Query().Get("stream"))
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			gap.Store(int64(d))
			return
		case "/took":
			mu.Lock()
			defer mu.Unlock()
			for _, d := range took {
				fmt.Fprintln(w, int64(d))
			}
			took = took[:0]
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		set := sets["tool"]
		if name, _, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/"); ok && sets[name].anthropic != nil {
			set = sets[name]
		}
		events := set.anthropic
		if strings.HasSuffix(r.URL.Path, "/chat/completions") {
			events = set.chat
		}
		if events == nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		g := time.Duration(gap.Load()) / time.Duration(max(1, len(events)-1))
		start := time.Now()
		for i, ev := range events {
			if g > 0 {
				time.Sleep(time.Until(start.Add(time.Duration(i) * g)))
			}
			_, _ = w.Write(ev)
			w.(http.Flusher).Flush()
		}
		d := time.Since(start)
		mu.Lock()
		took = append(took, d)
		mu.Unlock()
	})
}

// took returns how long the upstream's streams took, first write to last,
// since the last call.
func (p *proc) took() []time.Duration {
	resp, err := http.Get("http://" + p.addr + "/took")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	var ds []time.Duration
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		n, err := strconv.ParseInt(sc.Text(), 10, 64)
		if err != nil {
			log.Fatalf("upstream's stream times: %v", err)
		}
		ds = append(ds, time.Duration(n))
	}
	if err := sc.Err(); err != nil {
		log.Fatalf("upstream's stream times: %v", err)
	}
	return ds
}

// pace tells the upstream how long a stream should last.
func (p *proc) pace(d time.Duration) {
	resp, err := http.Post("http://"+p.addr+"/pace?stream="+d.String(), "text/plain", nil)
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		log.Fatalf("pacing the upstream: %s", resp.Status)
	}
}

func signalNotify(c chan os.Signal) { signal.Notify(c, os.Interrupt, syscall.SIGTERM) }

// pooled is ReverseProxy's upstream transport: the default one, with room
// for every concurrent stream's idle connection, as the gateway's own
// client has (the gateway runs with its own: what convo gateway ships).
func pooled() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns, t.MaxIdleConnsPerHost = 2048, 2048
	return t
}
