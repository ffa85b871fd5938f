package query

// MapFields returns a copy of e in which every FieldRef is replaced by f's result, for
// example to rewrite the KM-level names of a bound filter ("ORDERS.NET") to record level
// ("NET"). It copies every node and never changes e; the copy shares its literals and in
// lists with e. The first error f returns ends the walk and is returned with a nil Expr.
// A nil e gives nil.
func MapFields(e Expr, f func(FieldRef) (FieldRef, error)) (Expr, error) {
	var err error
	field := func(r FieldRef) FieldRef {
		if err == nil {
			r, err = f(r)
		}
		return r
	}
	var scalar func(Scalar) Scalar
	scalar = func(s Scalar) Scalar {
		switch s := s.(type) {
		case *FieldOperand:
			return &FieldOperand{Field: field(s.Field)}
		case *Apply:
			c := *s
			c.Args = make([]Scalar, len(s.Args))
			for i, a := range s.Args {
				c.Args[i] = scalar(a)
			}
			return &c
		case *Arithmetic:
			c := *s
			c.L, c.R = scalar(s.L), scalar(s.R)
			return &c
		}
		return s
	}
	var walk func(Expr) Expr
	walk = func(e Expr) Expr {
		switch e := e.(type) {
		case *Logical:
			return &Logical{At: e.At, Op: e.Op, L: walk(e.L), R: walk(e.R)}
		case *Not:
			return &Not{At: e.At, X: walk(e.X)}
		case *Lambda:
			c := *e
			if e.Body != nil {
				c.Body = walk(e.Body)
			}
			return &c
		case *Quantified:
			c := *e
			if e.Body != nil {
				c.Body = walk(e.Body)
			}
			return &c
		case *Compare:
			c := *e
			c.Field = field(e.Field)
			return &c
		case *In:
			c := *e
			c.Field = field(e.Field)
			return &c
		case *Call:
			c := *e
			c.Field = field(e.Field)
			return &c
		case *IsNull:
			c := *e
			c.Field = field(e.Field)
			return &c
		case *ScalarCompare:
			return &ScalarCompare{At: e.At, L: scalar(e.L), Op: e.Op, R: scalar(e.R)}
		case *ScalarMatch:
			return &ScalarMatch{At: e.At, Func: e.Func, X: scalar(e.X), Arg: scalar(e.Arg)}
		}
		return e
	}
	out := walk(e)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// MapScalarFields is MapFields for a value expression.
func MapScalarFields(s Scalar, f func(FieldRef) (FieldRef, error)) (Scalar, error) {
	e, err := MapFields(&ScalarMatch{X: s, Arg: &Const{}}, f)
	if err != nil {
		return nil, err
	}
	return e.(*ScalarMatch).X, nil
}
