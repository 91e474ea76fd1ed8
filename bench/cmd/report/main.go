// Command report turns the benchmark output of bench/run.sh into
// docs/benchmarks.md and the growth plot docs/benchmarks-growth.svg:
// medians of repeated runs, their spread, ratios to convo, growth from 100
// to 10,000 messages, the fidelity table, and whether each target of the
// comparison was met.
//
//	go run ./cmd/report -fidelity results/fidelity.jsonl -md ../docs/benchmarks.md \
//		-svg ../docs/benchmarks-growth.svg results/*.txt
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/convo-go/convo/bench/benchkit"
)

// Machine describes where the benchmarks ran.
type Machine struct {
	CPU, Cores, Go, OS, LoadStart, LoadEnd, Date, Count, Benchtime string
}

func main() {
	var (
		md       = flag.String("md", "", "write the report to this file")
		svg      = flag.String("svg", "", "write the growth plot to this file")
		svgRef   = flag.String("svgref", "benchmarks-growth.svg", "how the report links the plot")
		fidelity = flag.String("fidelity", "", "fidelity records (JSON Lines)")
		notes    = flag.String("notes", "", "a Markdown file of analysis appended to the report")
		m        Machine
	)
	flag.StringVar(&m.CPU, "cpu", "", "CPU model")
	flag.StringVar(&m.Cores, "cores", "", "cores")
	flag.StringVar(&m.Go, "go", "", "Go version")
	flag.StringVar(&m.LoadStart, "load-start", "", "load average before the run")
	flag.StringVar(&m.LoadEnd, "load-end", "", "load average after the run")
	flag.StringVar(&m.Date, "date", "", "date of the run")
	flag.StringVar(&m.Count, "count", "", "runs of each benchmark")
	flag.StringVar(&m.Benchtime, "benchtime", "", "-benchtime of each run")
	flag.Parse()
	if err := run(*md, *svg, *svgRef, *fidelity, *notes, m, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

func run(mdPath, svgPath, svgRef, fidelityPath, notesPath string, m Machine, inputs []string) error {
	var set Set
	for _, p := range inputs {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		err = set.Parse(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
	}
	var fid []benchkit.FidelityRecord
	if fidelityPath != "" {
		var err error
		if fid, err = readFidelity(fidelityPath); err != nil {
			return err
		}
	}
	var notes []byte
	if notesPath != "" {
		var err error
		if notes, err = os.ReadFile(notesPath); err != nil {
			return err
		}
	}
	if m.CPU == "" {
		m.CPU = set.Header["cpu"]
	}
	if m.OS == "" && set.Header["goos"] != "" {
		m.OS = set.Header["goos"] + "/" + set.Header["goarch"]
	}
	r := &report{set: &set, fid: fid, m: m, svgRef: svgRef}
	if mdPath != "" {
		if err := os.WriteFile(mdPath, []byte(r.markdown(string(notes))), 0o644); err != nil {
			return err
		}
	}
	if svgPath != "" {
		if err := os.WriteFile(svgPath, []byte(GrowthSVG("Persistence round trip: time against history length", r.growthSeries())), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func readFidelity(path string) ([]benchkit.FidelityRecord, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []benchkit.FidelityRecord
	dec := json.NewDecoder(bufio.NewReader(f))
	for {
		var r benchkit.FidelityRecord
		if err := dec.Decode(&r); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// The libraries of each comparison, convo first.
var (
	persistLibs = []string{"convo", "eino", "langchaingo", "fantasy", "genkit"}
	requestAPIs = []string{"anthropic", "openai-chat", "openai-responses"}
	requestLibs = []string{"convo", "sdk", "sdk-marshal"}
	streamCases = []string{"anthropic/captured-tool_use", "anthropic/long", "openai-chat/captured-tools", "openai-chat/long"}
	tokenLibs   = []string{"convo", "tokenizer", "convo-cached"}
	ops         = []string{"roundtrip", "encode", "decode"}
)

type report struct {
	set    *Set
	fid    []benchkit.FidelityRecord
	m      Machine
	svgRef string
	// misses collects the targets convo did not meet, for the summary.
	misses []string
}

func (r *report) stat(name, unit string) (Stat, bool) { return r.set.Get(name).Stat(unit) }

func persistName(lib string, n int, op string) string {
	return "BenchmarkPersist/" + lib + "/n=" + strconv.Itoa(n) + "/" + op
}

func (r *report) markdown(notes string) string {
	var b strings.Builder
	b.WriteString("# Benchmarks: convo beside other Go libraries\n\n")
	b.WriteString("<!-- Written by bench/run.sh (bench/cmd/report); edit bench/analysis.md or the report tool, not this file. -->\n\n")
	b.WriteString("Four comparisons, run in one go on the same inputs: persisting a history, building a provider request, " +
		"folding a streamed reply, and counting tokens. The code is in `bench/` (its own Go modules: the peers are " +
		"dependencies of the benchmarks only, never of convo); `bench/run.sh` reruns everything and rewrites this page.\n\n")
	r.machine(&b)
	targets := len(b.String())
	r.persist(&b)
	r.growthTable(&b)
	r.fidelity(&b)
	r.request(&b)
	r.stream(&b)
	r.tokens(&b)
	body := b.String()[targets:]
	var head strings.Builder
	head.WriteString(b.String()[:targets])
	head.WriteString("## Targets\n\n")
	if len(r.misses) == 0 {
		head.WriteString("Every target was met in this run.\n\n")
	} else {
		head.WriteString("Targets (issue 7): convo at least 2× faster than every peer on persistence and request building, with fewer allocations and full fidelity; at least even on streams and token counting; linear growth. Missed in this run:\n\n")
		for _, m := range r.misses {
			head.WriteString("- " + m + "\n")
		}
		head.WriteString("\n")
	}
	r.summary(&head)
	out := head.String() + body
	if strings.TrimSpace(notes) != "" {
		out += "\n" + strings.TrimSpace(notes) + "\n"
	}
	return out
}

func (r *report) machine(b *strings.Builder) {
	b.WriteString("## Machine and method\n\n")
	rows := [][2]string{
		{"CPU", r.m.CPU}, {"cores", r.m.Cores}, {"Go", r.m.Go}, {"OS/arch", r.m.OS}, {"date", r.m.Date},
		{"runs per benchmark", r.m.Count + " (interleaved: every benchmark once, then again, so load changes hit all libraries alike)"},
		{"-benchtime", r.m.Benchtime},
		{"load average before / after", r.m.LoadStart + " / " + r.m.LoadEnd},
	}
	b.WriteString("| | |\n|---|---|\n")
	for _, row := range rows {
		if row[1] != "" && row[1] != " / " {
			fmt.Fprintf(b, "| %s | %s |\n", row[0], row[1])
		}
	}
	b.WriteString("\nThe machine is shared with other work while the benchmarks run, so every number is the **median** " +
		"of the runs and ± is half their interquartile range relative to the median (with five runs, the spread of the middle three). Ratios are a peer's median time " +
		"(or allocations) divided by convo's: 2.0× means convo takes half the time. MB/s is of each library's own " +
		"document or request.\n\n")
}

func (r *report) persist(b *strings.Builder) {
	b.WriteString("## 1. Persistence round trip\n\n")
	b.WriteString("Encode a history to JSON and decode it back, each library with its own types and its own JSON support: " +
		"convo's canonical format (`convo.Marshal`, `convo.Unmarshal`); cloudwego/eino `[]*schema.Message`, " +
		"tmc/langchaingo `[]llms.MessageContent`, charm.land/fantasy `[]fantasy.Message` and firebase/genkit " +
		"`[]*ai.Message` through encoding/json and their own `MarshalJSON`/`UnmarshalJSON` methods. " +
		"The history (`bench/benchkit`) is a persisted agent session: a system prompt, then turns of a user question " +
		"(every 25th turn with a 160×120 PNG, 40 KB of base64), an assistant message with signed reasoning, text and one or two " +
		"tool calls, the tool results (JSON, text, now and then an error), and the final answer; ids and times on every " +
		"message, origin, usage and finish on assistant messages. Each peer's adapter (`bench/persist`, `bench/genkit`) " +
		"fills its types as faithfully as they allow (not timed).\n\n")
	r.persistTable(b)
	r.persistApart(b)
	r.persistGrowth(b)
}

// persistTable writes the round trip of every library at every size, and
// notes the targets convo misses.
func (r *report) persistTable(b *strings.Builder) {
	sizes := benchkit.Sizes
	b.WriteString("| library | messages | document | ns/op | MB/s | B/op | allocs/op | time vs convo | allocs vs convo |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, n := range sizes {
		base, _ := r.stat(persistName("convo", n, "roundtrip"), "ns/op")
		baseA, _ := r.stat(persistName("convo", n, "roundtrip"), "allocs/op")
		for _, lib := range persistLibs {
			name := persistName(lib, n, "roundtrip")
			ns, ok := r.stat(name, "ns/op")
			if !ok {
				continue
			}
			doc, _ := r.stat(name, "docB")
			mbs, _ := r.stat(name, "MB/s")
			bop, _ := r.stat(name, "B/op")
			al, _ := r.stat(name, "allocs/op")
			fmt.Fprintf(b, "| %s | %s | %s | %s | %.0f | %s | %s | %s | %s |\n", bold(lib), commas(float64(n)), bytesLabel(doc.Median),
				nsCell(ns), mbs.Median, bytesLabel(bop.Median), commas(al.Median), ratio(ns.Median, base.Median), ratio(al.Median, baseA.Median))
			if lib != "convo" && base.Median > 0 {
				if rt := ns.Median / base.Median; rt < 2 {
					r.misses = append(r.misses, fmt.Sprintf("persistence, %s messages: convo is %.2f× as fast as %s (target 2×)", commas(float64(n)), rt, lib))
				}
				if baseA.Median >= al.Median {
					r.misses = append(r.misses, fmt.Sprintf("persistence, %s messages: convo allocates %s times, %s %s", commas(float64(n)), commas(baseA.Median), lib, commas(al.Median)))
				}
			}
		}
	}
}

// persistApart writes encode and decode apart.
func (r *report) persistApart(b *strings.Builder) {
	sizes := benchkit.Sizes
	b.WriteString("\nEncode and decode apart (median ns/op; ratio to convo in brackets):\n\n")
	b.WriteString("| library | messages | encode | decode |\n|---|---:|---:|---:|\n")
	for _, n := range sizes {
		for _, lib := range persistLibs {
			var cells []string
			for _, op := range ops[1:] {
				ns, ok := r.stat(persistName(lib, n, op), "ns/op")
				if !ok {
					cells = append(cells, "")
					continue
				}
				base, _ := r.stat(persistName("convo", n, op), "ns/op")
				cells = append(cells, fmt.Sprintf("%s (%s)", durationLabel(ns.Median), ratio(ns.Median, base.Median)))
			}
			if cells[0] == "" && cells[1] == "" {
				continue
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s |\n", bold(lib), commas(float64(n)), cells[0], cells[1])
		}
	}
}

// persistGrowth writes the round trip's cost per message at each size, and
// notes growth beyond linear.
func (r *report) persistGrowth(b *strings.Builder) {
	sizes := benchkit.Sizes
	b.WriteString("\n### Growth from 100 to 10,000 messages\n\n")
	fmt.Fprintf(b, "![Persistence round trip against history length](%s)\n\n", r.svgRef)
	b.WriteString("Linear growth takes 100× as long for 100× the messages. ns/message is the round trip's time divided by the messages.\n\n")
	b.WriteString("| library | ns/message at 100 | at 1,000 | at 10,000 | growth 100 → 10,000 |\n|---|---:|---:|---:|---:|\n")
	for _, lib := range persistLibs {
		var cells []string
		var t100, t10k float64
		for _, n := range sizes {
			ns, ok := r.stat(persistName(lib, n, "roundtrip"), "ns/op")
			if !ok {
				cells = append(cells, "")
				continue
			}
			cells = append(cells, commas(ns.Median/float64(n)))
			if n == sizes[0] {
				t100 = ns.Median
			}
			if n == sizes[len(sizes)-1] {
				t10k = ns.Median
			}
		}
		if t100 == 0 {
			continue
		}
		growth := t10k / t100
		fmt.Fprintf(b, "| %s | %s | %s | %s | %.0f× |\n", bold(lib), cells[0], cells[1], cells[2], growth)
		if lib == "convo" && growth > 150 {
			r.misses = append(r.misses, fmt.Sprintf("persistence growth: convo takes %.0f× as long for 100× the messages (linear is 100×)", growth))
		}
	}
	b.WriteString("\n")
}

func (r *report) fidelity(b *strings.Builder) {
	if len(r.fid) == 0 {
		return
	}
	n := r.fid[0].Messages
	fmt.Fprintf(b, "### Fidelity: what did not survive the round trip\n\n"+
		"Checked by code (`bench/benchkit/diff.go`, tests `TestFidelity` with golden files): the %s-message history is "+
		"converted into the library's types, encoded, decoded and converted back, and compared with the original field "+
		"by field (parts paired by type and order; JSON compared by meaning). A field is only counted as kept when the "+
		"library's typed fields hold it, or its own provider integration keeps it in a metadata slot (eino-ext's Claude "+
		"signature key in `Extra`, fantasy's Anthropic `ProviderOptions`, genkit's `Metadata[\"signature\"]`); no adapter "+
		"invents keys of its own in free-form maps. The number after each field is how many times it was lost.\n\n", commas(float64(n)))
	b.WriteString("| library | lost | fields |\n|---|---:|---|\n")
	byLib := map[string]benchkit.FidelityRecord{}
	for _, f := range r.fid {
		byLib[f.Library] = f
	}
	for _, lib := range persistLibs {
		f, ok := byLib[lib]
		if !ok {
			continue
		}
		if len(f.Losses) == 0 {
			fmt.Fprintf(b, "| %s | 0 | nothing: full fidelity |\n", bold(lib))
			continue
		}
		var cells []string
		for _, l := range f.Losses {
			cells = append(cells, fmt.Sprintf("`%s` %s", l.Field, commas(float64(l.Count))))
		}
		fmt.Fprintf(b, "| %s | %d | %s |\n", bold(lib), len(f.Losses), strings.Join(cells, ", "))
		if lib == "convo" {
			r.misses = append(r.misses, "fidelity: convo lost fields in its own round trip")
		}
	}
	b.WriteString("\n`(whole part)` means the part did not come back at all; `(part added)` means a part of that type came back that " +
		"was not there (a JSON tool result that came back as text shows as both). genkit keeps a reasoning signature as " +
		"`[]byte` in `Part.Metadata`, which JSON turns into a base64 string; its own Anthropic plugin reads the signature " +
		"back with `Metadata[\"signature\"].([]byte)`, so a reloaded history has none.\n\n")
}

func (r *report) request(b *strings.Builder) {
	b.WriteString("## 2. Building a request\n\n")
	b.WriteString("The same history turned into a request body: by convo's codec (`anthropic.Messages()`, `openai.Chat()`, " +
		"`openai.Responses()`, plus the model and max tokens), and with the official SDK's parameter types " +
		"(anthropic-sdk-go, openai-go) filled from the history and marshalled (**sdk**), or only marshalled, the params " +
		"having been built beforehand (**sdk-marshal**: the per-request cost of a program that keeps its conversation in " +
		"SDK params). `TestSameRequest` checks both sides produce the same JSON. The Anthropic history is the one above; " +
		"the OpenAI ones have Responses reasoning (id, encrypted content, summary) and `call_` ids, without reasoning for Chat.\n\n")
	b.WriteString("| API | messages | library | ns/op | MB/s | B/op | allocs/op | time vs convo | allocs vs convo |\n")
	b.WriteString("|---|---:|---|---:|---:|---:|---:|---:|---:|\n")
	for _, api := range requestAPIs {
		for _, n := range benchkit.Sizes {
			name := func(lib string) string { return "BenchmarkRequest/" + api + "/" + lib + "/n=" + strconv.Itoa(n) }
			base, _ := r.stat(name("convo"), "ns/op")
			baseA, _ := r.stat(name("convo"), "allocs/op")
			for _, lib := range requestLibs {
				ns, ok := r.stat(name(lib), "ns/op")
				if !ok {
					continue
				}
				mbs, _ := r.stat(name(lib), "MB/s")
				bop, _ := r.stat(name(lib), "B/op")
				al, _ := r.stat(name(lib), "allocs/op")
				fmt.Fprintf(b, "| %s | %s | %s | %s | %.0f | %s | %s | %s | %s |\n", api, commas(float64(n)), bold(lib), nsCell(ns), mbs.Median,
					bytesLabel(bop.Median), commas(al.Median), ratio(ns.Median, base.Median), ratio(al.Median, baseA.Median))
				if lib != "convo" && base.Median > 0 && ns.Median/base.Median < 2 {
					r.misses = append(r.misses, fmt.Sprintf("request, %s, %s messages: convo is %.2f× as fast as %s (target 2×)", api, commas(float64(n)), ns.Median/base.Median, lib))
				}
				if lib != "convo" && baseA.Median >= al.Median {
					r.misses = append(r.misses, fmt.Sprintf("request, %s, %s messages: convo allocates no less than %s", api, commas(float64(n)), lib))
				}
			}
		}
	}
	b.WriteString("\n| API | convo growth 100 → 10,000 | sdk | sdk-marshal |\n|---|---:|---:|---:|\n")
	for _, api := range requestAPIs {
		var cells []string
		for _, lib := range requestLibs {
			a, ok1 := r.stat("BenchmarkRequest/"+api+"/"+lib+"/n=100", "ns/op")
			z, ok2 := r.stat("BenchmarkRequest/"+api+"/"+lib+"/n=10000", "ns/op")
			if !ok1 || !ok2 {
				cells = append(cells, "")
				continue
			}
			g := z.Median / a.Median
			cells = append(cells, fmt.Sprintf("%.0f×", g))
			if lib == "convo" && g > 150 {
				r.misses = append(r.misses, fmt.Sprintf("request growth, %s: convo takes %.0f× as long for 100× the messages", api, g))
			}
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", api, cells[0], cells[1], cells[2])
	}
	b.WriteString("\n")
}

func (r *report) stream(b *strings.Builder) {
	b.WriteString("## 3. Folding a streamed reply\n\n")
	b.WriteString("The same server-sent-event bytes read and accumulated into one message, SSE parsing included: convo's " +
		"`Messages().ReadStream` against anthropic-sdk-go's `ssestream` decoder and `Message.Accumulate`, and " +
		"openai-go's decoder and `ChatCompletionAccumulator`. *captured* streams are convo's provider test fixtures; " +
		"*long* ones are generated in their exact shape with about 1,200 tokens of signed thinking (Anthropic), " +
		"2,400 of text and a tool call streamed in pieces. `TestSameMessage` checks both sides get the same text, " +
		"reasoning, signature, tool calls and usage.\n\n")
	b.WriteString("| stream | library | ns/op | MB/s | B/op | allocs/op | time vs convo | allocs vs convo |\n|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, sc := range streamCases {
		base, _ := r.stat("BenchmarkStream/"+sc+"/convo", "ns/op")
		baseA, _ := r.stat("BenchmarkStream/"+sc+"/convo", "allocs/op")
		for _, lib := range []string{"convo", "sdk"} {
			name := "BenchmarkStream/" + sc + "/" + lib
			ns, ok := r.stat(name, "ns/op")
			if !ok {
				continue
			}
			mbs, _ := r.stat(name, "MB/s")
			bop, _ := r.stat(name, "B/op")
			al, _ := r.stat(name, "allocs/op")
			fmt.Fprintf(b, "| %s | %s | %s | %.0f | %s | %s | %s | %s |\n", sc, bold(lib), nsCell(ns), mbs.Median, bytesLabel(bop.Median), commas(al.Median),
				ratio(ns.Median, base.Median), ratio(al.Median, baseA.Median))
			if lib != "convo" && base.Median > 0 && ns.Median/base.Median < 0.95 {
				r.misses = append(r.misses, fmt.Sprintf("stream %s: convo is %.2f× as fast as the SDK (target: at least even)", sc, ns.Median/base.Median))
			}
		}
	}
	b.WriteString("\n")
}

func (r *report) tokens(b *strings.Builder) {
	b.WriteString("## 4. Counting tokens\n\n")
	b.WriteString("The OpenAI-flavoured history without images, counted for gpt-4o (o200k_base): convo's `tokens.Counter.Count` " +
		"against github.com/tiktoken-go/tokenizer — the library convo counts with — called directly the way OpenAI's " +
		"cookbook counts a chat request (`bench/tokencount`). `TestSameCounts` checks the counts are equal to the token. " +
		"**convo-cached** is a counter made with `tokens.Options{Cache: true}` counting a history it has seen before, " +
		"as a session counting again after each turn does (only new messages are tokenized); it is not a like-for-like " +
		"row. MB/s is of the history's estimated canonical size.\n\n")
	b.WriteString("| messages | library | ns/op | MB/s | B/op | allocs/op | time vs convo |\n|---:|---|---:|---:|---:|---:|---:|\n")
	for _, n := range benchkit.Sizes {
		name := func(lib string) string { return "BenchmarkTokens/" + lib + "/n=" + strconv.Itoa(n) }
		base, _ := r.stat(name("convo"), "ns/op")
		for _, lib := range tokenLibs {
			ns, ok := r.stat(name(lib), "ns/op")
			if !ok {
				continue
			}
			mbs, _ := r.stat(name(lib), "MB/s")
			bop, _ := r.stat(name(lib), "B/op")
			al, _ := r.stat(name(lib), "allocs/op")
			rt := ratio(ns.Median, base.Median)
			if lib == "convo-cached" {
				rt = "(not like-for-like)"
			}
			fmt.Fprintf(b, "| %s | %s | %s | %.0f | %s | %s | %s |\n", commas(float64(n)), bold(lib), nsCell(ns), mbs.Median, bytesLabel(bop.Median), commas(al.Median), rt)
			if lib == "tokenizer" && base.Median > 0 && ns.Median/base.Median < 0.95 {
				r.misses = append(r.misses, fmt.Sprintf("tokens, %s messages: convo's counter is %.2f× as fast as the tokenizer called directly (target: at least even)", commas(float64(n)), ns.Median/base.Median))
			}
		}
	}
	b.WriteString("\n")
}

func (r *report) growthSeries() []Series {
	var out []Series
	for _, lib := range persistLibs {
		s := Series{Name: lib}
		for _, n := range benchkit.Sizes {
			if ns, ok := r.stat(persistName(lib, n, "roundtrip"), "ns/op"); ok {
				s.Points = append(s.Points, Point{N: n, Ns: ns.Median})
			}
		}
		if len(s.Points) > 0 {
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name == "convo" && out[j].Name != "convo" })
	return out
}

func bold(lib string) string {
	if lib == "convo" {
		return "**convo**"
	}
	return lib
}

func nsCell(s Stat) string {
	return fmt.Sprintf("%s ±%.0f%%", commas(s.Median), s.Spread*100)
}

func ratio(v, base float64) string {
	if base == 0 || v == 0 {
		return ""
	}
	return fmt.Sprintf("%.2f×", v/base)
}

func bytesLabel(n float64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", n/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KiB", n/(1<<10))
	}
	return fmt.Sprintf("%.0f B", n)
}

// commas renders n rounded to an integer with thousands separators.
func commas(n float64) string {
	s := strconv.FormatInt(int64(n+0.5), 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
