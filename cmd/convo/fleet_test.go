package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/all"
	"github.com/convo-go/convo/store/postgres"
	"github.com/convo-go/convo/store/storetest"
)

// buildConvo builds the convo binary into the test's temporary directory
// and returns its path.
func buildConvo(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "convo")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// fleetProc is a convo process a fleet test started.
type fleetProc struct {
	cmd  *exec.Cmd
	addr string // host:port it listens on
}

// startConvo starts the convo binary bin with args (CONVO_TOKENS=tok=alice)
// and returns it once it listens.
func startConvo(t *testing.T, bin string, args ...string) *fleetProc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "CONVO_TOKENS=tok=alice")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if _, rest, ok := strings.Cut(sc.Text(), "listening on http://"); ok {
			go io.Copy(io.Discard, stderr)
			return &fleetProc{cmd: cmd, addr: strings.Fields(rest)[0]}
		}
	}
	t.Fatalf("convo %s ended before listening", strings.Join(args, " "))
	return nil
}

// stop ends the process with SIGTERM (a gateway writes what it holds
// first) and returns the CPU time it used.
func (p *fleetProc) stop(t *testing.T) time.Duration {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("convo on %s: %v", p.addr, err)
	}
	return p.cmd.ProcessState.UserTime() + p.cmd.ProcessState.SystemTime()
}

// anthropicUpstream is an Anthropic upstream that streams a recorded
// reply (its tool_use.sse) at once; it returns the reply's bytes too.
func anthropicUpstream(t *testing.T) (*httptest.Server, []byte) {
	t.Helper()
	sse, err := os.ReadFile("../../provider/anthropic/testdata/reply/tool_use.sse")
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(sse)
	}))
	t.Cleanup(up.Close)
	return up, sse
}

// startGateways starts n convo gateway processes on the store dsn, each
// with a spool of its own, in front of upstream url.
func startGateways(t *testing.T, bin string, n int, dsn, url string) []*fleetProc {
	gws := make([]*fleetProc, n)
	for i := range gws {
		// One at a time: the first applies the schema's migrations.
		gws[i] = startConvo(t, bin, "gateway", "--addr", "127.0.0.1:0", "--db", dsn, "--spool", t.TempDir(),
			"--upstream", "a=anthropic@"+url, "--route", "*=a")
	}
	return gws
}

// fleetBody is the streamed Anthropic request for h.
func fleetBody(h convo.History) ([]byte, error) {
	c, err := all.Lookup("anthropic")
	if err != nil {
		return nil, err
	}
	b, _, err := c.Encode(h, provider.Options{Repair: true})
	if err != nil {
		return nil, err
	}
	return append([]byte(`{"model":"claude-x","stream":true,`), b[1:]...), nil
}

// fleetExchange sends one streamed exchange through the gateway at addr
// and returns its conversation and message ids, or an error when the
// client did not get the whole reply.
func fleetExchange(client *http.Client, addr string, body, sse []byte) (conv, ids string, err error) {
	req, _ := http.NewRequest("POST", "http://"+addr+"/v1/messages", bytes.NewReader(body))
	req.Header.Set("X-Api-Key", "tok")
	resp, err := client.Do(req)
	if err != nil {
		return "", "", err
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || !bytes.Equal(got, sse) {
		return "", "", fmt.Errorf("status %d, %v: the client must get the whole reply", resp.StatusCode, err)
	}
	return resp.Header.Get("Convo-Conversation"), resp.Header.Get("Convo-Message-Ids"), nil
}

// TestFleetOnePostgres runs two convo gateway processes and two convo
// serve processes — the binary, built — on one PostgreSQL database (a
// fresh schema), sends exchanges through both gateways at once, a second
// turn of each through the gateway of its first, and stops the gateways:
// every exchange is recorded once, in its conversation, and the two
// servers' exports of the whole tenant (every conversation the list
// gives, exported) are the same bytes. CONVO_TEST_POSTGRES must be set.
func TestFleetOnePostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("builds convo and starts processes")
	}
	dsn := storetest.PostgresDSN(t)
	bin := buildConvo(t)
	up, sse := anthropicUpstream(t)
	gws := startGateways(t, bin, 2, dsn, up.URL)
	servers := []*fleetProc{
		startConvo(t, bin, "serve", "--addr", "127.0.0.1:0", "--db", dsn, "--ui=false"),
		startConvo(t, bin, "serve", "--addr", "127.0.0.1:0", "--db", dsn, "--ui=false"),
	}

	type sent struct{ conv, ids string }
	const streams, each = 8, 10
	var mu sync.Mutex
	var xs []sent
	var wg sync.WaitGroup
	codec, _ := all.Lookup("anthropic")
	reply, _, err := codec.ReadStream(bytes.NewReader(sse), provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var results []convo.Part
	for _, c := range reply.ToolCalls() {
		results = append(results, convo.ToolResult(c.ID, c.Name, "18"))
	}
	for s := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			gw := gws[s%len(gws)]
			for i := range each {
				h := convo.History{convo.User(fmt.Sprintf("stream %d question %d", s, i))}
				body, err := fleetBody(h)
				if err != nil {
					t.Error(err)
					return
				}
				conv, ids, err := fleetExchange(http.DefaultClient, gw.addr, body, sse)
				if err != nil {
					t.Error(err)
					return
				}
				// The next turn: the tool's result.
				h = append(h, reply, convo.ToolResults(results...))
				body, err = fleetBody(h)
				if err != nil {
					t.Error(err)
					return
				}
				conv2, ids2, err := fleetExchange(http.DefaultClient, gw.addr, body, sse)
				if err != nil {
					t.Error(err)
					return
				}
				if conv2 != conv {
					t.Errorf("the second turn of %s went to %s", conv, conv2)
					return
				}
				mu.Lock()
				xs = append(xs, sent{conv, ids + "," + ids2})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for _, gw := range gws {
		gw.stop(t)
	}

	// Every exchange once, in its conversation, as the client was told.
	st, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, x := range xs {
		h, _, err := st.Load(context.Background(), "alice", x.conv, 0)
		if err != nil {
			t.Fatalf("%s: %v", x.conv, err)
		}
		var ids []string
		for _, m := range h {
			ids = append(ids, m.ID)
		}
		if got := strings.Join(ids, ","); got != x.ids {
			t.Fatalf("%s holds %s, want %s (each once)", x.conv, got, x.ids)
		}
	}
	var exports [2][]byte
	for i, srv := range servers {
		ids := listVia(t, srv.addr)
		if len(ids) != len(xs) {
			t.Fatalf("serve %d lists %d conversations, want the %d exchanged", i, len(ids), len(xs))
		}
		for _, id := range ids {
			exports[i] = append(exports[i], getVia(t, srv.addr, "/convo/v1/conversations/"+id+"/export")...)
		}
	}
	if len(exports[0]) == 0 || !bytes.Equal(exports[0], exports[1]) {
		t.Fatalf("the two servers export otherwise: %d and %d bytes", len(exports[0]), len(exports[1]))
	}
	for _, srv := range servers {
		srv.stop(t)
	}
}

// getVia returns the body of GET path from the server at addr, as alice.
func getVia(t *testing.T, addr, path string) []byte {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+addr+path, nil)
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v %s", path, resp.StatusCode, err, body)
	}
	return body
}

// listVia returns the ids of every conversation the server at addr lists,
// a page of 7 at a time.
func listVia(t *testing.T, addr string) []string {
	t.Helper()
	var ids []string
	for after := ""; ; {
		var page struct {
			Conversations []struct{ ID string } `json:"conversations"`
			Next          string                `json:"next"`
		}
		if err := json.Unmarshal(getVia(t, addr, "/convo/v1/conversations?limit=7&after="+after), &page); err != nil {
			t.Fatal(err)
		}
		for _, c := range page.Conversations {
			ids = append(ids, c.ID)
		}
		if after = page.Next; after == "" {
			return ids
		}
	}
}

// recordedBy returns what the gateway at addr's /metrics says it wrote to
// the store and dropped.
func recordedBy(t *testing.T, addr string) (written, dropped int64) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		for outcome, n := range map[string]*int64{"written": &written, "dropped": &dropped} {
			if v, ok := strings.CutPrefix(sc.Text(), `convo_gateway_recordings_total{outcome="`+outcome+`"} `); ok {
				f, _ := strconv.ParseFloat(v, 64)
				*n = int64(f)
			}
		}
	}
	return written, dropped
}

// TestFleetAppendRate measures the exchanges recorded a second by 1, 2 and
// 4 convo gateway processes (the binary, built) on one PostgreSQL
// database, each a fresh schema: 16 closed-loop client streams over HTTP
// in all, spread over the gateways, to an upstream that streams a
// recorded reply at once, for CONVO_FLEET_RATE_SECONDS (default 10) after
// a second's warm-up; two rounds, interleaved. It logs the rate from the
// gateways' /metrics (written to the store), the rate answered, and the
// gateways' CPU time. CONVO_FLEET_RATE=1 runs it (docs/gateway.md, "Many
// gateways on one PostgreSQL").
func TestFleetAppendRate(t *testing.T) {
	if os.Getenv("CONVO_FLEET_RATE") == "" {
		t.Skip("set CONVO_FLEET_RATE=1 to measure the append rate of 1, 2 and 4 gateway processes")
	}
	if os.Getenv(storetest.PostgresEnv) == "" {
		t.Skip("set " + storetest.PostgresEnv + " too: the gateways share a PostgreSQL")
	}
	secs := 10
	if v, err := strconv.Atoi(os.Getenv("CONVO_FLEET_RATE_SECONDS")); err == nil && v > 0 {
		secs = v
	}
	bin := buildConvo(t)
	up, sse := anthropicUpstream(t)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	for round := range 2 {
		for _, n := range []int{1, 2, 4} {
			dsn := storetest.PostgresDSN(t)
			gws := startGateways(t, bin, n, dsn, up.URL)
			var stop atomic.Bool
			var answered, failed atomic.Int64
			var wg sync.WaitGroup
			for s := range 16 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; !stop.Load(); i++ {
						body := fmt.Sprintf(`{"model":"claude-x","stream":true,"max_tokens":10,"messages":[{"role":"user","content":"stream %d question %d"}]}`, s, i)
						if _, _, err := fleetExchange(client, gws[s%n].addr, []byte(body), sse); err != nil {
							failed.Add(1)
							continue
						}
						answered.Add(1)
					}
				}()
			}
			time.Sleep(time.Second)
			sum := func() (w, d int64) {
				for _, gw := range gws {
					wi, di := recordedBy(t, gw.addr)
					w, d = w+wi, d+di
				}
				return w, d
			}
			w0, _ := sum()
			a0, start := answered.Load(), time.Now()
			time.Sleep(time.Duration(secs) * time.Second)
			w1, dropped := sum()
			a1, elapsed := answered.Load(), time.Since(start)
			stop.Store(true)
			wg.Wait()
			var cpu time.Duration
			for _, gw := range gws {
				cpu += gw.stop(t)
			}
			load := []byte("?")
			if b, err := os.ReadFile("/proc/loadavg"); err == nil && len(bytes.Fields(b)) > 0 {
				load = bytes.Fields(b)[0]
			}
			t.Logf("round %d, %d gateway(s): %.0f exchanges recorded/s, %.0f answered/s (%d dropped, %d failed); gateways' CPU %.2fs over the run and the drain; load %s",
				round, n, float64(w1-w0)/elapsed.Seconds(), float64(a1-a0)/elapsed.Seconds(), dropped, failed.Load(), cpu.Seconds(), load)
		}
	}
}
