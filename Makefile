# The test command of README.md. It needs only Go: staticcheck comes through the module proxy.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: test tidy vet staticcheck race bulk

test: tidy vet staticcheck race bulk

# go.mod and go.sum must be tidy. .ci/tidy-check runs `go mod tidy -e -diff` and fails on
# any go.mod difference and on go.sum lines of modules our packages and tests load. go.sum
# lines of modules outside that build (test-only dependencies of our dependencies' tests,
# such as the github.com/google/pprof that modernc.org/sqlite's tests name) are ignored:
# tidy writes them or not depending on whether the module proxy serves them that day, which
# is the registry's drift, not ours.
tidy:
	.ci/tidy-check

vet:
	go vet ./...

staticcheck:
	go run $(STATICCHECK) ./...

race:
	go test -race -timeout 30m ./...

# Tests of one goroutine's work on large inputs (200,000 rows against pandas, statements at
# every database limit) skip under the race detector, which slows pure-Go SQLite about
# tenfold and has no goroutines to watch there; they run here without it.
BULK := ^(TestSummaryManyRowsAgainstPandas|TestStatementLimits)$$

bulk:
	go test -count=1 -timeout 30m -run '$(BULK)' ./storage/sqlstore/
