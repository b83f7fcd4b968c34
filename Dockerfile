# syntax=docker/dockerfile:1
# tenzrod's image: the static binary alone on an empty base, run as an
# unprivileged user, its home a volume. Build with `make image` (docker or
# podman), or `docker build --build-arg VERSION=$(git describe --always) .`
#
# The stage named `build` yields /out/tenzrod and /out/data (the empty home,
# owned by the runtime user); CI, with no container registry to pull the Go
# image from, replaces that stage by a directory holding the same two
# (podman build --build-context build=DIR), so the final stage below is the
# one that ships either way.
ARG GO_IMAGE=docker.io/library/golang:1.26.8-bookworm

FROM ${GO_IMAGE} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=unknown
# Static (no cgo) and -trimpath so the binary does not depend on the
# builder's paths: the same source gives the same bytes as `make release`.
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false \
      -ldflags "-s -w -X github.com/tenzrod/tenzrod/node.Version=${VERSION} -X main.buildCommit=${COMMIT}" \
      -o /out/tenzrod ./cmd/tenzrod \
 && mkdir -p /out/data

FROM scratch
COPY --from=build /out/tenzrod /usr/bin/tenzrod
# 65532: the conventional unprivileged "nonroot" ID of static images; the
# node never needs a privilege (its ports are above 1024).
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
ENV HOME=/data
VOLUME ["/data"]
# 8545: api.listen (/healthz, /metrics, /rpc, the OpenAI API) when a home
# is made with --api-listen 0.0.0.0:8545; 4001: libp2p; 26656: CometBFT p2p.
EXPOSE 8545 4001 4001/udp 26656
HEALTHCHECK --interval=30s --timeout=6s --start-period=60s --retries=3 \
  CMD ["/usr/bin/tenzrod", "healthcheck", "--home", "/data"]
ENTRYPOINT ["/usr/bin/tenzrod"]
CMD ["--help"]
