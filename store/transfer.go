package store

import (
	"context"
	"fmt"
	"io"

	"github.com/convo-go/convo"
)

// Export writes the messages of a conversation to w in the canonical
// format: the envelope {"format":"convo/v1","messages":[…]}, or JSON Lines
// (one message per line) when lines is set. The bytes are those of
// convo.Marshal and convo.MarshalLines, so an export is deterministic. The
// conversation's title and metadata are not part of the canonical format;
// Get has them.
func Export(ctx context.Context, s Store, tenant, id string, w io.Writer, lines bool) error {
	h, _, err := s.Load(ctx, tenant, id, 0)
	if err != nil {
		return err
	}
	var b []byte
	if lines {
		b, err = convo.MarshalLines(h)
	} else {
		b, err = convo.Marshal(h)
	}
	if err != nil {
		return fmt.Errorf("export %s: %w", id, err)
	}
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("export %s: %w", id, err)
	}
	return nil
}

// Import reads a canonical document from r (the envelope, a bare array of
// messages or JSON Lines, within convo.DefaultLimits) and stores it as a new
// conversation described by c, as Create does. A document that does not
// decode is ErrInvalid, and nothing is created.
func Import(ctx context.Context, s Store, c Conversation, r io.Reader) (Conversation, error) {
	limit := convo.DefaultLimits.MaxBytes
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return Conversation{}, fmt.Errorf("import: reading: %w", err)
	}
	h, err := convo.Unmarshal(data) // refuses more than limit bytes
	if err != nil {
		return Conversation{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return s.Create(ctx, c, h...)
}
