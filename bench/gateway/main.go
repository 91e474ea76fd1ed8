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
// With GWBENCH_PROFILE=DIR in the environment, each proxy writes its CPU
// profile to DIR/MODE.cpu and its allocation profile to DIR/MODE.heap
// when it ends.
//
// Usage: go run ./gateway [-levels 1,64,512] [-requests N] [-rounds R] [-before BIN]
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
	"sort"
	"strconv"
	"strings"
	"sync"
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
	flag.Parse()

	up := spawn(os.Args[0], "upstream", "")
	defer up.stop()
	modes := []*proc{spawn(os.Args[0], "reverse", "", up.addr), spawn(os.Args[0], "passthrough", "", up.addr), spawn(os.Args[0], "translate", "", up.addr)}
	if *before != "" {
		modes = append(modes, spawn(*before, "passthrough", " (before)", up.addr), spawn(*before, "translate", " (before)", up.addr))
	}
	defer func() {
		for _, m := range modes {
			m.stop()
		}
	}()
	fmt.Printf("GOMAXPROCS-visible CPUs: %s; requests per mode and level: %d; rounds: %d\n\n", cpus(), *requests, *rounds)
	fmt.Println("| streams | mode | TTFB p50 | TTFB p99 | total p50 | total p99 | exchanges/s | proxy CPU / exchange | proxy RSS (peak) | failed |")
	fmt.Println("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, ls := range strings.Split(*levels, ",") {
		c, err := strconv.Atoi(ls)
		if err != nil {
			log.Fatal(err)
		}
		n := max(*requests, 8*c)
		res := map[string]*result{}
		for r := 0; r < *rounds; r++ {
			for _, m := range modes {
				res[m.name] = res[m.name].merge(load(m, c, n))
			}
		}
		for _, m := range modes {
			r := res[m.name]
			failMu.Lock()
			failed := failures[m.name]
			delete(failures, m.name)
			failMu.Unlock()
			fmt.Printf("| %d | %s | %s | %s | %s | %s | %.0f | %s | %s | %d |\n", c, m.name,
				us(r.pct(r.ttfb, 50)), us(r.pct(r.ttfb, 99)), us(r.pct(r.total, 50)), us(r.pct(r.total, 99)),
				float64(len(r.total))/r.wall.Seconds(), us(r.cpu/time.Duration(len(r.total))), mib(m.rss()), failed)
		}
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
func mib(kb int64) string       { return fmt.Sprintf("%.1f MiB", float64(kb)/1024) }

func cpus() string {
	b, _ := exec.Command("nproc").Output()
	return strings.TrimSpace(string(b))
}

// result holds one mode's measurements at one level.
type result struct {
	ttfb, total []time.Duration
	wall, cpu   time.Duration
}

func (r *result) merge(o *result) *result {
	if r == nil {
		return o
	}
	r.ttfb, r.total = append(r.ttfb, o.ttfb...), append(r.total, o.total...)
	r.wall += o.wall
	r.cpu += o.cpu
	return r
}

func (r *result) pct(ds []time.Duration, p int) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, len(s)*p/100)]
}

// load runs n exchanges through m with c concurrent clients.
func load(m *proc, c, n int) *result {
	tr := &http.Transport{MaxIdleConns: 2048, MaxIdleConnsPerHost: 2048, MaxConnsPerHost: 0}
	client := &http.Client{Transport: tr}
	defer tr.CloseIdleConnections()
	url, body, hdr := "http://"+m.addr+"/v1/messages", anthropicRequest, "X-Api-Key"
	if strings.HasPrefix(m.name, "translate") {
		url, body, hdr = "http://"+m.addr+"/v1/chat/completions", chatRequest, "Authorization"
	}
	res := &result{ttfb: make([]time.Duration, 0, n), total: make([]time.Duration, 0, n)}
	var mu sync.Mutex
	jobs := make(chan struct{}, n)
	for i := 0; i < n; i++ {
		jobs <- struct{}{}
	}
	close(jobs)
	cpu0 := m.cpu()
	start := time.Now()
	var wg sync.WaitGroup
	buf := make([][]byte, c)
	for w := 0; w < c; w++ {
		buf[w] = make([]byte, 32<<10)
		wg.Add(1)
		go func(buf []byte) {
			defer wg.Done()
			for range jobs {
				req, _ := http.NewRequest("POST", url, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				if hdr == "Authorization" {
					req.Header.Set(hdr, "Bearer tok")
				} else {
					req.Header.Set(hdr, "tok")
				}
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					fail(m.name, err)
					continue
				}
				k, err := resp.Body.Read(buf[:1])
				t1 := time.Now()
				if k == 0 || (err != nil && err != io.EOF) || resp.StatusCode != 200 {
					fail(m.name, fmt.Errorf("first byte: %v (status %d)", err, resp.StatusCode))
					resp.Body.Close()
					continue
				}
				_, err = io.CopyBuffer(io.Discard, resp.Body, buf)
				resp.Body.Close()
				t2 := time.Now()
				if err != nil {
					fail(m.name, err)
					continue
				}
				mu.Lock()
				res.ttfb = append(res.ttfb, t1.Sub(t0))
				res.total = append(res.total, t2.Sub(t0))
				mu.Unlock()
			}
		}(buf[w])
	}
	wg.Wait()
	res.wall = time.Since(start)
	res.cpu = m.cpu() - cpu0
	return res
}

const anthropicRequest = `{"model":"claude-bench","max_tokens":1024,"stream":true,"messages":[{"role":"user","content":"Weather in Paris?"}]}`
const chatRequest = `{"model":"claude-bench","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Weather in Paris?"}]}`

// proc is a child process serving one mode.
type proc struct {
	name, addr string
	cmd        *exec.Cmd
}

// spawn starts bin serving mode, named mode+label in the results.
func spawn(bin, mode, label string, args ...string) *proc {
	cmd := exec.Command(bin, append([]string{"child", mode}, args...)...)
	cmd.Stderr = os.Stderr
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
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			// Event by event, flushed, as a provider streams.
			for _, ev := range bytes.SplitAfter(data, []byte("\n\n")) {
				_, _ = w.Write(ev)
				w.(http.Flusher).Flush()
			}
		})
	case "reverse":
		u, _ := url.Parse("http://" + args[0])
		rp := httputil.NewSingleHostReverseProxy(u)
		rp.FlushInterval = -1
		h = rp
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
			Store:  st,
			Tokens: map[string]string{"tok": "bench"},
			Client: &http.Client{Transport: pooled()},
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
		if err != nil {
			log.Fatal(err)
		}
		h = gw
	default:
		log.Fatalf("unknown mode %q", mode)
	}
	if mode == "reverse" {
		// The reverse proxy gets the same pooled transport as the gateway.
		h.(*httputil.ReverseProxy).Transport = pooled()
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

func signalNotify(c chan os.Signal) { signal.Notify(c, os.Interrupt, syscall.SIGTERM) }

// pooled is the upstream transport of both proxies: the default one, with
// room for every concurrent stream's idle connection.
func pooled() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns, t.MaxIdleConnsPerHost = 2048, 2048
	return t
}
