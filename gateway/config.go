package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"strings"
)

// Config names the upstreams and which models go to which. It is the JSON
// document of `convo gateway --config FILE`:
//
//	{
//	  "upstreams": [
//	    {"name": "claude", "protocol": "anthropic", "url": "https://api.anthropic.com", "key_env": "ANTHROPIC_API_KEY"},
//	    {"name": "local", "protocol": "ollama", "url": "http://127.0.0.1:11434"}
//	  ],
//	  "routes": [
//	    {"model": "claude-*", "upstream": "claude"},
//	    {"model": "*", "upstream": "local"}
//	  ]
//	}
//
// Routes are tried in order; the first whose glob (path.Match syntax)
// matches the request's model wins.
type Config struct {
	Upstreams []Upstream `json:"upstreams"`
	Routes    []Route    `json:"routes"`
	// Record is the recording policy: modes per token and redaction.
	Record RecordConfig `json:"record,omitzero"`
	// Budgets cap what tenants and gateway tokens spend (Budget).
	Budgets []Budget `json:"budgets,omitempty"`
}

// Upstream is a provider endpoint the gateway forwards to.
type Upstream struct {
	// Name identifies the upstream in routes and logs.
	Name string `json:"name"`
	// Protocol is the upstream's wire format: "openai-chat",
	// "openai-responses", "anthropic", "gemini", "ollama" or "bedrock"
	// (Converse; requests are signed with AWS SigV4, not a key); or
	// "openai", OpenAI's API with both of its protocols: a Chat
	// Completions client passes through to /chat/completions, a Responses
	// client to /responses, and a client of another protocol is
	// translated to Chat Completions.
	Protocol string `json:"protocol"`
	// URL is the API's base URL as the provider's SDK takes it:
	// https://api.openai.com/v1, https://api.anthropic.com,
	// https://generativelanguage.googleapis.com, http://127.0.0.1:11434,
	// https://bedrock-runtime.us-east-1.amazonaws.com.
	URL string `json:"url"`
	// KeyEnv names the environment variable holding the upstream's API
	// key. The key is read once at start; it is sent only to this
	// upstream, never logged, stored or echoed. While the variable is
	// unset or empty the upstream has no key of its own: a client of the
	// same provider sends its own key, which is forwarded to it (see
	// Options.Tokens), and a request translated from another provider's
	// protocol is refused with 401 naming the variable. Without KeyEnv the
	// upstream needs no key (a local Ollama), though a same-provider
	// client's key is still forwarded to it.
	KeyEnv string `json:"key_env,omitempty"`
}

// Route sends the requests whose model matches Model to an upstream.
type Route struct {
	Model    string `json:"model"`    // a path.Match glob: "gpt-*", "*"
	Upstream string `json:"upstream"` // an upstream's Name
}

// DefaultConfig is the configuration of `convo gateway` without flags:
// OpenAI, Anthropic and Gemini at their public APIs, each with the key of
// its SDK's usual environment variable when that is set (else clients'
// own keys are forwarded), and the models routed to them by name.
func DefaultConfig() Config {
	return Config{
		Upstreams: []Upstream{
			{Name: "openai", Protocol: "openai", URL: "https://api.openai.com/v1", KeyEnv: "OPENAI_API_KEY"},
			{Name: "anthropic", Protocol: "anthropic", URL: "https://api.anthropic.com", KeyEnv: "ANTHROPIC_API_KEY"},
			{Name: "gemini", Protocol: "gemini", URL: "https://generativelanguage.googleapis.com", KeyEnv: "GEMINI_API_KEY"},
		},
		Routes: []Route{
			{Model: "gpt-*", Upstream: "openai"},
			{Model: "o[0-9]*", Upstream: "openai"},
			{Model: "chatgpt-*", Upstream: "openai"},
			{Model: "claude-*", Upstream: "anthropic"},
			{Model: "gemini-*", Upstream: "gemini"},
		},
	}
}

// ParseConfig reads a JSON Config, refusing unknown members.
func ParseConfig(r io.Reader) (Config, error) {
	var c Config
	dec := json.NewDecoder(io.LimitReader(r, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, fmt.Errorf("gateway config: %w", err)
	}
	return c, nil
}

// ParseUpstream reads the --upstream flag form NAME=PROTOCOL@URL, with an
// optional ",key-env=VAR".
func ParseUpstream(s string) (Upstream, error) {
	var u Upstream
	name, rest, ok := strings.Cut(s, "=")
	proto, rest2, ok2 := strings.Cut(rest, "@")
	if !ok || !ok2 || name == "" || proto == "" || rest2 == "" {
		return u, fmt.Errorf("upstream %q: want NAME=PROTOCOL@URL[,key-env=VAR]", s)
	}
	u.Name, u.Protocol, u.URL = name, proto, rest2
	if i := strings.LastIndex(rest2, ",key-env="); i >= 0 {
		u.URL, u.KeyEnv = rest2[:i], rest2[i+len(",key-env="):]
	}
	return u, nil
}

// ParseRoute reads the --route flag form MODEL_GLOB=NAME.
func ParseRoute(s string) (Route, error) {
	glob, name, ok := strings.Cut(s, "=")
	if !ok || glob == "" || name == "" {
		return Route{}, fmt.Errorf("route %q: want MODEL_GLOB=UPSTREAM", s)
	}
	return Route{Model: glob, Upstream: name}, nil
}

// Validate reports what makes c unusable — an unknown protocol, a route
// to no upstream, a bad glob, a bad recording policy — as New would, before
// anything is opened.
func (c Config) Validate() error {
	if err := c.check(); err != nil {
		return err
	}
	_, err := c.Record.compile()
	return err
}

// check validates c against the protocols the gateway speaks.
func (c Config) check() error {
	if len(c.Upstreams) == 0 {
		return errors.New("gateway: no upstreams")
	}
	names := map[string]bool{}
	for i, u := range c.Upstreams {
		at := fmt.Sprintf("upstreams[%d]", i)
		switch {
		case u.Name == "":
			return fmt.Errorf("gateway: %s: no name", at)
		case names[u.Name]:
			return fmt.Errorf("gateway: %s: upstream %q named twice", at, u.Name)
		case protocols[u.Protocol] == nil && families[u.Protocol] == nil:
			return fmt.Errorf("gateway: %s: unknown protocol %q (known: %s)", at, u.Protocol, strings.Join(protocolNames(), ", "))
		}
		pu, err := url.Parse(u.URL)
		if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			return fmt.Errorf("gateway: %s: url %q is not an http(s) URL", at, u.URL)
		}
		names[u.Name] = true
	}
	if len(c.Routes) == 0 {
		return errors.New("gateway: no routes")
	}
	for i, r := range c.Routes {
		if _, err := path.Match(r.Model, ""); err != nil {
			return fmt.Errorf("gateway: routes[%d]: bad glob %q", i, r.Model)
		}
		if !names[r.Upstream] {
			return fmt.Errorf("gateway: routes[%d]: no upstream %q", i, r.Upstream)
		}
	}
	return checkBudgets(c.Budgets)
}
