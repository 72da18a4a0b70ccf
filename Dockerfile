# syntax=docker/dockerfile:1.7
# Memory Table's Lambda container image: the HTTP API handler (CMD index.handler, the default) and the
# expired-thread cleaner (CMD cleaner.handler), run by aws-lambda-ric on Node 22.
#
#   docker buildx build --provenance=false --sbom=false --platform linux/amd64 -t memory-table .
#   (or scripts/push-image.sh, which also pushes to ECR and prints the digest-pinned image_uri)
#
# The image's content is exactly `npm run build:image` (dist/image/); the tests run that tree under Node 22
# against a local Lambda Runtime API, since no Docker engine runs where the tests do.

# Node 22 on Debian bookworm, slim, pinned by the digest of its multi-platform index (buildx picks the platform).
# Refresh: docker buildx imagetools inspect node:22-bookworm-slim
ARG NODE_IMAGE=node:22-bookworm-slim@sha256:53ada149d435c38b14476cb57e4a7da73c15595aba79bd6971b547ceb6d018bf

FROM ${NODE_IMAGE} AS build
# aws-lambda-ric compiles curl, aws-lambda-cpp and its Node-API addon during `npm ci`.
RUN apt-get update \
    && apt-get install -y --no-install-recommends autoconf automake cmake g++ libtool make python3 xz-utils \
    && rm -rf /var/lib/apt/lists/*
# npm 11 honours package.json's allowScripts, the reviewed list of dependencies allowed to run install scripts.
ENV NPM_CONFIG_CACHE=/tmp/.npm \
    NPM_CONFIG_UPDATE_NOTIFIER=false
RUN --mount=type=cache,target=/tmp/.npm npm install --global npm@11.19.1
WORKDIR /build
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/tmp/.npm npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src/ src/
COPY image/ image/
COPY scripts/build-image.ts scripts/
# Read-only for everyone: the function can change nothing of its own code.
RUN npm run build:image && chmod -R a=rX dist/image

# Same base, no compilers: only Node, the bundled handlers and the runtime interface client.
FROM ${NODE_IMAGE} AS runtime
# Lambda runs the image as a generated non-root user with only /tmp writable: every cache and home lives there.
ENV LAMBDA_TASK_ROOT=/var/task \
    NODE_ENV=production \
    HOME=/tmp \
    NPM_CONFIG_CACHE=/tmp/.npm \
    NPM_CONFIG_UPDATE_NOTIFIER=false
COPY --from=build --chown=root:root /build/dist/image/ /var/task/
WORKDIR /var/task
# Locally (docker run) too, never root; `node` is the unprivileged user of the base image.
USER node
ENTRYPOINT ["/usr/local/bin/node", "/var/task/bootstrap.mjs"]
CMD ["index.handler"]
