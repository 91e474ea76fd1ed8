package gateway

import (
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/internal/stream"
)

// protocol is what the gateway knows of one wire format's HTTP API.
type protocol struct {
	name string
	// vendor is the provider whose keys the protocol's API takes: a
	// client's own key goes only to an upstream of the same vendor.
	vendor string
	// keyName is how the vendor's documentation names its key, for the
	// errors that ask for one.
	keyName string
	// ndjson: streams are newline-delimited JSON, not SSE.
	ndjson bool
	// eventstream: streams use the AWS event-stream framing (Bedrock);
	// such a protocol is an upstream only.
	eventstream bool
	// endpoint is the upstream URL for a request.
	endpoint func(base, model string, stream bool) string
	// auth sets the upstream key on an upstream request.
	auth func(h http.Header, key string)
	// errorBody is an error in the protocol's own shape.
	errorBody func(status int, msg string) []byte
	// forward lists the client headers a same-protocol request keeps.
	forward []string
	// stateful lists the request members that ask the provider for what
	// it stored (a response to go on from, a stored prompt, cached
	// content), which no other upstream holds.
	stateful []string
	// namesReplies: a request may name the reply it goes on from by the
	// reply's id (OpenAI Responses' previous_response_id), which the
	// gateway resolves from its record (Gateway.previous).
	namesReplies bool
	// looseIDs: tool-call ids are optional in the protocol, and many of
	// its clients drop the ones they are sent, so a client's
	// conversations are fingerprinted without them (see fingerprinter).
	looseIDs bool
}

var protocols = map[string]*protocol{
	"openai-chat": {
		vendor: "openai", keyName: "OpenAI API key",
		name:      "openai-chat",
		endpoint:  func(base, _ string, _ bool) string { return strings.TrimRight(base, "/") + "/chat/completions" },
		auth:      bearer,
		errorBody: openaiError,
		forward:   []string{"OpenAI-Organization", "OpenAI-Project", "OpenAI-Beta"},
	},
	"openai-responses": {
		vendor: "openai", keyName: "OpenAI API key",
		name:         "openai-responses",
		endpoint:     func(base, _ string, _ bool) string { return strings.TrimRight(base, "/") + "/responses" },
		auth:         bearer,
		errorBody:    openaiError,
		forward:      []string{"OpenAI-Organization", "OpenAI-Project", "OpenAI-Beta"},
		stateful:     []string{"previous_response_id", "conversation", "prompt"},
		namesReplies: true,
	},
	"anthropic": {
		vendor: "anthropic", keyName: "Anthropic API key",
		name:     "anthropic",
		endpoint: func(base, _ string, _ bool) string { return strings.TrimRight(base, "/") + "/v1/messages" },
		auth: func(h http.Header, key string) {
			h.Set("X-Api-Key", key)
			if h.Get("Anthropic-Version") == "" {
				h.Set("Anthropic-Version", "2023-06-01")
			}
		},
		errorBody: anthropicError,
		forward:   []string{"Anthropic-Version", "Anthropic-Beta"},
	},
	"gemini": {
		vendor: "gemini", keyName: "Gemini API key",
		name: "gemini",
		endpoint: func(base, model string, stream bool) string {
			u := strings.TrimRight(base, "/") + "/v1beta/models/" + url.PathEscape(model)
			if stream {
				return u + ":streamGenerateContent?alt=sse"
			}
			return u + ":generateContent"
		},
		auth:      func(h http.Header, key string) { h.Set("X-Goog-Api-Key", key) },
		errorBody: geminiError,
		stateful:  []string{"cachedContent"},
	},
	"bedrock": {
		vendor: "bedrock", keyName: "AWS credentials",
		name:        "bedrock",
		eventstream: true,
		endpoint: func(base, model string, stream bool) string {
			u := strings.TrimRight(base, "/") + "/model/" + url.PathEscape(model)
			if stream {
				return u + "/converse-stream"
			}
			return u + "/converse"
		},
		auth:      func(http.Header, string) {}, // requests are signed (Options.SignBedrock)
		errorBody: openaiError,                  // never a client protocol
	},
	"ollama": {
		vendor: "ollama", keyName: "Ollama API key",
		name:      "ollama",
		ndjson:    true,
		looseIDs:  true,
		endpoint:  func(base, _ string, _ bool) string { return strings.TrimRight(base, "/") + "/api/chat" },
		auth:      bearer,
		errorBody: ollamaError,
	},
}

// families are the upstream protocols that stand for a provider's API
// with several client protocols: a client of one of them passes through to
// its own endpoint; a client of any other protocol is translated to the
// first.
var families = map[string][]string{
	"openai": {"openai-chat", "openai-responses"},
}

func protocolNames() []string {
	var names []string
	for n := range protocols {
		names = append(names, n)
	}
	for n := range families {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func bearer(h http.Header, key string) { h.Set("Authorization", "Bearer "+key) }

// source reads the events of a stream in the protocol's framing.
func (p *protocol) source(r io.Reader) stream.Source {
	if p.eventstream {
		return stream.NewEventStream(r)
	}
	if p.ndjson {
		return stream.NewNDJSON(r)
	}
	return stream.NewSSE(r)
}

// contentType is the media type of the protocol's streamed replies.
func (p *protocol) contentType() string {
	if p.ndjson {
		return "application/x-ndjson"
	}
	return "text/event-stream"
}

func openaiError(status int, msg string) []byte {
	typ := "server_error"
	switch {
	case status == http.StatusTooManyRequests:
		typ = "rate_limit_exceeded"
	case status == http.StatusUnauthorized:
		typ = "authentication_error"
	case status < 500:
		typ = "invalid_request_error"
	}
	b := append([]byte(nil), `{"error":{"message":`...)
	b = jsonx.AppendString(b, msg)
	b = append(b, `,"type":`...)
	b = jsonx.AppendString(b, typ)
	return append(b, `,"param":null,"code":null}}`...)
}

func anthropicError(status int, msg string) []byte {
	typ := "api_error"
	switch {
	case status == http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case status == 529 || status == http.StatusServiceUnavailable:
		typ = "overloaded_error"
	case status == http.StatusUnauthorized:
		typ = "authentication_error"
	case status == http.StatusForbidden:
		typ = "permission_error"
	case status == http.StatusNotFound:
		typ = "not_found_error"
	case status == http.StatusRequestEntityTooLarge:
		typ = "request_too_large"
	case status < 500:
		typ = "invalid_request_error"
	}
	b := append([]byte(nil), `{"type":"error","error":{"type":`...)
	b = jsonx.AppendString(b, typ)
	b = append(b, `,"message":`...)
	b = jsonx.AppendString(b, msg)
	return append(b, "}}"...)
}

func geminiError(status int, msg string) []byte {
	st := "INTERNAL"
	switch {
	case status == http.StatusTooManyRequests:
		st = "RESOURCE_EXHAUSTED"
	case status == http.StatusUnauthorized:
		st = "UNAUTHENTICATED"
	case status == http.StatusForbidden:
		st = "PERMISSION_DENIED"
	case status == http.StatusNotFound:
		st = "NOT_FOUND"
	case status == http.StatusServiceUnavailable:
		st = "UNAVAILABLE"
	case status == http.StatusGatewayTimeout:
		st = "DEADLINE_EXCEEDED"
	case status < 500:
		st = "INVALID_ARGUMENT"
	}
	b := append([]byte(nil), `{"error":{"code":`...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, `,"message":`...)
	b = jsonx.AppendString(b, msg)
	b = append(b, `,"status":`...)
	b = jsonx.AppendString(b, st)
	return append(b, "}}"...)
}

func ollamaError(_ int, msg string) []byte {
	return append(jsonx.AppendString([]byte(`{"error":`), msg), '}')
}

// peek reads the top-level "model" and "stream" members of a request body
// without decoding the rest. stream is nil when the body has none.
// candidates is the number of replies asked for (OpenAI Chat "n", Gemini
// "generationConfig.candidateCount"; 0 when neither is there), so the
// response headers can name where each is recorded before it arrives.
func peek(body []byte) (model string, stream *bool, candidates int64, err error) {
	r := jsonx.NewReader(body, 0)
	if r.Peek() != jsonx.Object {
		return "", nil, 0, r.Errorf("want a JSON object, got %s", r.Peek())
	}
	err = r.ReadObject(func(key []byte) error {
		switch string(key) {
		case "model":
			if r.Peek() != jsonx.String {
				return r.Skip()
			}
			s, err := r.ReadString()
			model = s
			return err
		case "stream":
			if r.Peek() != jsonx.Bool {
				return r.Skip()
			}
			b, err := r.ReadBool()
			stream = &b
			return err
		case "n":
			return readCount(r, &candidates)
		case "generationConfig", "generation_config":
			if r.Peek() != jsonx.Object {
				return r.Skip()
			}
			return r.ReadObject(func(key []byte) error {
				if k := string(key); k == "candidateCount" || k == "candidate_count" {
					return readCount(r, &candidates)
				}
				return r.Skip()
			})
		}
		return r.Skip()
	})
	if err == nil {
		err = r.ExpectEnd()
	}
	if err != nil {
		return "", nil, 0, err
	}
	return model, stream, candidates, nil
}

// readCount reads an integer member into n, and skips any other value: the
// upstream judges what it is sent.
func readCount(r *jsonx.Reader, n *int64) error {
	if r.Peek() != jsonx.Number {
		return r.Skip()
	}
	num, err := r.ReadNumber()
	if err != nil {
		return err
	}
	if v, err := strconv.ParseInt(string(num), 10, 64); err == nil {
		*n = v // another number is left to the upstream to refuse
	}
	return nil
}
