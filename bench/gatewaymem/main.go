// Command gatewaymem measures what a large streamed reply costs the
// resident memory of convo gateway: the real `convo gateway` binary, a
// fresh process per run, recording to SQLite with its spool on (as by
// default), in front of a fake upstream that streams a reply of -size
// bytes in many SSE events. For each mode and level (streams at once) it
// reads the gateway's /proc/PID/status: VmRSS before the exchanges,
// VmHWM (the peak) once they are answered, and VmRSS after -idle seconds
// with nothing to do.
//
// Modes:
//   - chat: an OpenAI Chat client to an OpenAI Chat upstream, passed through;
//   - anthropic: an Anthropic client to an Anthropic upstream, passed through;
//   - chat→anthropic: an OpenAI Chat client to an Anthropic upstream, translated;
//   - anthropic→chat: an Anthropic client to an OpenAI Chat upstream, translated.
//
// Usage: go run ./gatewaymem [-convo BIN] [-size 40MB] [-levels 1,2] [-idle 10s] [-modes …]
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	bin := flag.String("convo", "", "the convo binary to measure (default: built from ../cmd/convo)")
	size := flag.Int("size", 40<<20, "bytes of each streamed reply, as the upstream sends them")
	chunk := flag.Int("chunk", 1024, "bytes of text in each SSE event")
	levelsFlag := flag.String("levels", "1,2", "streams at once, comma-separated")
	modesFlag := flag.String("modes", "chat,anthropic,chat→anthropic,anthropic→chat", "modes, comma-separated")
	idle := flag.Duration("idle", 10*time.Second, "how long the gateway idles before its RSS is read again")
	flag.Parse()
	if *bin == "" {
		*bin = build()
	}
	up := startUpstream(*size, *chunk)
	fmt.Printf("reply: %d bytes a stream (%d bytes of text an event); gateway %s; idle %s\n\n", *size, *chunk, *bin, *idle)
	fmt.Println("| mode | streams | bytes in flight | RSS before | peak RSS (VmHWM) | peak − before | (peak − before) / bytes | RSS after idle | recorded |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, mode := range strings.Split(*modesFlag, ",") {
		for _, l := range strings.Split(*levelsFlag, ",") {
			n, err := strconv.Atoi(l)
			if err != nil {
				log.Fatalf("-levels: %v", err)
			}
			r := run(*bin, up, mode, n, *idle)
			inFlight := int64(n) * int64(*size)
			fmt.Printf("| %s | %d | %s | %s | %s | %s | %.2f | %s | %s |\n", mode, n, mib(inFlight), mib(r.before), mib(r.peak),
				mib(r.peak-r.before), float64(r.peak-r.before)/float64(inFlight), mib(r.after), r.recorded)
		}
	}
}

func mib(n int64) string { return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20)) }

// build builds convo from the repository this program is in.
func build() string {
	dir, err := os.MkdirTemp("", "gatewaymem")
	if err != nil {
		log.Fatal(err)
	}
	bin := filepath.Join(dir, "convo")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/convo")
	cmd.Dir = ".."
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		log.Fatalf("building convo: %v", err)
	}
	return bin
}

type result struct {
	before, peak, after int64
	recorded            string
}

// run starts a gateway, sends it n streamed exchanges at once in mode,
// reads them whole, and reads its memory.
func run(bin, up, mode string, n int, idle time.Duration) result {
	dir, err := os.MkdirTemp("", "gatewaymem")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	addr := freeAddr()
	cmd := exec.Command(bin, "gateway", "--addr", addr, "--db", filepath.Join(dir, "gw.db"),
		"--upstream", "oa=openai-chat@http://"+up+"/v1", "--upstream", "an=anthropic@http://"+up,
		"--route", "gpt-*=oa", "--route", "claude-*=an")
	cmd.Stdout, cmd.Stderr = io.Discard, os.Stderr
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}()
	waitReady(addr)
	time.Sleep(time.Second) // settled after start
	var r result
	r.before, _ = status(cmd.Process.Pid)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = exchange(addr, mode)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			log.Fatalf("%s: %v", mode, err)
		}
	}
	r.recorded = waitRecorded(addr, n)
	time.Sleep(idle)
	r.after, r.peak = status(cmd.Process.Pid)
	return r
}

// exchange sends one streamed request in mode and reads the reply whole.
func exchange(addr, mode string) error {
	var path, body string
	switch mode {
	case "chat":
		path, body = "/v1/chat/completions", `{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"write a long story"}]}`
	case "anthropic":
		path, body = "/v1/messages", `{"model":"claude-sonnet-4-5","max_tokens":64000,"stream":true,"messages":[{"role":"user","content":"write a long story"}]}`
	case "chat→anthropic":
		path, body = "/v1/chat/completions", `{"model":"claude-sonnet-4-5","stream":true,"messages":[{"role":"user","content":"write a long story"}]}`
	case "anthropic→chat":
		path, body = "/v1/messages", `{"model":"gpt-4o","max_tokens":64000,"stream":true,"messages":[{"role":"user","content":"write a long story"}]}`
	default:
		return fmt.Errorf("unknown mode %q", mode)
	}
	resp, err := http.Post("http://"+addr+path, "application/json", strings.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s after %d bytes", resp.Status, n)
	}
	return nil
}

// waitRecorded waits until the gateway's metrics count n recordings
// (written to the store or the spool, dropped or failed), and returns
// how many were written of them.
func waitRecorded(addr string, n int) string {
	deadline := time.Now().Add(2 * time.Minute)
	var got string
	for time.Now().Before(deadline) {
		all := metric(addr, "convo_gateway_recordings_total")
		got = metric(addr, `convo_gateway_recordings_total{outcome="written"}`) + " of " + all
		if v, _ := strconv.ParseFloat(all, 64); v >= float64(n) {
			return got
		}
		time.Sleep(100 * time.Millisecond)
	}
	return got + " (timed out)"
}

// metric returns the value of the metric name from the gateway's /metrics,
// summed over its labels.
func metric(addr, name string) string {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return "?"
	}
	defer resp.Body.Close()
	var sum float64
	found := false
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) {
			continue
		}
		f := strings.Fields(line)
		if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
			sum, found = sum+v, true
		}
	}
	if !found {
		return "?"
	}
	return strconv.FormatFloat(sum, 'f', -1, 64)
}

// status returns the process's VmRSS and VmHWM in bytes.
func status(pid int) (rss, hwm int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		log.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = kb << 10
		case "VmHWM:":
			hwm = kb << 10
		}
	}
	return rss, hwm
}

func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func waitReady(addr string) {
	for range 200 {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	log.Fatalf("the gateway at %s did not start", addr)
}

// startUpstream serves, in this process, a fake OpenAI Chat upstream
// (/v1/chat/completions) and Anthropic upstream (/v1/messages), each
// streaming a reply of about size bytes, text of chunk bytes an event.
func startUpstream(size, chunk int) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	chat, anth := ChatStream(size, chunk), AnthropicStream(size, chunk)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		data := anth
		if strings.HasSuffix(r.URL.Path, "/chat/completions") {
			data = chat
		}
		w.Header().Set("Content-Type", "text/event-stream")
		// Event by event, as a provider streams, 64 KiB a write.
		for len(data) > 0 {
			n := min(len(data), 64<<10)
			if _, err := w.Write(data[:n]); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			data = data[n:]
		}
	})}
	go func() { _ = srv.Serve(ln) }()
	return ln.Addr().String()
}

// text returns n bytes of prose without characters JSON escapes.
func text(n, seed int) string {
	const words = "the quick brown fox jumps over a lazy dog while seven wizards quietly hex jovial boxers "
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(words[(seed*7)%len(words):])
		b.WriteString(words)
	}
	return b.String()[:n]
}

// ChatStream is an OpenAI Chat completion stream of about size bytes.
func ChatStream(size, chunk int) []byte {
	var b bytes.Buffer
	b.WriteString(`data: {"id":"chatcmpl-big","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}` + "\n\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, `data: {"id":"chatcmpl-big","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":%q},"finish_reason":null}]}`+"\n\n", text(chunk, i))
	}
	b.WriteString(`data: {"id":"chatcmpl-big","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n")
	b.WriteString(`data: {"id":"chatcmpl-big","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":10000000,"total_tokens":10000012}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// AnthropicStream is an Anthropic Messages stream of about size bytes.
func AnthropicStream(size, chunk int) []byte {
	var b bytes.Buffer
	b.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_big\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":12,\"output_tokens\":1}}}\n\n")
	b.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":%q}}\n\n", text(chunk, i))
	}
	b.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
	b.WriteString("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":10000000}}\n\n")
	b.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	return b.Bytes()
}
