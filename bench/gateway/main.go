// Command gateway measures what convo gateway adds to a streamed exchange,
// beside net/http/httputil.ReverseProxy, on the same fake upstream in the
// same run: time to first byte and total time (p50, p99), throughput, CPU
// time and resident memory of the proxy process, at several numbers of
// concurrent streams.
//
// Each proxy runs in its own child process (this program, re-executed), so
// its memory and CPU are its own; the fake upstream — a recorded Anthropic
// stream with thinking, text and a tool call, replayed at full speed — runs
// in another. The modes:
//
//   - reverse: httputil.ReverseProxy (FlushInterval -1), the baseline;
//   - passthrough: the gateway, Anthropic client to Anthropic upstream,
//     recording every exchange into SQLite;
//   - translate: the gateway, OpenAI Chat client to the same Anthropic
//     upstream, recording too.
//
// With -before BIN, a build of this program from an earlier commit also
// serves the two gateway modes ("passthrough (before)", "translate
// (before)"), interleaved with the others in the same run, so a change is
// measured against what it replaced on the same machine at the same time.
//
// With -control, a second ReverseProxy ("reverse (control)") runs too:
// its difference to the first is what identical code differs by in the
// same run, the resolution of every other difference. With -unrecorded,
// the gateway passes through for a client that sends Convo-Record: off
// ("passthrough (not recorded)"): what the gateway adds without recording.
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
// Usage: go run ./gateway [-levels 1,64,512] [-requests N] [-rounds R] [-rate R] [-control] [-unrecorded] [-spool] [-before BIN]
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
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
	unrecorded := flag.Bool("unrecorded", false, "run the gateway passing through with recording off too (Convo-Record: off): what it adds without recording")
	spooled := flag.Bool("spool", false, "run the gateway passing through with its spool on too, \"passthrough (spool)\": what the spool costs while the store keeps up")
	rate := flag.Float64("rate", 0, "open loop: start `R` exchanges a second, the upstream pacing its stream so that as many as the level are in flight (0: closed loop)")
	flag.Parse()

	up := spawn(os.Args[0], "upstream", "")
	defer up.stop()
	start := starter(up, *before, *control, *unrecorded, *spooled)
	var modes []*proc
	if !*fresh {
		modes = start()
		defer func() { stopAll(modes) }()
	}
	fmt.Printf("GOMAXPROCS-visible CPUs: %s; requests per mode and level: %d; rounds: %d", cpus(), *requests, *rounds)
	if *rate > 0 {
		fmt.Printf("; open loop at %g exchanges/s, the upstream's stream lasting streams/rate", *rate)
	}
	fmt.Print("\n\n")
	fmt.Println("| streams | mode | TTFB p50 | TTFB p99 | total p50 | total p99 | TTFB p50 − reverse | total p50 − reverse | upstream's stream p50 | total p50 − reverse, upstream's time out | the same per round: median (least … most) | exchanges/s | proxy CPU / exchange | proxy RSS (peak) | failed |")
	fmt.Println("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, ls := range strings.Split(*levels, ",") {
		c, err := strconv.Atoi(ls)
		if err != nil {
			log.Fatal(err)
		}
		n := max(*requests, 8*c)
		run := func(m *proc) *result { return load(m, c, n) }
		if *rate > 0 {
			// Little's law: c streams in flight at rate exchanges a second
			// when each lasts c/rate.
			up.pace(time.Duration(float64(c) / *rate * float64(time.Second)))
			run = func(m *proc) *result { return loadOpen(m, *rate, n) }
		}
		res := map[string]*result{}
		var names []string
		for r := 0; r < *rounds; r++ {
			if *fresh {
				modes = start()
			}
			own := make([]time.Duration, len(modes))
			for _, i := range placeOrder(r, len(modes)) {
				m := modes[i]
				up.took() // another mode's, or none
				one := run(m)
				one.upstream = up.took()
				one.rss = m.rss()
				own[i] = one.own()
				res[m.name] = res[m.name].merge(one)
			}
			names = names[:0]
			for i, m := range modes {
				res[m.name].rounds = append(res[m.name].rounds, own[i]-own[0])
				names = append(names, m.name)
			}
			if *fresh {
				stopAll(modes)
			}
		}
		report(c, names, res)
	}
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
			fmt.Printf("| %d | %s | | | | | | | | | | | | %s | %d |\n", c, name, mib(r.rss), failed)
			continue
		}
		rs := slices.Sorted(slices.Values(r.rounds))
		fmt.Printf("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s (%s … %s) | %.0f | %s | %s | %d |\n", c, name,
			us(r.pct(r.ttfb, 50)), us(r.pct(r.ttfb, 99)), us(r.pct(r.total, 50)), us(r.pct(r.total, 99)),
			signed(r.pct(r.ttfb, 50)-base.pct(base.ttfb, 50)), signed(r.pct(r.total, 50)-base.pct(base.total, 50)),
			us(r.pct(r.upstream, 50)), signed(r.own()-base.own()), signed(rs[len(rs)/2]), signed(rs[0]), signed(rs[len(rs)-1]),
			float64(len(r.total))/r.wall.Seconds(), us(r.cpu/time.Duration(len(r.total))), mib(r.rss), failed)
	}
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

func us(d time.Duration) string { return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond)) }
func signed(d time.Duration) string {
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
	wall, cpu   time.Duration
	rss         int64 // the process's peak resident set, KiB (the most of the rounds)
}

func (r *result) merge(o *result) *result {
	if r == nil {
		return o
	}
	r.ttfb, r.total = append(r.ttfb, o.ttfb...), append(r.total, o.total...)
	r.upstream = append(r.upstream, o.upstream...)
	r.wall += o.wall
	r.cpu += o.cpu
	r.rss = max(r.rss, o.rss)
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
	client         *http.Client
	mu             sync.Mutex
	res            *result
}

func newTarget(m *proc, n int) (*target, func()) {
	tr := &http.Transport{MaxIdleConns: 2048, MaxIdleConnsPerHost: 2048, MaxConnsPerHost: 0}
	t := &target{m: m, client: &http.Client{Transport: tr}, url: "http://" + m.addr + "/v1/messages", body: anthropicRequest, hdr: "X-Api-Key",
		res: &result{ttfb: make([]time.Duration, 0, n), total: make([]time.Duration, 0, n)}}
	if strings.HasPrefix(m.name, "translate") {
		t.url, t.body, t.hdr = "http://"+m.addr+"/v1/chat/completions", chatRequest, "Authorization"
	}
	t.unrecorded = strings.HasSuffix(m.name, unrecordedLabel)
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
func load(m *proc, c, n int) *result {
	t, done := newTarget(m, n)
	defer done()
	jobs := make(chan struct{}, n)
	for i := 0; i < n; i++ {
		jobs <- struct{}{}
	}
	close(jobs)
	cpu0 := m.cpu()
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
	t.res.cpu = m.cpu() - cpu0
	return t.res
}

// loadOpen starts n exchanges through m at rate a second, evenly spaced,
// whether or not the earlier ones have ended (open loop): below saturation
// an exchange's time is the proxy's and the upstream's, not time spent
// waiting for the exchanges before it.
func loadOpen(m *proc, rate float64, n int) *result {
	t, done := newTarget(m, n)
	defer done()
	bufs := sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}
	every := time.Duration(float64(time.Second) / rate)
	cpu0 := m.cpu()
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
	t.res.cpu = m.cpu() - cpu0
	return t.res
}

const anthropicRequest = `{"model":"claude-bench","max_tokens":1024,"stream":true,"messages":[{"role":"user","content":"Weather in Paris?"}]}`
const chatRequest = `{"model":"claude-bench","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Weather in Paris?"}]}`

// modeSpec is how a mode's process starts: this program or the -before
// build, the mode, and the label its results carry.
type modeSpec struct{ bin, mode, label string }

// unrecordedLabel marks the pass-through mode whose client sends
// Convo-Record: off.
const unrecordedLabel = " (not recorded)"

// spoolLabel marks the pass-through mode whose gateway has a spool
// (gateway.Options.SpoolDir).
const spoolLabel = " (spool)"

// starter returns what starts the modes' processes, in front of up: this
// program's three modes, a second reverse proxy with control,
// pass-through unrecorded with unrecorded, and before's gateway modes when
// it is set.
func starter(up *proc, before string, control, unrecorded, spooled bool) func() []*proc {
	specs := []modeSpec{{os.Args[0], "reverse", ""}, {os.Args[0], "passthrough", ""}, {os.Args[0], "translate", ""}}
	if control {
		specs = append(specs, modeSpec{os.Args[0], "reverse", " (control)"})
	}
	if unrecorded {
		specs = append(specs, modeSpec{os.Args[0], "passthrough", unrecordedLabel})
	}
	if spooled {
		specs = append(specs, modeSpec{os.Args[0], "passthrough", spoolLabel})
	}
	if before != "" {
		specs = append(specs, modeSpec{before, "passthrough", " (before)"}, modeSpec{before, "translate", " (before)"})
	}
	return func() []*proc {
		modes := make([]*proc, len(specs))
		for i, sp := range specs {
			modes[i] = spawn(sp.bin, sp.mode, sp.label, up.addr)
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
	cmd        *exec.Cmd
}

// spawn starts bin serving mode, named mode+label in the results.
func spawn(bin, mode, label string, args ...string) *proc {
	cmd := exec.Command(bin, append([]string{"child", mode}, args...)...)
	cmd.Stderr = os.Stderr
	if label == spoolLabel {
		cmd.Env = append(os.Environ(), "GWBENCH_SPOOL=1")
	}
	if dir := os.Getenv("GWBENCH_PROFILE"); dir != "" && label != "" {
		// A labelled mode's profiles (another build's, the control's) go
		// apart, not over those of the mode it shares a name with.
		dir = filepath.Join(dir, strings.NewReplacer(" ", "", "(", "", ")", "").Replace(label))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			log.Fatal(err)
		}
		if cmd.Env == nil {
			cmd.Env = os.Environ()
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
	return &proc{name: mode + label, addr: strings.TrimSpace(line), cmd: cmd}
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

// child serves one mode and prints its address on stdout.
// spoolDir is the spool of a gateway mode's process: in dir when the
// process runs "passthrough (spool)", else none.
func spoolDir(dir string) string {
	if os.Getenv("GWBENCH_SPOOL") != "1" {
		return ""
	}
	return filepath.Join(dir, "spool")
}

func child(mode string, args []string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	var h http.Handler
	var gw *gateway.Gateway
	switch mode {
	case "upstream":
		data, err := os.ReadFile(filepath.Join("..", "provider", "anthropic", "testdata", "reply", "tool_use.sse"))
		if err != nil {
			log.Fatal(err)
		}
		h = upstream(data)
	case "reverse":
		h = reverseProxy(args[0])
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
		gw, err = gateway.New(gateway.Options{
			Config: gateway.Config{
				Upstreams: []gateway.Upstream{{Name: "a", Protocol: "anthropic", URL: "http://" + args[0]}},
				Routes:    []gateway.Route{{Model: "*", Upstream: "a"}},
			},
			Store:    st,
			Tokens:   map[string]string{"tok": "bench"},
			Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
			SpoolDir: spoolDir(dir),
		})
		if err != nil {
			log.Fatal(err)
		}
		h = gw
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
		fmt.Fprintf(os.Stderr, "%s: recorded %d, dropped %d, failed %d\n", mode, s.Recorded, s.Dropped, s.Failed)
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

// upstream replays data, event by event, flushed, as a provider streams.
// POST /pace?stream=D (from the load generator, not through a proxy) makes
// every stream after it last about D, its events evenly spaced; the first
// is sent at once. Event i is due at i·D/(events−1) after the first, not
// that long after the one before: a late wake-up (the machine is shared
// with the proxy under test) delays one event, not every event after it,
// as a remote provider's stream would not slow down with the proxy's
// machine. GET /took returns how long each stream took from its first
// write to its last, one count of nanoseconds a line, since the last GET.
func upstream(data []byte) http.Handler {
	events := bytes.SplitAfter(data, []byte("\n\n"))
	if len(events[len(events)-1]) == 0 {
		events = events[:len(events)-1]
	}
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
			gap.Store(int64(d) / int64(max(1, len(events)-1)))
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
		w.Header().Set("Content-Type", "text/event-stream")
		g := time.Duration(gap.Load())
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
