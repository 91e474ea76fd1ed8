package wire

// Calls are the tool calls of the latest assistant message, which the tool
// results after it answer. Decoders pair results with them; encoders look
// up a result's call for its name and for whether its id was synthesised.
// The zero value is empty and ready to use.
type Calls struct{ list []call }

type call struct {
	id, name string
	synth    bool // the wire had no id: convo made it up
	answered bool
}

// Reset forgets the calls: every message but a tool message starts a new
// step.
func (c *Calls) Reset() { c.list = c.list[:0] }

// Add records a call; synth says the wire had no id for it.
func (c *Calls) Add(id, name string, synth bool) {
	c.list = append(c.list, call{id: id, name: name, synth: synth})
}

// Name returns the name of the call with id, or "".
func (c *Calls) Name(id string) string {
	for _, k := range c.list {
		if k.id == id {
			return k.name
		}
	}
	return ""
}

// Synthetic reports whether a call with id had no id on the wire, so a
// result answering it is sent without one either.
func (c *Calls) Synthetic(id string) bool {
	for _, k := range c.list {
		if k.id == id && k.synth {
			return true
		}
	}
	return false
}

// Answer finds the unanswered call a tool result answers and marks it
// answered: the call with id when id is not "", else the first one named
// name, else (name "" too) the first one. It returns that call's id and
// name, and false when no unanswered call fits.
func (c *Calls) Answer(id, name string) (callID, callName string, ok bool) {
	for i := range c.list {
		k := &c.list[i]
		if k.answered {
			continue
		}
		if id != "" && k.id == id || id == "" && (name == "" || k.name == name) {
			k.answered = true
			return k.id, k.name, true
		}
	}
	return "", "", false
}
