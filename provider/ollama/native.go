package ollama

import (
	"strconv"
)

// Members convo has no field for are kept in Native["ollama"] as
// wire.Members, in their wire names; a member recorded as wire.Null was
// absent on the wire (convo filled the field in) and is left out again.

func index(name string, i int) string { return name + "[" + strconv.Itoa(i) + "]" }

func msgPath(i int) string { return index("messages", i) }

func partPath(i, j int) string { return msgPath(i) + "." + index("parts", j) }
