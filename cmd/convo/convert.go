package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/archive"
	"github.com/convo-go/convo/catalog"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/all"
)

func init() {
	commands["convert"] = command{
		usage:   "--from F|auto --to T [--messages-only] [--pick N|ID] [--embed-media] [--strict] [--repair] [--reasoning drop|text] [--media error|placeholder] [--system-role system|developer] [--model M] [--lines] [FILE]",
		summary: "convert a history between convo and any provider's request format",
		run:     runConvert,
	}
}

// providerNames lists the provider formats, each once.
func providerNames() string {
	names := make([]string, 0, len(all.Formats()))
	for _, c := range all.Formats() {
		names = append(names, c.Name())
	}
	return strings.Join(names, ", ")
}

// fromNames lists what --from accepts: convo, the provider formats and the
// outside formats read.
func fromNames() string {
	return "convo, " + providerNames() + "; exports and logs (see docs/archive.md): " + archiveNames(archive.Readable())
}

// toNames lists what --to accepts: convo, the provider formats and the
// outside formats written.
func toNames() string {
	return "convo, " + providerNames() + "; outside formats (see docs/archive.md): " + archiveNames(archive.Writable())
}

// convOptions are the conversion flags convert and reply share.
type convOptions struct {
	strict, repair, gemini                           bool
	reasoning, servers, media, system, model, models string
}

func (o *convOptions) register(fs interface {
	BoolVar(*bool, string, bool, string)
	StringVar(*string, string, string, string)
}) {
	fs.BoolVar(&o.strict, "strict", false, "treat every warning as an error")
	fs.BoolVar(&o.repair, "repair", false, "answer unanswered tool calls with error results and drop orphan results instead of failing (pending calls at the end too, for a provider that refuses them)")
	fs.StringVar(&o.reasoning, "reasoning", "", "reasoning the target cannot take: drop (the default, warned about) or text; --reasoning drop chooses the loss, which is then not warned about")
	fs.StringVar(&o.servers, "server-tools", "", "calls and results of tools another provider ran (web search, code execution, …): drop (the default, warned about) or text; --server-tools drop chooses the loss, which is then not warned about")
	fs.StringVar(&o.media, "media", "error", "media the target cannot take: error or placeholder")
	fs.StringVar(&o.system, "system-role", "system", "role of system messages for openai-chat: system or developer")
	fs.StringVar(&o.model, "model", "", "the target model, for rules that depend on it; a whole request converted is sent to it (its model member is set)")
	fs.StringVar(&o.models, "models", "", modelsFlagUsage)
	fs.BoolVar(&o.gemini, "gemini-bypass", false, "put Gemini 3's bypass signature on foreign function calls (automatic when --model names a Gemini 3 model)")
}

func (o *convOptions) options() (provider.Options, error) {
	opts := provider.Options{Strict: o.strict, Repair: o.repair, Model: o.model, GeminiBypass: o.gemini,
		Reasoning: provider.ReasoningMode(o.reasoning), Media: provider.MediaMode(o.media), SystemRole: o.system,
		ServerTools: provider.ServerToolMode(o.servers)}
	switch {
	case opts.Reasoning != "" && opts.Reasoning != provider.ReasoningDrop && opts.Reasoning != provider.ReasoningText:
		return opts, usagef("--reasoning must be drop or text, not %q", o.reasoning)
	case opts.ServerTools != "" && opts.ServerTools != provider.ServerToolsDrop && opts.ServerTools != provider.ServerToolsText:
		return opts, usagef("--server-tools must be drop or text, not %q", o.servers)
	case opts.Media != provider.MediaError && opts.Media != provider.MediaPlaceholder:
		return opts, usagef("--media must be error or placeholder, not %q", o.media)
	case o.system != "system" && o.system != "developer":
		return opts, usagef("--system-role must be system or developer, not %q", o.system)
	}
	return opts, nil
}

// codec finds the codec for a format name; "convo" has none.
func codec(flag, name string) (provider.Codec, error) {
	names := fromNames()
	if flag == "to" {
		names = toNames()
	}
	if name == "" {
		return nil, usagef("--%s is required (one of %s)", flag, names)
	}
	if name == "convo" {
		return nil, nil
	}
	c, err := all.Lookup(name)
	if err != nil {
		return nil, usagef("--%s: unknown format %q (one of %s)", flag, name, names)
	}
	return c, nil
}

func (e *env) warn(warns []provider.Warning) {
	for _, w := range warns {
		if e.jsonWarnings {
			b, _ := json.Marshal(struct {
				Warning string `json:"warning"`
				Path    string `json:"path,omitempty"`
				Code    string `json:"code,omitempty"`
			}{w.Msg, w.Path, string(w.Code)})
			fmt.Fprintf(e.stderr, "%s\n", b)
			continue
		}
		fmt.Fprintf(e.stderr, "warning: %s\n", w)
	}
}

func runConvert(e *env, args []string) error {
	fs := flags(e, "convert")
	from := fs.String("from", "", "input format: auto (recognise it, saying which on stderr), "+fromNames())
	to := fs.String("to", "", "output format: "+toNames())
	lines := fs.Bool("lines", false, "with --to convo, write JSON Lines instead of the envelope")
	fs.BoolVar(&e.jsonWarnings, "json", false, `write warnings to stderr as JSON Lines: {"warning","path","code"}`)
	messagesOnly := fs.Bool("messages-only", false, "convert only the conversation members (messages, system), not the model, tools and settings")
	var co convOptions
	co.register(fs)
	var af archiveFlags
	af.register(fs)
	args, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	opts, err := co.options()
	if err != nil {
		return err
	}
	// The catalogue is read before anything converts, so that a bad file
	// fails at once whatever the input.
	if _, _, err := e.loadModels(co.models, false); err != nil {
		return err
	}
	if isReadable(*from) || isWritable(*to) || isReadable(*to) {
		return convertArchive(e, *from, *to, args, opts, af, *lines)
	}
	if *from != "auto" {
		if _, err = codec("from", *from); err != nil {
			return err
		}
	}
	dst, err := codec("to", *to)
	if err != nil {
		return err
	}
	if *lines && dst != nil {
		e.warn([]provider.Warning{provider.Warnf("", "--lines does nothing with --to %s: only --to convo writes JSON Lines", *to)})
	}
	body, name, err := e.input(args, opts.DecodeLimits().MaxBytes)
	if err != nil {
		return err
	}
	if body, *from, err = e.unwrapInput(body, name, *from); err != nil {
		return err
	}
	src, err := e.source(*from, body, name)
	if err != nil {
		return err
	}

	if !*messagesOnly && src != nil {
		if rs, ok := src.(provider.RequestCodec); ok {
			return convertRequest(e, rs, dst, body, name, opts, *lines)
		}
	}
	h, warns, err := decodeHistory(src, body, opts)
	e.warn(warns)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if rs, ok := src.(provider.RequestCodec); ok {
		// Nothing is left behind silently, even when the caller asked for
		// the conversation alone.
		if r, _, err := rs.DecodeRequest(body, opts); err == nil {
			for _, s := range r.Settings() {
				e.warn([]provider.Warning{provider.WarnCode(provider.CodeSettingDropped, s,
					"left out: --messages-only converts the conversation alone")})
			}
		}
	}
	return e.writeHistory(h, dst, opts, *lines)
}

// source is the codec of --from: the one named, or for auto the one the
// body looks like, said on stderr. The canonical format has none.
func (e *env) source(from string, body []byte, name string) (provider.Codec, error) {
	if from != "auto" {
		return codec("from", from)
	}
	src, d, err := all.Detect(body)
	if err != nil {
		return nil, fmt.Errorf("%s: --from auto: %w", name, err)
	}
	guess := ""
	if !d.Sure {
		guess = "; a guess: give --from to be sure"
	}
	fmt.Fprintf(e.stderr, "convo convert: --from auto: reading %s as %s (%s%s)\n", name, d.Format, d.Reason, guess)
	return src, nil
}

// decodeHistory reads a canonical document (src nil) or a provider's
// request body.
func decodeHistory(src provider.Codec, body []byte, opts provider.Options) (convo.History, []provider.Warning, error) {
	if src == nil {
		h, err := convo.Unmarshal(body)
		return h, nil, err
	}
	return src.Decode(body, opts)
}

// writeHistory writes h in canonical form (dst nil) or as dst's request.
func (e *env) writeHistory(h convo.History, dst provider.Codec, opts provider.Options, lines bool) error {
	var out []byte
	var err error
	switch {
	case dst == nil && lines:
		out, err = convo.MarshalLines(h)
	case dst == nil:
		out, err = convo.Marshal(h)
	default:
		var warns []provider.Warning
		out, warns, err = dst.Encode(h, opts)
		e.warn(warns)
		if err == nil && (len(out) == 0 || out[len(out)-1] != '\n') {
			out = append(out, '\n')
		}
	}
	if err != nil {
		return err
	}
	_, err = e.stdout.Write(out)
	return err
}

// convertRequest converts a whole request: model, tools, settings and the
// conversation. To convo, only the conversation is written, and every
// setting left out is a warning.
func convertRequest(e *env, src provider.RequestCodec, dst provider.Codec, body []byte, name string, opts provider.Options, lines bool) error {
	r, warns, err := src.DecodeRequest(body, opts)
	e.warn(warns)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	var out []byte
	if dst == nil {
		for _, s := range r.Settings() {
			e.warn([]provider.Warning{provider.WarnCode(provider.CodeSettingDropped, s,
				"a convo history has no request settings: left out (convert to a provider format to keep them)")})
		}
		if lines {
			out, err = convo.MarshalLines(r.History)
		} else {
			out, err = convo.Marshal(r.History)
		}
		if err != nil {
			return err
		}
		_, err = e.stdout.Write(out)
		return err
	}
	rd, ok := dst.(provider.RequestCodec)
	if !ok {
		return fmt.Errorf("%s takes no whole requests: use --messages-only", dst.Name())
	}
	if opts.Model != "" {
		r.Model = opts.Model // --model names the target model, and the request's
	}
	r.Target = e.targetModel(r.Model)
	out, warns, err = rd.EncodeRequest(r, opts)
	e.warn(warns)
	if err != nil {
		return err
	}
	_, err = e.stdout.Write(append(out, '\n'))
	return err
}

// targetModel describes the model a whole request is converted for (the
// request's model, or --model) from the model catalogue (--models), for
// the encoders' model-aware rules (provider.Request.Target). A model the
// catalogue knows only by its family, or not at all, is a warning.
func (e *env) targetModel(name string) provider.Model {
	if name == "" {
		return provider.Model{}
	}
	cat := e.models
	if cat == nil {
		cat = catalog.Default()
	}
	m, match := cat.Lookup(name)
	if match.Warning != "" {
		e.warn([]provider.Warning{provider.WarnCode(provider.CodeModelUnknown, "model", "%s", match.Warning)})
	}
	return provider.TargetOf(name, m, match)
}
