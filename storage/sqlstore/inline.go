package sqlstore

import (
	"fmt"
	"strconv"
	"strings"
)

// Statements have a bound on their parameters (SQLite 32,766, PostgreSQL 65,535), which a
// request within the filter limits can pass: many filterExpr entries of hundreds of
// comparisons each, and a filter repeated where the statement applies it several times
// (each grain, each expanded record). Such a statement is run with its arguments written
// into its text as literals instead (inlineArgs): numbers as strconv formats them, strings
// as quoted literals with their quotes doubled (and PostgreSQL's escape strings with their
// backslashes doubled), arrays as JSON text (SQLite) or ARRAY[...] of literals
// (PostgreSQL). Below the bound, values never enter the text.

// fit returns q and args ready to run: unchanged when args fit the dialect's bound on
// parameters, else q with every argument written as a literal and no arguments.
func (db *DB) fit(q string, args []any) (string, []any, error) {
	if len(args) <= db.d.maxParams() {
		return q, args, nil
	}
	s, err := inlineArgs(db.d, q, args)
	return s, nil, err
}

// inlineArgs replaces the parameter markers of q (?N for SQLite, $N for PostgreSQL, as
// placeholder writes them) with the literals of their arguments. Quoted identifiers
// ("...", quotes doubled) and string literals ('...') are copied as they are, so a marker
// is recognized only where the statement has one.
func inlineArgs(d dialect, q string, args []any) (string, error) {
	mark := byte('?')
	if d.name() == "postgres" {
		mark = '$'
	}
	var b strings.Builder
	b.Grow(len(q) + 16*len(args))
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(q) {
				if q[j] == c {
					if j+1 < len(q) && q[j+1] == c {
						j += 2
						continue
					}
					break
				}
				j++
			}
			if j >= len(q) {
				return "", fmt.Errorf("%w: unterminated quote in a statement", errInternal)
			}
			b.WriteString(q[i : j+1])
			i = j + 1
		case c == mark:
			j := i + 1
			for j < len(q) && q[j] >= '0' && q[j] <= '9' {
				j++
			}
			n, err := strconv.Atoi(q[i+1 : j])
			if err != nil || n < 1 || n > len(args) {
				return "", fmt.Errorf("%w: parameter marker %q of %d arguments", errInternal, q[i:j], len(args))
			}
			l, err := d.literal(args[n-1])
			if err != nil {
				return "", err
			}
			b.WriteString(l)
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), nil
}

// fitRows is fit for a FROM clause and a condition that share their arguments (the
// summary statements of one row set).
func fitRows(d dialect, from, where string, args []any) (string, string, []any, error) {
	if len(args) <= d.maxParams() {
		return from, where, args, nil
	}
	f, err := inlineArgs(d, from, args)
	if err != nil {
		return "", "", nil, err
	}
	w, err := inlineArgs(d, where, args)
	return f, w, nil, err
}
