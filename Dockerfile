# syntax=docker/dockerfile:1.7@sha256:a57df69d0ea827fb7266491f2813635de6f17269be881f696fbfdf2d83dda33e
# Memory Table's Lambda container image, run by aws-lambda-ric on Node 22: the HTTP API handler (CMD
# index.handler, the default), the background-run worker (worker.handler), the API streamed from a function URL
# (stream.handler) and the expired-thread cleaner (cleaner.handler).
#
#   docker buildx build --provenance=false --sbom=false --platform linux/amd64 -t memory-table .
#   (or scripts/push-image.sh, which also pushes to ECR and prints the digest-pinned image_uri)
#
# The image's content is the base trimmed and flattened, tini, and `npm run build:image`'s tree; the tests
# run that tree under Node 22 against a local Lambda Runtime API, since no Docker engine runs where the tests do,
# and `npm run bench -- image` measures the layers on a stand-in of the base. The frontend (syntax line)
# and the base are pinned by digest: the same Dockerfile always builds with the same parts.

# Node 22 on Debian bookworm, slim, pinned by the digest of its multi-platform index (buildx picks the platform).
# Refresh: docker buildx imagetools inspect node:22-bookworm-slim
ARG NODE_IMAGE=node:22-bookworm-slim@sha256:53ada149d435c38b14476cb57e4a7da73c15595aba79bd6971b547ceb6d018bf

FROM ${NODE_IMAGE} AS build
# aws-lambda-ric compiles curl, aws-lambda-cpp and its Node-API addon during `npm ci`; tini becomes PID 1 of
# the runtime stage (the build stage runs for the target platform, so this is the target's tini).
RUN apt-get update \
    && apt-get install -y --no-install-recommends autoconf automake binutils cmake g++ libtool make python3 tini xz-utils \
    && rm -rf /var/lib/apt/lists/*
# npm 11 honours package.json's allowScripts, the reviewed list of dependencies allowed to run install scripts.
# node-gyp (run by aws-lambda-ric's install script) builds against the base image's own Node headers
# (/usr/local/include/node) instead of downloading them: its nodedir, which node-gyp reads from
# npm_config_nodedir or, as here, npm_package_config_node_gyp_nodedir. npm 11.19.1 warns on every command that
# npm_config_nodedir is an "Unknown env config" that "will stop working in the next major version of npm";
# node-gyp's own spelling passes through npm silently.
ENV NPM_CONFIG_CACHE=/tmp/.npm \
    NPM_CONFIG_UPDATE_NOTIFIER=false \
    npm_package_config_node_gyp_nodedir=/usr/local
RUN --mount=type=cache,target=/tmp/.npm npm install --global npm@11.19.1
WORKDIR /build
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/tmp/.npm npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src/ src/
COPY image/ image/
COPY scripts/build-image.ts scripts/compile-cache.ts scripts/
# npm scripts run the image's own Node (/usr/local/bin/node: no dependency ships a `node` binary), so the build
# loads the native addon under the Node that will run it. The tree is built where it runs, /var/task: Node keys
# the compile cache (V8's compiled code of the entries and their chunks, which a cold start then loads instead
# of compiling) by each module's absolute path. Read-only for everyone: the function can change nothing of its
# own code.
RUN npm run build:image -- --out /var/task --compile-cache && chmod -R a=rX /var/task
# The same Node without its DWARF debug sections (3.8 MB): the way Debian ships every binary (dh_strip). The symbol
# table stays, so crash backtraces, diagnostic reports and `perf` still name Node's functions.
RUN strip --strip-debug -o /build/node /usr/local/bin/node

# The runtime's filesystem: the base (Debian bookworm slim, whose apt, dpkg and perl-base stay, so an image built
# on this one can still apt-get install) less what nothing at run time reads, plus tini. The runtime stage
# flattens it into one layer, so what is removed here is not downloaded either.
FROM ${NODE_IMAGE} AS slim
# - npm, npx, corepack and yarn: nothing here runs a package manager.
# - Node's C headers (/usr/local/include, 65 MB: node-gyp reads them in the build stage only), docs, man page,
#   SystemTap tapset, and the tarball's CHANGELOG and README (its LICENSE stays).
# - glibc's gconv modules (8 MB): iconv's character sets. Node converts text with its own ICU, never iconv, and
#   the C locale needs none of them.
RUN rm -rf /usr/local/lib/node_modules /opt/yarn-* \
        /usr/local/include /usr/local/share/doc /usr/local/share/man /usr/local/share/systemtap \
        /usr/lib/*-linux-gnu/gconv \
    && rm -f /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack /usr/local/bin/yarn /usr/local/bin/yarnpkg \
        /usr/local/CHANGELOG.md /usr/local/README.md
COPY --from=build --chown=root:root /build/node /usr/local/bin/node
COPY --from=build --chown=root:root /usr/bin/tini-static /usr/local/bin/tini

# One layer for the system (the slim stage, whole), one for the task root: no Debian compilers, no Node package
# managers, no headers, and no base layer underneath still holding them. Starting from scratch drops the base's
# image configuration too, so PATH is set here again.
FROM scratch AS runtime
COPY --from=slim / /
# Lambda runs the image as a generated non-root user with only /tmp writable: HOME lives there.
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LAMBDA_TASK_ROOT=/var/task \
    NODE_ENV=production \
    HOME=/tmp
COPY --from=build --chown=root:root /var/task/ /var/task/
WORKDIR /var/task
# Locally (docker run) too, never root; `node` is the unprivileged user of the base image.
USER node
# tini is PID 1: it forwards SIGTERM and SIGINT to Node (a PID 1 ignores signals it has no handler for, so
# `docker stop` and Ctrl-C would otherwise wait for the kill) and reaps what exits.
ENTRYPOINT ["/usr/local/bin/tini", "--", "/usr/local/bin/node", "/var/task/bootstrap.mjs"]
CMD ["index.handler"]
