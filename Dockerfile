# The kmkit reference server (cmd/kmkit) as a small image: a static binary on distroless,
# running as an unprivileged user, with a health check that needs no shell.
#
#   docker build -t kmkit .
#   docker run --rm -p 8080:8080 kmkit            # the embedded demo; prints a development key
#
# See deploy/compose.yaml for two replicas on PostgreSQL behind a proxy.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# SQLite is pure Go (modernc.org/sqlite): no cgo, one static binary.
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/kmkit ./cmd/kmkit

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/kmkit /usr/local/bin/kmkit
USER nonroot:nonroot
WORKDIR /home/nonroot
ENV KMKIT_ADDR=:8080 \
    KMKIT_DB=sqlite:/home/nonroot/kmkit.db
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=5s --start-period=120s --retries=3 \
    CMD ["/usr/local/bin/kmkit", "-healthcheck"]
ENTRYPOINT ["/usr/local/bin/kmkit"]
