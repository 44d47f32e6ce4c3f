// Package frame encodes and decodes the frames of Feishu's long connection
// (its "pbbp2" protocol buffer message) with protowire, the low-level wire
// format of google.golang.org/protobuf: two small messages do not need
// generated code. The adapter (internal/channel/feishu) and its fake
// (feishutest) both speak through it.
//
// The message, as Feishu's SDKs declare it (proto2):
//
//	Header { required string key = 1; required string value = 2; }
//	Frame {
//	  required uint64 SeqID = 1;  required uint64 LogID = 2;
//	  required int32 service = 3; required int32 method = 4;
//	  repeated Header headers = 5;
//	  optional string payload_encoding = 6; optional string payload_type = 7;
//	  optional bytes payload = 8; optional string LogIDNew = 9;
//	}
//
// Marshal writes every required field and the optional strings even when
// empty (as the SDKs do), and the payload only when it is not nil.
package frame

import (
	"errors"
	"fmt"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
)

// Methods: what a frame carries.
const (
	MethodControl int32 = 0 // ping and pong
	MethodData    int32 = 1 // events and card callbacks, and their acks
)

// Header keys and values the long connection uses.
const (
	HeaderType      = "type"       // ping, pong, event, card
	HeaderMessageID = "message_id" // one delivery; shared by its parts
	HeaderSum       = "sum"        // number of parts (1 when not split)
	HeaderSeq       = "seq"        // this part's index, from 0
	HeaderTraceID   = "trace_id"
	HeaderBizRt     = "biz_rt" // handling time in ms, set on an ack

	TypePing  = "ping"
	TypePong  = "pong"
	TypeEvent = "event"
	TypeCard  = "card"
)

// Header is one key/value pair of a frame.
type Header struct {
	Key, Value string
}

// Frame is one message of the long connection.
type Frame struct {
	SeqID           uint64
	LogID           uint64
	Service         int32
	Method          int32
	Headers         []Header
	PayloadEncoding string
	PayloadType     string
	Payload         []byte
	LogIDNew        string
}

// Get returns the value of the first header named key ("" when absent).
func (f *Frame) Get(key string) string {
	for _, h := range f.Headers {
		if h.Key == key {
			return h.Value
		}
	}
	return ""
}

// GetInt returns header key as an int (0 when absent or not a number).
func (f *Frame) GetInt(key string) int {
	n, err := strconv.Atoi(f.Get(key))
	if err != nil {
		return 0
	}
	return n
}

// Set replaces header key's value, or adds the header.
func (f *Frame) Set(key, value string) {
	for i := range f.Headers {
		if f.Headers[i].Key == key {
			f.Headers[i].Value = value
			return
		}
	}
	f.Headers = append(f.Headers, Header{Key: key, Value: value})
}

// Field numbers of Frame and Header.
const (
	fSeqID, fLogID, fService, fMethod, fHeaders = 1, 2, 3, 4, 5
	fEncoding, fType, fPayload, fLogIDNew       = 6, 7, 8, 9
	hKey, hValue                                = 1, 2
)

// Marshal encodes f in field order.
func (f *Frame) Marshal() []byte {
	var b []byte
	b = appendVarint(b, fSeqID, f.SeqID)
	b = appendVarint(b, fLogID, f.LogID)
	// int32 fields are varints of their sign-extended 64-bit value.
	b = appendVarint(b, fService, uint64(int64(f.Service)))
	b = appendVarint(b, fMethod, uint64(int64(f.Method)))
	for _, h := range f.Headers {
		var hb []byte
		hb = appendBytes(hb, hKey, h.Key)
		hb = appendBytes(hb, hValue, h.Value)
		b = appendBytes(b, fHeaders, hb)
	}
	b = appendBytes(b, fEncoding, f.PayloadEncoding)
	b = appendBytes(b, fType, f.PayloadType)
	if f.Payload != nil {
		b = appendBytes(b, fPayload, f.Payload)
	}
	b = appendBytes(b, fLogIDNew, f.LogIDNew)
	return b
}

// appendVarint appends field num holding the varint v.
func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	return protowire.AppendVarint(protowire.AppendTag(b, num, protowire.VarintType), v)
}

// appendBytes appends the length-delimited field num holding v (as
// protowire.AppendBytes and AppendString do).
func appendBytes[T ~string | ~[]byte](b []byte, num protowire.Number, v T) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(len(v)))
	return append(b, v...)
}

// ErrMalformed: the bytes are not a frame.
var ErrMalformed = errors.New("malformed long-connection frame")

// Unmarshal decodes a frame. Unknown fields are skipped; a field of the
// wrong wire type, a truncated field or a missing required field is an
// error wrapping ErrMalformed.
func Unmarshal(b []byte) (Frame, error) {
	var f Frame
	var seen uint8 // bits of the four required fields
	err := walk(b, func(num protowire.Number, typ protowire.Type, v uint64, bs []byte) error {
		switch num {
		case fSeqID, fLogID, fService, fMethod:
			if typ != protowire.VarintType {
				return fmt.Errorf("field %d: wire type %d", num, typ)
			}
			seen |= 1 << (num - 1)
		case fHeaders, fEncoding, fType, fPayload, fLogIDNew:
			if typ != protowire.BytesType {
				return fmt.Errorf("field %d: wire type %d", num, typ)
			}
		}
		switch num {
		case fSeqID:
			f.SeqID = v
		case fLogID:
			f.LogID = v
		case fService:
			f.Service = int32(v)
		case fMethod:
			f.Method = int32(v)
		case fHeaders:
			h, err := unmarshalHeader(bs)
			if err != nil {
				return err
			}
			f.Headers = append(f.Headers, h)
		case fEncoding:
			f.PayloadEncoding = string(bs)
		case fType:
			f.PayloadType = string(bs)
		case fPayload:
			f.Payload = append([]byte{}, bs...)
		case fLogIDNew:
			f.LogIDNew = string(bs)
		}
		return nil
	})
	if err != nil {
		return Frame{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if seen != 0b1111 {
		return Frame{}, fmt.Errorf("%w: a required field is missing", ErrMalformed)
	}
	return f, nil
}

func unmarshalHeader(b []byte) (Header, error) {
	var h Header
	var seen uint8
	err := walk(b, func(num protowire.Number, typ protowire.Type, _ uint64, bs []byte) error {
		if num != hKey && num != hValue {
			return nil
		}
		if typ != protowire.BytesType {
			return fmt.Errorf("header field %d: wire type %d", num, typ)
		}
		seen |= 1 << (num - 1)
		if num == hKey {
			h.Key = string(bs)
		} else {
			h.Value = string(bs)
		}
		return nil
	})
	if err != nil {
		return Header{}, err
	}
	if seen != 0b11 {
		return Header{}, errors.New("header without key or value")
	}
	return h, nil
}

// walk calls fn for each field of a message: v holds a varint's value, bs
// a length-delimited field's bytes. Fixed-size fields are skipped.
func walk(b []byte, fn func(protowire.Number, protowire.Type, uint64, []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var v uint64
		var bs []byte
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			bs, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return fmt.Errorf("field %d: %w", num, protowire.ParseError(n))
		}
		b = b[n:]
		if typ == protowire.VarintType || typ == protowire.BytesType {
			if err := fn(num, typ, v, bs); err != nil {
				return err
			}
		}
	}
	return nil
}
