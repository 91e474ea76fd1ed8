package pricing

// Catalogue is the lookup of the model catalogue's prices: what Default
// tries after a prices file.
//
// It is the one place the catalogue's prices come in. Until the catalogue
// is wired here it knows no price, so only models a prices file names are
// priced (the rest have an unknown cost, never zero).
func Catalogue(model string) (Price, bool) {
	return Price{}, false
}

// Default returns the Pricer convo's commands use: the prices file named
// by file ("": none), first match winning, then the catalogue. A file
// that cannot be read or parsed is an error naming it, so a command
// refuses to start rather than record unpriced messages.
func Default(file string) (*Pricer, error) {
	var t *Table
	if file != "" {
		var err error
		if t, err = LoadFile(file); err != nil {
			return nil, err
		}
	}
	return New(t.Lookup, Catalogue), nil
}
