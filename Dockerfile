# aj-controller image (the aj CLI and its network helper aj-net are included).
#
# Build on Debian with the -dev packages, run on the slim image with only the
# runtime libraries, as an unprivileged user with no shell login.
#   docker build -t aj:0.1.0 .
# tests/packaging/test-dockerfile-libs.sh checks that the runtime list below
# covers every shared library the binaries load; keep the two stages on the
# same Debian release.

FROM debian:bookworm AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential cmake ninja-build pkg-config \
      libyaml-dev libcjson-dev libcurl4-openssl-dev libssl-dev \
      libarchive-dev libwebsockets-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY CMakeLists.txt ./
COPY src/ src/
COPY controller/ controller/
COPY docs/aj.1 docs/
COPY contrib/ contrib/
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
 && cmake --build /build \
 && DESTDIR=/out cmake --install /build --prefix /usr/local --strip

FROM debian:bookworm-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates libyaml-0-2 libcjson1 libcurl4 libssl3 libarchive13 \
      libwebsockets17 \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --user-group --no-create-home --shell /usr/sbin/nologin aj
COPY --from=build /out/usr/local/ /usr/local/
USER 10001:10001
WORKDIR /tmp
EXPOSE 8081
ENTRYPOINT ["/usr/local/bin/aj-controller"]
