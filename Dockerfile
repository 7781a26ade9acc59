# The harvest worker image. `npx harvest` runs the TypeScript sources through tsx, a runtime
# dependency, so there is no build step and dev dependencies stay out (`npm ci --omit=dev`).
#   docker build -t harvest .
#   docker run --rm --env-file .env harvest status
FROM node:20-bookworm-slim

ENV NODE_ENV=production \
    NPM_CONFIG_UPDATE_NOTIFIER=false
WORKDIR /app

# Manifests first: the dependency layer is rebuilt only when they change, not on every edit.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

COPY tsconfig.json ./
COPY bin ./bin
COPY migrations ./migrations
COPY src ./src

# Files stay root-owned (read-only to the process); tsx writes its cache under /tmp.
USER node

# SIGTERM goes straight to node (exec form), which stops the worker gracefully: in-flight pages
# commit first. Give it time: compose's stop_grace_period, `docker stop -t 60`.
ENTRYPOINT ["node", "bin/harvest.js"]
CMD ["worker"]
