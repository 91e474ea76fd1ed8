package gateway

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/telemetry"
)

// exchangeSpan is what the span of one exchange needs, gathered while the
// exchange is served and emitted when its record is written (the reply is
// decoded there, off the client's path).
type exchangeSpan struct {
	parent     trace.SpanContext // the client's trace, when its request carried one
	req        telemetry.Request
	start, end time.Time
}

// startSpan notes the exchange's request for its span, when the gateway
// makes spans.
func (g *Gateway) startSpan(r *http.Request, x *exchange) {
	if g.opts.Telemetry == nil {
		return
	}
	req := telemetry.Request{Provider: providerOf(x.up.Protocol), Model: x.model, ConversationID: x.rec.conv,
		History: x.history, Stream: x.stream}
	if u, err := url.Parse(x.up.URL); err == nil {
		req.ServerAddress = u.Hostname()
		if p, err := strconv.Atoi(u.Port()); err == nil {
			req.ServerPort = p
		} else if u.Scheme == "https" {
			req.ServerPort = 443
		} else if u.Scheme == "http" {
			req.ServerPort = 80
		}
		if ip := net.ParseIP(req.ServerAddress); ip != nil {
			req.ServerAddress = ip.String()
		}
	}
	// The client's trace: a span already in the request's context (the
	// gateway wrapped in instrumented middleware), else a W3C traceparent.
	parent := trace.SpanContextFromContext(r.Context())
	if !parent.IsValid() {
		parent = trace.SpanContextFromContext(propagation.TraceContext{}.Extract(r.Context(), propagation.HeaderCarrier(r.Header)))
	}
	x.rec.span = &exchangeSpan{parent: parent, req: req, start: x.start}
}

// providerOf maps a protocol to convo's provider id.
func providerOf(protocol string) string {
	if strings.HasPrefix(protocol, "openai") {
		return "openai"
	}
	return protocol
}

// emitSpan makes the span of a recorded exchange from the messages the
// record keeps (after the recording policy): the reply, or the failure
// recorded for it.
func (rc *recorder) emitSpan(rec *record, msgs []convo.Message) {
	s := rec.span
	if rc.tel == nil || s == nil {
		return
	}
	var m convo.Message
	var fail string
	for i := range msgs {
		switch mi := &msgs[i]; {
		case mi.ID == rec.replyID && mi.Role == convo.RoleAssistant:
			m = *mi
		case mi.Role == convo.RoleError && i == len(msgs)-1:
			if fail = mi.Text(); fail == "" {
				fail = "failed (error text not recorded)"
			}
		}
	}
	var err error
	if fail != "" {
		err = errors.New(fail)
	}
	ctx := context.Background()
	if s.parent.IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, s.parent)
	}
	end := s.end
	if end.IsZero() {
		end = time.Now()
	}
	// The request's messages go to the span under the same policy as to
	// the store: redacted, and none in metadata mode.
	req := s.req
	if rec.mode == RecordMetadata {
		req.History = nil
	} else {
		req.History = rc.policy.keep(rec.mode, req.History)
	}
	rc.tel.Record(ctx, req, m, err, s.start, end)
}

// dropSpan makes the span of an exchange whose recording was dropped: the
// request, the failure if the exchange failed, and the drop. It carries no
// content (the recording policy is applied by the writer, which never saw
// the record) and no reply (reading it is the cost the drop avoids).
func (rc *recorder) dropSpan(rec *record, reason string) {
	s := rec.span
	if rc.tel == nil || s == nil {
		return
	}
	var err error
	if rec.fail != "" {
		err = errors.New("failed (error text not recorded)")
		if rec.mode != RecordMetadata && rc.policy.red == nil {
			err = errors.New(rec.fail)
		}
	}
	req := s.req
	req.History = nil
	ctx := context.Background()
	if s.parent.IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, s.parent)
	}
	rc.tel.RecordDropped(ctx, req, err, reason, s.start, s.end, time.Now())
}
