package litert

import (
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/wire"
)

// EncodeRequest returns the messages array for r's history. A LiteRT-LM
// conversation is restored from its messages alone: the model, tools and
// sampling settings are the engine's and the conversation config's, set in
// code on the device. Every setting r has is therefore left out with a
// warning (CodeSettingDropped; CodeCandidatesDropped for several
// candidates), as are r's native members.
func (conversation) EncodeRequest(r *provider.Request, opts provider.Options) ([]byte, []provider.Warning, error) {
	return conversation{}.AppendRequest(nil, r, opts)
}

// AppendRequest appends the body EncodeRequest returns to dst (see
// provider.RequestAppender); on an error it returns dst as it was.
func (conversation) AppendRequest(dst []byte, r *provider.Request, opts provider.Options) ([]byte, []provider.Warning, error) {
	inner := opts
	inner.Strict, inner.OnWarning, inner.Accept = false, nil, nil
	out, warns, err := wire.Encode(dst, r.History, target, inner, warnings(r.History, inner), encodePrepared)
	if err != nil {
		return dst, warns, err
	}
	for _, s := range r.Settings() {
		switch {
		case s == "candidates" && r.Candidates == 1:
			// One reply is the only one any engine gives: nothing is lost.
		case s == "candidates":
			warns = append(warns, provider.WarnCode(provider.CodeCandidatesDropped, s,
				"litert returns one reply per request: left out (one reply, not %d)", r.Candidates))
		default:
			warns = append(warns, provider.WarnCode(provider.CodeSettingDropped, s,
				"litert has no such setting in its messages: left out (set it in the engine or conversation config)"))
		}
	}
	warns, err = opts.Finish(warns)
	if err != nil {
		return dst, warns, err
	}
	return out, warns, nil
}

// DecodeRequest reads a messages array into a request that has only a
// history.
func (conversation) DecodeRequest(body []byte, opts provider.Options) (*provider.Request, []provider.Warning, error) {
	inner := opts
	inner.Strict, inner.OnWarning, inner.Accept = false, nil, nil
	h, warns, err := conversation{}.Decode(body, inner)
	if err != nil {
		return nil, warns, err
	}
	warns, err = opts.Finish(warns)
	if err != nil {
		return nil, warns, err
	}
	return &provider.Request{History: h}, warns, nil
}
