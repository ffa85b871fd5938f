# The test command of README.md. It needs only Go: staticcheck comes through the module proxy.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: test vet staticcheck race

test: vet staticcheck race

vet:
	go vet ./...

staticcheck:
	go run $(STATICCHECK) ./...

race:
	go test -race -timeout 30m ./...
