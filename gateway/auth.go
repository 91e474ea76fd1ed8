package gateway

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"strings"
)

// TokenHeader is the request header a client sends its gateway token in
// when it keeps its own provider key where its SDK sends one.
const TokenHeader = "Convo-Token"

// newUpstream is u with the key of its environment variable, and for a
// family of protocols ("openai") a variant for each.
func newUpstream(u Upstream, getenv func(string) string) *upstream {
	up := &upstream{Upstream: u, proto: protocols[u.Protocol]}
	if u.KeyEnv != "" {
		up.key = getenv(u.KeyEnv)
	}
	if fam := families[u.Protocol]; fam != nil {
		up.proto = protocols[fam[0]]
		up.variants = map[*protocol]*upstream{}
		for _, name := range fam {
			v := *up
			v.proto = protocols[name]
			up.variants[v.proto] = &v
		}
	}
	return up
}

// authenticate resolves the caller's tenant and its own provider key.
// A Convo-Token header holds the gateway token, and whatever the request
// carries where its SDK sends an API key is then the client's provider
// key. Without that header, a value there that is a gateway token is one;
// any other is the client's provider key when the gateway lets requests
// through without a token (Options.Anonymous), and refused otherwise.
func (g *Gateway) authenticate(r *http.Request) (tenant, key string, ok bool) {
	slot := providerKey(r)
	if tok := r.Header.Get(TokenHeader); tok != "" {
		if len(g.tokens) == 0 {
			return "", slot, g.opts.Anonymous // nothing to check it against
		}
		tenant, ok = g.lookupToken(tok)
		return tenant, slot, ok
	}
	if slot != "" && len(g.tokens) > 0 {
		if tenant, ok = g.lookupToken(slot); ok {
			return tenant, "", true
		}
	}
	return "", slot, g.opts.Anonymous
}

// lookupToken returns the tenant of a gateway token.
func (g *Gateway) lookupToken(tok string) (string, bool) {
	h := sha256.Sum256([]byte(tok))
	for k, t := range g.tokens {
		// Compare hashes in constant time: a caller learns nothing from
		// how long a wrong token took.
		if subtle.ConstantTimeCompare(k[:], h[:]) == 1 {
			return t, true
		}
	}
	return "", false
}

// refusedToken says why authenticate refused r.
func (g *Gateway) refusedToken(r *http.Request) string {
	if r.Header.Get(TokenHeader) != "" {
		return "invalid gateway token in " + TokenHeader
	}
	if providerKey(r) == "" {
		return "no gateway token: send it in " + TokenHeader + " (your provider key may stay where your SDK sends it)"
	}
	return "invalid gateway token: send it in " + TokenHeader + " (your provider key may stay where your SDK sends it)"
}

// providerKey returns what a request carries where its SDK sends an API
// key, or "".
func providerKey(r *http.Request) string {
	tok := r.Header.Get("X-Api-Key")
	if tok == "" {
		tok = r.Header.Get("X-Goog-Api-Key")
	}
	if tok == "" {
		if a := r.Header.Get("Authorization"); len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
			tok = a[7:]
		}
	}
	if tok == "" {
		tok = r.URL.Query().Get("key") // Gemini's query-string key
	}
	return tok
}

// gatewayToken returns the gateway token a request presents: its
// Convo-Token header, else what it carries where its SDK sends an API key.
func gatewayToken(r *http.Request) string {
	if tok := r.Header.Get(TokenHeader); tok != "" {
		return tok
	}
	return providerKey(r)
}

// forwardsKey reports whether the client's own key goes to the exchange's
// upstream: the upstream has none of its own and speaks the API of the
// provider the client's key is for.
func (x *exchange) forwardsKey() bool {
	return x.key != "" && x.up.key == "" && x.client.vendor == x.up.proto.vendor
}

// keyless is the message of the 401 a request gets that would reach an
// upstream needing a key with none: the upstream's variable is unset and
// the client sent no key of that provider. "" when the request may go.
func (x *exchange) keyless() string {
	up := x.up
	if up.KeyEnv == "" || up.key != "" || x.forwardsKey() {
		return ""
	}
	if x.client.vendor != up.proto.vendor {
		return fmt.Sprintf("upstream %q speaks %s, not the %s of this request, and has no key of its own: set $%s where the gateway runs (a client's key goes only to its own provider)",
			up.Name, up.proto.name, x.client.name, up.KeyEnv)
	}
	return fmt.Sprintf("upstream %q has no key of its own and the request carries no %s: send your own as your SDK does (a gateway token then goes in %s), or set $%s where the gateway runs",
		up.Name, up.proto.keyName, TokenHeader, up.KeyEnv)
}

// setAuth puts the upstream's key on an upstream request, else the
// client's own when forwardsKey allows it, in the upstream protocol's
// header.
func (x *exchange) setAuth(h http.Header) {
	switch {
	case x.up.key != "":
		x.up.proto.auth(h, x.up.key)
	case x.forwardsKey():
		x.up.proto.auth(h, x.key)
	}
}
