package provider

import "github.com/convo-go/convo/internal/codec"

// APIError is an error a provider reported instead of (or in the middle of)
// a reply: an error response body, an error event or line in a stream, an
// exception in an AWS event stream. Every codec returns this one type, so
//
//	var apiErr *provider.APIError
//	if errors.As(err, &apiErr) && apiErr.Type == "overloaded_error" { … }
//
// works whatever format the reply was read in. A reply reader returns it as
// it is (not wrapped in a "decoding" error): the provider spoke, the bytes
// were fine. A streamed reply that failed this way also returns the partial
// message beside it.
//
// Its fields: Provider (the provider id of the codec that read it), Status
// (the HTTP status, 0 when the error does not say), Type (the provider's
// kind of error, e.g. "overloaded_error", "RESOURCE_EXHAUSTED",
// "throttlingException"), Code (a finer code, OpenAI's "code"), Param (the
// request parameter at fault), Message and Raw (the error as sent). It is
// defined beside the stream readers (internal/codec) so that they, too, can
// report what a provider said in this one type.
type APIError = codec.APIError
