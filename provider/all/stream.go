package all

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/anthropic"
	"github.com/convo-go/convo/provider/gemini"
	"github.com/convo-go/convo/provider/ollama"
	"github.com/convo-go/convo/provider/openai"
)

// streamEncoders maps format names to their stream encoders.
var streamEncoders = map[string]func(io.Writer, provider.StreamOptions) provider.StreamEncoder{
	"openai-chat":      openai.NewChatStreamEncoder,
	"openai-responses": openai.NewResponsesStreamEncoder,
	"anthropic":        anthropic.NewStreamEncoder,
	"gemini":           gemini.NewStreamEncoder,
	"ollama":           ollama.NewStreamEncoder,
}

// NewStreamEncoder returns a stream encoder writing the format called name
// (its streamed-reply wire format) to w. The calls and results of tools a
// provider ran itself go only to a format that carries them (Anthropic's
// own, as server tool blocks); elsewhere they are left out.
func NewStreamEncoder(name string, w io.Writer, opts provider.StreamOptions) (provider.StreamEncoder, error) {
	f, ok := streamEncoders[name]
	if !ok {
		var names []string
		for _, c := range Formats() {
			if streamEncoders[c.Name()] != nil {
				names = append(names, c.Name())
			}
		}
		return nil, fmt.Errorf("%w %q for stream encoding (known: %s)", provider.ErrUnknownFormat, name, strings.Join(names, ", "))
	}
	// Provider-run tools the format cannot carry are left out, not sent
	// as calls for the client to run.
	return &serverFilter{enc: f(w, opts), provider: serverCarriers[name], skip: map[[2]int]bool{}}, nil
}

// replyEncoders maps format names to their whole-reply encoders.
var replyEncoders = map[string]func(convo.Message, provider.StreamOptions) []byte{
	"openai-chat":      openai.EncodeChatReply,
	"openai-responses": openai.EncodeResponsesReply,
	"anthropic":        anthropic.EncodeReply,
	"gemini":           gemini.EncodeReply,
	"ollama":           ollama.EncodeReply,
}

// EncodeReply returns a non-streamed response body in the format called
// name for an assistant message, leaving out provider-run tools as
// NewStreamEncoder does.
func EncodeReply(name string, m convo.Message, opts provider.StreamOptions) ([]byte, error) {
	f, ok := replyEncoders[name]
	if !ok {
		return nil, fmt.Errorf("%w %q for reply encoding", provider.ErrUnknownFormat, name)
	}
	return f(withoutServerTools(name, m), opts), nil
}

// repliesEncoders maps the names of the formats whose response carries
// several candidate replies to their encoders of such a response.
var repliesEncoders = map[string]func([]convo.Message, provider.StreamOptions) []byte{
	"gemini":      gemini.EncodeReplies,
	"openai-chat": openai.EncodeChatReplies,
}

// EncodeReplies returns a non-streamed response body in the format called
// name holding every message of ms as one candidate reply, in order (the
// response to a request with n > 1 or candidateCount > 1). A format with
// one reply per response gets the first message, and a warning says how
// many were left out.
func EncodeReplies(name string, ms []convo.Message, opts provider.StreamOptions) ([]byte, []provider.Warning, error) {
	if len(ms) == 0 {
		return nil, nil, errors.New("no reply to encode")
	}
	if f, ok := repliesEncoders[name]; ok {
		return f(ms, opts), nil, nil
	}
	out, err := EncodeReply(name, ms[0], opts)
	var warns []provider.Warning
	if err == nil && len(ms) > 1 {
		warns = append(warns, provider.Warnf("candidates", "%s carries one reply: %d candidates besides the first left out", name, len(ms)-1))
	}
	return out, warns, err
}

// StreamsCandidates reports whether the stream encoder of the format called
// name writes several candidates (Delta.Candidate); for the others a
// DeltaReader should report only the first (see
// provider.DeltaReader.ReadCandidates).
func StreamsCandidates(name string) bool {
	_, ok := repliesEncoders[name]
	return ok
}

// Encoder returns the reply and stream encoders of the format called name
// (provider.EncoderOf of Lookup(name)), as the format writes them: without
// the filtering of provider-run tools NewStreamEncoder and EncodeReply add.
// Bedrock and LiteRT have none: the error wraps provider.ErrNoEncoder and
// lists the formats that do.
func Encoder(name string) (provider.ReplyEncoder, error) {
	f, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	e, err := provider.EncoderOf(f)
	if err != nil {
		var names []string
		for _, f := range Formats() {
			if _, ok := f.(provider.ReplyEncoder); ok {
				names = append(names, f.Name())
			}
		}
		return nil, fmt.Errorf("%w (formats with encoders: %s)", err, strings.Join(names, ", "))
	}
	return e, nil
}
