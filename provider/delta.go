package provider

import (
	"fmt"
	"hash/maphash"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
)

// DeltaKind says what a Delta carries.
type DeltaKind uint8

// The kinds of Delta, in the order a stream gives them: one DeltaStart;
// then for each part a DeltaPartStart, its pieces (DeltaText, DeltaArgs,
// DeltaSignature, DeltaEncrypted) and a DeltaPartEnd; then DeltaUsage,
// DeltaFinish, and DeltaError for a stream that failed.
const (
	DeltaStart     DeltaKind = iota + 1 // the reply begins: Origin (may be nil)
	DeltaPartStart                      // a part begins: Index, Part (its type and the fields known at its start, such as a tool call's ID and Name)
	DeltaText                           // Text appended to the text, refusal or reasoning part at Index
	DeltaArgs                           // Text appended to the arguments of the tool call at Index
	DeltaSignature                      // Text appended to the signature of the reasoning part at Index
	DeltaEncrypted                      // Text appended to the encrypted payload of the reasoning part at Index
	DeltaPartEnd                        // the part at Index is complete: Part is the whole part
	DeltaUsage                          // Usage, the reply's token usage
	DeltaFinish                         // Finish, why the reply ended
	DeltaError                          // Err, the stream failed; nothing follows
)

var deltaNames = [...]string{"", "start", "part_start", "text", "args", "signature", "encrypted", "part_end", "usage", "finish", "error"}

func (k DeltaKind) String() string {
	if int(k) < len(deltaNames) && k != 0 {
		return deltaNames[k]
	}
	return fmt.Sprintf("DeltaKind(%d)", k)
}

// Delta is one provider-neutral event of a streamed assistant reply: what a
// stream reader learnt from one of the provider's events, in canonical
// terms. Reading a stream turns a provider's events into deltas (see
// DeltaReader); a stream encoder turns deltas into another provider's
// events. Index is the place of the part in the final message.
type Delta struct {
	Kind   DeltaKind
	Index  int
	Text   string        // DeltaText, DeltaArgs, DeltaSignature, DeltaEncrypted
	Part   *convo.Part   // DeltaPartStart, DeltaPartEnd
	Origin *convo.Origin // DeltaStart
	Usage  *convo.Usage  // DeltaUsage
	Finish convo.Finish  // DeltaFinish
	Err    error         // DeltaError
	// Candidate is the candidate reply a part's delta or a DeltaFinish
	// belongs to, in a stream of several (OpenAI Chat n > 1, Gemini
	// candidateCount > 1; see DeltaReader.ReadCandidates): 0 is the
	// first, and the only one of every other stream. Index counts the
	// parts of that candidate. DeltaStart, DeltaUsage and DeltaError are
	// the whole reply's and carry 0.
	Candidate int
}

// DeltaReader turns the events of one streamed reply into deltas while an
// accumulator folds them. It works with every format's accumulator: after
// each event it compares the accumulator's Snapshot with what it has
// already reported, so the deltas are exactly what the accumulator
// understood — the parsing is the accumulator's, never repeated here.
// An accumulator that is a PieceAccumulator says itself what an event
// appended to a part, which is most events of a stream; the reader then
// reports that piece without a snapshot, and compares snapshots only for
// the events that start, end or otherwise change parts, so the cost of an
// event does not grow with the message.
//
// Parts may start and grow in any order (providers interleave parallel tool
// calls; a provider-specific item starts once it is known); Index is always
// the part's place in the final message, and every part ends when the
// stream does. A part whose content changes in a
// way that is not an extension of what was reported (a provider that
// rewrites a part, or inserts one before it) is not streamed again: the
// change is counted in the warnings Finish returns, and the final message
// still has it.
type DeltaReader struct {
	acc     Accumulator
	pieces  PieceAccumulator // acc, when it is one: asked once, not every event
	started bool
	parts   []partSent
	warns   []Warning
	ended   bool
	all     bool           // ReadCandidates was called
	others  []*DeltaReader // what was reported of candidates 1, 2, …
}

// ReadCandidates makes d report the deltas of every candidate when its
// accumulator is a CandidatesAccumulator and the reply has several: each
// delta of candidate k > 0 carries Candidate k, and each such candidate
// ends with its own DeltaFinish before the first one's, which ends the
// stream as always. Without it (the default, for a client format that
// has one reply per response) only the first candidate is reported. Call
// it before the first Add.
func (d *DeltaReader) ReadCandidates() { d.all = true }

// partSent is what was reported of one part.
type partSent struct {
	typ convo.PartType
	// textLen and textSum stand for the text reported so far, its length
	// and a hash of it, rather than a copy: the accumulator holds the
	// text, and a copy here held a long reply's text twice over.
	textLen           int
	textSum           maphash.Hash
	args, sig, encr   []byte // the content reported so far
	id                string // a tool call's id as announced
	started, warned   bool
	inString, escaped bool // where the arguments reported so far end: in a JSON string, after a backslash
}

// PieceAccumulator is an Accumulator that can say what each event changed
// when the event only extended one part — a piece of text, of a tool
// call's arguments, of a signature or an encrypted payload, as almost
// every event of a stream does. DeltaReader uses it to report those pieces
// without comparing snapshots.
type PieceAccumulator interface {
	Accumulator
	// AddPiece folds ev exactly as Add does and says what it changed in
	// the parts Snapshot returns.
	AddPiece(ev Event) (Piece, error)
}

// DataCopier is an Accumulator that keeps nothing of an event's Data once
// Add (or AddPiece) returns: it copies what it keeps. A stream reader may
// then give it each event's data in a buffer the next event overwrites
// (an SSE reader's own), which saves a copy and an allocation an event.
type DataCopier interface {
	Accumulator
	// CopiesData does nothing: an accumulator that has it makes the
	// promise above.
	CopiesData()
}

// Completer is an Accumulator that knows when the reply is whole before
// its stream ends (Anthropic's message_stop): nothing after that changes
// the message Message returns, so a reader may end what it makes of the
// stream then.
type Completer interface {
	Accumulator
	// Complete reports whether the reply is whole: its last event was
	// folded, and it did not fail.
	Complete() bool
}

// Piece is what one event changed in a streamed reply's parts, as a
// PieceAccumulator reports it.
type Piece struct {
	// Kind is DeltaText, DeltaArgs, DeltaSignature or DeltaEncrypted when
	// the event appended Text to that content of the part at Index (its
	// place in the parts Snapshot returns) and changed no part otherwise.
	// It is DeltaPartStart when the event added one part, at Index, after
	// every other, and changed no part otherwise: Part is that part as
	// Snapshot would show it (its content so far included), a part the
	// accumulator gives away: the reader may change it and send it on. It is
	// DeltaStart when the event began the reply and added no part:
	// Origin is the reply's origin as Snapshot would show it. It is 0 when
	// the event changed nothing in the parts Snapshot returns (a
	// keep-alive, the usage, the reason the reply ended, the end of a
	// part that the snapshots already showed as it ends) or, with Other,
	// when it changed them in another way.
	Kind   DeltaKind
	Index  int
	Text   string
	Part   *convo.Part
	Origin *convo.Origin // DeltaStart
	// First, with DeltaArgs, says Text is the first piece of the tool
	// call's arguments and replaces the arguments the call started with
	// (the {} of an Anthropic tool_use block): they are Text alone now.
	// Without it, the first piece of arguments takes a snapshot.
	First bool
	// Other says the event changed the parts in a way that is not one
	// piece (a part was replaced, or several changed): the reader
	// compares a snapshot.
	Other bool
}

// NewDeltaReader returns a DeltaReader feeding acc.
func NewDeltaReader(acc Accumulator) *DeltaReader {
	pa, _ := acc.(PieceAccumulator)
	return &DeltaReader{acc: acc, pieces: pa}
}

// Accumulator returns the accumulator the reader feeds.
func (d *DeltaReader) Accumulator() Accumulator { return d.acc }

// Add folds ev into the accumulator and appends the deltas it brought to
// dst. An event the accumulator rejects returns its error and no deltas.
func (d *DeltaReader) Add(dst []Delta, ev Event) ([]Delta, error) {
	if d.pieces != nil {
		p, err := d.pieces.AddPiece(ev)
		if err != nil {
			return dst, err
		}
		if !d.started && p.Kind == DeltaStart && !p.Other {
			return d.candidates(d.start(dst, p.Origin), nil), nil
		}
		if d.started && !p.Other {
			if p.Kind == 0 {
				return d.candidates(dst, nil), nil
			}
			if out, ok := d.piece(dst, p); ok {
				return d.candidates(out, nil), nil
			}
		}
	} else if err := d.acc.Add(ev); err != nil {
		return dst, err
	}
	m := d.acc.Snapshot()
	dst = d.start(dst, m.Origin)
	dst = d.diff(dst, m.Parts, false)
	return d.candidates(dst, nil), nil
}

// candidates appends the deltas of the candidates after the first, when
// ReadCandidates asked for them: what they grew by, or with final (every
// candidate's final message) the rest of each and its DeltaFinish.
func (d *DeltaReader) candidates(dst []Delta, final []convo.Message) []Delta {
	if !d.all {
		return dst
	}
	ca, ok := d.acc.(CandidatesAccumulator)
	if !ok {
		return dst
	}
	n := ca.Candidates()
	if final != nil {
		n = len(final)
	}
	for k := 1; k < n; k++ {
		if k > len(d.others) {
			d.others = append(d.others, &DeltaReader{started: true})
		}
		o := d.others[k-1]
		from := len(dst)
		if final == nil {
			dst = o.diff(dst, ca.SnapshotCandidate(k).Parts, false)
		} else {
			m := o.keepIDs(final[k])
			dst = o.diff(dst, m.Parts, true)
			dst = append(dst, Delta{Kind: DeltaFinish, Finish: m.Finish})
			for _, w := range o.warns {
				w.Path = strings.TrimSuffix(fmt.Sprintf("candidates[%d].%s", k, w.Path), ".")
				d.warns = append(d.warns, w)
			}
		}
		for i := from; i < len(dst); i++ {
			dst[i].Candidate = k
		}
	}
	return dst
}

// finishCandidates appends the end of the candidates after the first, and
// returns the warnings of all of them in place of warns, the first's
// (which would say the others were left out).
func (d *DeltaReader) finishCandidates(dst []Delta, warns []Warning) ([]Delta, []Warning) {
	ca, ok := d.acc.(CandidatesAccumulator)
	if !d.all || !ok {
		return dst, warns
	}
	ms, warns, err := ca.Messages()
	if err != nil {
		d.warns = append(d.warns, Warnf("candidates", "a candidate did not end: %v", err))
	}
	return d.candidates(dst, ms), warns
}

// start appends the DeltaStart of a reply from origin (a copy of it),
// once.
func (d *DeltaReader) start(dst []Delta, origin *convo.Origin) []Delta {
	if d.started {
		return dst
	}
	d.started = true
	var o *convo.Origin
	if origin != nil {
		c := *origin
		o = &c
	}
	return append(dst, Delta{Kind: DeltaStart, Origin: o})
}

// piece appends the delta of a piece a PieceAccumulator reported, as
// diff would find it, and reports whether it could: a piece of a part not
// yet reported, or one that already differed from what was reported,
// needs a snapshot.
func (d *DeltaReader) piece(dst []Delta, p Piece) ([]Delta, bool) {
	if p.Kind == DeltaPartStart {
		// A new part: what a snapshot would show of it, the parts before
		// it unchanged.
		if p.Part == nil || p.Index != len(d.parts) {
			return dst, false
		}
		// The part is the reader's: its DeltaPartStart carries it, its
		// content (a copy, on the stack) grows from nothing.
		content := *p.Part
		return d.diffPartOwn(dst, p.Index, &content, false, p.Part), true
	}
	if p.Index < 0 || p.Index >= len(d.parts) {
		return dst, false
	}
	s := &d.parts[p.Index]
	if !s.started || s.warned {
		return dst, false
	}
	var sent *[]byte
	switch {
	case p.Kind == DeltaText && streamed(s.typ):
		if p.Text != "" {
			s.appendText(p.Text)
			dst = append(dst, Delta{Kind: p.Kind, Index: p.Index, Text: p.Text})
		}
		return dst, true
	case p.Kind == DeltaArgs && s.typ == convo.TypeToolCall && (len(s.args) > 0) != p.First:
		// The first piece of arguments goes through a snapshot unless
		// the accumulator says it replaces what the call was announced
		// with (nothing was sent of that, len(s.args) is 0): a call may
		// have been announced with arguments it then replaces.
		text := stripSpaceFrom(p.Text, &s.inString, &s.escaped)
		if p.First && text == "{}" {
			// Kept back as a snapshot's would be (see diffPart).
			s.inString, s.escaped = false, false
			return dst, true
		}
		if text != "" {
			s.args = appendPiece(s.args, text)
			dst = append(dst, Delta{Kind: DeltaArgs, Index: p.Index, Text: text})
		}
		return dst, true
	case p.Kind == DeltaSignature && s.typ == convo.TypeReasoning:
		sent = &s.sig
	case p.Kind == DeltaEncrypted && s.typ == convo.TypeReasoning:
		sent = &s.encr
	default:
		return dst, false
	}
	if p.Text == "" {
		return dst, true
	}
	*sent = appendPiece(*sent, p.Text)
	return append(dst, Delta{Kind: p.Kind, Index: p.Index, Text: p.Text}), true
}

// appendPiece appends a piece to what was sent of a part, made with room
// for a few pieces at its first rather than grown from the first piece's
// length by the next ones (pieces are mostly a few words).
func appendPiece(sent []byte, piece string) []byte {
	if sent == nil {
		sent = make([]byte, 0, max(firstPieces, len(piece)))
	}
	return append(sent, piece...)
}

// firstPieces is the room a part's first piece is given.
const firstPieces = 64

// Finish ends the stream: it appends the deltas of the final message
// (the rest of its parts, usage, finish reason, or the stream's error) to
// dst and returns the message as the accumulator's Message gives it, with
// each tool call's id as it was announced (see keepIDs).
func (d *DeltaReader) Finish(dst []Delta) ([]Delta, convo.Message, []Warning, error) {
	m, warns, err := d.acc.Message()
	if d.ended {
		return dst, m, warns, err
	}
	d.ended = true
	dst = d.start(dst, m.Origin)
	if err == nil {
		// The other candidates end first: the first one's DeltaFinish
		// ends the stream.
		dst, warns = d.finishCandidates(dst, warns)
	}
	m = d.keepIDs(m)
	dst = d.diff(dst, m.Parts, true)
	warns = append(warns, d.warns...)
	if err != nil {
		return append(dst, Delta{Kind: DeltaError, Err: err}), m, warns, err
	}
	if m.Usage != nil {
		u := *m.Usage
		dst = append(dst, Delta{Kind: DeltaUsage, Usage: &u})
	}
	return append(dst, Delta{Kind: DeltaFinish, Finish: m.Finish}), m, warns, err
}

// keepIDs returns m with each tool call's id as its DeltaPartStart
// announced it. A reader that makes up ids for calls the provider left
// unnamed may make them from data that changes as the stream goes on
// (Ollama's reply time); the client saw the first, so the message keeps it.
func (d *DeltaReader) keepIDs(m convo.Message) convo.Message {
	copied := false
	for i := range m.Parts {
		if i >= len(d.parts) || !d.parts[i].started || m.Parts[i].Type != convo.TypeToolCall || m.Parts[i].ID == d.parts[i].id {
			continue
		}
		if !copied {
			m.Parts, copied = append([]convo.Part(nil), m.Parts...), true
		}
		m.Parts[i].ID = d.parts[i].id
	}
	return m
}

// diff appends the deltas that take what was reported to parts. With last,
// the parts are final and every one ends.
func (d *DeltaReader) diff(dst []Delta, parts []convo.Part, last bool) []Delta {
	for i := range parts {
		dst = d.diffPart(dst, i, &parts[i], last)
	}
	if last {
		// Each DeltaPartEnd carries a copy of its part, all in one slice.
		ends := make([]convo.Part, min(len(d.parts), len(parts)))
		copy(ends, parts)
		for i := range ends {
			dst = append(dst, Delta{Kind: DeltaPartEnd, Index: i, Part: &ends[i]})
		}
		if len(parts) < len(d.parts) {
			d.warns = append(d.warns, Warnf("", "%d streamed parts are missing from the final message", len(d.parts)-len(parts)))
		}
	}
	return dst
}

// diffPart appends the deltas that take what was reported of part i to p
// (i is at most the number of parts seen so far).
func (d *DeltaReader) diffPart(dst []Delta, i int, p *convo.Part, last bool) []Delta {
	return d.diffPartOwn(dst, i, p, last, nil)
}

// diffPartOwn is diffPart with the part a DeltaPartStart carries, when
// the caller has one of its own to give (own, whose content is cleared);
// else a copy of p.
func (d *DeltaReader) diffPartOwn(dst []Delta, i int, p *convo.Part, last bool, own *convo.Part) []Delta {
	if i == len(d.parts) {
		if d.parts == nil {
			d.parts = make([]partSent, 0, 4) // most replies have a few parts
		}
		d.parts = append(d.parts, partSent{})
	}
	s := &d.parts[i]
	if !s.started {
		// A provider item convo keeps opaque may still turn into a
		// known part (an OpenAI message item before its first content
		// part): it starts when it is known, or at the end.
		if p.Raw != nil && !last {
			return dst
		}
		s.started, s.typ, s.id = true, p.Type, p.ID
		start := own
		if start == nil {
			c := *p
			start = &c
		}
		if streamed(p.Type) || p.Type == convo.TypeToolCall {
			start.Text, start.Args, start.ArgsRaw, start.Signature, start.Encrypted = "", nil, "", "", ""
		}
		dst = append(dst, Delta{Kind: DeltaPartStart, Index: i, Part: start})
	}
	if s.typ != p.Type {
		s.warn(d, i, "the part changed from %s to %s while streaming: not streamed, kept in the message", s.typ, p.Type)
		return dst
	}
	if streamed(p.Type) {
		dst = s.growText(d, dst, i, p.Text)
	}
	switch p.Type {
	case convo.TypeToolCall:
		// Arguments are streamed without the white space outside
		// strings, so pieces of a call in progress stay a prefix of
		// the compacted arguments it ends with.
		args := stripSpace(argsText(p))
		// A call announced with empty arguments ({} before any
		// piece, as Anthropic and Bedrock start tool_use blocks)
		// keeps them back until pieces arrive or the stream ends.
		if last || len(s.args) > 0 || args != "{}" {
			if len(s.args) == 0 || hasPrefix(args, s.args) {
				n := len(s.args)
				dst = s.grow(d, dst, i, DeltaArgs, &s.args, args)
				stripSpaceFrom(args[n:], &s.inString, &s.escaped) // where the arguments now end
			} else if !sameCompact(s.args, args) {
				s.warn(d, i, "tool call arguments were rewritten while streaming: the message keeps the final ones")
			}
		}
	case convo.TypeReasoning:
		dst = s.grow(d, dst, i, DeltaSignature, &s.sig, p.Signature)
		dst = s.grow(d, dst, i, DeltaEncrypted, &s.encr, p.Encrypted)
	}
	return dst
}

func (s *partSent) warn(d *DeltaReader, i int, format string, args ...any) {
	if !s.warned {
		s.warned = true
		d.warns = append(d.warns, Warnf(fmt.Sprintf("parts[%d]", i), format, args...))
	}
}

// stripSpace returns the JSON text s, complete or cut off anywhere, without
// the white space outside its strings.
func stripSpace(s string) string {
	if !strings.ContainsAny(s, " \t\r\n") {
		return s
	}
	in, esc := false, false
	return stripSpaceFrom(s, &in, &esc)
}

// stripSpaceFrom returns the piece s of JSON text without the white space
// outside its strings, where *in and *esc say whether the text before s
// ended inside a string and after a backslash there; it updates them to
// say where s ends.
func stripSpaceFrom(s string, in, esc *bool) string {
	var b strings.Builder // one allocation, handed out by String
	stripped := false
	for j := 0; j < len(s); j++ {
		c := s[j]
		switch {
		case *in && *esc:
			*esc = false
		case *in && c == '\\':
			*esc = true
		case c == '"':
			*in = !*in
		case !*in && (c == ' ' || c == '\t' || c == '\r' || c == '\n'):
			if !stripped {
				b.Grow(len(s))
				b.WriteString(s[:j])
				stripped = true
			}
			continue
		}
		if stripped {
			b.WriteByte(c)
		}
	}
	if !stripped {
		return s
	}
	return b.String()
}

// hasPrefix reports whether s begins with prefix, without copying prefix.
func hasPrefix(s string, prefix []byte) bool {
	return len(s) >= len(prefix) && s[:len(prefix)] == string(prefix)
}

// sameCompact reports whether the arguments sent compact to the final ones
// (a provider's pieces keep spaces its final arguments drop).
func sameCompact(sent []byte, final string) bool {
	c, err := jsonx.Compact(sent, 0)
	return err == nil && string(c) == final
}

// streamed reports whether parts of type t grow by DeltaText.
func streamed(t convo.PartType) bool {
	return t == convo.TypeText || t == convo.TypeRefusal || t == convo.TypeReasoning
}

// argsText is a tool call's arguments as they stand.
func argsText(p *convo.Part) string {
	if p.Args != nil {
		return string(p.Args)
	}
	return p.ArgsRaw
}

// grow appends a delta of kind for what now has beyond *sent. Content that
// is not an extension of what was sent is not sent again: it is a warning.
func (s *partSent) grow(d *DeltaReader, dst []Delta, i int, kind DeltaKind, sent *[]byte, now string) []Delta {
	if len(now) == len(*sent) && now == string(*sent) {
		return dst
	}
	if !hasPrefix(now, *sent) {
		s.warn(d, i, "%s changed while streaming: not streamed again, kept in the message", kind)
		return dst
	}
	piece := now[len(*sent):]
	*sent = append(*sent, piece...)
	return append(dst, Delta{Kind: kind, Index: i, Text: piece})
}

// growText is grow for a streamed part's text, of which only the length
// and a hash are kept (a 40 MB reply's text grown by append was allocated
// five times over, and held two and a quarter times at each doubling,
// beside the accumulator's own copy).
func (s *partSent) growText(d *DeltaReader, dst []Delta, i int, now string) []Delta {
	n := s.textLen
	if !s.sentText(now) {
		s.warn(d, i, "%s changed while streaming: not streamed again, kept in the message", DeltaText)
		return dst
	}
	if len(now) == n {
		return dst
	}
	piece := now[n:]
	s.appendText(piece)
	return append(dst, Delta{Kind: DeltaText, Index: i, Text: piece})
}

// sentSeed seeds the hashes of the texts reported.
var sentSeed = maphash.MakeSeed()

// appendText counts piece in the text reported of the part.
func (s *partSent) appendText(piece string) {
	if s.textLen == 0 {
		s.textSum.SetSeed(sentSeed)
	}
	s.textSum.WriteString(piece)
	s.textLen += len(piece)
}

// sentText reports whether now begins with the text reported of the part.
// It compares hashes: two texts of one length differ with the same hash
// once in 2⁶⁴ (the seed is random), far rarer than the bit errors the
// bytes met on their way here.
func (s *partSent) sentText(now string) bool {
	if s.textLen == 0 {
		return true
	}
	return len(now) >= s.textLen && maphash.String(sentSeed, now[:s.textLen]) == s.textSum.Sum64()
}

// MessageDeltas returns the deltas of a whole message, as a stream that
// carries each part in one piece would give them: a way to send a reply
// that was not streamed to a client that asked for a stream.
func MessageDeltas(m convo.Message) []Delta {
	d := &DeltaReader{started: true}
	var o *convo.Origin
	if m.Origin != nil {
		c := *m.Origin
		o = &c
	}
	dst := []Delta{{Kind: DeltaStart, Origin: o}}
	dst = d.diff(dst, m.Parts, true)
	if m.Usage != nil {
		u := *m.Usage
		dst = append(dst, Delta{Kind: DeltaUsage, Usage: &u})
	}
	return append(dst, Delta{Kind: DeltaFinish, Finish: m.Finish})
}

// StreamEncoder writes a stream in one provider's wire format from deltas.
// Write is called with the deltas of one reply in order, from DeltaStart to
// DeltaFinish or DeltaError; after DeltaFinish or DeltaError the stream is
// complete (terminated as the format requires). Write returns the error of
// the underlying writer.
type StreamEncoder interface {
	Write(d Delta) error
}

// DeltaFold folds deltas back into a message: the canonical accumulator of
// deltas. It keeps what the deltas carry — parts, usage, finish, origin —
// and is what a stream encoder's output is checked against. The deltas of
// candidates after the first (Delta.Candidate > 0) fold into messages of
// their own, which Messages returns.
type DeltaFold struct {
	m    convo.Message
	more []convo.Message // candidates 1, 2, …
	err  error
}

// Add folds one delta.
func (f *DeltaFold) Add(d Delta) error {
	m := &f.m
	if d.Candidate < 0 || d.Candidate > maxCandidates {
		return fmt.Errorf("%s for candidate %d", d.Kind, d.Candidate)
	}
	if d.Candidate > 0 {
		for len(f.more) < d.Candidate {
			f.more = append(f.more, convo.Message{})
		}
		m = &f.more[d.Candidate-1]
	}
	m.Role = convo.RoleAssistant
	switch d.Kind {
	case DeltaStart:
		m.Origin = d.Origin
	case DeltaPartStart:
		if d.Index < 0 || d.Part == nil {
			return fmt.Errorf("part_start without a part, or for part %d", d.Index)
		}
		for len(m.Parts) <= d.Index {
			m.Parts = append(m.Parts, convo.Part{})
		}
		m.Parts[d.Index] = *d.Part
	case DeltaText, DeltaArgs, DeltaSignature, DeltaEncrypted:
		if d.Index < 0 || d.Index >= len(m.Parts) {
			return fmt.Errorf("%s for part %d of %d", d.Kind, d.Index, len(m.Parts))
		}
		p := &m.Parts[d.Index]
		switch d.Kind {
		case DeltaText:
			p.Text += d.Text
		case DeltaArgs:
			p.ArgsRaw += d.Text
		case DeltaSignature:
			p.Signature += d.Text
		case DeltaEncrypted:
			p.Encrypted += d.Text
		}
	case DeltaPartEnd:
		if d.Index < 0 || d.Index >= len(m.Parts) || d.Part == nil {
			return fmt.Errorf("part_end for part %d of %d", d.Index, len(m.Parts))
		}
		m.Parts[d.Index] = *d.Part
	case DeltaUsage:
		m.Usage = d.Usage
	case DeltaFinish:
		m.Finish = d.Finish
	case DeltaError:
		f.err = d.Err
		m.Finish = convo.FinishError
	default:
		return fmt.Errorf("unknown delta kind %d", d.Kind)
	}
	return nil
}

// maxCandidates bounds Delta.Candidate in a DeltaFold (OpenAI allows n up
// to 128; Gemini's candidateCount is smaller).
const maxCandidates = 1024

// Message returns the message folded so far (the first candidate's) and
// the stream's error.
func (f *DeltaFold) Message() (convo.Message, error) { return f.m, f.err }

// Messages returns every candidate's message folded so far, the first
// first; the others carry the first one's Origin (the stream's).
func (f *DeltaFold) Messages() ([]convo.Message, error) {
	ms := append([]convo.Message{f.m}, f.more...)
	for k := 1; k < len(ms); k++ {
		ms[k].Role = convo.RoleAssistant
		if ms[k].Origin == nil {
			ms[k].Origin = f.m.Origin
		}
	}
	return ms, f.err
}

// StreamOptions configure a stream encoder.
type StreamOptions struct {
	// Model is the model the stream names when the deltas' Origin names
	// none (or names another provider's model and the client asked for
	// this one).
	Model string
	// OmitUsage leaves out the OpenAI Chat usage chunk, which clients get
	// only when they ask for it (stream_options.include_usage).
	OmitUsage bool
	// ResponseID is the id an OpenAI Responses reply is given; empty: the
	// id of the response the deltas' Origin names, or a new one.
	ResponseID string
}
