package openai

import (
	"fmt"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/internal/textbuf"
	"github.com/convo-go/convo/provider"
)

// readAPIError reads an error object: {"type","code","param","message"}.
// Numbers (some servers send a numeric code) and other shapes are kept as
// their JSON text.
func readAPIError(r *jsonx.Reader) (*provider.APIError, error) {
	e := &provider.APIError{Provider: ProviderID}
	if r.Peek() == jsonx.String {
		s, err := r.ReadString()
		e.Message = s
		return e, err
	}
	err := r.ReadObject(func(key []byte) error {
		var dst *string
		switch string(key) {
		case "type":
			dst = &e.Type
		case "code":
			dst = &e.Code
		case "param":
			dst = &e.Param
		case "message":
			dst = &e.Message
		default:
			return r.Skip()
		}
		if r.Peek() == jsonx.String {
			s, err := r.ReadString()
			*dst = s
			return err
		}
		if r.ReadNull() {
			return nil
		}
		raw, err := r.ReadRaw()
		*dst = string(raw)
		return err
	})
	if e.Message == "" {
		e.Message = "an error with no message"
	}
	return e, err
}

// unixTime turns a Unix timestamp in seconds into a UTC time; zero stays
// zero.
func unixTime(sec int64) time.Time {
	if sec <= 0 {
		return time.Time{}
	}
	return time.Unix(sec, 0).UTC()
}

// usageCount reads a token count: a non-negative integer, or null (0).
func usageCount(r *jsonx.Reader) (int64, error) {
	if r.ReadNull() {
		return 0, nil
	}
	n, err := r.ReadInt()
	if err == nil && n < 0 {
		err = fmt.Errorf("negative token count %d", n)
	}
	return n, err
}

// readUsage reads a usage object of either API into u. Names differ (Chat:
// prompt_tokens, completion_tokens; Responses: input_tokens,
// output_tokens), the shape is the same.
func readUsage(r *jsonx.Reader) (*convo.Usage, error) {
	if r.ReadNull() {
		return nil, nil
	}
	u := &convo.Usage{}
	err := r.ReadObject(func(key []byte) error {
		var dst *int64
		switch string(key) {
		case "prompt_tokens", "input_tokens":
			dst = &u.Input
		case "completion_tokens", "output_tokens":
			dst = &u.Output
		case "total_tokens":
			dst = &u.Total
		case "prompt_tokens_details", "input_tokens_details", "completion_tokens_details", "output_tokens_details":
			if r.ReadNull() {
				return nil
			}
			return atKey(r.ReadObject(func(k []byte) error {
				var d *int64
				switch string(k) {
				case "cached_tokens":
					d = &u.CacheRead
				case "cache_write_tokens":
					d = &u.CacheWrite
				case "reasoning_tokens":
					d = &u.Reasoning
				default:
					return r.Skip()
				}
				n, err := usageCount(r)
				*d = n
				return atKey(err, k)
			}), key)
		default:
			return r.Skip()
		}
		n, err := usageCount(r)
		*dst = n
		return atKey(err, key)
	})
	return u, err
}

// appendUsageJSON writes u the way a Chat (chat) or Responses reply does,
// for the bodies accumulators rebuild.
func appendUsageJSON(dst []byte, u *convo.Usage, chat bool) []byte {
	in, out, inD, outD := "input_tokens", "output_tokens", "input_tokens_details", "output_tokens_details"
	if chat {
		in, out, inD, outD = "prompt_tokens", "completion_tokens", "prompt_tokens_details", "completion_tokens_details"
	}
	dst = append(dst, '{')
	dst = jsonx.AppendKey(dst, in)
	dst = jsonx.AppendInt(dst, u.Input)
	dst = jsonx.AppendKey(dst, out)
	dst = jsonx.AppendInt(dst, u.Output)
	dst = jsonx.AppendKey(dst, "total_tokens")
	dst = jsonx.AppendInt(dst, u.Total)
	if u.CacheRead != 0 || u.CacheWrite != 0 {
		dst = jsonx.AppendKey(dst, inD)
		dst = append(dst, '{')
		dst = jsonx.AppendKey(dst, "cached_tokens")
		dst = jsonx.AppendInt(dst, u.CacheRead)
		if u.CacheWrite != 0 {
			dst = jsonx.AppendKey(dst, "cache_write_tokens")
			dst = jsonx.AppendInt(dst, u.CacheWrite)
		}
		dst = append(dst, '}')
	}
	if u.Reasoning != 0 {
		dst = jsonx.AppendKey(dst, outD)
		dst = append(dst, `{"reasoning_tokens":`...)
		dst = jsonx.AppendInt(dst, u.Reasoning)
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// textBuf gathers the deltas of one text, in chunks (textbuf.Text): a reply
// of many small deltas costs linear time, and a long one is not copied as
// it grows.
type textBuf struct {
	textbuf.Text
	set bool // some delta or whole value arrived
}

func (t *textBuf) add(s []byte) { t.Append(s); t.set = true }

// replace sets the whole text (a .done event's authoritative copy).
func (t *textBuf) replace(s []byte) { t.Set(s); t.set = true }
