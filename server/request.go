package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
)

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// writeJSON writes v as a JSON response.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		// Every value the handlers write is built from checked JSON, so
		// this is a bug; say so rather than send half a document.
		http.Error(w, `{"status":500}`, http.StatusInternalServerError)
		return
	}
	writeRaw(w, status, "application/json", append(b, '\n'))
}

func writeRaw(w http.ResponseWriter, status int, contentType string, b []byte) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}

// readBody reads a JSON request body within the server's body limit. An
// empty body reads as "{}" when emptyOK.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, emptyOK bool) ([]byte, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !(len(mt) > 5 && mt[len(mt)-5:] == "+json")) {
			return nil, &apiError{status: http.StatusUnsupportedMediaType, kind: "unsupported-media-type",
				detail: fmt.Sprintf("the body must be application/json, not %q", ct)}
		}
	}
	b, err := s.body(w, r)
	if err != nil {
		return nil, err
	}
	if len(b) == 0 || jsonx.NewReader(b, 1).AtEnd() {
		if emptyOK {
			return []byte("{}"), nil
		}
		return nil, badRequest("the request body is empty")
	}
	return b, nil
}

// object reads the JSON object in body, calling fn for each member; fn
// reads the member's value. Errors name the member.
func object(body []byte, fn func(key string, r *jsonx.Reader) error) error {
	r := jsonx.NewReader(body, convo.DefaultLimits.MaxDepth)
	if r.Peek() != jsonx.Object {
		return badRequest("the request body must be a JSON object")
	}
	err := r.ReadObject(func(key []byte) error {
		if err := fn(string(key), r); err != nil {
			var ae *apiError
			if errors.As(err, &ae) {
				return err
			}
			return badRequest("%s: %v", key, err)
		}
		return nil
	})
	if err == nil {
		err = r.ExpectEnd()
	}
	var ae *apiError
	if err != nil && !errors.As(err, &ae) {
		return badRequest("the request body is not valid JSON: %v", err)
	}
	return err
}

func unknownMember(key string) error {
	return badRequest("unknown member %q in the request body", key)
}

// readObjectRaw reads a JSON object (application metadata) and returns it
// compacted; null reads as nil when nullOK.
func readObjectRaw(r *jsonx.Reader, nullOK bool) (json.RawMessage, error) {
	switch r.Peek() {
	case jsonx.Object:
		return r.ReadRaw()
	case jsonx.Null:
		if nullOK {
			r.ReadNull()
			return nil, nil
		}
	}
	return nil, errors.New("want a JSON object")
}

// readMessages reads an array of canonical messages, refusing any larger
// than the message limit. Errors name the message: messages[2].parts[0].
func (s *Server) readMessages(r *jsonx.Reader, name string) (convo.History, error) {
	if r.Peek() != jsonx.Array {
		return nil, badRequest("%s: want an array of messages", name)
	}
	var h convo.History
	err := r.ReadArray(func(i int) error {
		r.Peek() // skips white space, so the value starts at Offset
		start := r.Offset()
		if err := r.Skip(); err != nil {
			return err
		}
		raw := r.Bytes()[start:r.Offset()]
		if int64(len(raw)) > s.opts.MaxMessageBytes {
			return tooLarge("%s[%d]: the message is larger than %d bytes", name, i, s.opts.MaxMessageBytes)
		}
		m, err := convo.UnmarshalMessage(raw)
		if err != nil {
			return badRequest("%s", placed(fmt.Sprintf("%s[%d]", name, i), err))
		}
		h = append(h, m)
		return nil
	})
	return h, err
}

// placed prefixes a decode error with the place of its message.
func placed(at string, err error) string {
	var de *convo.DecodeError
	if errors.As(err, &de) && de.Path != "" {
		if de.Path[0] == '[' {
			return at + de.Path + ": " + de.Err.Error()
		}
		return at + "." + de.Path + ": " + de.Err.Error()
	}
	return at + ": " + err.Error()
}

// queryInt reads an integer query parameter; def when absent.
func queryInt(r *http.Request, name string, def, min, max int64) (int64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < min || n > max {
		return 0, badRequest("query parameter %s: want an integer from %d to %d, got %q", name, min, max, v)
	}
	return n, nil
}

// queryBool reads a boolean query parameter: absent, "", "0" and "false"
// are false; "1" and "true" are true.
func queryBool(r *http.Request, name string) (bool, error) {
	q := r.URL.Query()
	if !q.Has(name) {
		return false, nil
	}
	switch q.Get(name) {
	case "", "1", "true":
		return true, nil
	case "0", "false":
		return false, nil
	}
	return false, badRequest("query parameter %s: want true or false, got %q", name, q.Get(name))
}
