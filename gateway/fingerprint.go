package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/convo-go/convo"
)

// A fingerprint identifies a conversation by what the provider sees of it,
// so that a client's next request — which carries the conversation so far
// in the client's own rendering — finds the stored conversation it
// continues, whatever protocol the client and the upstream speak.
//
// It is a rolling hash over the conversation's items: each message
// contributes its role and, per part, the visible text, tool calls (id,
// name, arguments as parsed JSON) and tool results (id and content text),
// media by source. Usage, origin, times, ids of messages, reasoning and
// provider-native fields are left out: they are what one protocol keeps
// and another drops. Adjacent text of one role is joined and consecutive
// messages of one role run together, since protocols split and merge them
// differently (Anthropic puts tool results in a user turn; Chat sends one
// tool message per result).
type fingerprinter struct {
	h     [sha256.Size]byte
	role  convo.Role
	text  []byte // the pending text of the current role
	items int
}

// clone returns a copy of f that folds on independently of it: the
// fingerprints of several replies to one request.
func (f *fingerprinter) clone() *fingerprinter {
	c := *f
	c.text = slices.Clone(f.text)
	return &c
}

// item folds one item into the chain.
func (f *fingerprinter) item(kind string, fields ...string) {
	b := make([]byte, 0, 64)
	b = append(b, f.h[:]...)
	b = append(b, f.role...)
	b = append(b, 0)
	b = append(b, kind...)
	for _, s := range fields {
		b = append(b, 0)
		b = strconv.AppendInt(b, int64(len(s)), 10)
		b = append(b, ':')
		b = append(b, s...)
	}
	f.h = sha256.Sum256(b)
	f.items++
}

func (f *fingerprinter) flush() {
	if len(f.text) > 0 {
		f.item("text", string(f.text))
		f.text = f.text[:0]
	}
}

// add folds one message in.
func (f *fingerprinter) add(m *convo.Message) {
	role := m.Role
	switch role {
	case convo.RoleError:
		return // never sent to a provider
	case convo.RoleTool:
		role = convo.RoleUser // results travel in the user's turn somewhere
	}
	if role != f.role {
		f.flush()
		f.role = role
	}
	for i := range m.Parts {
		p := &m.Parts[i]
		switch {
		case p.Type == convo.TypeText || p.Type == convo.TypeRefusal:
			f.text = append(f.text, p.Text...)
		case p.Type == convo.TypeToolCall:
			f.flush()
			f.item("call", realID(p.ID), p.Name, canonicalJSON(p.Args, p.ArgsRaw))
		case p.Type == convo.TypeToolResult:
			f.flush()
			var out []byte
			for _, q := range p.Parts {
				if q.Type == convo.TypeText {
					out = append(out, q.Text...)
				} else {
					out = append(out, mediaKey(&q)...)
				}
			}
			f.item("result", realID(p.ID), string(out))
		case p.Type.IsMedia():
			f.flush()
			f.item("media", mediaKey(p))
		}
	}
}

// sum is the fingerprint of what was added so far.
func (f *fingerprinter) sum() string {
	g := *f
	g.text = append([]byte(nil), f.text...)
	g.flush()
	return hex.EncodeToString(g.h[:16])
}

// realID is a tool-call id as the provider gave it, or "" for one convo
// made up (provider.SynthID) for a call the provider left unnamed: a
// protocol without ids (Ollama) makes up another each time the call is
// read, so it cannot take part in the fingerprint.
func realID(id string) string {
	if len(id) == len("call_")+16 && strings.HasPrefix(id, "call_") {
		if _, err := hex.DecodeString(id[5:]); err == nil {
			return ""
		}
	}
	return id
}

func mediaKey(p *convo.Part) string {
	src := p.URL
	switch {
	case p.Data != "":
		h := sha256.Sum256([]byte(p.Data))
		src = hex.EncodeToString(h[:8])
	case p.FileID != "":
		src = p.FileID
	}
	return string(p.Type) + ":" + src
}

// canonicalJSON renders arguments with sorted keys and no spaces, so the
// same arguments compare equal however a protocol wrote them.
func canonicalJSON(args json.RawMessage, raw string) string {
	if args == nil {
		return raw
	}
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return string(args)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// Fingerprint returns the fingerprint of a history, as the gateway stores
// it beside each recorded conversation.
func Fingerprint(h convo.History) string {
	var f fingerprinter
	for i := range h {
		f.add(&h[i])
	}
	return f.sum()
}

// prefixes returns the fingerprints of the prefixes of h that end with an
// assistant message — the places where a stored conversation can end —
// longest first, with their lengths.
func prefixes(h convo.History) (sums []string, lens []int) {
	var f fingerprinter
	for i := range h {
		f.add(&h[i])
		if h[i].Role == convo.RoleAssistant && (i+1 == len(h) || h[i+1].Role != convo.RoleAssistant) {
			sums = append(sums, f.sum())
			lens = append(lens, i+1)
		}
	}
	for i, j := 0, len(sums)-1; i < j; i, j = i+1, j-1 {
		sums[i], sums[j] = sums[j], sums[i]
		lens[i], lens[j] = lens[j], lens[i]
	}
	return sums, lens
}
