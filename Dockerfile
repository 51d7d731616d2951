# The image the Kubernetes recipe (deploy/k8s-indexed-job.yaml) runs: build the
# shipped binary with the Rust image, then run it from a slim base that holds only it.
#
#   docker build -t retrysim:0.1.0 .
#   docker run --rm -v "$PWD/output:/work/output" retrysim:0.1.0 run
#
# The tag is the version in Cargo.toml; the Job names that tag, never `latest`.

FROM rust:1.95-slim-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
# The workspace's other members (the playground, the Python package): their manifests,
# for cargo to load them.
COPY web/Cargo.toml ./web/
COPY python/Cargo.toml ./python/
COPY src ./src
COPY scenarios ./scenarios
COPY benches ./benches
COPY README.md ./
RUN cargo build --profile dist --locked --bin retrysim

FROM debian:bookworm-slim
RUN useradd --create-home --uid 10001 retrysim && mkdir /work && chown retrysim /work
COPY --from=build /src/target/dist/retrysim /usr/local/bin/retrysim
COPY scenarios /usr/local/share/retrysim/scenarios
USER retrysim
WORKDIR /work
ENTRYPOINT ["retrysim"]
CMD ["--help"]
