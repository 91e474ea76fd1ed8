package gateway

// Check reports what in c cannot work — an upstream without a name or
// with a protocol the gateway does not speak, a URL that is not http(s), a
// route to no upstream — as New would, for the programs that send through
// the same upstreams and routes (convo replay).
func (c Config) Check() error { return c.check() }
