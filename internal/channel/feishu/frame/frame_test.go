package frame

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// ping is a control frame computed by hand from the proto2 wire format:
// tag (field<<3 | wire type), then a varint or a length and bytes.
var ping = []byte{
	0x08, 0x01, // SeqID = 1
	0x10, 0x02, // LogID = 2
	0x18, 0x03, // service = 3
	0x20, 0x00, // method = 0 (control)
	0x2a, 0x0c, // headers, 12 bytes:
	0x0a, 0x04, 't', 'y', 'p', 'e', //   key = "type"
	0x12, 0x04, 'p', 'i', 'n', 'g', //   value = "ping"
	0x32, 0x00, // payload_encoding = ""
	0x3a, 0x00, // payload_type = ""
	0x4a, 0x00, // LogIDNew = ""
}

// ack is a data frame with a payload and a negative service id (int32
// varints are sign-extended to ten bytes).
var ack = []byte{
	0x08, 0x96, 0x01, // SeqID = 150
	0x10, 0x00, // LogID = 0
	0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, // service = -1
	0x20, 0x01, // method = 1 (data)
	0x32, 0x00,
	0x3a, 0x00,
	0x42, 0x02, '{', '}', // payload = "{}"
	0x4a, 0x01, 'x', // LogIDNew = "x"
}

func TestMarshalMatchesHandComputedBytes(t *testing.T) {
	cases := []struct {
		name string
		f    Frame
		want []byte
	}{
		{"ping", Frame{SeqID: 1, LogID: 2, Service: 3, Headers: []Header{{"type", "ping"}}}, ping},
		{"ack", Frame{SeqID: 150, Service: -1, Method: MethodData, Payload: []byte("{}"), LogIDNew: "x"}, ack},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.f.Marshal(); !bytes.Equal(got, c.want) {
				t.Errorf("Marshal() = % x\nwant        % x", got, c.want)
			}
			got, err := Unmarshal(c.want)
			if err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if !reflect.DeepEqual(got, c.f) {
				t.Errorf("Unmarshal() = %+v; want %+v", got, c.f)
			}
		})
	}
}

func TestRoundTrip(t *testing.T) {
	frames := []Frame{
		{},
		{SeqID: 1 << 63, LogID: 42, Service: 7, Method: MethodData,
			Headers:         []Header{{"type", "event"}, {"message_id", "m1"}, {"sum", "2"}, {"seq", "1"}, {"empty", ""}},
			PayloadEncoding: "gzip", PayloadType: "json", Payload: []byte(`{"schema":"2.0"}`), LogIDNew: "log"},
		{Method: MethodData, Payload: []byte{}}, // an empty payload is present, not nil
	}
	for i, f := range frames {
		got, err := Unmarshal(f.Marshal())
		if err != nil {
			t.Fatalf("frame %d: Unmarshal: %v", i, err)
		}
		if !reflect.DeepEqual(got, f) {
			t.Errorf("frame %d: round trip = %+v; want %+v", i, got, f)
		}
	}
}

func TestUnmarshalRejectsBrokenFrames(t *testing.T) {
	cases := map[string][]byte{
		"truncated varint":        {0x08, 0x96},
		"length past the end":     {0x08, 0x01, 0x10, 0x00, 0x18, 0x00, 0x20, 0x00, 0x42, 0x05, 'a'},
		"missing method":          {0x08, 0x01, 0x10, 0x00, 0x18, 0x00},
		"wrong wire type":         {0x08, 0x01, 0x10, 0x00, 0x18, 0x00, 0x22, 0x00},
		"header without a value":  {0x08, 0x01, 0x10, 0x00, 0x18, 0x00, 0x20, 0x00, 0x2a, 0x03, 0x0a, 0x01, 'k'},
		"bad tag (field zero)":    {0x00, 0x01},
		"payload with wrong type": {0x08, 0x01, 0x10, 0x00, 0x18, 0x00, 0x20, 0x00, 0x40, 0x01},
	}
	for name, b := range cases {
		if _, err := Unmarshal(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: Unmarshal(% x) error = %v; want ErrMalformed", name, b, err)
		}
	}
	// Twin: unknown fields (here field 15, a varint, and field 14, fixed32) are skipped.
	ok := append(append([]byte{}, ping...), 0x78, 0x05, 0x75, 1, 2, 3, 4)
	if f, err := Unmarshal(ok); err != nil || f.Get("type") != "ping" {
		t.Errorf("Unmarshal(ping + unknown fields) = %+v, %v; want the ping", f, err)
	}
}

func TestHeaders(t *testing.T) {
	f := Frame{Headers: []Header{{"sum", "3"}, {"seq", "x"}}}
	if f.GetInt("sum") != 3 || f.GetInt("seq") != 0 || f.Get("missing") != "" {
		t.Errorf("Get/GetInt on %+v wrong", f.Headers)
	}
	f.Set("sum", "1")
	f.Set("biz_rt", "5")
	want := []Header{{"sum", "1"}, {"seq", "x"}, {"biz_rt", "5"}}
	if !reflect.DeepEqual(f.Headers, want) {
		t.Errorf("after Set: %+v; want %+v", f.Headers, want)
	}
}

func FuzzUnmarshal(f *testing.F) {
	f.Add(ping)
	f.Add(ack)
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := Unmarshal(b)
		if err != nil {
			return
		}
		again, err := Unmarshal(fr.Marshal())
		if err != nil || !reflect.DeepEqual(again, fr) {
			t.Fatalf("re-encoding %+v gave %+v, %v", fr, again, err)
		}
	})
}
