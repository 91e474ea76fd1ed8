package postgres_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/postgres"
	"github.com/convo-go/convo/store/storetest"
)

// The append-rate measurement (docs/gateway.md, "Many gateways on one
// PostgreSQL"): CONVO_RATE=1 runs it. It writes as gateway processes'
// recorders do — batches of new exchanges (a conversation created with a
// user message and the reply) — from 1, 2 and 4 processes at once, each
// with 4 writers, for CONVO_RATE_SECONDS (default 10) each, into an
// unpartitioned schema and a partitioned one (8 partitions), and logs
// exchanges recorded a second.
const (
	rateEnv      = "CONVO_RATE"
	rateChildEnv = "CONVO_RATE_CHILD" // dsn|seconds|process number
)

func TestAppendRate(t *testing.T) {
	if os.Getenv(rateChildEnv) != "" {
		rateChild(t)
		return
	}
	if os.Getenv(rateEnv) == "" {
		t.Skip("set " + rateEnv + "=1 to measure the append rate of 1, 2 and 4 processes")
	}
	secs := 10
	if v, err := strconv.Atoi(os.Getenv("CONVO_RATE_SECONDS")); err == nil && v > 0 {
		secs = v
	}
	// Interleaved, two rounds: the machine's other load moves between runs.
	for round := range 2 {
		for _, c := range []struct{ procs, parts int }{{1, 0}, {1, 8}, {2, 0}, {2, 8}, {4, 0}, {4, 8}} {
			procs, parts := c.procs, c.parts
			dsn := storetest.PostgresDSN(t)
			s, err := postgres.Options{Partitions: parts}.Open(t.Context(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			var cmds []*exec.Cmd
			var outs []*strings.Builder
			for p := range procs {
				cmd := exec.Command(os.Args[0], "-test.run=^TestAppendRate$", "-test.v")
				cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%d|%d", rateChildEnv, dsn, secs, p))
				out := &strings.Builder{}
				cmd.Stdout, cmd.Stderr = out, out
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				cmds, outs = append(cmds, cmd), append(outs, out)
			}
			total, cpu := 0, time.Duration(0)
			for i, cmd := range cmds {
				if err := cmd.Wait(); err != nil {
					t.Fatalf("process %d: %v\n%s", i, err, outs[i])
				}
				_, after, ok := strings.Cut(outs[i].String(), "RECORDED ")
				n, err := strconv.Atoi(strings.Fields(after + " x")[0])
				if !ok || err != nil {
					t.Fatalf("process %d said:\n%s", i, outs[i])
				}
				total += n
				cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			}
			load, _ := os.ReadFile("/proc/loadavg")
			t.Logf("round %d, partitions %d, %d processes: %d exchanges in %ds: %.0f/s; client CPU %.1fs; load %s",
				round+1, parts, procs, total, secs, float64(total)/float64(secs), cpu.Seconds(), strings.Fields(string(load) + " ?")[0])
		}
	}
}

// rateChild is one process of TestAppendRate: 4 writers, each writing
// batches of 8 new exchanges, for the given seconds; it prints how many
// were recorded.
func rateChild(t *testing.T) {
	f := strings.Split(os.Getenv(rateChildEnv), "|")
	secs, _ := strconv.Atoi(f[1])
	s, err := postgres.Open(context.Background(), f[0])
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	reply := convo.Assistant("The weather in Paris is sunny, 21 degrees, light wind from the west.")
	reply.Origin, reply.Usage = &convo.Origin{Model: "m"}, &convo.Usage{Input: 120, Output: 30}
	deadline := time.Now().Add(time.Duration(secs) * time.Second)
	var n atomic.Int64
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; time.Now().Before(deadline); i++ {
				ws := make([]store.Write, 8)
				for j := range ws {
					ws[j] = store.Write{Tenant: fmt.Sprintf("tenant-%d", (i*8+j+w)%32), Create: true,
						ID:       fmt.Sprintf("p%s-w%d-%d-%d", f[2], w, i, j),
						Messages: []convo.Message{convo.User("What is the weather in Paris today?"), reply}}
				}
				for j, r := range s.Batch(context.Background(), ws) {
					if r.Err != nil {
						t.Errorf("writes[%d]: %v", j, r.Err)
						return
					}
				}
				n.Add(int64(len(ws)))
			}
		})
	}
	wg.Wait()
	fmt.Printf("RECORDED %d\n", n.Load())
}
