package query

import "strings"

// Lambda is OData's lambda operator on a collection-valued path, read under ODataSyntax:
// PATH/any(VAR: BODY), PATH/all(VAR: BODY) and PATH/any() (the collection is not
// empty). Path is the path to the collection as written (ITEMS, or NAV/ITEMS). In Body,
// a field reference VAR/FIELD (or VAR/NAV/FIELD) names a field of the collection's
// element; other names are the outer entity's. The OData service compiles a Lambda into
// a Quantified before binding; Bind refuses a Lambda as unsupported.
type Lambda struct {
	At   Pos
	Path string
	// All is true for all, false for any.
	All bool
	// Var is the lambda variable; "" with Body nil for any().
	Var  string
	Body Expr
}

// Position implements Expr.
func (e *Lambda) Position() Pos { return e.At }

func (*Lambda) exprNode() {}

// Operator returns "any" or "all".
func (e *Lambda) Operator() string {
	if e.All {
		return "all"
	}
	return "any"
}

// parseLambda reads, under ODataSyntax, a lambda that starts at t (PATH/any(...) or
// PATH/all(...)), or returns nil without moving when the text there is not one.
func (p *parser) parseLambda(t token) Expr {
	if !p.odata || t.kind != tIdent {
		return nil
	}
	end := t.end
	var op token
	for end < len(p.lx.src) && p.lx.src[end] == '/' {
		seg := p.lx.at(end + 1)
		if seg.kind != tIdent || seg.pos != end+1 || strings.Contains(seg.text, ".") {
			return nil
		}
		if lower := strings.ToLower(seg.text); (lower == "any" || lower == "all") && seg.end < len(p.lx.src) && p.lx.src[seg.end] == '(' {
			op = seg
			break
		}
		end = seg.end
	}
	if op.text == "" || strings.Contains(t.text, ".") {
		return nil
	}
	l := &Lambda{At: Pos(t.pos), Path: p.lx.src[t.pos:end], All: strings.EqualFold(op.text, "all")}
	open := p.lx.at(op.end)
	p.enter(open.pos)
	p.moveTo(open.end)
	if p.tok.kind == tRParen && !l.All {
		p.leave()
		p.next()
		return l
	}
	v := p.tok
	if v.kind != tIdent || isKeyword(v.text) || strings.Contains(v.text, ".") {
		p.fail(KindSyntax, v.pos, "expected the variable of %s/%s(...), as in %s/%s(x: x/FIELD eq 1), found %s", l.Path, op.text, l.Path, op.text, p.describe())
	}
	l.Var = v.text
	colon := p.lx.at(v.end)
	if colon.kind != tOther || colon.text != ":" {
		p.fail(KindSyntax, colon.pos, "expected \":\" after the lambda variable %s, found %s", v.text, describeToken(colon))
	}
	p.moveTo(colon.end)
	l.Body = p.parseOr()
	if p.tok.kind != tRParen {
		p.unexpected(`")" to close the lambda`)
	}
	p.leave()
	p.next()
	return l
}

// Quantified is a bound lambda: a condition on a row of record Parent over its related
// rows of record Record, which the knowledge model reaches from Parent along one-to-many
// relationships only (the path is the KM's; km.Conjunct.Quantifiers holds it). With All
// false it is true when some related row passes Body (Body true on that row: any); with
// All true it is true when no related row fails it (Body false or unknown on none: all).
// Its value is never unknown: a Parent row without related rows (none, or a null key)
// gives false for any and true for all, as OData's any and all do. Body reads fields
// "RECORD.FIELD" of Record and of records reached from it going up only; nil means true
// (any(): the row has some related row). Body may hold Quantified nodes of its own.
//
// The OData service builds it from a Lambda; Bind binds Body with the schema of the rest.
type Quantified struct {
	At  Pos
	All bool
	// Parent is the record of the row tested, Record the record of the related rows.
	Parent, Record string
	Body           Expr
}

// Position implements Expr.
func (e *Quantified) Position() Pos { return e.At }

func (*Quantified) exprNode() {}

// Operator returns "any" or "all".
func (e *Quantified) Operator() string {
	if e.All {
		return "all"
	}
	return "any"
}
