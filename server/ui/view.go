package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/convo-go/convo"
)

// msgView is a message as the conversation page shows it.
type msgView struct {
	Index     int
	ID        string
	Role      string
	Name      string
	Time      time.Time
	Phase     string
	Scope     string
	Effort    string
	Compacted int
	Origin    *convo.Origin
	Usage     *convo.Usage
	Cost      *convo.Cost // nil: unknown
	Finish    string
	Parts     []partView
	// Hidden is a tool message whose every result is shown beside its
	// call: only its anchor is rendered.
	Hidden bool
	// ForkAt is how many messages a fork from here keeps: through this
	// one, and through the results of its tool calls.
	ForkAt int
	// Withheld says why the message's content is not in the store
	// ("expired", "not recorded"): only its metadata was kept.
	Withheld string
	// Redactions lists what redaction took out of the message before it
	// was stored, as "rule ×count", rules in order.
	Redactions []string
}

// stored is what convo's own native members say about how a message or
// part was stored (redact and store.WithoutContent write them).
type stored struct {
	Content  string         `json:"content"`
	Redacted map[string]int `json:"redacted"`
}

// storedOf reads a message's or part's native "convo" member; the zero
// value when there is none or it is not this shape.
func storedOf(native convo.Native) stored {
	var s stored
	if raw := native["convo"]; raw != nil {
		_ = json.Unmarshal(raw, &s)
	}
	return s
}

// redactions sums the redaction counts of m and its parts (nested ones
// too) into "rule ×count" labels.
func redactions(m convo.Message) []string {
	counts := map[string]int{}
	var walk func(ps []convo.Part)
	walk = func(ps []convo.Part) {
		for _, p := range ps {
			for rule, n := range storedOf(p.Native).Redacted {
				counts[rule] += n
			}
			walk(p.Parts)
		}
	}
	for rule, n := range storedOf(m.Native).Redacted {
		counts[rule] += n
	}
	walk(m.Parts)
	out := make([]string, 0, len(counts))
	for rule, n := range counts {
		out = append(out, rule+" ×"+strconv.Itoa(n))
	}
	slices.Sort(out)
	return out
}

// partView is one part as the page shows it. Kind selects the template.
type partView struct {
	Kind string // text, refusal, reasoning, tool_call, tool_result, image, audio, video, file, json, unknown
	HTML template.HTML
	Text string

	Cites []citeView // text: its sources, listed under it as numbered notes

	// reasoning
	Summary   []string
	Provider  string
	Signed    bool
	Encrypted int // bytes of encrypted payload
	Redacted  bool

	// tool_call (with its result, when found) and tool_result
	CallID    string
	Name      string
	Args      string // pretty-printed
	Malformed bool
	Result    *resultView

	// media and files
	MediaType string
	Src       template.URL // a data: URL built from validated parts
	URL       string       // a remote reference, shown as a link
	Size      int          // decoded bytes
	FileID    string
}

// citeView is one citation of a text part as the page lists it.
type citeView struct {
	Title string
	URL   string // a safe web address, shown as a link
	Where string // the file, or the document and its cited range
	Quote string
}

func citesOf(cs []convo.Citation) []citeView {
	var out []citeView
	for _, c := range cs {
		v := citeView{Title: c.Title, Quote: c.Text}
		if c.URL != "" && safeURL(c.URL) {
			v.URL = c.URL
		} else if c.URL != "" {
			v.Where = c.URL
		}
		switch {
		case c.Kind == convo.CiteFile:
			v.Where = "file " + c.FileID
		case c.Kind == convo.CiteDocument && c.Unit != "":
			v.Where = fmt.Sprintf("document %d, %s %d–%d", c.Source, c.Unit, c.Start, c.End)
		case c.Kind == convo.CiteDocument:
			v.Where = fmt.Sprintf("document %d", c.Source)
		}
		if v.Title == "" && v.URL == "" && v.Where == "" {
			v.Where = string(c.Kind)
		}
		out = append(out, v)
	}
	return out
}

// resultView is a tool result: its content, pretty-printed, and whether the
// tool failed.
type resultView struct {
	CallID string
	Name   string
	Error  bool
	Parts  []partView
	Lines  int // how long the result is, to open short ones
}

// view turns the messages of a page into views. Results are shown beside
// their calls: after is the messages following the page, searched for the
// results of calls made at its end.
func view(msgs convo.History, first int, after convo.History) []msgView {
	out := make([]msgView, len(msgs))
	results := map[string]*resultView{}
	shown := map[string]bool{}
	for _, m := range slices.Concat(msgs, after) {
		if m.Role != convo.RoleTool {
			continue
		}
		for _, p := range m.Parts {
			if p.Type == convo.TypeToolResult && p.ID != "" && results[p.ID] == nil {
				r := resultOf(p)
				results[p.ID] = &r
			}
		}
	}
	for i, m := range msgs {
		v := msgView{Index: first + i, ID: m.ID, Role: string(m.Role), Name: m.Name, Time: m.Time, Phase: string(m.Phase),
			Scope: string(m.Scope), Effort: m.Effort, Compacted: m.Compacted, Origin: m.Origin, Usage: m.Usage, Cost: m.Cost,
			Finish: string(m.Finish), ForkAt: first + i + 1,
			Withheld: storedOf(m.Native).Content, Redactions: redactions(m)}
		for _, p := range m.Parts {
			pv := partOf(p)
			if p.Type == convo.TypeToolCall && p.ID != "" && m.Role == convo.RoleAssistant {
				if r := results[p.ID]; r != nil {
					pv.Result = r
					shown[p.ID] = true
				}
			}
			v.Parts = append(v.Parts, pv)
		}
		out[i] = v
	}
	for i, m := range msgs {
		if m.Role != convo.RoleTool {
			continue
		}
		all := len(m.Parts) > 0
		var rest []partView
		for _, p := range m.Parts {
			if p.Type == convo.TypeToolResult && shown[p.ID] {
				continue
			}
			all = false
			rest = append(rest, partOf(p))
		}
		out[i].Parts, out[i].Hidden = rest, all
	}
	// A fork from a message with tool calls keeps their results.
	all := slices.Concat(msgs, after)
	for i := range out {
		if !msgs[i].HasToolCalls() {
			continue
		}
		for j := i + 1; j < len(all) && all[j].Role == convo.RoleTool; j++ {
			out[i].ForkAt = first + j + 1
		}
	}
	return out
}

func partOf(p convo.Part) partView {
	v := partView{Kind: string(p.Type)}
	switch p.Type {
	case convo.TypeText:
		v.HTML = markdown(p.Text)
		v.Cites = citesOf(p.Citations)
	case convo.TypeRefusal:
		v.Text = p.Text
	case convo.TypeReasoning:
		v.Text, v.Summary, v.Provider = p.Text, p.Summary, p.Provider
		v.Signed, v.Encrypted = p.Signature != "", len(p.Encrypted)
		v.Redacted = p.Text == "" && len(p.Summary) == 0
	case convo.TypeToolCall:
		v.CallID, v.Name = p.ID, p.Name
		if len(p.Args) > 0 {
			v.Args = pretty(p.Args)
		} else {
			v.Args, v.Malformed = p.ArgsRaw, p.ArgsRaw != ""
		}
	case convo.TypeToolResult:
		r := resultOf(p)
		v.Result = &r
		v.CallID, v.Name = p.ID, p.Name
	case convo.TypeJSON:
		v.Text = pretty(p.Value)
	case convo.TypeImage, convo.TypeAudio, convo.TypeVideo, convo.TypeFile:
		v.MediaType, v.URL, v.FileID, v.Name = p.MediaType, p.URL, p.FileID, p.Name
		v.Size = p.DataSize()
		if p.Data != "" && len(p.Data) <= maxInline {
			v.Src = dataURL(p.Type, p.MediaType, p.Data)
		}
		if v.URL != "" && !safeURL(v.URL) {
			v.URL = ""
		}
	default:
		v.Kind = "unknown"
		v.Name = string(p.Type)
		v.Text = pretty(p.Raw)
	}
	return v
}

func resultOf(p convo.Part) resultView {
	r := resultView{CallID: p.ID, Name: p.Name, Error: p.Error}
	for _, c := range p.Parts {
		cv := partOf(c)
		if c.Type == convo.TypeText && looksJSON(c.Text) {
			cv = partView{Kind: "json", Text: pretty(json.RawMessage(c.Text))}
		} else if c.Type == convo.TypeText {
			cv = partView{Kind: "plain", Text: c.Text}
		}
		r.Lines += strings.Count(cv.Text, "\n") + 1
		r.Parts = append(r.Parts, cv)
	}
	return r
}

func looksJSON(s string) bool {
	s = strings.TrimSpace(s)
	return (strings.HasPrefix(s, "{") || strings.HasPrefix(s, "[")) && json.Valid([]byte(s))
}

// pretty indents JSON; anything else is returned as it is.
func pretty(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

// maxInline bounds the base64 data a page carries inline for one part:
// larger media are described, not shown, so a page stays light.
const maxInline = 8 << 20

var (
	mediaTypeRE = regexp.MustCompile(`^[a-z]+/[a-z0-9][a-z0-9.+-]*$`)
	base64RE    = regexp.MustCompile(`^[A-Za-z0-9+/]*={0,2}$`)
)

// dataURL returns the data: URL of inline media, or "" when the media
// type or the data could break out of it. Images and audio only: a
// browser shows those inertly (an SVG in an <img> runs no script); other
// media are offered as downloads by the same URL, which html/template
// would refuse as unsafe, so only these are marked safe.
func dataURL(t convo.PartType, mediaType, data string) template.URL {
	mt := strings.ToLower(mediaType)
	if !mediaTypeRE.MatchString(mt) || !base64RE.MatchString(data) {
		return ""
	}
	switch {
	case t == convo.TypeImage && strings.HasPrefix(mt, "image/"),
		t == convo.TypeAudio && strings.HasPrefix(mt, "audio/"),
		t == convo.TypeVideo && strings.HasPrefix(mt, "video/"):
		return template.URL("data:" + mt + ";base64," + data)
	}
	return ""
}

// stats sums up a whole conversation for the list and the page header.
type stats struct {
	FirstUser string
	Models    []string
	Providers []string
	Usage     convo.Usage
	// Cost adds up the priced replies' costs; Unpriced counts the
	// replies with usage and no cost (theirs is unknown).
	Cost     convo.Money
	Priced   int
	Unpriced int
}

func statsOf(h convo.History) stats {
	var s stats
	for _, m := range h {
		if s.FirstUser == "" && m.Role == convo.RoleUser {
			s.FirstUser = firstWords(plainMarkdown.Replace(m.Text()), 160)
		}
		if m.Role != convo.RoleAssistant {
			continue
		}
		if m.Origin != nil {
			if m.Origin.Model != "" && !slices.Contains(s.Models, m.Origin.Model) {
				s.Models = append(s.Models, m.Origin.Model)
			}
			if m.Origin.Provider != "" && !slices.Contains(s.Providers, m.Origin.Provider) {
				s.Providers = append(s.Providers, m.Origin.Provider)
			}
		}
		if u := m.Usage; u != nil {
			s.Usage.Input += u.Input
			s.Usage.Output += u.Output
			s.Usage.CacheRead += u.CacheRead
			s.Usage.CacheWrite += u.CacheWrite
			s.Usage.Reasoning += u.Reasoning
			s.Usage.Total += total(u)
		}
		switch {
		case m.Cost != nil:
			s.Cost += m.Cost.USD
			s.Priced++
		case m.Usage != nil:
			s.Unpriced++
		}
	}
	return s
}

// add returns the stats of a conversation made of s's messages followed
// by t's.
func (s stats) add(t stats) stats {
	out := s
	if out.FirstUser == "" {
		out.FirstUser = t.FirstUser
	}
	out.Models = slices.Clone(s.Models)
	for _, m := range t.Models {
		if !slices.Contains(out.Models, m) {
			out.Models = append(out.Models, m)
		}
	}
	out.Providers = slices.Clone(s.Providers)
	for _, p := range t.Providers {
		if !slices.Contains(out.Providers, p) {
			out.Providers = append(out.Providers, p)
		}
	}
	out.Usage.Input += t.Usage.Input
	out.Usage.Output += t.Usage.Output
	out.Usage.CacheRead += t.Usage.CacheRead
	out.Usage.CacheWrite += t.Usage.CacheWrite
	out.Usage.Reasoning += t.Usage.Reasoning
	out.Usage.Total += t.Usage.Total
	out.Cost += t.Cost
	out.Priced += t.Priced
	out.Unpriced += t.Unpriced
	return out
}

// plainMarkdown drops the Markdown marks that would show as clutter in a
// line of plain text.
var plainMarkdown = strings.NewReplacer("**", "", "__", "", "`", "", "#", "")

// total is a usage's total: the reported one, or input plus output.
func total(u *convo.Usage) int64 {
	if u.Total > 0 {
		return u.Total
	}
	return u.Input + u.Output
}

// firstWords returns about n bytes of s, white space collapsed, cut at a
// word.
func firstWords(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := strings.LastIndexByte(s[:n], ' ')
	if cut < n/2 {
		cut = n
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
	}
	return s[:cut] + " …"
}

// number writes n with thousands separators.
func number(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// size writes a byte count for people.
func size(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
