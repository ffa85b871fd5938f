package query

import (
	"unicode"
	"unicode/utf8"
)

// tokKind is the class of a token.
type tokKind uint8

const (
	tEOF    tokKind = iota
	tIdent          // a name or keyword: a letter or _ then letters, digits, _ and dots
	tString         // 'text'; text holds the unescaped content
	tValue          // an unquoted run that starts with a digit or a sign and a digit
	tLParen         // (
	tRParen         // )
	tComma          // ,
	tOther          // any other character, as itself
)

// token is one lexical token. pos and end delimit its source text.
type token struct {
	kind     tokKind
	pos, end int
	text     string // the source text, or the unescaped content of a string
}

// lexer scans a filter text on demand. It is stateless apart from the source: the parser
// asks for the token at a position, which lets it rescan a value with the wider rules of
// an unquoted value.
type lexer struct {
	src string
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// skip returns the first position at or after i that is not white space.
func (lx *lexer) skip(i int) int {
	for i < len(lx.src) && isSpace(lx.src[i]) {
		i++
	}
	return i
}

// runeAt decodes the rune at i (utf8.RuneError, 1 for invalid bytes).
func (lx *lexer) runeAt(i int) (rune, int) {
	c := lx.src[i]
	if c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(lx.src[i:])
}

func isASCIILetter(r rune) bool { return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' }

func isIdentStart(r rune) bool {
	return isASCIILetter(r) || r == '_' || r >= utf8.RuneSelf && unicode.IsLetter(r)
}

func isIdentPart(r rune) bool {
	return isASCIILetter(r) || '0' <= r && r <= '9' || r == '_' || r == '.' ||
		r >= utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

// isValuePart reports whether r may appear in an unquoted value: letters, digits and
// _ . - : + (numbers, dates, date-times with offsets, times, legacy bare words).
func isValuePart(r rune) bool {
	switch {
	case isASCIILetter(r), '0' <= r && r <= '9':
		return true
	case r < utf8.RuneSelf:
		return r == '_' || r == '.' || r == '-' || r == ':' || r == '+'
	}
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

// at returns the token that starts at the first non-space position at or after i.
// A string without its closing quote is returned as tString with end -1.
func (lx *lexer) at(i int) token {
	i = lx.skip(i)
	if i >= len(lx.src) {
		return token{kind: tEOF, pos: i, end: i}
	}
	c := lx.src[i]
	switch c {
	case '(':
		return token{kind: tLParen, pos: i, end: i + 1, text: "("}
	case ')':
		return token{kind: tRParen, pos: i, end: i + 1, text: ")"}
	case ',':
		return token{kind: tComma, pos: i, end: i + 1, text: ","}
	case '\'':
		return lx.str(i)
	}
	if isDigit(c) || ((c == '-' || c == '+') && i+1 < len(lx.src) && isDigit(lx.src[i+1])) {
		return lx.value(i)
	}
	r, n := lx.runeAt(i)
	if isIdentStart(r) {
		j := i + n
		for j < len(lx.src) {
			r, n := lx.runeAt(j)
			if !isIdentPart(r) {
				break
			}
			j += n
		}
		return token{kind: tIdent, pos: i, end: j, text: lx.src[i:j]}
	}
	return token{kind: tOther, pos: i, end: i + n, text: lx.src[i : i+n]}
}

// value returns the unquoted value that starts at i (a maximal run of value characters).
func (lx *lexer) value(i int) token {
	j := i
	for j < len(lx.src) {
		r, n := lx.runeAt(j)
		if !isValuePart(r) {
			break
		}
		j += n
	}
	return token{kind: tValue, pos: i, end: j, text: lx.src[i:j]}
}

// str scans the quoted text at i; a doubled quote stands for one quote.
func (lx *lexer) str(i int) token {
	j := i + 1
	start := j
	var buf []byte // only allocated when the text holds an escaped quote
	for j < len(lx.src) {
		if lx.src[j] != '\'' {
			j++
			continue
		}
		if j+1 < len(lx.src) && lx.src[j+1] == '\'' {
			buf = append(buf, lx.src[start:j+1]...)
			j += 2
			start = j
			continue
		}
		text := lx.src[start:j]
		if buf != nil {
			text = string(append(buf, text...))
		}
		return token{kind: tString, pos: i, end: j + 1, text: text}
	}
	return token{kind: tString, pos: i, end: -1}
}
