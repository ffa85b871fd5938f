package jsonenc

import (
	"strconv"
	"time"

	"github.com/kmkit/kmkit/query"
)

// AppendJSON appends v as JSON: the value Format returns, written byte for byte as an
// encoding/json Encoder with SetEscapeHTML(false) writes it (null for a null value, for
// NaN and the infinities, and for a value of unknown type). Encoders of rows call it
// instead of marshalling Format's result, which costs an allocation per value.
func AppendJSON(b []byte, v query.Value) []byte {
	if v.Null {
		return append(b, "null"...)
	}
	switch v.Type {
	case query.TypeString:
		return AppendStringNoHTMLEscape(b, v.Str)
	case query.TypeInteger:
		return strconv.AppendInt(b, v.Int, 10)
	case query.TypeFloat:
		return AppendFloat(b, v.Float)
	case query.TypeBoolean:
		return strconv.AppendBool(b, v.Bool)
	case query.TypeDate, query.TypeDateTime, query.TypeTimestamp, query.TypeTime:
		b = append(b, '"')
		b = AppendTemporal(b, v)
		return append(b, '"')
	}
	return append(b, "null"...)
}

// AppendTemporal appends the text of a date, date-time, timestamp or time value as Format
// renders it, without quotes: a date 2006-01-02, an instant in RFC 3339 in UTC with the
// fraction of a second when there is one, a time of day 15:04:05 with its fraction. Years
// 0000 to 9999 are written digit by digit; others as package time writes them. A value of
// another type appends nothing.
func AppendTemporal(b []byte, v query.Value) []byte {
	switch v.Type {
	case query.TypeDate:
		if y, m, d := query.CivilDate(v.Int); 0 <= y && y <= 9999 {
			return appendYMD(b, y, m, d)
		}
		return query.TimeOfDays(v.Int).AppendFormat(b, time.DateOnly)
	case query.TypeTime:
		if 0 <= v.Int && v.Int < query.MicrosPerDay {
			return appendClock(b, v.Int)
		}
		return time.UnixMicro(v.Int).UTC().AppendFormat(b, "15:04:05.999999")
	case query.TypeDateTime, query.TypeTimestamp:
		day := query.DayOfMicros(v.Int)
		if y, m, d := query.CivilDate(day); 0 <= y && y <= 9999 {
			b = appendYMD(b, y, m, d)
			b = append(b, 'T')
			b = appendClock(b, v.Int-day*query.MicrosPerDay)
			return append(b, 'Z')
		}
		return time.UnixMicro(v.Int).UTC().AppendFormat(b, time.RFC3339Nano)
	}
	return b
}

// appendYMD appends yyyy-mm-dd for a year from 0 to 9999.
func appendYMD(b []byte, y, m, d int64) []byte {
	return append(b, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+m/10), byte('0'+m%10), '-', byte('0'+d/10), byte('0'+d%10))
}

// appendClock appends hh:mm:ss of us microseconds since midnight (0 <= us < a day), with
// the fraction of a second when there is one, trailing zeros cut.
func appendClock(b []byte, us int64) []byte {
	s := us / 1_000_000
	h, mi, sec := s/3600, s/60%60, s%60
	b = append(b, byte('0'+h/10), byte('0'+h%10), ':', byte('0'+mi/10), byte('0'+mi%10), ':', byte('0'+sec/10), byte('0'+sec%10))
	frac := us % 1_000_000
	if frac == 0 {
		return b
	}
	var digits [7]byte
	digits[0] = '.'
	for i := 6; i >= 1; i-- {
		digits[i] = byte('0' + frac%10)
		frac /= 10
	}
	n := 7
	for digits[n-1] == '0' {
		n--
	}
	return append(b, digits[:n]...)
}
