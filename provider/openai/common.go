package openai

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/wire"
)

// at is convo.ErrorAt: it prefixes err's place with seg ("messages[3]",
// "content[1]", "url").
func at(err error, seg string) error { return convo.ErrorAt(err, seg) }

// atKey is at for an object member, converting the key only on error.
func atKey(err error, key []byte) error {
	if err == nil {
		return nil
	}
	return at(err, string(key))
}

// atIndex is at for an array element, formatting the index only on error.
func atIndex(err error, i int) error {
	if err == nil {
		return nil
	}
	return at(err, index("", i))
}

func index(name string, i int) string { return name + "[" + strconv.Itoa(i) + "]" }

// parseDataURL splits a base64 data URL into its media type and payload.
// Anything else — a remote URL, a data URL that is not base64 or whose
// payload is not standard padded base64, or one without a media type — is
// not split, so it is kept as a URL and comes back unchanged.
func parseDataURL(u string) (mediaType, data string, ok bool) {
	if !strings.HasPrefix(u, "data:") {
		return "", "", false
	}
	rest := u[len("data:"):]
	i := strings.Index(rest, ";base64,")
	if i <= 0 {
		return "", "", false
	}
	mediaType, data = rest[:i], rest[i+len(";base64,"):]
	if strings.ContainsAny(mediaType, ";,") || data == "" || convo.CheckBase64(data) != nil {
		return "", "", false
	}
	return mediaType, data, true
}

// appendDataURL appends the JSON string "data:<mediaType>;base64,<data>".
func appendDataURL(dst []byte, mediaType, data string) []byte {
	dst = append(dst, `"data:`...)
	dst = appendInner(dst, mediaType)
	dst = append(dst, ";base64,"...)
	dst = appendInner(dst, data)
	return append(dst, '"')
}

// appendInner appends s escaped for the inside of a JSON string.
func appendInner(dst []byte, s string) []byte {
	n := len(dst)
	dst = jsonx.AppendString(dst, s)
	copy(dst[n:], dst[n+1:len(dst)-1])
	return dst[:len(dst)-2]
}

// guessFileType names the media type of inline file data that came without
// one (bare base64), from its file name. The table is fixed so that decoding
// does not depend on the machine's MIME database.
func guessFileType(name string) string {
	ext := ""
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		ext = strings.ToLower(name[i+1:])
	}
	switch ext {
	case "pdf", "":
		return "application/pdf" // the file type both OpenAI APIs document
	case "txt":
		return "text/plain"
	case "md":
		return "text/markdown"
	case "csv":
		return "text/csv"
	case "json":
		return "application/json"
	case "html", "htm":
		return "text/html"
	case "docx":
		return "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
	case "xlsx":
		return "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
	case "pptx":
		return "application/vnd.openxmlformats-officedocument.presentationml.presentation"
	case "png":
		return "image/png"
	case "jpg", "jpeg":
		return "image/jpeg"
	}
	return "application/octet-stream"
}

// audioFormat maps an audio media type to a Chat input_audio format.
func audioFormat(mediaType string) string {
	switch strings.ToLower(mediaType) {
	case "audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave":
		return "wav"
	case "audio/mpeg", "audio/mp3", "audio/mpeg3", "audio/x-mp3":
		return "mp3"
	}
	return ""
}

// audioMediaType maps a Chat input_audio format to a media type.
func audioMediaType(format string) string {
	switch format {
	case "wav":
		return "audio/wav"
	case "mp3":
		return "audio/mpeg"
	}
	return "audio/" + format
}

// appendBreakpoint appends a prompt_cache_breakpoint member for c: the
// breakpoint object kept in native when there is one, else
// {"mode":"explicit"}. convo's TTLs are Anthropic's ("5m", "1h"); OpenAI's
// breakpoints take "30m" and "12h", so another TTL is left out with a
// warning.
func appendBreakpoint(dst []byte, c *convo.Cache, kept []byte, path string, warns *[]provider.Warning) []byte {
	dst = jsonx.AppendKey(dst, "prompt_cache_breakpoint")
	if kept != nil {
		return append(dst, kept...)
	}
	dst = append(dst, `{"mode":"explicit"`...)
	switch c.TTL {
	case "":
	case "30m", "12h":
		dst = append(dst, `,"ttl":"`...)
		dst = append(dst, c.TTL...)
		dst = append(dst, '"')
	default:
		*warns = append(*warns, provider.Warnf(path, "cache TTL %q has no OpenAI equivalent (30m or 12h): breakpoint sent without a TTL", c.TTL))
	}
	return append(dst, '}')
}

// readBreakpoint reads a prompt_cache_breakpoint object. An explicit
// breakpoint becomes a Cache; raw is the object as read, which the caller
// keeps in Native unless it is exactly {"mode":"explicit"} (a TTL, another
// mode or other members convo has no field for).
func readBreakpoint(r *jsonx.Reader) (c *convo.Cache, raw []byte, exact bool, err error) {
	raw, err = r.ReadRaw()
	if err != nil {
		return nil, nil, false, err
	}
	if string(raw) == `{"mode":"explicit"}` {
		return &convo.Cache{}, raw, true, nil
	}
	if raw[0] == '{' {
		sub := jsonx.NewReader(raw, 0)
		_ = sub.ReadObject(func(key []byte) error {
			if string(key) == "mode" && sub.Peek() == jsonx.String {
				if s, _ := sub.ReadString(); s == "explicit" {
					c = &convo.Cache{}
				}
				return nil
			}
			return sub.Skip()
		})
	}
	return c, raw, false, nil
}

// appendArgs appends the arguments string of a function call as OpenAI
// sends it: the original string kept in fn when it still says the same as
// Args, else Args compacted, else the raw malformed text, else "{}". ok is
// false when a string to write is not valid UTF-8.
func (nr *natReader) appendArgs(dst []byte, p *convo.Part, fn nat) (out []byte, ok bool, err error) {
	orig, hasOrig := fn.get("arguments")
	if hasOrig && (len(orig) == 0 || orig[0] != '"') {
		hasOrig = false
	}
	if p.Args != nil {
		c, err := nr.rd.AppendCompact(nr.scratch[:0], p.Args, 0)
		if err != nil {
			return dst, true, fmt.Errorf("args: invalid JSON: %w", err)
		}
		nr.scratch = c
		if hasOrig {
			s, err := jsonx.NewReader(orig, 0).ReadString()
			if err == nil {
				oc, err := nr.rd.AppendCompact(nr.scratch2[:0], []byte(s), 0)
				nr.scratch2 = oc
				if err == nil && string(oc) == string(c) {
					return append(dst, orig...), true, nil
				}
			}
		}
		return appendJSONText(dst, c), true, nil
	}
	if p.ArgsRaw != "" {
		out, ok = jsonx.AppendStringChecked(dst, p.ArgsRaw)
		return out, ok, nil
	}
	if hasOrig {
		if s, err := jsonx.NewReader(orig, 0).ReadString(); err == nil && strings.TrimSpace(s) == "" {
			return append(dst, orig...), true, nil // the model sent no arguments at all
		}
	}
	return append(dst, `"{}"`...), true, nil
}

// appendJSONText appends compact, valid JSON text as a JSON string: only
// quotes and backslashes need escaping, since a validated compact document
// holds no control characters and only valid UTF-8.
func appendJSONText(dst, text []byte) []byte {
	dst = append(dst, '"')
	start := 0
	for i, c := range text {
		if c == '"' || c == '\\' {
			dst = append(dst, text[start:i]...)
			dst = append(dst, '\\', c)
			start = i + 1
		}
	}
	dst = append(dst, text[start:]...)
	return append(dst, '"')
}

// argsParser turns arguments strings into Args, reusing its buffers.
type argsParser struct {
	rd      jsonx.Reader
	scratch []byte
}

// parse turns the raw JSON string of an arguments member into Args (valid
// JSON, compacted) or ArgsRaw (anything else). keep reports that the
// original string must be kept in Native for a byte-exact round trip: it
// was valid but not compact, or empty.
func (a *argsParser) parse(p *convo.Part, raw []byte, maxDepth int) (keep bool) {
	a.rd.Reset(raw, 0)
	text, err := a.rd.ReadStringBytes()
	if err != nil {
		p.ArgsRaw = decodeStr(raw)
		return false
	}
	c, err := a.rd.AppendCompact(a.scratch[:0], text, maxDepth)
	if err != nil {
		p.ArgsRaw = string(text)
		return len(text) == 0
	}
	a.scratch = c
	if len(c) == len(text) && len(raw) > len(text)+2 {
		// Compact already, and text is a fresh unescaped copy nobody else
		// holds: keep it.
		p.Args = text
		return false
	}
	p.Args = append([]byte(nil), c...)
	return len(c) != len(text)
}

// encErr is an encoding error at a place in the output request.
func encErr(path string, format string, args ...any) error {
	return fmt.Errorf("%s: %s", path, fmt.Sprintf(format, args...))
}

// mediaDesc names a media part in warnings and placeholders, as Prepare does.
func mediaDesc(p convo.Part) string {
	src := "inline data"
	switch {
	case p.URL != "":
		src = "URL " + p.URL
	case p.FileID != "":
		src = "file id " + p.FileID
	case p.Text != "" && p.Type == convo.TypeFile:
		src = "inline text"
	}
	kind := string(p.Type)
	if p.MediaType != "" {
		kind += " (" + p.MediaType + ")"
	}
	if p.Name != "" {
		kind += " " + strconv.Quote(p.Name)
	}
	return kind + " by " + src
}

// unsendable handles media in a place the format has no room for (an
// assistant or system message): an error, or with MediaPlaceholder a text
// placeholder and a warning, the policy Prepare applies elsewhere.
func unsendable(p convo.Part, where, path string, opts provider.Options, warns *[]provider.Warning) (convo.Part, error) {
	desc := mediaDesc(p)
	if opts.Media != provider.MediaPlaceholder {
		return p, encErr(path, "%s cannot be sent in %s (use placeholders)", desc, where)
	}
	*warns = append(*warns, provider.Warnf(path, "%s replaced by a text placeholder: %s cannot hold it", desc, where))
	return convo.Text("[" + desc + " omitted]"), nil
}

// jsonText renders a json part of a tool result as the text OpenAI
// carries (compact JSON).
func jsonText(v []byte) (string, error) {
	c, err := jsonx.Compact(v, 0)
	if err != nil {
		return "", fmt.Errorf("invalid JSON value: %w", err)
	}
	return string(c), nil
}

// phaseWire maps a convo phase to the Responses wire value.
func phaseWire(p convo.Phase) string {
	switch p {
	case convo.PhaseCommentary:
		return "commentary"
	case convo.PhaseFinal:
		return "final_answer"
	}
	return ""
}

// phaseConvo maps a Responses phase to convo's; ok is false for a value
// convo does not know.
func phaseConvo(s string) (convo.Phase, bool) {
	switch s {
	case "commentary":
		return convo.PhaseCommentary, true
	case "final_answer":
		return convo.PhaseFinal, true
	}
	return "", false
}

// place names the message being encoded in the caller's history, for
// warnings and errors: Prepare may leave messages out or insert some, so the
// prepared history's indices are not the caller's.
type place struct {
	from []int // from[i]: the caller's index of prepared message i, -1 if inserted
	i    int   // the prepared message being encoded
	same bool  // its parts are the caller's own, so part indices match
}

// set moves to prepared message i of ph, made from h.
func (p *place) set(h, ph convo.History, from []int, i int) {
	p.from, p.i = from, i
	src := from[i]
	p.same = src >= 0 && len(ph[i].Parts) > 0 && len(h[src].Parts) == len(ph[i].Parts) &&
		&ph[i].Parts[0] == &h[src].Parts[0]
}

// msg names the message: messages[k] in the caller's history, or the place
// in the request (out) for a message Prepare inserted.
func (p *place) msg(out func() string) string {
	if p.from == nil || p.from[p.i] < 0 {
		return out() + " (inserted)"
	}
	return wire.PlaceOf(p.from, p.i)
}

// part names part j of the message when the indices are the caller's, else
// the message.
func (p *place) part(j int, out func() string) string {
	if p.same {
		return p.msg(out) + "." + index("parts", j)
	}
	return p.msg(out)
}
