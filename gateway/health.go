package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// lossWindow is how long after a lost recording /readyz says recordings
// are being lost.
const lossWindow = 10 * time.Second

// healthz answers 200 while the gateway serves: it says nothing of the
// store, which may be down while exchanges are still answered (and
// spooled).
func (g *Gateway) healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
}

// readiness is the body of /readyz.
type readiness struct {
	// Status is "ready", "degraded" (exchanges are answered and recorded,
	// late: the store is failing or behind, and the spool holds them) or
	// "losing" (exchanges are answered and some recordings lost).
	Status  string          `json:"status"`
	Reasons []string        `json:"reasons,omitempty"`
	Queued  int             `json:"queued"`
	Spool   *spoolReadiness `json:"spool,omitempty"`
}

// spoolReadiness is what /readyz says of the spool.
type spoolReadiness struct {
	Exchanges     int     `json:"exchanges"`
	Bytes         int64   `json:"bytes"`
	OldestSeconds float64 `json:"oldest_seconds"`
}

// readyz says whether recording is keeping up, and why not: 200 when it
// is, or when it is late but loses nothing (status "degraded": a balancer
// need not take the gateway out, every gateway on the store is in the same
// state); 503 while recordings are being lost (status "losing": in the
// last 10 s, or the store fails and there is no spool to keep them), so a
// balancer can send traffic to a gateway that still records. The reasons
// name no tenant, conversation or store address: the error is in the log.
func (g *Gateway) readyz(w http.ResponseWriter, r *http.Request) {
	rc := g.rec
	out := readiness{Status: "ready", Queued: len(rc.q)}
	rc.health.mu.Lock()
	failing, since, dropped := rc.health.err != "", rc.health.since, rc.health.dropped
	rc.health.mu.Unlock()
	now := time.Now()
	if failing {
		out.Status = "degraded"
		out.Reasons = append(out.Reasons, fmt.Sprintf("the store has been failing for %s (the error is in the log)", now.Sub(since).Round(time.Second)))
	}
	if d := rc.dur; d != nil {
		st := d.sp.Stats()
		out.Spool = &spoolReadiness{Exchanges: st.Frames, Bytes: st.Bytes}
		if st.Frames > 0 {
			out.Status = "degraded"
			out.Spool.OldestSeconds = now.Sub(st.Oldest).Seconds()
			out.Reasons = append(out.Reasons, fmt.Sprintf("%d exchanges spooled, waiting for the store (the oldest for %s)", st.Frames, now.Sub(st.Oldest).Round(time.Second)))
		}
	} else if failing {
		out.Status = "losing"
		out.Reasons = append(out.Reasons, "recordings the store fails are lost: there is no spool")
	}
	if !dropped.IsZero() && now.Sub(dropped) < lossWindow {
		out.Status = "losing"
		out.Reasons = append(out.Reasons, fmt.Sprintf("recordings lost %s ago (the queue or the spool full)", now.Sub(dropped).Round(time.Millisecond)))
	}
	w.Header().Set("Content-Type", "application/json")
	if out.Status == "losing" {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = json.NewEncoder(w).Encode(out)
}
