package main

import (
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"sync"
)

// Replay is a local stand-in for the providers' APIs: each POST to a path
// gets the next recorded stream for that path, in order, and the request
// bodies are kept for inspection.
type Replay struct {
	mu       sync.Mutex
	streams  map[string][][]byte // path → recordings, in order
	Requests map[string][][]byte // path → request bodies received
}

// recordings maps each API path to the files replayed there.
var recordings = map[string][]string{
	"/v1/messages":         {"anthropic-1.sse", "anthropic-2.sse"},
	"/v1/chat/completions": {"openai-1.sse", "openai-2.sse"},
}

// NewReplay loads the recorded streams from dir.
func NewReplay(dir fs.FS) (*Replay, error) {
	r := &Replay{streams: map[string][][]byte{}, Requests: map[string][][]byte{}}
	for path, files := range recordings {
		for _, f := range files {
			b, err := fs.ReadFile(dir, f)
			if err != nil {
				return nil, err
			}
			r.streams[path] = append(r.streams[path], b)
		}
	}
	return r, nil
}

func (r *Replay) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, 8<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	n := len(r.Requests[req.URL.Path])
	r.Requests[req.URL.Path] = append(r.Requests[req.URL.Path], body)
	streams := r.streams[req.URL.Path]
	r.mu.Unlock()
	if n >= len(streams) {
		http.Error(w, fmt.Sprintf("no recording left for %s (request %d)", req.URL.Path, n+1), http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Write(streams[n])
}
