// Package growth measures how convo's canonical encoder and decoder scale
// with the length of a history, from 100 to 100,000 messages, beside the
// general JSON engines that set the limit of what a Go program can do with
// the same bytes: encoding/json, encoding/json/v2 (built with
// GOEXPERIMENT=jsonv2) and bytedance/sonic. The engines read and write a
// plain struct mirror of the canonical format (Doc), without convo's
// validation; convo reads and writes convo.History.
package growth

import "encoding/json"

// Doc mirrors a canonical envelope with ordinary tagged structs: every
// member the benchmark history uses, in the order convo writes them, so that
// encoding/json writes a Doc back as the compact form of convo's bytes
// (TestMirror checks it). JSON-valued members are kept raw, times as their
// text: the engines do what convo's decoder does minus its checks.
type Doc struct {
	Format   string    `json:"format"`
	Messages []Message `json:"messages"`
}

// Message mirrors a canonical message.
type Message struct {
	Role      string                     `json:"role"`
	ID        string                     `json:"id,omitempty"`
	Name      string                     `json:"name,omitempty"`
	Time      string                     `json:"time,omitempty"`
	Phase     string                     `json:"phase,omitempty"`
	Effort    string                     `json:"effort,omitempty"`
	Scope     string                     `json:"scope,omitempty"`
	Compacted int                        `json:"compacted,omitzero"`
	Origin    *Origin                    `json:"origin,omitempty"`
	Usage     *Usage                     `json:"usage,omitempty"`
	Finish    string                     `json:"finish,omitempty"`
	Parts     []Part                     `json:"parts,omitempty"`
	Meta      json.RawMessage            `json:"meta,omitempty"`
	Native    map[string]json.RawMessage `json:"native,omitempty"`
}

// Origin mirrors a message's origin.
type Origin struct {
	Provider   string `json:"provider,omitempty"`
	Model      string `json:"model,omitempty"`
	ResponseID string `json:"response_id,omitempty"`
}

// Usage mirrors a message's token usage.
type Usage struct {
	Input      int64 `json:"input,omitzero"`
	Output     int64 `json:"output,omitzero"`
	CacheRead  int64 `json:"cache_read,omitzero"`
	CacheWrite int64 `json:"cache_write,omitzero"`
	Reasoning  int64 `json:"reasoning,omitzero"`
	Total      int64 `json:"total,omitzero"`
}

// Part mirrors a canonical part.
type Part struct {
	Type      string                     `json:"type"`
	ID        string                     `json:"id,omitempty"`
	CallID    string                     `json:"call_id,omitempty"`
	Name      string                     `json:"name,omitempty"`
	Text      string                     `json:"text,omitempty"`
	MediaType string                     `json:"media_type,omitempty"`
	Data      string                     `json:"data,omitempty"`
	URL       string                     `json:"url,omitempty"`
	FileID    string                     `json:"file_id,omitempty"`
	Detail    string                     `json:"detail,omitempty"`
	Value     json.RawMessage            `json:"value,omitempty"`
	Args      json.RawMessage            `json:"args,omitempty"`
	ArgsRaw   string                     `json:"args_raw,omitempty"`
	Parts     []Part                     `json:"parts,omitempty"`
	Error     bool                       `json:"error,omitzero"`
	Reason    string                     `json:"reason,omitempty"`
	Summary   []string                   `json:"summary,omitempty"`
	Signature string                     `json:"signature,omitempty"`
	Encrypted string                     `json:"encrypted,omitempty"`
	Provider  string                     `json:"provider,omitempty"`
	Model     string                     `json:"model,omitempty"`
	Cache     *Cache                     `json:"cache,omitempty"`
	Native    map[string]json.RawMessage `json:"native,omitempty"`
}

// Cache mirrors a part's cache breakpoint.
type Cache struct {
	TTL string `json:"ttl,omitempty"`
}
