package stall

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash"
	"math/big"
	"slices"
	"strings"
)

// Call is one tool call the agent made: the tool's name and its input as the
// agent sent it.
type Call struct {
	Name  string
	Input json.RawMessage
}

// Signature returns the sha256 hex digest of the ordered tool names and
// canonical inputs of one iteration's calls. Two iterations that made the
// same calls in the same order have the same signature, however the inputs
// were spelled: object key order, whitespace, number formatting (1, 1.0 and
// 1e0 are one number) and string escapes (\u0041 and A are one letter) do not
// matter. Array order does. An input that is not valid JSON is hashed as its
// raw bytes. An iteration without calls has the empty signature.
func Signature(calls []Call) string {
	if len(calls) == 0 {
		return ""
	}
	h := sha256.New()
	for _, c := range calls {
		canon, ok := canonicalJSON(c.Input)
		writeField(h, []byte(c.Name))
		if ok {
			h.Write([]byte{'j'})
		} else {
			h.Write([]byte{'r'})
		}
		writeField(h, canon)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// writeField writes b to h with its length first, so that no two different
// field lists hash the same byte stream.
func writeField(h hash.Hash, b []byte) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(b)))
	h.Write(n[:])
	h.Write(b)
}

// canonicalJSON returns the canonical form of raw and true when raw is one
// valid JSON value, or raw unchanged and false when it is not.
//
// The canonical form is compact JSON with object keys sorted bytewise
// (a repeated key keeps its last value, as encoding/json does), strings
// re-encoded by encoding/json, and numbers written as a minimal digit string
// and a decimal exponent: 1, 1.0, 1e0 and 10e-1 all become 1; 1.5 becomes
// 15e-1; -0 becomes 0. Numbers keep their full precision.
// canonicalJSON(canonicalJSON(x)) equals canonicalJSON(x).
func canonicalJSON(raw []byte) ([]byte, bool) {
	if !json.Valid(raw) {
		return raw, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return raw, false
	}
	var buf bytes.Buffer
	writeCanonical(&buf, v)
	return buf.Bytes(), true
}

func writeCanonical(buf *bytes.Buffer, v any) {
	switch v := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		if v {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	case json.Number:
		buf.WriteString(canonicalNumber(string(v)))
	case string:
		writeString(buf, v)
	case []any:
		buf.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeCanonical(buf, e)
		}
		buf.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, k)
			buf.WriteByte(':')
			writeCanonical(buf, v[k])
		}
		buf.WriteByte('}')
	}
}

func writeString(buf *bytes.Buffer, s string) {
	b, _ := json.Marshal(s) // a string always marshals
	buf.Write(b)
}

// canonicalNumber rewrites a valid JSON number literal as its minimal digits
// and a decimal exponent, "e" and the exponent left out when it is zero.
func canonicalNumber(lit string) string {
	neg := strings.HasPrefix(lit, "-")
	lit = strings.TrimPrefix(lit, "-")

	mant, expPart, hasExp := strings.Cut(strings.ToLower(lit), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := intPart + frac

	exp := new(big.Int)
	if hasExp {
		exp.SetString(strings.TrimPrefix(expPart, "+"), 10) // valid by json.Valid
	}
	exp.Sub(exp, big.NewInt(int64(len(frac))))

	digits = strings.TrimLeft(digits, "0")
	if digits == "" {
		return "0"
	}
	trimmed := strings.TrimRight(digits, "0")
	exp.Add(exp, big.NewInt(int64(len(digits)-len(trimmed))))

	var sb strings.Builder
	if neg {
		sb.WriteByte('-')
	}
	sb.WriteString(trimmed)
	if exp.Sign() != 0 {
		sb.WriteByte('e')
		sb.WriteString(exp.String())
	}
	return sb.String()
}
