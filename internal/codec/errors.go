package codec

import "strconv"

// APIError is an error a provider reported instead of (or in the middle
// of) a reply; package provider re-exports it as provider.APIError, which
// documents it.
type APIError struct {
	// Provider is the provider id of the codec that read the error:
	// "openai", "anthropic", "gemini", "ollama", "bedrock", "litert".
	Provider string
	// Status is the HTTP status code the error carries (Gemini's "code"),
	// 0 when the error itself does not say.
	Status int
	// Type is the provider's kind of error: Anthropic's and OpenAI's
	// "type" ("overloaded_error", "invalid_request_error"), Gemini's
	// "status" ("RESOURCE_EXHAUSTED"), a Bedrock exception's name
	// ("throttlingException"). Empty when the provider sends none (Ollama,
	// LiteRT-LM).
	Type string
	// Code is a finer code where the provider sends one besides Type
	// (OpenAI's "code", such as "rate_limit_exceeded").
	Code string
	// Param is the request parameter at fault, where the provider names
	// one (OpenAI's "param").
	Param string
	// Message is the provider's human-readable message.
	Message string
	// Raw is the error as the provider sent it (the error object or the
	// exception's payload), when the reader kept it.
	Raw []byte
}

// Error returns "<provider>: <message> (<status> <code or type>)", such as
// "openai: Rate limit reached (rate_limit_exceeded)" or "gemini: quota
// exceeded (429 RESOURCE_EXHAUSTED)".
func (e *APIError) Error() string {
	s := e.Provider
	if s == "" {
		s = "provider"
	}
	msg := e.Message
	if msg == "" {
		msg = "an error with no message"
	}
	s += ": " + msg
	var detail string
	if e.Status != 0 {
		detail = strconv.Itoa(e.Status)
	}
	kind := e.Code
	if kind == "" {
		kind = e.Type
	}
	if kind != "" {
		if detail != "" {
			detail += " "
		}
		detail += kind
	}
	if detail == "" {
		return s
	}
	return s + " (" + detail + ")"
}
