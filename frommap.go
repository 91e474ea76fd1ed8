package convo

import (
	"encoding/json"
	"fmt"
)

// MessageFromMap builds a message from a generic map, as decoded from JSON or
// YAML, using the canonical field names. Nested maps with non-string keys
// (as some YAML decoders produce) are accepted when every key is a string.
// Errors name the place, like decoding does.
func MessageFromMap(v map[string]any) (Message, error) {
	norm, err := normalize(v, "")
	if err != nil {
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
