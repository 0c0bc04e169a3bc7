# The nrn-operator image: `nrn-operator run` (see deploy/). Build from the repo root:
#   docker build -t ghcr.io/nrn-operator/nrn-operator:0.1.0 .
# Pin the base images by digest in a release pipeline.

# Build: every dependency, the TypeScript build, then only the runtime dependencies.
FROM node:22-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# No install scripts: `prepare` would build before src/ is here, and no runtime dependency
# needs one.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev --ignore-scripts --no-audit --no-fund

# Run: Node.js, the compiled code and production dependencies, owned by root, run as uid 1000.
FROM node:22-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The status page's files (GET /ui): served as they are, nothing to build.
COPY ui ./ui
# Numeric, so that the kubelet can check runAsNonRoot (the image's `node` user is uid 1000).
USER 1000:1000
EXPOSE 8080 8081
ENTRYPOINT ["node", "dist/cli.js"]
CMD ["run"]
