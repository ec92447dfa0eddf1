# syntax=docker/dockerfile:1
# Warden's container image: `warden sidecar` (and every other `warden` command) on Node 20.
#   docker build -t warden:0.1.0 .          (podman build / buildah bud work the same)
# Stage 1 compiles TypeScript and installs the production dependencies, building the native
# modules (better-sqlite3, tree-sitter-bash) with the compilers it has. Stage 2 is the
# runtime: no compilers, no npm cache, no sources, no dev dependencies (embedded PostgreSQL,
# browsers, benchmarks, test frameworks); a numeric non-root user; nothing under / written
# at run time, so it runs with a read-only root filesystem (`readOnlyRootFilesystem: true`,
# `docker run --read-only`): the configuration is mounted read-only, the journal's state
# directory and /tmp are volumes (deploy/k8s/deployment.yaml, deploy/docker-compose.yml).

ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# Only src/ is compiled for the image (the repository's build also compiles bench/, examples/).
RUN printf '{"extends":"./tsconfig.build.json","include":["src"]}\n' > tsconfig.image.json \
 && npx tsc -p tsconfig.image.json \
 && npm prune --omit=dev --no-audit --no-fund

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /opt/warden
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist/src ./dist/src
COPY bin ./bin
COPY policies ./policies
COPY schemas ./schemas
COPY examples/sidecar ./examples/sidecar
RUN ln -s /opt/warden/bin/warden.js /usr/local/bin/warden \
 && mkdir -p /etc/warden/state /etc/warden/work \
 && chown -R 10001:10001 /etc/warden/state /etc/warden/work
# A numeric user, so Kubernetes' runAsNonRoot can check it without /etc/passwd.
USER 10001:10001
WORKDIR /etc/warden
EXPOSE 8787
# The ops route: /health says the process serves (deploy/k8s uses /ready, which also reads the
# journal's head, for readiness). WARDEN_HEALTH_URL overrides it when the port differs.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch(process.env.WARDEN_HEALTH_URL||'http://127.0.0.1:8787/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["node", "/opt/warden/bin/warden.js"]
CMD ["sidecar", "--config", "/etc/warden/sidecar.yaml"]
