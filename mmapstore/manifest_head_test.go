package mmapstore

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"testing"
)

// TestDecodeHeadAsUnmarshal checks decodeHead against json.Unmarshal into
// manifestHead: on heads the writer produces (random values, odd strings,
// extreme numbers) both give the same head; on wrong types both fail.
func TestDecodeHeadAsUnmarshal(t *testing.T) {
	n := 300
	if os.Getenv("LOGDEX_LONG") != "" {
		n = 20000
	}
	r := rand.New(rand.NewPCG(1, 2))
	strs := []string{"", "/var/log", "a\"b\\c\n", "\xff\xfe not UTF-8", "日本語", "UTC", "Europe/Paris"}
	str := func() string { return strs[r.IntN(len(strs))] }
	u64 := func() uint64 { return []uint64{0, 1, math.MaxUint32, math.MaxUint64, r.Uint64()}[r.IntN(5)] }
	i64 := func() int64 { return []int64{0, -1, math.MinInt64, math.MaxInt64, r.Int64()}[r.IntN(5)] }
	for i := range n {
		h := manifestHead{Generation: u64(), TZ: str(), NextFileID: u64(), NextSegmentID: u64()}
		for range r.IntN(3) {
			h.Roots = append(h.Roots, rootWire{Root: Root{Given: str(), Abs: str(), IsFile: r.IntN(2) == 0}, GivenB64: str(), AbsB64: str()})
		}
		for range r.IntN(3) {
			h.Skipped = append(h.Skipped, skippedWire{Skipped: Skipped{Root: int(i64()), Path: str(), Reason: str(),
				Unreadable: r.IntN(2) == 0, Dev: u64(), Ino: u64(), Size: i64(), MTime: i64()}, PathB64: str()})
		}
		js, err := json.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		var want manifestHead
		if err := json.Unmarshal(js, &want); err != nil {
			t.Fatal(err)
		}
		got, err := decodeHead(js)
		if err != nil {
			t.Fatalf("head %d: %v\n%s", i, err, js)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("head %d:\n got %+v\nwant %+v\n%s", i, got, want, js)
		}
	}
	for _, js := range []string{
		`{"generation":-1}`, `{"generation":1.5}`, `{"generation":"1"}`, `{"generation":18446744073709551616}`,
		`{"tz":3}`, `{"roots":{}}`, `{"roots":[3]}`, `{"roots":[{"is_file":"yes"}]}`,
		`{"skipped":[{"size":9223372036854775808}]}`, `[]`, `{"generation":1} x`, `{`,
	} {
		var want manifestHead
		werr := json.Unmarshal([]byte(js), &want)
		_, gerr := decodeHead([]byte(js))
		if werr == nil || gerr == nil {
			t.Errorf("%s: json.Unmarshal says %v, decodeHead %v; want both to fail", js, werr, gerr)
		}
	}
	for _, js := range []string{`{}`, `{"generation":null,"roots":null,"skipped":[null]}`, `{"unknown":[1,{"a":2}],"generation":7}`} {
		var want manifestHead
		if err := json.Unmarshal([]byte(js), &want); err != nil {
			t.Fatal(err)
		}
		got, err := decodeHead([]byte(js))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %+v, %v; want %+v", js, got, err, want)
		}
	}
}

// TestDecodeHeadEveryField fills every field of a head, nested ones
// included, by reflection: a field added to manifestHead (or to a root or
// a skipped entry) that decodeHead does not read fails here.
func TestDecodeHeadEveryField(t *testing.T) {
	var h manifestHead
	fillNonZero(reflect.ValueOf(&h).Elem())
	js, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeHead(js)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, h) {
		t.Fatalf("decodeHead lost fields:\n got %+v\nwant %+v\n%s", got, h, js)
	}
}

// fillNonZero gives every field of v a value other than its zero: strings
// "x", numbers 7, true, slices of one element.
func fillNonZero(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillNonZero(v.Field(i))
			}
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fillNonZero(v.Index(0))
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(7)
	default:
		panic("fillNonZero: add " + v.Kind().String())
	}
}
