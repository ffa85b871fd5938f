# The test command of README.md. It needs only Go: staticcheck comes through the module proxy.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: test tidy vet staticcheck race

test: tidy vet staticcheck race

# go.mod and go.sum must be tidy. -e: the module proxy does not serve a test-only dependency
# of modernc.org/sqlite's own tests (github.com/google/pprof), which tidy would otherwise
# stop at; every module this project builds with is checked.
tidy:
	go mod tidy -e -diff

vet:
	go vet ./...

staticcheck:
	go run $(STATICCHECK) ./...

race:
	go test -race -timeout 30m ./...
