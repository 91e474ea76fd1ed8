package gateway_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/convo-go/convo/gateway"
	"github.com/convo-go/convo/store/postgres"
)

// privatePostgres is a PostgreSQL server of the test's own, in a temporary
// directory on a port of its own: one the test may stop. It never touches
// another server.
type privatePostgres struct {
	bin, data, port string
	cred            *syscall.Credential // run as this user when the test runs as root (postgres refuses root)
}

// startPrivatePostgres makes and starts a private server, or skips the test
// when PostgreSQL's binaries are absent.
func startPrivatePostgres(t *testing.T) *privatePostgres {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(bins) == 0 {
		t.Skip("no PostgreSQL binaries in /usr/lib/postgresql/*/bin")
	}
	pg := &privatePostgres{bin: filepath.Dir(bins[len(bins)-1]), data: filepath.Join(t.TempDir(), "pg")}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pg.port = strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	if os.Getuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Skip("running as root without a postgres user to run the server as")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		pg.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		os.MkdirAll(pg.data, 0o700)
		for d := pg.data; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
			os.Chown(d, uid, gid)
		}
	}
	pg.run(t, "initdb", "-D", pg.data, "-U", "root", "--auth=trust", "-E", "UTF8", "--no-sync")
	pg.start(t)
	t.Cleanup(func() { pg.ctl("stop", "-m", "immediate") })
	return pg
}

func (pg *privatePostgres) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(pg.bin, name), args...)
	if pg.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: pg.cred}
	}
	return cmd
}

func (pg *privatePostgres) run(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := pg.command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", name, err, out)
	}
}

func (pg *privatePostgres) ctl(args ...string) error {
	args = append(args, "-D", pg.data, "-w")
	return pg.command("pg_ctl", args...).Run()
}

func (pg *privatePostgres) start(t *testing.T) {
	t.Helper()
	opts := fmt.Sprintf("-p %s -k %s -c listen_addresses=127.0.0.1 -c fsync=off", pg.port, pg.data)
	pg.run(t, "pg_ctl", "start", "-D", pg.data, "-w", "-l", filepath.Join(pg.data, "log"), "-o", opts)
}

func (pg *privatePostgres) dsn() string {
	return "postgres://root@127.0.0.1:" + pg.port + "/postgres?sslmode=disable"
}

// TestSpoolPostgresOutage: a private PostgreSQL server stopped for a few
// seconds under 16 streams, then started again: every exchange answered is
// recorded once. (docs/gateway.md reports a longer run: CONVO_OUTAGE=60s
// CONVO_OUTAGE_STREAMS=64.)
func TestSpoolPostgresOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	outage := 5 * time.Second
	if d, err := time.ParseDuration(os.Getenv("CONVO_OUTAGE")); err == nil {
		outage = d
	}
	streams := 16
	if n, err := strconv.Atoi(os.Getenv("CONVO_OUTAGE_STREAMS")); err == nil {
		streams = n
	}
	pg := startPrivatePostgres(t)
	st, err := postgres.Open(context.Background(), pg.dsn())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rg := newRig(t, "anthropic", func(o *gateway.Options) {
		o.Store, o.SpoolDir = st, t.TempDir()
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	})
	var mu sync.Mutex
	var xs []answered
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for s := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				x, err := rg.try(t, s*1_000_000+i)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				xs = append(xs, x)
				mu.Unlock()
			}
		}()
	}
	time.Sleep(time.Second)
	if err := pg.ctl("stop", "-m", "fast"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(outage)
	pg.start(t)
	time.Sleep(time.Second)
	close(stop)
	wg.Wait()
	rg.st = st
	waitFor(t, "every exchange recorded", func() bool { return rg.gw.Stats().Recorded == int64(len(xs)) })
	checkRecorded(t, st, xs)
	s := rg.gw.Stats()
	if s.Dropped != 0 || s.Failed != 0 || s.Spooled == 0 {
		t.Fatalf("stats %+v: want some spooled, none dropped or failed", s)
	}
	t.Logf("%d exchanges of %d streams over a %v outage: %+v", len(xs), streams, outage, s)
	rg.drain(t)
}
