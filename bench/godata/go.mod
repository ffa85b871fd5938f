module github.com/kmkit/kmkit/bench/godata

go 1.26.0

require (
	github.com/CiscoM31/godata v1.0.11
	github.com/kmkit/kmkit v0.0.0
)

replace github.com/kmkit/kmkit => ../..
