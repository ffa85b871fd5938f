package km

import "testing"

func TestWindow(t *testing.T) {
	// Every (skip, n) gets a page of the store's paging that holds rows skip..skip+n-1.
	for skip := 0; skip < 3000; skip++ {
		for _, n := range []int{1, 2, 3, 7, 50, 5001} {
			page, size, off := window(skip, n)
			if size < n || page < 0 || page*size+off != skip || off+n > size {
				t.Fatalf("window(%d, %d) = page %d, size %d, offset %d", skip, n, page, size, off)
			}
		}
	}
	// The page stays close to n: at most max(n, sqrt(2 skip)) rows are read in vain.
	for _, c := range []struct{ skip, n, maxSize int }{
		{5000, 5000, 5000}, {10000, 5000, 5000}, {995000, 5000, 5000}, {7, 5, 6}, {999_999, 1000, 2500}, {1 << 30, 3, 50000},
	} {
		if _, size, _ := window(c.skip, c.n); size > c.maxSize {
			t.Errorf("window(%d, %d): page size %d, want at most %d", c.skip, c.n, size, c.maxSize)
		}
	}
}
