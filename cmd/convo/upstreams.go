package main

import (
	"flag"
	"os"

	"github.com/convo-go/convo/gateway"
)

// upstreamFlags are the upstreams and routes of convo gateway, which
// convo replay and convo serve's replays take too: --upstream and --route
// (repeatable), or --config FILE.
type upstreamFlags struct {
	config      *string
	ups, routes listFlag
}

func newUpstreamFlags(fs *flag.FlagSet) *upstreamFlags {
	u := &upstreamFlags{config: fs.String("config", "", "upstreams and routes from a JSON `FILE` (docs/gateway.md)")}
	fs.Var(&u.ups, "upstream", "an upstream `NAME=PROTOCOL@URL[,key-env=VAR]` (repeatable; none: OpenAI, Anthropic and Gemini)")
	fs.Var(&u.routes, "route", "send models matching `GLOB=NAME` to an upstream (repeatable, first match wins, before the default routes when no --upstream is given)")
	return u
}

// set reports whether any upstream or route was given.
func (u *upstreamFlags) set() bool { return *u.config != "" || len(u.ups) > 0 || len(u.routes) > 0 }

// read returns the configuration the flags give: the --config file's,
// else the --upstream and --route flags', else the default upstreams
// (OpenAI, Anthropic, Gemini) with the --route flags tried before the
// default routes. Every mistake is a usage error.
func (u *upstreamFlags) read() (gateway.Config, error) {
	var c gateway.Config
	if *u.config != "" {
		if len(u.ups) > 0 || len(u.routes) > 0 {
			return c, usagef("--config goes without --upstream and --route")
		}
		f, err := os.Open(*u.config)
		if err != nil {
			return c, usageError{err.Error()}
		}
		defer f.Close()
		if c, err = gateway.ParseConfig(f); err != nil {
			return c, usagef("%s: %v", *u.config, err)
		}
		return c, nil
	}
	for _, s := range u.ups {
		up, err := gateway.ParseUpstream(s)
		if err != nil {
			return c, usagef("--upstream: %v", err)
		}
		c.Upstreams = append(c.Upstreams, up)
	}
	for _, s := range u.routes {
		r, err := gateway.ParseRoute(s)
		if err != nil {
			return c, usagef("--route: %v", err)
		}
		c.Routes = append(c.Routes, r)
	}
	if len(c.Upstreams) == 0 {
		d := gateway.DefaultConfig()
		c.Upstreams, c.Routes = d.Upstreams, append(c.Routes, d.Routes...)
	}
	return c, nil
}
