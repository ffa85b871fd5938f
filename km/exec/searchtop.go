package exec

import (
	"github.com/kmkit/kmkit/query/column"
	"github.com/kmkit/kmkit/query/fuzzy"
)

// searchTop finds the page of a search listed best score first (no sort keys, no
// distinct) over dictionary columns read directly, and the number of rows that match,
// without a vector of a row each: search writes the rows' numbers, their scores and the
// kept rows (9 bytes a row, 9 MB at a million rows) and sorts the kept rows for the
// page, where a page of 50 needs the matches' count and the best 50.
//
// It counts the rows of each score in a pass over the columns' codes, a block of rows at
// a time (each row's score is the best of its columns' dictionary scores, as in search),
// which gives the count and the least score t a row of the page can have; a second pass
// takes, in row order, every matching row scoring above t and the first rows scoring t
// up to the page's end, and stops once it has them all (at once where the page holds
// only rows of the best score, as it usually does). Counting sort puts them best score
// first, ties in row order, as search's order does. It reports false, having done
// nothing, for any other request.
func (p *plan) searchTop() (top []int32, count int, ok bool) {
	if p.search == nil || len(p.keys) > 0 || p.distinct {
		return nil, 0, false
	}
	end, fits := pageEnd(p.page, p.pageSize)
	if !fits {
		return nil, 0, false
	}
	cols := make([]*column.Strings, len(p.searched))
	for i, c := range p.searched {
		col, ok := c.col.(*column.Strings)
		if !ok || c.index != nil {
			return nil, 0, false
		}
		cols[i] = col
	}
	var pass column.Bitmap // nil: every row
	if p.filter != nil {
		if pass = p.filter().t; pass == nil {
			return nil, 0, true // no row passes the filter
		}
	}
	m := fuzzy.New(p.search.Term)
	byCode := make([][]uint8, len(cols))
	for i, col := range cols {
		byCode[i] = p.scores.scores(col, p.search.Term, m, p.search.Precision, p.stop)
	}
	n, least := p.f.rows, p.search.Precision
	buf := p.arena.zeroedBytes(firstsBlock)
	var hist [256]int // rows by score
	for b := 0; b < n; b += firstsBlock {
		e := min(b+firstsBlock, n)
		scores := blockScores(cols, byCode, b, e, buf)
		if pass == nil {
			for _, s := range scores {
				hist[s]++
			}
		} else {
			for j, s := range scores {
				hist[s] += bit(pass, int32(b+j))
			}
		}
		p.stop.check(e - b)
	}
	// t: the least score of the page's end; above: the rows scoring more.
	above, t := 0, -1
	for s := 255; s >= least; s-- {
		if hist[s] == 0 {
			continue
		}
		count += hist[s]
		if t < 0 || above+hist[t] < end {
			if t >= 0 {
				above += hist[t]
			}
			t = s
		}
	}
	if t < 0 {
		return nil, 0, true
	}
	atT := min(hist[t], end-above)
	want := above + atT
	top, rowScores := make([]int32, 0, want), make([]uint8, 0, want)
	for b := 0; b < n && len(top) < want; b += firstsBlock {
		e := min(b+firstsBlock, n)
		for j, s := range blockScores(cols, byCode, b, e, buf) {
			if int(s) < t || pass != nil && !pass.Get(b+j) {
				continue
			}
			if int(s) == t {
				if atT == 0 {
					continue
				}
				atT--
			}
			top = append(top, int32(b+j))
			rowScores = append(rowScores, s)
		}
		p.stop.check(e - b)
	}
	// Best score first, in row order within a score: a counting sort.
	var next [257]int
	for _, s := range rowScores {
		next[255-int(s)+1]++
	}
	for i := 1; i < len(next); i++ {
		next[i] += next[i-1]
	}
	sorted := make([]int32, len(top))
	for i, r := range top {
		k := 255 - int(rowScores[i])
		sorted[next[k]] = r
		next[k]++
	}
	return sorted, count, true
}

// blockScores writes the score of each row b..e-1 to buf (at least e-b long) and returns
// it: the best over cols of the score of the row's value (byCode[i][code]), 0 where no
// column has a value.
func blockScores(cols []*column.Strings, byCode [][]uint8, b, e int, buf []uint8) []uint8 {
	out := buf[:e-b]
	for i, col := range cols {
		if col.Nulls != nil {
			if i == 0 {
				clear(out)
			}
			for j := range out {
				if r := b + j; !col.Nulls.Get(r) {
					out[j] = max(out[j], byCode[i][col.Codes.At(r)])
				}
			}
			continue
		}
		switch c := col.Codes; {
		case c.U8 != nil:
			scoreRange(out, c.U8[b:e], byCode[i], i == 0)
		case c.U16 != nil:
			scoreRange(out, c.U16[b:e], byCode[i], i == 0)
		default:
			scoreRange(out, c.U32[b:e], byCode[i], i == 0)
		}
	}
	return out
}

// scoreRange sets out[j] to byCode[codes[j]], or to the larger of that and out[j] when
// not first.
func scoreRange[T column.Code](out []uint8, codes []T, byCode []uint8, first bool) {
	codes = codes[:len(out)]
	if first {
		for j, c := range codes {
			out[j] = byCode[c]
		}
		return
	}
	for j, c := range codes {
		out[j] = max(out[j], byCode[c])
	}
}
