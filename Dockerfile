# Build on Debian with the -dev packages, run on the slim image with only
# the runtime libraries, as an unprivileged user.

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
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
 && cmake --build /build \
 && cmake --install /build --prefix /opt/aj

FROM debian:bookworm-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates libyaml-0-2 libcjson1 libcurl4 libssl3 libarchive13 \
      libwebsockets17 \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin aj
COPY --from=build /opt/aj/bin/ /usr/local/bin/
USER 10001:10001
WORKDIR /work
ENTRYPOINT ["/usr/local/bin/aj"]
CMD ["--help"]
