package backend

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
)

// Expired returns the stored body of a message whose content expired, and
// false when body holds no content already (nothing to rewrite).
func Expired(body []byte, conv string, pos int64) ([]byte, bool, error) {
	m, err := Decode(body, conv, pos)
	if err != nil {
		return nil, false, err
	}
	out := store.WithoutContent(m, "expired")
	if len(m.Parts) == 0 && m.Native["convo"] != nil {
		return nil, false, nil
	}
	b, err := convo.AppendMessage(nil, out)
	return b, err == nil, err
}

// ExpiredMeta returns meta with store.ContentExpiredKey set to at, the
// other members kept as they are, in their order.
func ExpiredMeta(meta json.RawMessage, at time.Time) json.RawMessage {
	v, _ := json.Marshal(at.UTC()) // a time always marshals
	member := append([]byte(`"`+store.ContentExpiredKey+`":`), v...)
	var m map[string]json.RawMessage
	if len(meta) == 0 || json.Unmarshal(meta, &m) != nil {
		return append(append([]byte("{"), member...), '}')
	}
	if m[store.ContentExpiredKey] != nil {
		m[store.ContentExpiredKey] = v
		b, _ := json.Marshal(m)
		return b
	}
	body := bytes.TrimSpace(meta)
	body = bytes.TrimSpace(body[:len(body)-1]) // without its closing brace
	if len(body) > 1 {
		body = append(body, ',')
	}
	return append(append(append([]byte(nil), body...), member...), '}')
}
