package convo

import "io"

// WriteMessagePieces is WriteMessage writing once piece bytes are held,
// so that tests cut short strings into many pieces.
func WriteMessagePieces(w io.Writer, m Message, piece int) error {
	return writeMessage(w, m, piece)
}
