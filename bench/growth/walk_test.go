package growth

import (
	"bytes"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/convo-go/convo"
)

// filler sets every field it reaches to a value of its own and remembers
// the text of each, so a test can check that all of them were read.
type filler struct {
	next  int
	marks []string
}

func (f *filler) mark() string {
	f.next++
	s := "m" + strconv.Itoa(f.next) + "m"
	f.marks = append(f.marks, s)
	return s
}

func (f *filler) fill(v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(f.mark())
	case reflect.Int, reflect.Int64:
		f.next++
		v.SetInt(int64(1000000 + f.next))
		f.marks = append(f.marks, strconv.FormatInt(v.Int(), 10))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		f.fill(v.Elem(), depth)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		m.SetMapIndex(reflect.ValueOf(f.mark()).Convert(v.Type().Key()), reflect.ValueOf([]byte(f.mark())).Convert(v.Type().Elem()))
		v.Set(m)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			v.SetBytes([]byte(f.mark()))
			return
		}
		if depth > 1 {
			return // a part's parts, one level down, are enough
		}
		s := reflect.MakeSlice(v.Type(), 1, 1)
		f.fill(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			f.next++
			t := time.Unix(0, int64(1700000000000000000+f.next))
			v.Set(reflect.ValueOf(t))
			f.marks = append(f.marks, strconv.FormatInt(t.UnixNano(), 10))
			return
		}
		for i := range v.NumField() {
			f.fill(v.Field(i), depth)
		}
	}
}

// TestWalkReadsEveryField: the floor reads every field of a message, its
// parts and their citations; a field added to convo's types and not to
// Walk fails here.
func TestWalkReadsEveryField(t *testing.T) {
	var m convo.Message
	var f filler
	f.fill(reflect.ValueOf(&m).Elem(), 0)
	out := Walk(nil, convo.History{m})
	for _, s := range f.marks {
		if !bytes.Contains(out, []byte(s)) {
			t.Errorf("Walk did not read the field set to %q", s)
		}
	}
	if len(f.marks) < 60 {
		t.Fatalf("the filler reached only %d fields", len(f.marks))
	}
}
