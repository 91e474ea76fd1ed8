// Package send is the short path from a history to a provider's reply: it
// encodes a whole request (provider.Request) with the format's codec,
// makes the HTTP call with the provider's URL, key and required headers,
// and reads the reply, streamed or not, into one assistant message.
//
//	c, err := send.New("anthropic", os.Getenv("ANTHROPIC_API_KEY"))
//	reply, warns, err := c.Send(ctx, h, &provider.Request{Model: "claude-sonnet-4-5", Tools: tools})
//	h = append(h, reply)
//
// The codecs stay free of HTTP; this package is the only one that makes
// calls. ReadReply reads a reply from any *http.Response, for callers who
// make the call themselves.
package send

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/all"
)

// Signer signs a request before it is sent: AWS SigV4 for Bedrock with
// IAM credentials. body is the request body, already set on req.
//
// convo has no AWS dependency; with the AWS SDK for Go v2, a Signer is a
// few lines around github.com/aws/aws-sdk-go-v2/aws/signer/v4:
//
//	signer := v4.NewSigner()
//	c.Sign = send.SignerFunc(func(req *http.Request, body []byte) error {
//		creds, err := cfg.Credentials.Retrieve(req.Context())
//		if err != nil {
//			return err
//		}
//		sum := sha256.Sum256(body)
//		return signer.SignHTTP(req.Context(), creds, req, hex.EncodeToString(sum[:]), "bedrock", cfg.Region, time.Now())
//	})
//
// Bedrock API keys need no Signer: they are sent as a bearer token (New's
// key).
type Signer interface {
	Sign(req *http.Request, body []byte) error
}

// SignerFunc is a function that is a Signer.
type SignerFunc func(req *http.Request, body []byte) error

// Sign calls f.
func (f SignerFunc) Sign(req *http.Request, body []byte) error { return f(req, body) }

// Client sends whole requests in one wire format. Its fields may be set
// after New; a Client is safe for concurrent use once set up.
type Client struct {
	// Format encodes the requests and reads the replies.
	Format provider.Format
	// BaseURL is the API's root, e.g. https://api.openai.com/v1 (New sets
	// each provider's default; Bedrock's depends on Region).
	BaseURL string
	// Key is the API key, sent the way the provider wants it (bearer token,
	// x-api-key, x-goog-api-key). Empty sends none.
	Key string
	// Header holds headers sent with every request, after the provider's
	// own (anthropic-version, …), which they may replace.
	Header http.Header
	// HTTP is the client used; nil means http.DefaultClient.
	HTTP *http.Client
	// Sign, when set, signs each request (Bedrock SigV4).
	Sign Signer
	// Options are the conversion options of every call. Options.OnWarning
	// receives the warnings of encoding and of the reply instead of the
	// returned list.
	Options provider.Options
}

// Defaults per format: base URL, and how the key is sent.
var defaults = map[string]struct{ base, auth string }{
	"openai-chat":      {"https://api.openai.com/v1", "bearer"},
	"openai-responses": {"https://api.openai.com/v1", "bearer"},
	"anthropic":        {"https://api.anthropic.com/v1", "x-api-key"},
	"gemini":           {"https://generativelanguage.googleapis.com/v1beta", "x-goog-api-key"},
	"ollama":           {"http://localhost:11434", "bearer"},
	"bedrock":          {"https://bedrock-runtime.us-east-1.amazonaws.com", "bearer"},
}

// AnthropicVersion is the anthropic-version header New sends.
const AnthropicVersion = "2023-06-01"

// New returns a client for a format name ("openai-chat", "anthropic",
// "gemini", "ollama", "bedrock", …) with the provider's default base URL.
// For Bedrock, set BaseURL for a region other than us-east-1
// (BedrockURL), and Sign for IAM credentials instead of an API key.
func New(format, key string) (*Client, error) {
	d, ok := defaults[format]
	if !ok {
		return nil, fmt.Errorf("send: %w %q: no HTTP API (known: openai-chat, openai-responses, anthropic, gemini, ollama, bedrock)", provider.ErrUnknownFormat, format)
	}
	f, err := all.Lookup(format)
	if err != nil {
		return nil, fmt.Errorf("send: %w", err)
	}
	c := &Client{Format: f, BaseURL: d.base, Key: key, Header: http.Header{}}
	if format == "anthropic" {
		c.Header.Set("anthropic-version", AnthropicVersion)
	}
	return c, nil
}

// BedrockURL returns the Bedrock runtime base URL of an AWS region.
func BedrockURL(region string) string {
	return "https://bedrock-runtime." + region + ".amazonaws.com"
}

// Endpoint returns the URL a request for model goes to, streamed or not.
func (c *Client) Endpoint(model string, stream bool) (string, error) {
	base := strings.TrimSuffix(c.BaseURL, "/")
	switch c.Format.Name() {
	case "openai-chat":
		return base + "/chat/completions", nil
	case "openai-responses":
		return base + "/responses", nil
	case "anthropic":
		return base + "/messages", nil
	case "ollama":
		return base + "/api/chat", nil
	case "gemini":
		if model == "" {
			return "", errors.New("send: gemini needs the model: it is part of the URL")
		}
		m := url.PathEscape(strings.TrimPrefix(model, "models/"))
		if stream {
			return base + "/models/" + m + ":streamGenerateContent?alt=sse", nil
		}
		return base + "/models/" + m + ":generateContent", nil
	case "bedrock":
		if model == "" {
			return "", errors.New("send: bedrock needs the model id: it is part of the URL")
		}
		op := "/converse"
		if stream {
			op = "/converse-stream"
		}
		return base + "/model/" + url.PathEscape(model) + op, nil
	}
	return "", fmt.Errorf("send: no endpoint for format %q", c.Format.Name())
}

// NewRequest encodes h with r's settings (r.History is replaced by h when
// h is not nil) and returns the HTTP request, with the warnings of the
// encoding.
func (c *Client) NewRequest(ctx context.Context, h convo.History, r *provider.Request) (*http.Request, []provider.Warning, error) {
	req := *r
	if h != nil {
		req.History = h
	}
	opts := c.Options
	opts.OnWarning = nil
	body, warns, err := c.Format.EncodeRequest(&req, opts)
	if err != nil {
		return nil, warns, fmt.Errorf("send: %s request: %w", c.Format.Name(), err)
	}
	u, err := c.Endpoint(req.Model, req.Stream)
	if err != nil {
		return nil, warns, err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, warns, fmt.Errorf("send: %w", err)
	}
	hr.Header.Set("Content-Type", "application/json")
	if c.Key != "" {
		switch defaults[c.Format.Name()].auth {
		case "x-api-key":
			hr.Header.Set("x-api-key", c.Key)
		case "x-goog-api-key":
			hr.Header.Set("x-goog-api-key", c.Key)
		default:
			hr.Header.Set("Authorization", "Bearer "+c.Key)
		}
	}
	for k, vs := range c.Header {
		hr.Header[k] = vs
	}
	if c.Sign != nil {
		if err := c.Sign.Sign(hr, body); err != nil {
			return nil, warns, fmt.Errorf("send: signing: %w", err)
		}
	}
	return hr, warns, nil
}

// Send sends history h with r's model, tools and settings, and returns the
// reply as one assistant message (usage, finish reason and origin set),
// whether r asks for a stream or not. The warnings are those of encoding
// the request and of reading the reply, or nil when Options.OnWarning
// receives them. A provider's error is a *provider.APIError.
func (c *Client) Send(ctx context.Context, h convo.History, r *provider.Request) (convo.Message, []provider.Warning, error) {
	hr, warns, err := c.NewRequest(ctx, h, r)
	if err != nil {
		return convo.Message{}, c.finish(warns), err
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(hr)
	if err != nil {
		return convo.Message{}, c.finish(warns), fmt.Errorf("send: %w", err)
	}
	defer resp.Body.Close()
	opts := c.Options
	opts.OnWarning = nil
	m, rw, err := ReadReply(resp, c.Format, opts)
	warns = append(warns, rw...)
	if err != nil {
		return m, c.finish(warns), err
	}
	warns, err = c.Options.Finish(warns)
	return m, warns, err
}

// finish hands warnings to OnWarning when there is an error already.
func (c *Client) finish(warns []provider.Warning) []provider.Warning {
	opts := c.Options
	opts.Strict = false
	warns, _ = opts.Finish(warns)
	return warns
}

// maxErrorBody bounds how much of an error body is read.
const maxErrorBody = 64 << 10

// ReadReply reads a provider's reply from resp with rc: an HTTP status
// other than 2xx is a *provider.APIError with the HTTP status and the
// provider's error type, code and message;
// a stream (text/event-stream, application/x-ndjson,
// application/vnd.amazon.eventstream) is read with rc.ReadStream, anything
// else as one JSON reply with rc.DecodeReply, at most opts' MaxBytes. It
// does not close resp.Body.
func ReadReply(resp *http.Response, rc provider.ReplyCodec, opts provider.Options) (convo.Message, []provider.Warning, error) {
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		e := parseError(resp, body)
		if p, ok := rc.(interface{ Provider() string }); ok {
			e.Provider = p.Provider()
		}
		return convo.Message{}, nil, e
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch mt {
	case "text/event-stream", "application/x-ndjson", "application/vnd.amazon.eventstream", "application/jsonl":
		return rc.ReadStream(resp.Body, opts)
	}
	max := opts.DecodeLimits().MaxBytes
	body, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return convo.Message{}, nil, fmt.Errorf("send: reading the reply: %w", err)
	}
	if int64(len(body)) > max {
		return convo.Message{}, nil, fmt.Errorf("send: reply of more than %d bytes: %w", max, jsonx.ErrTooLarge)
	}
	return rc.DecodeReply(body, opts)
}

// parseError reads the error bodies of every provider: OpenAI's and
// Anthropic's {"error":{"type","message"}}, Gemini's
// {"error":{"status","message"}}, Ollama's {"error":"…"}, Bedrock's
// {"message":"…"} with its type in x-amzn-ErrorType.
func parseError(resp *http.Response, body []byte) *provider.APIError {
	e := &provider.APIError{Status: resp.StatusCode, Raw: body}
	if t := resp.Header.Get("x-amzn-ErrorType"); t != "" {
		e.Type, _, _ = strings.Cut(t, ":")
	}
	r := jsonx.NewReader(body, 16)
	str := func() string {
		if r.Peek() == jsonx.String {
			s, _ := r.ReadString()
			return s
		}
		_ = r.Skip()
		return ""
	}
	_ = r.ReadObject(func(k []byte) error {
		switch string(k) {
		case "message", "Message":
			if e.Message == "" {
				e.Message = str()
				return nil
			}
		case "error":
			if r.Peek() == jsonx.String {
				e.Message = str()
				return nil
			}
			if r.Peek() != jsonx.Object {
				return r.Skip()
			}
			return r.ReadObject(func(k []byte) error {
				switch string(k) {
				case "message":
					e.Message = str()
				case "type", "status":
					if t := str(); t != "" {
						e.Type = t
					}
				case "code":
					e.Code = str() // OpenAI's finer code; Gemini's is the status, a number
				case "param":
					e.Param = str()
				default:
					return r.Skip()
				}
				return nil
			})
		}
		return r.Skip()
	})
	if e.Message == "" && len(body) > 0 && !jsonx.Valid(body) {
		e.Message = strings.TrimSpace(string(body[:min(len(body), 200)]))
	}
	return e
}
