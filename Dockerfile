# kubesched's container image (deploy/README.md):
#
#   docker build -t kubesched:0.1.0 .
#
# Build stage: the Debian packages of scripts/install-deps.sh, the release build (the executable,
# libkubesched.so and the plugin SDK; no tests, no benchmarks) and `cmake --install` under
# /usr/local (kubesched finds the library through its RPATH, $ORIGIN/../lib).
FROM debian:bookworm AS build
WORKDIR /src
COPY scripts/install-deps.sh scripts/install-deps.sh
RUN bash scripts/install-deps.sh && rm -rf /var/lib/apt/lists/*
COPY . .
RUN cmake --preset release -DKUBESCHED_BUILD_TESTS=OFF -DKUBESCHED_BUILD_BENCH=OFF \
 && cmake --build --preset release \
 && cmake --install build/release --prefix /usr/local --strip

# Runtime stage: the shared libraries kubesched and libkubesched.so load (their NEEDED entries,
# mapped to Debian packages with dpkg -S; libc6, libstdc++6 and libgcc-s1 are already in the base
# image), the executable and the library, and an unprivileged user.
FROM debian:bookworm-slim
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      coinor-libcbc3 libglpk40 libcpp-httplib0.11 libssl3 libfmt9 libfyaml0 libspdlog1.10 libmimalloc2.0 libre2-9 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /usr/local/bin/kubesched /usr/local/bin/kubesched
COPY --from=build /usr/local/lib/libkubesched.so.* /usr/local/lib/
RUN groupadd --system --gid 65532 kubesched \
 && useradd --system --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin kubesched \
 && kubesched --version
USER 65532:65532
ENTRYPOINT ["kubesched"]
CMD ["run", "--help"]
