package sqlite

import "testing"

// SetChunkBytes makes bodies longer than n bytes be stored in pieces of n
// bytes until t ends, so that tests cut small bodies into many pieces.
// Stores opened after it see it.
func SetChunkBytes(t testing.TB, n int) {
	old := chunkBytes
	chunkBytes = n
	t.Cleanup(func() { chunkBytes = old })
}

// MaxPieceBytes bounds a long body's pieces.
const MaxPieceBytes = maxPieceBytes
