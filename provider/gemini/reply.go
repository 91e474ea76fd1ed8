package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
)

// field is one member kept verbatim for Native["gemini"]. In a response
// being read both alias the document; whoever keeps one copies it.
type field struct {
	key []byte
	raw []byte
}

// response is one GenerateContentResponse as read: a whole reply, or one
// chunk of a stream. Its buffers are reused from chunk to chunk.
type response struct {
	parts     []wirePart // parts of the candidate with index want
	other     []wirePart // scratch for the candidates that are not
	hasCand   bool       // a candidate with index want was present
	extraCand int        // candidates with another index
	want      int64      // the index of the candidate read (0 but in DecodeReplies); kept by reset
	indices   []int64    // the index of every candidate, in document order
	finish    string
	candExtra []field // the candidate's other members (finishMessage, safetyRatings, …)
	respExtra []field // the response's other members (promptFeedback, createTime, …)
	hasUsage  bool
	usage     convo.Usage
	usageRaw  []byte
	model     []byte
	id        []byte
	blocked   bool // promptFeedback.blockReason is set
	apiErr    *provider.APIError

	// keepAll keeps the candidates with another index than want in more
	// (a stream chunk, where every candidate grows), instead of counting
	// them only; more[:nmore] are this chunk's, their buffers reused.
	keepAll bool
	more    []candRead
	nmore   int
}

// candRead is one candidate of a chunk besides the one with index want.
type candRead struct {
	index  int64
	parts  []wirePart
	finish string
	extra  []field
}

func (resp *response) reset() {
	resp.parts, resp.other = resp.parts[:0], resp.other[:0]
	resp.hasCand, resp.extraCand, resp.finish = false, 0, ""
	resp.indices = resp.indices[:0]
	resp.candExtra, resp.respExtra = resp.candExtra[:0], resp.respExtra[:0]
	resp.hasUsage, resp.usageRaw, resp.model, resp.id = false, nil, nil, nil
	resp.blocked, resp.apiErr = false, nil
	resp.nmore = 0
}

// rawValue returns the next value as it is in the document, validated,
// without copying it.
func rawValue(r *jsonx.Reader) ([]byte, error) {
	r.Peek()
	start := r.Offset()
	err := r.Skip()
	return r.Bytes()[start:r.Offset()], err
}

// read reads a GenerateContentResponse (or an error object) from d.r.
func (d *partReader) readResponse(resp *response) error {
	resp.reset()
	r := d.r
	if k := r.Peek(); k != jsonx.Object {
		return r.Errorf("got %s, want a JSON object", k)
	}
	return r.ReadObject(func(key []byte) error {
		switch string(key) {
		case "candidates":
			if r.ReadNull() {
				return nil
			}
			return convo.ErrorAt(r.ReadArray(func(i int) error {
				return atIndex(d.candidate(resp), "", i)
			}), "candidates")

		case "usageMetadata", "usage_metadata":
			if r.ReadNull() {
				return nil
			}
			raw, err := rawValue(r)
			if err != nil {
				return atKey(err, key)
			}
			resp.usageRaw, resp.hasUsage = raw, true
			return atKey(usage(&d.aux, raw, &resp.usage), key)
		case "modelVersion", "model_version":
			if r.ReadNull() {
				return nil
			}
			b, err := r.ReadStringBytes()
			resp.model = b
			return atKey(err, key)
		case "responseId", "response_id":
			if r.ReadNull() {
				return nil
			}
			b, err := r.ReadStringBytes()
			resp.id = b
			return atKey(err, key)
		case "error":
			e, err := apiError(r)
			resp.apiErr = e
			return atKey(err, key)
		case "sdkHttpResponse":
			return r.Skip() // the Go SDK's own bookkeeping, not the API's
		}
		if r.ReadNull() {
			return nil
		}
		raw, err := rawValue(r)
		if err != nil {
			return atKey(err, key)
		}
		if string(key) == "promptFeedback" || string(key) == "prompt_feedback" {
			resp.blocked = bytes.Contains(raw, []byte(`"blockReason"`)) || bytes.Contains(raw, []byte(`"block_reason"`))
		}
		resp.respExtra = append(resp.respExtra, field{key, raw})
		return nil
	})
}

// candidate reads one candidate. Its content is read before its index is
// known (the API writes content first, and leaves index 0 out), so the
// parts go to scratch and are kept only for index 0.
func (d *partReader) candidate(resp *response) error {
	r := d.r
	index := int64(0)
	parts := resp.other[:0]
	var finish string
	extraStart := len(resp.candExtra)
	err := r.ReadObject(func(key []byte) error {
		switch string(key) {
		case "content":
			if r.ReadNull() {
				return nil
			}
			return convo.ErrorAt(r.ReadObject(func(key []byte) error {
				if string(key) != "parts" || r.ReadNull() {
					return r.Skip()
				}
				return convo.ErrorAt(r.ReadArray(func(j int) error {
					if j < cap(parts) {
						parts = parts[:j+1]
					} else {
						parts = append(parts, wirePart{})
					}
					return atIndex(d.readPart(&parts[j], false), "", j)
				}), "parts")

			}), "content")

		case "index":
			if r.ReadNull() {
				return nil
			}
			n, err := r.ReadInt()
			index = n
			return convo.ErrorAt(err, "index")
		case "finishReason", "finish_reason":
			s, err := optString(r)
			finish = s
			return atKey(err, key)
		}
		if r.ReadNull() {
			return nil
		}
		raw, err := rawValue(r)
		resp.candExtra = append(resp.candExtra, field{key, raw})
		return atKey(err, key)
	})
	if err != nil {
		return err
	}
	resp.indices = append(resp.indices, index)
	if index != resp.want || resp.hasCand {
		resp.extraCand++
		if resp.keepAll {
			parts = resp.keep(index, finish, parts, resp.candExtra[extraStart:])
		}
		resp.candExtra = resp.candExtra[:extraStart]
		resp.other = parts
		return nil
	}
	resp.hasCand = true
	resp.finish = finish
	resp.other, resp.parts = resp.parts, parts
	return nil
}

// keep records a candidate besides want's in more, taking its parts and
// handing back the buffer it replaces as the next scratch.
func (resp *response) keep(index int64, finish string, parts []wirePart, extra []field) []wirePart {
	if resp.nmore == len(resp.more) {
		resp.more = append(resp.more, candRead{})
	}
	c := &resp.more[resp.nmore]
	resp.nmore++
	c.index, c.finish = index, finish
	c.extra = append(c.extra[:0], extra...)
	parts, c.parts = c.parts[:0], parts
	return parts
}

func usage(r *jsonx.Reader, raw []byte, u *convo.Usage) error {
	*u = convo.Usage{}
	var toolPrompt, candidates int64
	r.Reset(raw, 0)
	err := r.ReadObject(func(key []byte) error {
		var dst *int64
		switch string(key) {
		case "promptTokenCount", "prompt_token_count":
			dst = &u.Input
		case "cachedContentTokenCount", "cached_content_token_count":
			dst = &u.CacheRead
		case "candidatesTokenCount", "candidates_token_count":
			dst = &candidates
		case "thoughtsTokenCount", "thoughts_token_count":
			dst = &u.Reasoning
		case "toolUsePromptTokenCount", "tool_use_prompt_token_count":
			dst = &toolPrompt
		case "totalTokenCount", "total_token_count":
			dst = &u.Total
		default:
			return r.Skip()
		}
		if r.ReadNull() {
			return nil
		}
		n, err := r.ReadInt()
		if err == nil && n < 0 {
			err = fmt.Errorf("negative token count %d", n)
		}
		*dst = n
		return atKey(err, key)
	})
	// Gemini counts the tool-use prompt apart from the prompt, and thoughts
	// apart from the candidates; convo's input and output include them.
	u.Input += toolPrompt
	u.Output = candidates + u.Reasoning
	return err
}

// apiError reads an error object: {"code","status","message"} as Status,
// Type and Message.
func apiError(r *jsonx.Reader) (*provider.APIError, error) {
	e := &provider.APIError{Provider: ProviderID}
	if r.Peek() != jsonx.Object {
		s, err := optString(r)
		e.Message = s
		return e, err
	}
	err := r.ReadObject(func(key []byte) error {
		var err error
		switch string(key) {
		case "code":
			if !r.ReadNull() {
				var code int64
				code, err = r.ReadInt()
				e.Status = int(code)
			}
		case "status":
			e.Type, err = optString(r)
		case "message":
			e.Message, err = optString(r)
		default:
			err = r.Skip()
		}
		return atKey(err, key)
	})
	return e, err
}

// finish normalises a finishReason; toolUse tells whether the reply calls
// functions (Gemini has no finish reason of its own for that).
func finish(reason string, toolUse, blocked bool) convo.Finish {
	switch reason {
	case "":
		if blocked {
			return convo.FinishContentFilter
		}
		return ""
	case "STOP":
		if toolUse {
			return convo.FinishToolUse
		}
		return convo.FinishStop
	case "MAX_TOKENS":
		return convo.FinishLength
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII",
		"IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION":
		return convo.FinishContentFilter
	}
	// LANGUAGE, OTHER, MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL,
	// TOO_MANY_TOOL_CALLS, NO_IMAGE, IMAGE_OTHER, FINISH_REASON_UNSPECIFIED
	// and reasons newer than this code.
	return convo.FinishOther
}

// replyCallID is the id of a functionCall without one in a reply: from
// the response id, the call's place, name and arguments, so the same reply
// gets the same ids streamed or not, and calls of different replies differ.
// The arguments count by value, not by spelling: a reply that went through
// another JSON encoder (an SDK's, a proxy's) keeps its ids.
func replyCallID(p *convo.Part, j int, responseID string) string {
	return provider.SynthID(0, j, responseID+"\x00"+p.Name+"\x00"+string(sortedJSON(p.Args)))
}

// sortedJSON returns raw with object keys sorted and no insignificant
// space, numbers spelled as they came; raw itself when it is not valid JSON.
func sortedJSON(raw []byte) []byte {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return raw
	}
	out, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return out
}

// message builds the assistant message of a reply from its parts and the
// metadata read.
type meta struct {
	finish    string
	blocked   bool
	model, id string
	usage     *convo.Usage
	usageRaw  []byte
	candExtra []field
	respExtra []field
	apiErr    *provider.APIError
	// streamed: the parts were accumulated from a stream, where a
	// grounding segment's partIndex counts text parts (see groundingPart).
	streamed bool
}

func (m *meta) message(parts []convo.Part) convo.Message {
	msg := convo.Message{Role: convo.RoleAssistant, Parts: parts}
	toolUse := false
	for j := range parts {
		p := &parts[j]
		switch p.Type {
		case convo.TypeToolCall:
			toolUse = toolUse || !p.IsServerTool()
		case convo.TypeReasoning:
			p.Model = m.model
		}
	}
	msg.Finish = finish(m.finish, toolUse, m.blocked)
	if m.apiErr != nil {
		msg.Finish = convo.FinishError
	}
	msg.Origin = &convo.Origin{Provider: ProviderID, Model: m.model, ResponseID: m.id}
	if m.usage != nil {
		u := *m.usage
		msg.Usage = &u
	}
	var n members
	// The candidate's and the response's members share one object: the
	// first of a name wins (they do not overlap in practice).
	// The names convo writes itself are taken from the start.
	seen := append(make([]string, 0, 4+len(m.candExtra)+len(m.respExtra)), "finishReason", "usageMetadata", "error")
	add := func(key string, raw []byte) {
		for _, k := range seen {
			if k == key {
				return
			}
		}
		seen = append(seen, key)
		n = n.add(key, raw)
	}
	if m.finish != "" {
		n = n.add("finishReason", jsonx.AppendString(nil, m.finish))
	}
	for _, f := range m.candExtra {
		raw := f.raw
		switch bstr(f.key) {
		case "groundingMetadata":
			raw, _ = readGrounding(raw, parts, m.streamed)
		case "citationMetadata":
			raw, _ = readCitationMeta(raw, parts)
		}
		add(bstr(f.key), raw)
	}
	for _, f := range m.respExtra {
		add(bstr(f.key), f.raw)
	}
	if m.usageRaw != nil {
		n = n.add("usageMetadata", m.usageRaw)
	}
	if e := m.apiErr; e != nil {
		b := []byte(`{"code":`)
		b = strconv.AppendInt(b, int64(e.Status), 10)
		b = append(b, `,"status":`...)
		b = jsonx.AppendString(b, e.Type)
		b = append(b, `,"message":`...)
		b = jsonx.AppendString(b, e.Message)
		n = n.add("error", append(b, '}'))
	}
	msg.Native = withNative(nil, n.object())
	return msg
}

// DecodeReply decodes a generateContent response body into one assistant
// message: the parts of the first candidate as they are (nothing merged),
// Usage from usageMetadata, Finish from finishReason (the raw reason, the
// candidate's other members such as safetyRatings and citationMetadata, and
// promptFeedback are kept in Native["gemini"]), Origin from modelVersion and
// responseId. An error object is returned as a *provider.APIError.
func (generateContent) DecodeReply(body []byte, opts provider.Options) (convo.Message, []provider.Warning, error) {
	if err := provider.CheckReply(body, Name); err != nil {
		return convo.Message{}, nil, err
	}
	m, warns, _, err := decodeCandidate(body, opts, 0)
	if err != nil {
		return m, warns, err
	}
	return m, warns, opts.Check(warns)
}

// DecodeReplies decodes a generateContent response body into one assistant
// message per candidate, in index order: a request with candidateCount > 1
// gets that many replies. Each is what DecodeReply makes of its candidate;
// the usage, which counts every candidate, is on the first only.
func (generateContent) DecodeReplies(body []byte, opts provider.Options) ([]convo.Message, []provider.Warning, error) {
	if err := provider.CheckReply(body, Name); err != nil {
		return nil, nil, err
	}
	m, warns, indices, err := decodeCandidate(body, opts, 0)
	if err != nil {
		return nil, warns, err
	}
	warns = slices.DeleteFunc(warns, func(w provider.Warning) bool { return w.Path == "candidates" })
	ms := []convo.Message{m}
	slices.Sort(indices)
	for _, k := range slices.Compact(indices) {
		if k == 0 {
			continue
		}
		o, w, _, err := decodeCandidate(body, opts, k)
		if err != nil {
			return nil, warns, fmt.Errorf("candidate %d: %w", k, err)
		}
		for _, x := range w {
			if x.Path != "candidates" {
				warns = append(warns, x)
			}
		}
		ms = append(ms, o)
	}
	return ms, warns, opts.Check(warns)
}

// decodeCandidate decodes the candidate with index want, and returns the
// index of every candidate of the body.
func decodeCandidate(body []byte, opts provider.Options, want int64) (convo.Message, []provider.Warning, []int64, error) {
	lim, err := opts.CheckSize(body, "response")
	if err != nil {
		return convo.Message{}, nil, nil, err
	}
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	d := partReader{r: jsonx.NewReader(body, lim.MaxDepth)}
	resp := response{want: want}
	err = d.readResponse(&resp)
	if err == nil {
		err = d.r.ExpectEnd()
	}
	if err != nil {
		return convo.Message{}, nil, nil, fmt.Errorf("response: %w", err)
	}
	if resp.apiErr != nil {
		return convo.Message{}, nil, nil, resp.apiErr
	}
	var warns []provider.Warning
	if resp.extraCand > 0 {
		warns = append(warns, provider.Warnf("candidates", "%d candidates besides the first left out (DecodeReplies returns them all)", resp.extraCand))
	}
	if !resp.hasCand && !resp.blocked {
		return convo.Message{}, warns, nil, errors.New("response has no candidate (with index 0) and no promptFeedback.blockReason")
	}
	parts := make([]convo.Part, len(resp.parts))
	for j := range resp.parts {
		wp := &resp.parts[j]
		p := &parts[j]
		wp.fill(p)
		if p.Type == convo.TypeToolCall && !wp.hasID && !wp.server {
			p.ID = replyCallID(p, j, string(resp.id))
			mark(p, SyntheticID)
		}
	}
	m := meta{
		finish: resp.finish, blocked: resp.blocked, model: string(resp.model), id: string(resp.id),
		usageRaw: resp.usageRaw, candExtra: resp.candExtra, respExtra: resp.respExtra, apiErr: resp.apiErr,
	}
	if want != 0 {
		// The usage counts every candidate: it goes with the first.
		resp.hasUsage, m.usageRaw = false, nil
	}
	if resp.hasUsage {
		m.usage = &resp.usage
	}
	return m.message(parts), warns, resp.indices, nil
}
