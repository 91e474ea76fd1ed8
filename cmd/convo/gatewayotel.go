package main

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/convo-go/convo/telemetry"
)

// setupTelemetry makes the gateway export a span per exchange over
// OTLP/HTTP when --otlp names an endpoint. The returned function flushes
// and stops the exporter.
func (cfg *gatewayConfig) setupTelemetry(ctx context.Context) (func(context.Context) error, error) {
	if cfg.otlp == "" {
		return func(context.Context) error { return nil }, nil
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(cfg.otlp))
	if err != nil {
		return nil, fmt.Errorf("--otlp: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "convo-gateway"))))
	cfg.opts.Telemetry = telemetry.New(tp, telemetry.Options{CaptureContent: cfg.otelContent})
	return tp.Shutdown, nil
}
