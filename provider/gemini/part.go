package gemini

import (
	"errors"
	"fmt"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
)

// wirePart is one Gemini Part as read, before it becomes a convo part: the
// stream accumulator looks at it to decide whether a text delta may join
// the text before it, and request decoding fills in tool-call ids.
type wirePart struct {
	kind    string // wire name of the data member ("text", "functionCall", …); "" for none
	text    []byte // the text; aliases the document unless it had escapes
	thought bool   // thought: true
	hasTh   bool   // a thought member was present (true or false)
	sig     string // thoughtSignature
	hasSig  bool
	extra   members    // other members, verbatim, for Native["gemini"]
	part    convo.Part // media, functionCall or functionResponse as read
	hasID   bool       // functionCall / functionResponse carried an id
	opaque  []byte     // the whole part object, for a kind convo has no type for
	server  bool       // executableCode / codeExecutionResult read as a provider-run part

	// A functionCall streamed in pieces (see partial.go): willContinue on
	// the call, and the partialArgs of a name-less piece.
	cont    bool
	partial []partialArg
}

// dataKind maps a part member name to the wire name of the data field it
// sets ("" if it is not one). Protobuf JSON accepts snake_case names too.
func dataKind(key string) string {
	switch key {
	case "text":
		return "text"
	case "inlineData", "inline_data":
		return "inlineData"
	case "fileData", "file_data":
		return "fileData"
	case "functionCall", "function_call":
		return "functionCall"
	case "functionResponse", "function_response":
		return "functionResponse"
	case "executableCode", "executable_code":
		return "executableCode"
	case "codeExecutionResult", "code_execution_result":
		return "codeExecutionResult"
	case "toolCall", "tool_call":
		return "toolCall"
	case "toolResponse", "tool_response":
		return "toolResponse"
	}
	return ""
}

// partReader reads Gemini parts from one document.
type partReader struct {
	r   *jsonx.Reader
	aux jsonx.Reader // reused for values read a second time (function responses)
	// stream: reading a stream chunk, where a functionCall may be a piece
	// of a call streamed in pieces (no name, partialArgs, willContinue).
	stream bool
}

// readPart reads one Part object into wp. inResponse restricts it to what a
// FunctionResponsePart may hold (inlineData or fileData).
func (d *partReader) readPart(wp *wirePart, inResponse bool) error {
	*wp = wirePart{extra: wp.extra[:0]}
	r := d.r
	r.Peek() // skip white space so start is the object's first byte
	start := r.Offset()
	err := r.ReadObject(func(key []byte) error {
		if k := dataKind(string(key)); k != "" {
			return d.data(wp, k, key, inResponse)
		}
		return d.meta(wp, key)
	})
	if err != nil {
		return err
	}
	switch wp.kind {
	case "":
		if inResponse {
			return errors.New("functionResponse part has no inlineData or fileData")
		}
		// A part without a data member is an empty text part: that is how
		// the Go SDK writes one (Part.Text is omitempty) — an empty part
		// carrying only a signature, say — and the API reads both alike.
		// Encode writes "text":"" back.
		wp.kind = "text"
		return nil
	case "text", "inlineData", "fileData", "functionCall", "functionResponse":
		return nil
	}
	if wp.server {
		return nil
	}
	// A kind convo has no type for is kept whole, as read (and so is a
	// code execution part not shaped as the API writes it).
	wp.opaque, err = jsonx.Compact(r.Bytes()[start:r.Offset()], 0)
	return err
}

// meta reads a part's member that is not its data: thought, its
// signature, or one kept as it is.
func (d *partReader) meta(wp *wirePart, key []byte) error {
	r := d.r
	switch string(key) {
	case "thought":
		if r.ReadNull() {
			return nil
		}
		b, err := r.ReadBool()
		wp.thought, wp.hasTh = b, true
		return convo.ErrorAt(err, "thought")
	case "thoughtSignature", "thought_signature":
		if r.ReadNull() {
			return nil
		}
		if wp.hasSig {
			return convo.ErrorAt(errors.New("thoughtSignature set twice"), string(key))
		}
		s, err := r.ReadString()
		wp.sig, wp.hasSig = s, true
		return atKey(err, key)
	}
	raw, err := r.ReadRaw()
	if err != nil {
		return atKey(err, key)
	}
	wp.extra = wp.extra.add(bstr(key), raw)
	return nil
}

// data reads the part's data member key, of kind k; a part holds one.
func (d *partReader) data(wp *wirePart, k string, key []byte, inResponse bool) error {
	r := d.r
	if r.ReadNull() {
		return nil // protobuf JSON: null is the field left unset
	}
	if wp.kind != "" {
		return convo.ErrorAt(fmt.Errorf("part sets both %s and %s (a part holds one kind of data)", wp.kind, k), string(key))
	}
	wp.kind = k
	if inResponse && k != "inlineData" && k != "fileData" {
		return convo.ErrorAt(fmt.Errorf("%s in functionResponse.parts (want inlineData or fileData)", k), string(key))
	}
	var err error
	switch k {
	case "text":
		wp.text, err = r.ReadStringBytes()
	case "inlineData":
		err = d.blob(wp)
	case "fileData":
		err = d.fileData(wp)
	case "functionCall":
		err = d.call(wp)
	case "functionResponse":
		err = d.response(wp)
	case "executableCode", "codeExecutionResult":
		var raw []byte
		if raw, err = r.ReadRaw(); err == nil {
			wp.server = serverPart(&d.aux, k, raw, wp)
		}
	default:
		err = r.Skip() // opaque: the whole part is kept below
	}
	return convo.ErrorAt(err, k)
}

// nestedKey names the Native["gemini"] member that keeps the unknown members
// of a data object, under the data object's own wire name.
func (wp *wirePart) nested(kind string, m members) {
	if len(m) > 0 {
		wp.extra = wp.extra.add(kind, m.object())
	}
}

func (d *partReader) blob(wp *wirePart) error {
	r := d.r
	p := &wp.part
	var nested members
	var hasMime, hasData bool
	err := r.ReadObject(func(key []byte) error {
		switch string(key) {
		case "mimeType", "mime_type":
			if hasMime {
				return convo.ErrorAt(errors.New("mimeType set twice"), string(key))
			}
			hasMime = true
			s, err := optString(r)
			p.MediaType = s
			return atKey(err, key)
		case "data":
			s, err := optString(r)
			if err != nil {
				return convo.ErrorAt(err, "data")
			}
			std, ok := stdBase64(s)
			if !ok {
				return convo.ErrorAt(errors.New("data is not base64"), "data")
			}
			p.Data, hasData = std, std != ""
			return nil
		case "displayName", "display_name":
			s, err := optString(r)
			if err != nil {
				return atKey(err, key)
			}
			p.Name = s
			// Kept as the wire member too: the Gemini API rejects
			// displayName, so Encode sends it only where it came from.
			nested = nested.add(bstr(key), jsonx.AppendString(nil, s))
			return nil
		}
		raw, err := r.ReadRaw()
		nested = nested.add(bstr(key), raw)
		return atKey(err, key)
	})
	if err != nil {
		return err
	}
	switch {
	case !hasData:
		return errors.New("inlineData has no data")
	case p.MediaType == "":
		return errors.New("inlineData has no mimeType")
	}
	p.Type = mediaType(p.MediaType)
	wp.nested("inlineData", nested)
	return nil
}

func (d *partReader) fileData(wp *wirePart) error {
	r := d.r
	p := &wp.part
	var nested members
	var uri string
	var hasMime bool
	err := r.ReadObject(func(key []byte) error {
		switch string(key) {
		case "mimeType", "mime_type":
			if hasMime {
				return convo.ErrorAt(errors.New("mimeType set twice"), string(key))
			}
			hasMime = true
			s, err := optString(r)
			p.MediaType = s
			return atKey(err, key)
		case "fileUri", "file_uri":
			if uri != "" {
				return convo.ErrorAt(errors.New("fileUri set twice"), string(key))
			}
			s, err := optString(r)
			uri = s
			return atKey(err, key)
		case "displayName", "display_name":
			s, err := optString(r)
			if err != nil {
				return atKey(err, key)
			}
			p.Name = s
			nested = nested.add(bstr(key), jsonx.AppendString(nil, s))
			return nil
		}
		raw, err := r.ReadRaw()
		nested = nested.add(bstr(key), raw)
		return atKey(err, key)
	})
	if err != nil {
		return err
	}
	if uri == "" {
		return errors.New("fileData has no fileUri")
	}
	if len(uri) > len(FilesPrefix) && uri[:len(FilesPrefix)] == FilesPrefix {
		p.FileID = uri
	} else {
		p.URL = uri
	}
	p.Type = mediaType(p.MediaType)
	wp.nested("fileData", nested)
	return nil
}

func (d *partReader) call(wp *wirePart) error {
	r := d.r
	p := &wp.part
	p.Type = convo.TypeToolCall
	var nested members
	err := r.ReadObject(func(key []byte) error {
		switch string(key) {
		case "id":
			s, err := optString(r)
			p.ID, wp.hasID = s, err == nil && s != ""
			return convo.ErrorAt(err, "id")
		case "name":
			s, err := optString(r)
			p.Name = s
			return convo.ErrorAt(err, "name")
		case "args":
			if r.ReadNull() {
				return nil
			}
			if r.Peek() != jsonx.Object {
				return convo.ErrorAt(r.Errorf("args must be a JSON object, got %s", r.Peek()), "args")
			}
			raw, err := r.ReadRaw()
			p.Args = raw
			return convo.ErrorAt(err, "args")
		case "willContinue", "will_continue":
			if d.stream {
				b, err := r.ReadBool()
				wp.cont = b
				return convo.ErrorAt(err, "willContinue")
			}
		case "partialArgs", "partial_args":
			if d.stream {
				pa, err := readPartialArgs(r)
				wp.partial = pa
				return convo.ErrorAt(err, "partialArgs")
			}
		}
		raw, err := r.ReadRaw()
		nested = nested.add(bstr(key), raw)
		return atKey(err, key)
	})
	if err != nil {
		return err
	}
	if p.Name == "" && !d.stream {
		return errors.New("functionCall has no name")
	}
	wp.nested("functionCall", nested)
	return nil
}

func (d *partReader) response(wp *wirePart) error {
	r := d.r
	p := &wp.part
	p.Type = convo.TypeToolResult
	var nested members
	var resp []byte
	var media []convo.Part
	err := r.ReadObject(func(key []byte) error {
		switch string(key) {
		case "id":
			s, err := optString(r)
			p.ID, wp.hasID = s, err == nil && s != ""
			return convo.ErrorAt(err, "id")
		case "name":
			s, err := optString(r)
			p.Name = s
			return convo.ErrorAt(err, "name")
		case "response":
			if r.ReadNull() {
				return nil
			}
			if r.Peek() != jsonx.Object {
				return convo.ErrorAt(r.Errorf("response must be a JSON object, got %s", r.Peek()), "response")
			}
			raw, err := r.ReadRaw()
			resp = raw
			return convo.ErrorAt(err, "response")
		case "parts":
			if r.ReadNull() {
				return nil
			}
			var sub wirePart
			return convo.ErrorAt(r.ReadArray(func(i int) error {
				if err := d.readPart(&sub, true); err != nil {
					return atIndex(err, "", i)
				}
				media = append(media, sub.convoPart())
				return nil
			}), "parts")

		}
		raw, err := r.ReadRaw()
		nested = nested.add(bstr(key), raw)
		return atKey(err, key)
	})
	if err != nil {
		return err
	}
	if p.Name == "" {
		return errors.New("functionResponse has no name")
	}
	content, isErr, wrap := splitResponse(&d.aux, resp)
	p.Error = isErr
	p.Parts = append(content, media...)
	wp.nested("functionResponse", nested)
	if wrap != "" {
		wp.extra = wp.extra.add(ResponseWrap, jsonx.AppendString(nil, wrap))
	}
	return nil
}

// splitResponse reads the functionResponse.response object by the
// convention the Gemini SDKs document: {"output":…} is a result,
// {"error":…} a failure, any other object is the output itself. It returns
// the result's content, whether the tool failed, and the ResponseWrap note
// Encode needs to rebuild the same object (see encodeResponse).
func splitResponse(r *jsonx.Reader, resp []byte) (content []convo.Part, isErr bool, wrap string) {
	if resp == nil {
		return nil, false, ""
	}
	var keys int
	var first string
	var value []byte
	var hasOutput, hasError bool
	r.Reset(resp, 0)
	_ = r.ReadObject(func(key []byte) error {
		keys++
		switch string(key) {
		case "output":
			hasOutput = true
		case "error":
			hasError = true
		}
		if keys == 1 {
			switch string(key) {
			case "output":
				first = "output"
			case "error":
				first = "error"
			}
			r.Peek()
			start := r.Offset()
			err := r.Skip()
			value = resp[start:r.Offset()] // resp is compact already
			return err
		}
		return r.Skip()
	})
	if keys == 1 && first != "" {
		part := valuePart(r, value)
		if first == "error" {
			return []convo.Part{part}, true, ""
		}
		if part.Type == convo.TypeJSON && !wrapsByDefault(r, value, false) {
			wrap = "output"
		}
		return []convo.Part{part}, false, wrap
	}
	if hasOutput || hasError {
		wrap = "none"
	}
	return []convo.Part{convo.JSON(resp)}, hasError, wrap
}

// valuePart is the convo part for a response value: a string is text, any
// other value is JSON.
func valuePart(r *jsonx.Reader, v []byte) convo.Part {
	if len(v) > 0 && v[0] == '"' {
		r.Reset(v, 0)
		if s, err := r.ReadString(); err == nil {
			return convo.Text(s)
		}
	}
	return convo.JSON(v)
}

// wrapsByDefault reports whether Encode wraps a one-JSON-value result v in
// {"output":…} / {"error":…} when no ResponseWrap note says otherwise: it
// sends a JSON object as the response itself unless the tool failed or the
// object has an output or error member, which would be misread.
func wrapsByDefault(r *jsonx.Reader, v []byte, isErr bool) bool {
	if isErr || len(v) == 0 || v[0] != '{' {
		return true
	}
	clash := false
	r.Reset(v, 0)
	_ = r.ReadObject(func(key []byte) error {
		if string(key) == "output" || string(key) == "error" {
			clash = true
		}
		return r.Skip()
	})
	return clash
}

// convoPart turns a part read by readPart into a convo part. Tool-call ids
// are the caller's business (see content in decode.go).
func (wp *wirePart) convoPart() convo.Part {
	var p convo.Part
	wp.fill(&p)
	return p
}

// fill is convoPart writing into a zero part, which saves copying the large
// Part struct around on the hot path.
func (wp *wirePart) fill(p *convo.Part) {
	switch wp.kind {
	case "text":
		p.Text = string(wp.text)
		// An empty thought without a signature carries nothing a reasoning
		// part could hold: it stays a text part with its thought flag.
		if wp.thought && (len(wp.text) > 0 || wp.hasSig) {
			p.Type, p.Signature, p.Provider = convo.TypeReasoning, wp.sig, ProviderID
			p.Native = withNative(nil, wp.extra.object())
			return
		}
		p.Type = convo.TypeText
	case "inlineData", "fileData", "functionCall", "functionResponse":
		*p = wp.part
	case "executableCode", "codeExecutionResult":
		if !wp.server {
			*p = provider.OpaquePart(ProviderID, wp.kind, wp.opaque)
			return
		}
		*p = wp.part
	default:
		*p = provider.OpaquePart(ProviderID, wp.kind, wp.opaque)
		return
	}
	p.Native = withNative(nil, wp.native())
}

// native is Native["gemini"] for a non-thought part: the signature, the
// thought flag when it was given, and every other member.
func (wp *wirePart) native() []byte {
	if !wp.hasSig && !wp.hasTh && len(wp.extra) == 0 {
		return nil
	}
	m := make(members, 0, len(wp.sig)+len(wp.extra)+48)
	if wp.hasSig {
		m = append(m, `"thoughtSignature":`...)
		m = jsonx.AppendString(m, wp.sig)
	}
	if wp.hasTh {
		if wp.thought {
			m = m.add("thought", []byte("true"))
		} else {
			m = m.add("thought", []byte("false"))
		}
	}
	if len(wp.extra) > 0 {
		if len(m) > 0 {
			m = append(m, ',')
		}
		m = append(m, wp.extra...)
	}
	// One allocation: the braces go around the members in place.
	m = append(m, 0, 0)
	copy(m[1:], m[:len(m)-2])
	m[0], m[len(m)-1] = '{', '}'
	return m
}

func optString(r *jsonx.Reader) (string, error) {
	if r.ReadNull() {
		return "", nil
	}
	return r.ReadString()
}
