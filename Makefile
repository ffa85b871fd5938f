# The test command of README.md. It needs only Go: staticcheck comes through the module proxy.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: test tidy vet staticcheck race

test: tidy vet staticcheck race

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
