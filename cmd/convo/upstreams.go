package main

import (
	"flag"
	"fmt"
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
	fs.Var(&u.ups, "upstream", "an upstream `NAME=PROTOCOL@URL[,key-env=VAR]` (repeatable)")
	fs.Var(&u.routes, "route", "send models matching `GLOB=NAME` to an upstream (repeatable, first match wins)")
	return u
}

// set reports whether any upstream or route was given.
func (u *upstreamFlags) set() bool { return *u.config != "" || len(u.ups) > 0 || len(u.routes) > 0 }

// read returns the configuration the flags give: the file's, or the
// upstreams and routes listed.
func (u *upstreamFlags) read() (gateway.Config, error) {
	var cfg gateway.Config
	if *u.config != "" {
		if len(u.ups) > 0 || len(u.routes) > 0 {
			return cfg, usagef("--config goes without --upstream and --route")
		}
		f, err := os.Open(*u.config)
		if err != nil {
			return cfg, err
		}
		defer f.Close()
		if cfg, err = gateway.ParseConfig(f); err != nil {
			return cfg, fmt.Errorf("%s: %w", *u.config, err)
		}
	}
	for _, s := range u.ups {
		up, err := gateway.ParseUpstream(s)
		if err != nil {
			return cfg, usagef("--upstream: %v", err)
		}
		cfg.Upstreams = append(cfg.Upstreams, up)
	}
	for _, s := range u.routes {
		r, err := gateway.ParseRoute(s)
		if err != nil {
			return cfg, usagef("--route: %v", err)
		}
		cfg.Routes = append(cfg.Routes, r)
	}
	if len(cfg.Upstreams) == 0 {
		return cfg, usagef("give --upstream and --route, or --config FILE")
	}
	return cfg, nil
}
