package ollama

import (
	"errors"
	"fmt"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider/internal/wire"
)

// wireCall is one entry of a message's "tool_calls" as read.
type wireCall struct {
	id    string
	hasID bool
	name  string
	args  []byte // compact JSON; nil when absent or null
	fn    wire.Members
	extra wire.Members
}

// wireMsg is one Ollama message object as read. Byte slices may alias the
// document being read.
type wireMsg struct {
	role        []byte
	content     []byte
	hasContent  bool
	thinking    []byte
	images      []string
	calls       []wireCall
	callsRaw    []byte // the tool_calls value, for roles that cannot call
	toolName    []byte
	hasToolName bool
	toolCallID  []byte
	hasCallID   bool
	extra       wire.Members
}

// optString reads a string or null; null counts as absent.
func optString(r *jsonx.Reader) ([]byte, bool, error) {
	if r.ReadNull() {
		return nil, false, nil
	}
	s, err := r.ReadStringBytes()
	return s, err == nil, err
}

// readMessage reads one message object.
func readMessage(r *jsonx.Reader, w *wireMsg) error {
	return r.ReadObject(func(key []byte) error {
		var err error
		switch string(key) {
		case "role":
			w.role, _, err = optString(r)
			return convo.ErrorAt(err, "role")
		case "content":
			if k := r.Peek(); k != jsonx.String && k != jsonx.Null {
				return convo.ErrorAt(fmt.Errorf("got %s, want a string (Ollama content is plain text)", k), "content")
			}
			w.content, w.hasContent, err = optString(r)
			return convo.ErrorAt(err, "content")
		case "thinking":
			w.thinking, _, err = optString(r)
			return convo.ErrorAt(err, "thinking")
		case "images":
			return convo.ErrorAt(readImages(r, w), "images")
		case "tool_calls":
			start := r.Offset()
			if err := readCalls(r, w); err != nil {
				return convo.ErrorAt(err, "tool_calls")
			}
			w.callsRaw = r.Bytes()[start:r.Offset()]
			return nil
		case "tool_name":
			w.toolName, _, err = optString(r)
			w.hasToolName = len(w.toolName) > 0
			return convo.ErrorAt(err, "tool_name")
		case "tool_call_id":
			w.toolCallID, _, err = optString(r)
			w.hasCallID = len(w.toolCallID) > 0
			return convo.ErrorAt(err, "tool_call_id")
		}
		v, err := r.ReadRaw()
		w.extra = append(w.extra, wire.Member{Key: string(key), Val: v})
		return convo.ErrorAt(err, string(key))
	})
}

func readImages(r *jsonx.Reader, w *wireMsg) error {
	if r.ReadNull() {
		return nil
	}
	return r.ReadArray(func(i int) error {
		s, err := r.ReadString()
		if err != nil {
			return convo.ErrorAt(err, index("", i))
		}
		if err := convo.CheckBase64(s); err != nil {
			return convo.ErrorAt(fmt.Errorf("%w (Ollama images are bare standard base64)", err), index("", i))
		}
		w.images = append(w.images, s)
		return nil
	})
}

func readCalls(r *jsonx.Reader, w *wireMsg) error {
	if r.ReadNull() {
		return nil
	}
	return r.ReadArray(func(i int) error {
		var c wireCall
		if err := readCall(r, &c); err != nil {
			return convo.ErrorAt(err, index("", i))
		}
		w.calls = append(w.calls, c)
		return nil
	})
}

func readCall(r *jsonx.Reader, c *wireCall) error {
	seenFn := false
	err := r.ReadObject(func(key []byte) error {
		switch string(key) {
		case "id":
			// An empty id is no id, as for Ollama, which omits it.
			id, _, err := optString(r)
			c.id, c.hasID = string(id), len(id) > 0
			return convo.ErrorAt(err, "id")
		case "function":
			seenFn = true
			return convo.ErrorAt(readFunction(r, c), "function")
		}
		v, err := r.ReadRaw()
		c.extra = append(c.extra, wire.Member{Key: string(key), Val: v})
		return convo.ErrorAt(err, string(key))
	})
	if err != nil {
		return err
	}
	if !seenFn {
		return errors.New(`tool call has no "function"`)
	}
	return nil
}

func readFunction(r *jsonx.Reader, c *wireCall) error {
	err := r.ReadObject(func(key []byte) error {
		switch string(key) {
		case "name":
			name, _, err := optString(r)
			c.name = string(name)
			return convo.ErrorAt(err, "name")
		case "arguments":
			if r.ReadNull() {
				return nil
			}
			if k := r.Peek(); k != jsonx.Object {
				return convo.ErrorAt(fmt.Errorf("got %s, want a JSON object", k), "arguments")
			}
			v, err := r.ReadRaw()
			c.args = v
			return convo.ErrorAt(err, "arguments")
		case "index":
			num, err := r.ReadNumber()
			c.fn = append(c.fn, wire.Member{Key: "index", Val: append([]byte(nil), num...)})
			return convo.ErrorAt(err, "index")
		}
		v, err := r.ReadRaw()
		c.fn = append(c.fn, wire.Member{Key: string(key), Val: v})
		return convo.ErrorAt(err, string(key))
	})
	if err != nil {
		return err
	}
	if c.name == "" {
		return convo.ErrorAt(errors.New("missing function name"), "name")
	}
	return nil
}

// part returns the convo tool_call part of c; id is used when the wire had
// none, and recorded as synthesised.
func (c *wireCall) part(synth string) convo.Part {
	p := convo.Part{Type: convo.TypeToolCall, ID: c.id, Name: c.name, Args: c.args}
	var n wire.Members
	if !c.hasID {
		p.ID = synth
		n = append(n, wire.Member{Key: "id", Val: wire.Null})
	}
	if len(c.fn) > 0 {
		n = append(n, wire.Member{Key: "function", Val: c.fn.Object()})
	}
	n = append(n, c.extra...)
	p.Native = n.Native(ProviderID)
	return p
}

// imageParts returns the image parts for the base64 images of a message.
func imageParts(images []string) []convo.Part {
	out := make([]convo.Part, len(images))
	for i, s := range images {
		out[i] = convo.Part{Type: convo.TypeImage, MediaType: sniffImage(s), Data: s}
	}
	return out
}

// reasoningPart returns the plain reasoning part for a "thinking" value.
func reasoningPart(text, model string) convo.Part {
	return convo.Part{Type: convo.TypeReasoning, Text: text, Provider: ProviderID, Model: model}
}
