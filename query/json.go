package query

import (
	"strconv"
	"time"

	"github.com/kmkit/kmkit/internal/jsonenc"
)

// AppendJSON appends v as JSON: the value Format returns, written byte for byte as an
// encoding/json Encoder with SetEscapeHTML(false) writes it (null for a null value, for
// NaN and the infinities, and for a value of unknown type). Encoders of rows call it
// instead of marshalling Format's result, which costs an allocation per value.
func AppendJSON(b []byte, v Value) []byte {
	if v.Null {
		return append(b, "null"...)
	}
	switch v.Type {
	case TypeString:
		return jsonenc.AppendStringNoHTMLEscape(b, v.Str)
	case TypeInteger:
		return strconv.AppendInt(b, v.Int, 10)
	case TypeFloat:
		return jsonenc.AppendFloat(b, v.Float)
	case TypeBoolean:
		return strconv.AppendBool(b, v.Bool)
	case TypeDate, TypeDateTime, TypeTimestamp, TypeTime:
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
func AppendTemporal(b []byte, v Value) []byte {
	switch v.Type {
	case TypeDate:
		if y, m, d := civil(v.Int); 0 <= y && y <= 9999 {
			return appendYMD(b, y, m, d)
		}
		return TimeOfDays(v.Int).AppendFormat(b, time.DateOnly)
	case TypeTime:
		if 0 <= v.Int && v.Int < MicrosPerDay {
			return appendClock(b, v.Int)
		}
		return time.UnixMicro(v.Int).UTC().AppendFormat(b, "15:04:05.999999")
	case TypeDateTime, TypeTimestamp:
		day := DayOfMicros(v.Int)
		if y, m, d := civil(day); 0 <= y && y <= 9999 {
			b = appendYMD(b, y, m, d)
			b = append(b, 'T')
			b = appendClock(b, v.Int-day*MicrosPerDay)
			return append(b, 'Z')
		}
		return time.UnixMicro(v.Int).UTC().AppendFormat(b, time.RFC3339Nano)
	}
	return b
}

// civil returns the proleptic Gregorian date of day d (days since 1970-01-01), by Howard
// Hinnant's days-to-civil algorithm.
func civil(d int64) (y, m, day int64) {
	d += 719468
	era := d / 146097
	if d < 0 && d%146097 != 0 {
		era--
	}
	doe := d - era*146097                                  // [0, 146096]
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // [0, 399]
	doy := doe - (365*yoe + yoe/4 - yoe/100)               // [0, 365]
	mp := (5*doy + 2) / 153                                // [0, 11]
	day = doy - (153*mp+2)/5 + 1
	m = mp + 3
	if m > 12 {
		m -= 12
	}
	y = yoe + era*400
	if m <= 2 {
		y++
	}
	return y, m, day
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
