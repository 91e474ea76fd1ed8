package server

// Routes returns the operations the handler serves, "METHOD /pattern", for
// tests that must cover every one.
func Routes() []string {
	var out []string
	for _, rt := range (&Server{}).routes() {
		out = append(out, rt.method+" "+rt.pattern)
	}
	return out
}
