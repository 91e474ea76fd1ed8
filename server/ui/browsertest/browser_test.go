// Package browsertest drives the viewer in a real browser: Chromium from
// the system's packages, through the DevTools protocol (chromedp). It is a
// module of its own so that the library's go.mod does not carry chromedp.
//
// Without Chromium the tests skip, saying so, except under CI=true, where
// they fail: .ci/run installs Chromium when it is missing. Run with
// -update-screenshots to rewrite the screenshots under docs/.
package browsertest

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider/all"
	"github.com/convo-go/convo/server"
	"github.com/convo-go/convo/server/ui/internal/fixture"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/sqlite"
)

var updateScreenshots = flag.Bool("update-screenshots", false, "write the screenshots under docs/")

// chromium finds the browser: $CONVO_CHROMIUM, else chromium or
// chromium-browser on the PATH.
func chromium(t *testing.T) string {
	if p := os.Getenv("CONVO_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "Chromium not found: install it (apt-get install -y chromium) or set CONVO_CHROMIUM to run the browser tests"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// console collects what the page reports as errors.
type console struct {
	mu   sync.Mutex
	errs []string
}

func (c *console) add(s string) {
	c.mu.Lock()
	c.errs = append(c.errs, s)
	c.mu.Unlock()
}

func (c *console) check(t *testing.T, step string) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.errs {
		t.Errorf("%s: the browser reported: %s", step, e)
	}
	c.errs = nil
}

// browse starts Chromium with a new profile and returns a tab whose
// console errors, exceptions and log errors go to the returned console.
func browse(t *testing.T) (context.Context, *console) {
	exe := chromium(t)
	// Not t.TempDir: Chromium's helper processes can still be writing to
	// the profile for a moment after the browser exits, which fails the
	// test in TempDir's cleanup.
	profile, err := os.MkdirTemp("", "convo-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 1000),
		// A loaded 2-core machine can take longer than chromedp's 20 s
		// default to bring Chromium up.
		chromedp.WSURLReadTimeout(90 * time.Second),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() {
		cancelT()
		cancelC()
		cancelA()
		for i := 0; os.RemoveAll(profile) != nil && i < 50; i++ {
			time.Sleep(100 * time.Millisecond)
		}
	})
	c := &console{}
	chromedp.ListenTarget(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError || ev.Type == runtime.APITypeAssert {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				c.add("console." + string(ev.Type) + ": " + strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			c.add("exception: " + ev.ExceptionDetails.Text + " " + exceptionText(ev.ExceptionDetails))
		case *cdplog.EventEntryAdded:
			if ev.Entry.Level == cdplog.LevelError || ev.Entry.Level == cdplog.LevelWarning {
				c.add(string(ev.Entry.Source) + " " + string(ev.Entry.Level) + ": " + ev.Entry.Text + " " + ev.Entry.URL)
			}
		}
	})
	if err := chromedp.Run(ctx, cdplog.Enable(), runtime.Enable()); err != nil {
		t.Fatalf("starting %s: %v", exe, err)
	}
	return ctx, c
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d.Exception != nil {
		return d.Exception.Description
	}
	return ""
}

// site is a server with the viewer and the test's conversations.
type site struct {
	*httptest.Server
	st store.Store
}

const token = "tok-browser-test"

func newSite(t *testing.T) *site {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "ui.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	create := func(id, title string, h convo.History) {
		if _, err := st.Create(context.Background(), store.Conversation{Tenant: "demo", ID: id, Title: title}, h...); err != nil {
			t.Fatal(err)
		}
	}
	create("hostile", fixture.HostileTitle, fixture.Hostile())
	titles := []string{"Refactoring the billing service", "Why is the build slow?", "Translate the release notes",
		"SQL for the monthly report", "Name ideas for the CLI", "Explain this stack trace"}
	for i, title := range titles {
		h := fixture.Long(6 + 9*i)
		h[0] = convo.User(title + "? Here is what I have so far.")
		create("", title, h)
	}
	create("long", "A long conversation", fixture.Long(130))
	create("every", "A weekend in Lyon", fixture.Every())
	h, err := server.New(st, server.Options{Tokens: map[string]string{token: "demo"}, UI: true, Formats: all.Formats(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	s := &site{Server: httptest.NewServer(h), st: st}
	t.Cleanup(s.Close)
	return s
}

// safe checks that no hostile content ran: the marker global is unset and
// the title is the page's own.
func safe(t *testing.T, ctx context.Context, step string) {
	t.Helper()
	var marker bool
	var title string
	err := chromedp.Run(ctx,
		chromedp.Evaluate(`typeof window.`+fixture.Marker+` !== "undefined"`, &marker),
		chromedp.Title(&title))
	if err != nil {
		t.Fatalf("%s: %v", step, err)
	}
	if marker || strings.Contains(title, fixture.Title) || !strings.HasSuffix(title, " · convo") {
		t.Fatalf("%s: hostile content ran (marker set: %v, title %q)", step, marker, title)
	}
}

func screenshot(t *testing.T, ctx context.Context, name string, height int64) {
	if !*updateScreenshots {
		return
	}
	var png []byte
	if err := chromedp.Run(ctx, chromedp.EmulateViewport(1280, height), chromedp.Evaluate(`window.scrollTo(0, 0)`, nil),
		chromedp.Sleep(200*time.Millisecond), chromedp.CaptureScreenshot(&png), chromedp.EmulateViewport(1280, 1000)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("..", "..", "..", "docs", name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestViewer(t *testing.T) {
	s := newSite(t)
	ctx, cons := browse(t)
	downloads := t.TempDir()

	// Sign in: the list follows.
	var cards int
	err := chromedp.Run(ctx,
		browser.SetDownloadBehavior(browser.SetDownloadBehaviorBehaviorAllowAndName).WithDownloadPath(downloads).WithEventsEnabled(true),
		chromedp.Navigate(s.URL+"/ui/"),
		chromedp.WaitVisible(`#token`, chromedp.ByQuery),
		chromedp.SendKeys(`#token`, token, chromedp.ByQuery),
		chromedp.Submit(`form.signin`, chromedp.ByQuery),
		chromedp.WaitVisible(`ol.convs .card`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll("ol.convs .card").length`, &cards),
	)
	if err != nil {
		t.Fatalf("sign-in and list: %v", err)
	}
	if cards != 9 {
		t.Fatalf("the list shows %d conversations, want 9", cards)
	}
	safe(t, ctx, "list")
	screenshot(t, ctx, "viewer-list.png", 1000)
	cons.check(t, "list")

	// The usage page, drawn on the server, breaks no policy.
	var heading string
	if err := chromedp.Run(ctx,
		chromedp.Navigate(s.URL+"/ui/usage?days=366"),
		chromedp.WaitVisible(`.usage-page h1`, chromedp.ByQuery),
		chromedp.Text(`.usage-page h1`, &heading, chromedp.ByQuery),
	); err != nil || heading != "Usage" {
		t.Fatalf("usage page: %q %v", heading, err)
	}
	safe(t, ctx, "usage")
	cons.check(t, "usage")
	if err := chromedp.Run(ctx, chromedp.Navigate(s.URL+"/ui/")); err != nil {
		t.Fatal(err)
	}

	// Search, and follow a result to its message.
	var marks int
	var loc string
	err = chromedp.Run(ctx,
		chromedp.SendKeys(`input[name=q]`, "museums\n", chromedp.ByQuery),
		chromedp.WaitVisible(`ol.hits mark`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll("ol.hits mark").length`, &marks),
		chromedp.Click(`ol.hits a.hit`, chromedp.ByQuery),
		chromedp.WaitVisible(`#m-8`, chromedp.ByQuery),
		chromedp.Location(&loc),
	)
	if err != nil {
		t.Fatalf("search: %v", err)
	}
	if marks == 0 || !strings.HasSuffix(loc, "#m-8") {
		t.Fatalf("search: %d highlights, landed on %s", marks, loc)
	}
	cons.check(t, "search")

	// The conversation with every part type; reasoning opens.
	var parts map[string]int
	var open bool
	var thought string
	err = chromedp.Run(ctx,
		chromedp.Navigate(s.URL+"/ui/c/every"),
		chromedp.WaitVisible(`#m-9`, chromedp.ByQuery),
		chromedp.Evaluate(`(() => { const n = (q) => document.querySelectorAll(q).length; return {
			reasoning: n("details.reasoning"), signed: n(".badge.sig"), encrypted: n(".badge.enc"), calls: n(".tool details.call"),
			results: n("details.result"), failed: n("details.result.failed"), images: n("figure.media img"), audio: n("figure.media audio"),
			tables: n(".md table"), code: n(".md code.language-go"), summary: n(".compaction"), errors: n(".msg.role-error"),
			turn: n(".msg.turn-scoped"), refusal: n(".refusal"), usage: n(".msg-foot .usage"), json: n("pre.json"), cites: n("ol.cites li"),
			imagesLoaded: Array.from(document.querySelectorAll("figure.media img")).filter((i) => i.complete && i.naturalWidth > 0).length,
		}; })()`, &parts),
		chromedp.Click(`#m-3 details.reasoning > summary`, chromedp.ByQuery),
		chromedp.WaitVisible(`#m-3 details.reasoning .thought`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector("#m-3 details.reasoning").open`, &open),
		chromedp.Text(`#m-3 details.reasoning .thought`, &thought, chromedp.ByQuery),
	)
	if err != nil {
		t.Fatalf("conversation: %v", err)
	}
	for k, min := range map[string]int{"reasoning": 3, "signed": 1, "encrypted": 1, "calls": 2, "results": 2, "failed": 1,
		"images": 1, "imagesLoaded": 1, "audio": 1, "tables": 1, "code": 1, "summary": 1, "errors": 1, "turn": 1,
		"refusal": 1, "usage": 2, "json": 3, "cites": 3} {
		if parts[k] < min {
			t.Errorf("conversation: %d %s, want at least %d (%v)", parts[k], k, min, parts)
		}
	}
	if !open || !strings.Contains(thought, "check the weather") {
		t.Fatalf("reasoning did not open: %v %q", open, thought)
	}
	safe(t, ctx, "conversation")
	screenshot(t, ctx, "viewer-conversation.png", 2000)
	if *updateScreenshots {
		// The answer whose last paragraph lists its sources.
		var png []byte
		if err := chromedp.Run(ctx,
			// Scrolled as a link to the message scrolls (scroll-margin-top
			// keeps it below the sticky bar), so the bar does not cover it.
			chromedp.Evaluate(`document.querySelector("#m-5").scrollIntoView({block: "start"})`, nil),
			chromedp.Sleep(200*time.Millisecond),
			chromedp.Screenshot(`#m-5`, &png, chromedp.ByQuery)); err != nil {
			t.Fatalf("screenshot of the citations: %v", err)
		}
		if err := os.WriteFile(filepath.Join("..", "..", "..", "docs", "viewer-citations.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cons.check(t, "conversation")

	// Export: a download of the canonical document.
	err = chromedp.Run(ctx,
		chromedp.SetValue(`#format`, "convo", chromedp.ByQuery),
		chromedp.Click(`form.export button`, chromedp.ByQuery),
	)
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	doc := waitDownload(t, downloads)
	h, err := convo.Unmarshal(doc)
	if err != nil || len(h) != 10 {
		t.Fatalf("the download is not the conversation: %d messages, %v", len(h), err)
	}
	cons.check(t, "export")

	// Fork after the tool results of message 3: a new conversation of 5.
	var meta string
	err = chromedp.Run(ctx,
		chromedp.Navigate(s.URL+"/ui/c/every"),
		chromedp.WaitVisible(`#m-3`, chromedp.ByQuery),
		chromedp.Submit(`#m-3 form.fork`, chromedp.ByQuery),
		chromedp.WaitVisible(`.meta-line`, chromedp.ByQuery),
		chromedp.Text(`.meta-line`, &meta, chromedp.ByQuery),
		chromedp.Location(&loc),
	)
	if err != nil {
		t.Fatalf("fork: %v", err)
	}
	if !strings.Contains(meta, "forked from every after message 5") || !strings.Contains(meta, "5 messages") {
		t.Fatalf("fork: %q at %s", meta, loc)
	}
	cons.check(t, "fork")

	// Delete the fork: back to the list as it was.
	err = chromedp.Run(ctx,
		chromedp.Click(`details.danger > summary`, chromedp.ByQuery),
		chromedp.Click(`button.destroy`, chromedp.ByQuery),
		chromedp.WaitVisible(`ol.convs`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll("ol.convs .card").length`, &cards),
	)
	if err != nil || cards != 9 {
		t.Fatalf("delete: %d conversations, %v", cards, err)
	}
	cons.check(t, "delete")

	// A long conversation loads its next page as the reader scrolls.
	var last int
	err = chromedp.Run(ctx,
		chromedp.Navigate(s.URL+"/ui/c/long"),
		chromedp.WaitVisible(`#m-0`, chromedp.ByQuery),
		chromedp.Evaluate(`window.scrollTo(0, document.body.scrollHeight)`, nil),
		chromedp.WaitReady(`#m-60`, chromedp.ByQuery),
		chromedp.Evaluate(`window.scrollTo(0, document.body.scrollHeight)`, nil),
		chromedp.WaitReady(`#m-129`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll("#messages .msg, #messages .anchor").length`, &last),
	)
	if err != nil || last != 130 {
		t.Fatalf("scrolling: %d messages shown, %v", last, err)
	}
	cons.check(t, "scrolling")

	// Hostile content runs nothing anywhere it shows: the conversation,
	// the list and search results (its title), its reasoning opened.
	for _, u := range []string{"/ui/c/hostile", "/ui/", "/ui/?q=script", "/ui/?q=" + fixture.Marker} {
		err := chromedp.Run(ctx, chromedp.Navigate(s.URL+u), chromedp.WaitReady(`main`, chromedp.ByQuery))
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		safe(t, ctx, u)
	}
	err = chromedp.Run(ctx,
		chromedp.Navigate(s.URL+"/ui/c/hostile"),
		chromedp.WaitVisible(`#m-1`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll("details").forEach((d) => d.open = true);
			document.querySelectorAll(".md a, .msg-head *").forEach((e) => e.dispatchEvent(new MouseEvent("mouseover", {bubbles: true})))`, nil),
		chromedp.Sleep(300*time.Millisecond),
	)
	if err != nil {
		t.Fatal(err)
	}
	safe(t, ctx, "hostile conversation, opened")
	cons.check(t, "hostile content")
}

// waitDownload returns the first file the browser saved into dir.
func waitDownload(t *testing.T, dir string) []byte {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".crdownload") {
				continue
			}
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err == nil && len(b) > 0 && json.Valid(b) {
				return b
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no download in %s", dir)
	return nil
}
