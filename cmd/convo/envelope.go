package main

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/convo-go/convo"
)

// exportEnvelope is what convo serve's export route answers for a provider
// format: the request with the conversation's version and the conversion's
// warnings. A file saved from it (curl … /export?format=anthropic > f.json)
// is read by convert as the request it holds.
type exportEnvelope struct {
	Format   string          `json:"format"`
	Version  json.RawMessage `json:"version"`
	Request  json.RawMessage `json:"request"`
	Warnings json.RawMessage `json:"warnings"`
}

// unwrapExport returns the request inside an export envelope and the
// format it names; ok is false for anything else (a request body, a
// canonical document), which is left to the readers.
func unwrapExport(body []byte) (request []byte, format string, ok bool) {
	d := json.NewDecoder(bytes.NewReader(body))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, "", false
	}
	// The envelope's first member is "format", naming a provider format;
	// a canonical document's is "convo/v1". Other bodies are not decoded
	// twice.
	if t, err := d.Token(); err != nil || t != "format" {
		return nil, "", false
	}
	if t, err := d.Token(); err != nil || t == convo.FormatV1 {
		return nil, "", false
	}
	var env exportEnvelope
	d = json.NewDecoder(bytes.NewReader(body))
	d.DisallowUnknownFields()
	if d.Decode(&env) != nil || env.Format == "" || len(env.Request) == 0 || env.Request[0] != '{' && env.Request[0] != '[' {
		return nil, "", false
	}
	return env.Request, env.Format, true
}

// unwrapInput unwraps an export envelope for convert --from from ("auto"
// takes the format it names), saying so on stderr. An envelope of another
// format than --from names is an error that names it.
func (e *env) unwrapInput(body []byte, name, from string) ([]byte, string, error) {
	req, f, ok := unwrapExport(body)
	if !ok {
		return body, from, nil
	}
	if from != "auto" && from != f {
		return nil, "", fmt.Errorf("%s: an export of convo serve holding a %s request, not %s: give --from %s (or --from auto)", name, f, from, f)
	}
	fmt.Fprintf(e.stderr, "convo convert: reading %s as the %s request of a convo serve export\n", name, f)
	return req, f, nil
}
