package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/archive"
	"github.com/convo-go/convo/provider/all"
	"github.com/convo-go/convo/server"
	"github.com/convo-go/convo/store/sqlite"
)

// roundTripDoc is a conversation every format can carry whole: a system
// prompt, a question, a tool call with its result and the answer, each
// message with an id and a time so the store keeps them as given.
const roundTripDoc = `{"format":"convo/v1","messages":[
{"role":"system","id":"m1","time":"2026-11-29T10:00:00Z","parts":[{"type":"text","text":"Be brief."}]},
{"role":"user","id":"m2","time":"2026-11-29T10:00:01Z","parts":[{"type":"text","text":"Weather in Paris?"}]},
{"role":"assistant","id":"m3","time":"2026-11-29T10:00:02Z","parts":[{"type":"tool_call","id":"call_1","name":"get_weather","args":{"city":"Paris"}}]},
{"role":"tool","id":"m4","time":"2026-11-29T10:00:03Z","parts":[{"type":"tool_result","id":"call_1","name":"get_weather","parts":[{"type":"text","text":"18 C, sunny"}]}]},
{"role":"assistant","id":"m5","time":"2026-11-29T10:00:04Z","parts":[{"type":"text","text":"18 °C and sunny."}]}
]}
`

// aFile is one file convo wrote: who wrote it, in which format (the name
// --from takes), and its bytes.
type aFile struct {
	writer, format string
	body           []byte
}

// writeOnly are the formats convo writes and cannot read, with the reason.
var writeOnly = map[string]string{
	"markdown": "a transcript for people: it keeps no ids, arguments or part types to read back",
}

// TestWhatConvoWritesConvoReads: every file convo writes — convert --to
// each format, store export, the API's export route and the viewer's
// Download, in every format they offer — is read back by convert --from
// its format and by --from auto, to the same history the CLI's own writer
// of that format reads back to (the original, for the canonical format);
// canonical files are also taken by POST /convo/v1/conversations and by
// store import.
func TestWhatConvoWritesConvoReads(t *testing.T) {
	files, api := writtenFiles(t)
	ref := map[string]string{}
	for _, f := range files {
		if reason, ok := writeOnly[f.format]; ok {
			t.Logf("%s (%s): not read back: %s", f.writer, f.format, reason)
			continue
		}
		for _, from := range []string{f.format, "auto"} {
			if from == "auto" && autoCannot[f.format] != "" {
				continue
			}
			path := writeFile(t, "in", string(f.body))
			out, errs, code := runCLI(t, "", "convert", "--from", from, "--to", "convo", path)
			if code != 0 {
				t.Errorf("%s, read by convert --from %s: exit %d: %s\n%.300s", f.writer, from, code, errs, f.body)
				continue
			}
			if want, ok := ref[f.format]; !ok {
				ref[f.format] = out
			} else if out != want {
				t.Errorf("%s, read by convert --from %s:\n%s\nwant (as convert --to %s reads back):\n%s", f.writer, from, out, f.format, want)
			}
		}
		if f.format == "convo" {
			checkCanonical(t, f, api)
		}
	}
	h, _ := convo.Unmarshal([]byte(roundTripDoc))
	want, _ := convo.Marshal(h)
	if ref["convo"] != string(want) {
		t.Errorf("the canonical files read back to\n%s\nnot\n%s", ref["convo"], want)
	}
	for _, f := range append(readableFormats(), "convo") {
		if _, ok := ref[f]; !ok {
			t.Errorf("format %s: no writer tested", f)
		}
	}
}

// autoCannot are the formats --from auto does not recognise, with the
// reason.
var autoCannot = map[string]string{
	"finetune": "a training file, not a request: convert --from finetune names it",
	"sharegpt": "a training file, not a request: convert --from sharegpt names it",
}

// readableFormats are the provider formats and the outside formats convo
// both writes and reads.
func readableFormats() []string {
	var fs []string
	for _, c := range all.Formats() {
		fs = append(fs, c.Name())
	}
	for _, f := range archive.Writable() {
		if isReadable(string(f)) {
			fs = append(fs, string(f))
		}
	}
	return fs
}

// checkCanonical posts a canonical file to the history API and imports it
// with store import: both take it whole.
func checkCanonical(t *testing.T, f aFile, api string) {
	t.Helper()
	if !bytes.HasPrefix(f.body, []byte(`{"format"`)) {
		t.Logf("%s: JSON Lines are not a JSON body for the API; store import takes them", f.writer)
	} else {
		res, err := http.Post(api+"/convo/v1/conversations", "application/json", bytes.NewReader(f.body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusCreated || !strings.Contains(string(b), `"messages":5`) {
			t.Errorf("%s, POST /convo/v1/conversations: %d %s", f.writer, res.StatusCode, b)
		}
	}
	db := filepath.Join(t.TempDir(), "c.db")
	if _, errs, code := runCLI(t, "", "store", "import", "--db", db, writeFile(t, "c.json", string(f.body))); code != 0 {
		t.Errorf("%s, store import: exit %d: %s", f.writer, code, errs)
	}
}

// writtenFiles writes roundTripDoc with every writer convo has, and
// returns the files with the address of the server that wrote some.
func writtenFiles(t *testing.T) ([]aFile, string) {
	var files []aFile
	add := func(writer, format string, body []byte) {
		files = append(files, aFile{writer, format, body})
	}
	// The command line.
	for _, to := range append(readableFormats(), "convo", "markdown") {
		out, errs, code := runCLI(t, roundTripDoc, "convert", "--from", "convo", "--to", to)
		if code != 0 {
			t.Fatalf("convert --to %s: exit %d: %s", to, code, errs)
		}
		add("convert --to "+to, to, []byte(out))
	}
	out, _, _ := runCLI(t, roundTripDoc, "convert", "--from", "convo", "--to", "convo", "--lines")
	add("convert --to convo --lines", "convo", []byte(out))
	db := filepath.Join(t.TempDir(), "convo.db")
	if _, errs, code := runCLI(t, "", "store", "import", "--db", db, "--id", "c1", writeFile(t, "h.json", roundTripDoc)); code != 0 {
		t.Fatalf("store import: %s", errs)
	}
	for _, lines := range []string{"--lines=false", "--lines"} {
		out, errs, code := runCLI(t, "", "store", "export", "--db", db, lines, "c1")
		if code != 0 {
			t.Fatalf("store export %s: %s", lines, errs)
		}
		add("store export "+lines, "convo", []byte(out))
	}
	// The server: the API's export route and the viewer's Download.
	api, id := startRoundTripServer(t)
	formats := []string{"convo", "lines", "markdown"}
	formats = append(formats, readableFormats()...)
	for _, f := range formats {
		format := f
		if f == "lines" {
			format = "convo"
		}
		for _, path := range []string{"/convo/v1/conversations/" + id + "/export?format=" + f, "/ui/c/" + id + "/export?format=" + f} {
			res, err := http.Get(api + path)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				t.Fatalf("GET %s: %d %s", path, res.StatusCode, b)
			}
			add("GET "+path, format, b)
		}
	}
	return files, api
}

// startRoundTripServer starts convo serve's handler, as serve builds it,
// over a new SQLite store holding roundTripDoc, and returns its address
// and the conversation's id.
func startRoundTripServer(t *testing.T) (string, string) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "serve.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h, err := server.New(st, server.Options{Anonymous: true, UI: true, Formats: all.Formats(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	res, err := http.Post(ts.URL+"/convo/v1/conversations", "application/json", strings.NewReader(roundTripDoc))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var c struct{ ID string }
	if err := json.NewDecoder(res.Body).Decode(&c); err != nil || res.StatusCode != http.StatusCreated {
		t.Fatalf("POST the canonical document: %d %v", res.StatusCode, err)
	}
	return ts.URL, c.ID
}

// TestExportEnvelopeOfAnotherFormat: an export envelope read with --from
// naming another format says which it holds.
func TestExportEnvelopeOfAnotherFormat(t *testing.T) {
	env := `{"format":"gemini","version":3,"request":{"contents":[{"role":"user","parts":[{"text":"hi"}]}]},"warnings":[]}`
	_, errs, code := runCLI(t, env, "convert", "--from", "anthropic", "--to", "convo")
	if code != 1 || !strings.Contains(errs, "holding a gemini request, not anthropic: give --from gemini") {
		t.Errorf("exit %d: %s", code, errs)
	}
	out, errs, code := runCLI(t, env, "convert", "--from", "auto", "--to", "convo")
	if code != 0 || !strings.Contains(out, `"hi"`) || !strings.Contains(errs, "as the gemini request of a convo serve export") {
		t.Errorf("--from auto: exit %d: %s %s", code, out, errs)
	}
}
