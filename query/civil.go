package query

// CivilDate returns the proleptic Gregorian date (year, month 1-12, day 1-31) of day d (days since 1970-01-01), by Howard
// Hinnant's days-to-civil algorithm.
func CivilDate(d int64) (y, m, day int64) {
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
