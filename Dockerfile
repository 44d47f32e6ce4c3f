# homard in a container: a static binary on a small Debian with bubblewrap
# and git, running as a non-root user, its home on the /data volume.
#
#   docker build -t homard --build-arg VERSION=$(git describe --tags --always) .
#   docker run --rm -it -v homard-data:/data homard init
#   docker run -d --name homard --network host -v homard-data:/data \
#     --security-opt seccomp=unconfined --security-opt apparmor=unconfined \
#     --security-opt systempaths=unconfined homard
#   docker logs homard          # the one-time login URL
#
# The command sandbox inside a container: homard runs every command in new
# user, mount and pid namespaces (bubblewrap, or Landlock plus its own
# mount stage). Docker's defaults forbid that, and homard then refuses to
# run commands (it never runs them unconfined); chat, memory, files and the
# web UI work either way. To allow the sandbox:
#   --security-opt seccomp=unconfined     the default profile blocks
#                                         unshare(CLONE_NEWUSER); or a
#                                         profile allowing clone/unshare
#   --security-opt apparmor=unconfined    docker-default denies mount
#                                         (AppArmor hosts: Ubuntu, Debian)
#   --security-opt systempaths=unconfined masked /proc paths make a new
#                                         /proc mount "too revealing"
# Commands that write (an overlay view) also need a memory cgroup homard
# can create; Docker mounts /sys/fs/cgroup read-only, so those fail closed
# unless the cgroup is delegated. `docker exec homard homard doctor` says
# which views work. See docs/DOCKER.md. (Not verified on this project's CI:
# it has no Docker.)
#
# serve listens on 127.0.0.1:8787 only, unless given TLS or a proxy:
# --network host makes that the host's loopback (Linux); to publish a
# port instead see docs/DOCKER.md (--allow-remote with --tls-cert/--tls-key
# or --behind-proxy).

ARG GO_VERSION=1.26
FROM golang:${GO_VERSION} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false \
      -ldflags "-s -w -X github.com/homard/homard/internal/app.Version=${VERSION}" \
      -o /out/homard ./cmd/homard

FROM debian:12-slim
# bubblewrap: the command sandbox; git: the git tools and checkpoints;
# ca-certificates: HTTPS to model providers.
RUN apt-get update \
 && apt-get install -y --no-install-recommends bubblewrap git ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --uid 10001 --user-group --home-dir /data --no-create-home --shell /usr/sbin/nologin homard \
 && mkdir -p /data && chown homard:homard /data && chmod 0700 /data
COPY --from=build /out/homard /usr/local/bin/homard
ENV HOMARD_HOME=/data
VOLUME ["/data"]
USER homard:homard
WORKDIR /data
EXPOSE 8787
ENTRYPOINT ["/usr/local/bin/homard"]
CMD ["serve"]
