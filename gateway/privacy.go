package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/redact"
	"github.com/convo-go/convo/store"
)

// RecordMode says what the gateway keeps of an exchange.
type RecordMode string

// The recording modes. A client chooses one per request with the
// Convo-Record header; without it the token's default applies
// (RecordConfig). What the client receives is the same in every mode.
const (
	// RecordFull stores the request's new messages and the reply.
	RecordFull RecordMode = "full"
	// RecordMetadata stores, per exchange, an assistant message without
	// content: the model, usage, finish reason, time and ids, with
	// native.convo.content "not recorded" and the types of the parts left
	// out. The request's messages are not stored.
	RecordMetadata RecordMode = "metadata"
	// RecordOff stores nothing and makes no span; a request under a
	// budget is recorded as RecordMetadata instead, since its spend is
	// charged from the record.
	RecordOff RecordMode = "off"
)

func parseMode(s string) (RecordMode, error) {
	switch m := RecordMode(strings.ToLower(strings.TrimSpace(s))); m {
	case RecordFull, RecordMetadata, RecordOff:
		return m, nil
	}
	return "", fmt.Errorf("record mode %q: want full, metadata or off", s)
}

// RecordConfig is the recording policy: the "record" member of Config.
//
//	"record": {
//	  "default": "full",
//	  "tokens": {"<sha256 hex of a gateway token>": "metadata"},
//	  "redact": {"builtin": true, "rules": [{"name": "employee-id", "pattern": "\\bEMP-\\d{6}\\b"}]}
//	}
//
// Tokens are named by the SHA-256 of the token (printf %s TOKEN | sha256sum),
// so the configuration holds no secret.
type RecordConfig struct {
	// Default is the mode of tokens not in Tokens ("" is full).
	Default string `json:"default,omitempty"`
	// Tokens maps the hex SHA-256 of a gateway token to its default mode.
	Tokens map[string]string `json:"tokens,omitempty"`
	// Redact is applied to everything stored, before it is written.
	Redact RedactConfig `json:"redact,omitzero"`
}

// RedactConfig configures redaction (package redact).
type RedactConfig struct {
	// Builtin turns on the built-in detectors: provider API keys, bearer
	// tokens, e-mail addresses, card numbers.
	Builtin bool `json:"builtin,omitempty"`
	// Rules are configured regular expressions (RE2 syntax).
	Rules []RedactRule `json:"rules,omitempty"`
}

// RedactRule is one configured redaction rule.
type RedactRule struct {
	Name    string `json:"name"`
	Pattern string `json:"pattern"`
}

// policy is a RecordConfig made ready to use.
type policy struct {
	def    RecordMode
	tokens map[[sha256.Size]byte]RecordMode
	red    *redact.Redactor // nil: no redaction
}

func (c RecordConfig) compile() (policy, error) {
	p := policy{def: RecordFull, tokens: map[[sha256.Size]byte]RecordMode{}}
	if c.Default != "" {
		m, err := parseMode(c.Default)
		if err != nil {
			return p, fmt.Errorf("gateway: record.default: %w", err)
		}
		p.def = m
	}
	for h, s := range c.Tokens {
		var k [sha256.Size]byte
		b, err := hex.DecodeString(h)
		if err != nil || len(b) != len(k) {
			return p, fmt.Errorf("gateway: record.tokens: %q is not the hex SHA-256 of a token", h)
		}
		copy(k[:], b)
		if p.tokens[k], err = parseMode(s); err != nil {
			return p, fmt.Errorf("gateway: record.tokens[%s…]: %w", h[:8], err)
		}
	}
	var rules []redact.Rule
	if c.Redact.Builtin {
		rules = redact.Builtin()
	}
	for i, r := range c.Redact.Rules {
		rule, err := redact.Regexp(r.Name, r.Pattern)
		if err != nil {
			return p, fmt.Errorf("gateway: record.redact.rules[%d]: %w", i, err)
		}
		rules = append(rules, rule)
	}
	if len(rules) > 0 {
		red, err := redact.New(rules...)
		if err != nil {
			return p, fmt.Errorf("gateway: record.redact: %w", err)
		}
		p.red = red
	}
	return p, nil
}

// mode returns the recording mode of a request: its Convo-Record header,
// else its token's default, else the gateway's.
func (p policy) mode(r *http.Request) (RecordMode, error) {
	if h := r.Header.Get("Convo-Record"); h != "" {
		m, err := parseMode(h)
		if err != nil {
			return "", fmt.Errorf("Convo-Record header: %w", err)
		}
		return m, nil
	}
	if tok := gatewayToken(r); tok != "" && len(p.tokens) > 0 {
		if m, ok := p.tokens[sha256.Sum256([]byte(tok))]; ok {
			return m, nil
		}
	}
	return p.def, nil
}

// keep returns what is stored of an exchange's messages (reply last, an
// error message possibly after it) under mode, redacted. The caller's
// messages are not changed.
func (p policy) keep(mode RecordMode, msgs []convo.Message) []convo.Message {
	if mode == RecordMetadata {
		var out []convo.Message
		for _, m := range msgs {
			if m.Role == convo.RoleAssistant || m.Role == convo.RoleError {
				out = append(out, store.WithoutContent(m, "not recorded"))
			}
		}
		msgs = out
	}
	if p.red != nil {
		msgs, _ = p.red.History(msgs)
	}
	return msgs
}
