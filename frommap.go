package convo

import (
	"encoding/json"
	"errors"
	"fmt"
)

// MessageFromMap builds a message from a generic map, as decoded from JSON or
// YAML, using the canonical field names. Nested maps with non-string keys
// (as some YAML decoders produce) are accepted when every key is a string.
// Errors name the place, like decoding does.
//
// A "content" member, as chat APIs and hand-written histories spell a
// message, is coerced rather than kept aside (which would leave the message
// empty): a string becomes one text part; an array becomes the parts, a
// string element a text part and an object a canonical part; a single part
// object is that one part. A message with both content and parts is an
// error. A "metadata" member, as the seed's {role, content, metadata} spells
// it, is the message's metadata (Meta); a message with both metadata and
// meta is an error.
func MessageFromMap(v map[string]any) (Message, error) {
	norm, err := normalize(v, "")
	if err != nil {
		return Message{}, err
	}
	if err := coerceContent(norm.(map[string]any)); err != nil {
		return Message{}, err
	}
	if err := coerceMetadata(norm.(map[string]any)); err != nil {
		return Message{}, err
	}
	b, err := json.Marshal(norm)
	if err != nil {
		return Message{}, fmt.Errorf("message: %w", err)
	}
	return UnmarshalMessage(b)
}

// HistoryFromMaps builds a history from generic maps; errors name the
// message index.
func HistoryFromMaps(vs []map[string]any) (History, error) {
	h := make(History, len(vs))
	for i, v := range vs {
		m, err := MessageFromMap(v)
		if err != nil {
			return nil, at(err, index("messages", i))
		}
		h[i] = m
	}
	return h, nil
}

// normalize turns map[any]any into map[string]any throughout, so the value
// can be marshalled as JSON.
func normalize(v any, path string) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			n, err := normalize(e, join(path, k))
			if err != nil {
				return nil, err
			}
			out[k] = n
		}
		return out, nil
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			ks, ok := k.(string)
			if !ok {
				return nil, &DecodeError{Path: path, Err: fmt.Errorf("map key %v is not a string", k)}
			}
			n, err := normalize(e, join(path, ks))
			if err != nil {
				return nil, err
			}
			out[ks] = n
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			n, err := normalize(e, path+index("", i))
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	case []map[string]any:
		out := make([]any, len(x))
		for i, e := range x {
			n, err := normalize(e, path+index("", i))
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	}
	return v, nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// coerceContent turns a message map's "content" member into "parts" (see
// MessageFromMap).
func coerceContent(m map[string]any) error {
	c, ok := m["content"]
	if !ok {
		return nil
	}
	if _, both := m["parts"]; both {
		return &DecodeError{Path: "content", Err: errors.New(`a message has "content" or "parts", not both`)}
	}
	var parts []any
	switch c := c.(type) {
	case nil:
	case string:
		parts = []any{map[string]any{"type": TypeText, "text": c}}
	case map[string]any:
		parts = []any{c}
	case []any:
		parts = make([]any, len(c))
		for i, e := range c {
			switch e := e.(type) {
			case string:
				parts[i] = map[string]any{"type": TypeText, "text": e}
			case map[string]any:
				parts[i] = e
			default:
				return &DecodeError{Path: index("content", i), Err: fmt.Errorf("want a string or a part object, got %s", kind(e))}
			}
		}
	default:
		return &DecodeError{Path: "content", Err: fmt.Errorf("want a string, a part object or an array of parts, got %s", kind(c))}
	}
	delete(m, "content")
	if parts != nil {
		m["parts"] = parts
	}
	return nil
}

// coerceMetadata turns a message map's "metadata" member into "meta" (see
// MessageFromMap).
func coerceMetadata(m map[string]any) error {
	md, ok := m["metadata"]
	if !ok {
		return nil
	}
	if _, both := m["meta"]; both {
		return &DecodeError{Path: "metadata", Err: errors.New(`a message has "metadata" or "meta", not both`)}
	}
	delete(m, "metadata")
	if md != nil {
		m["meta"] = md
	}
	return nil
}

// kind names a generic value's JSON kind for an error message.
func kind(v any) string {
	switch v.(type) {
	case bool:
		return "boolean"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	}
	return "number"
}
