# syntax=docker/dockerfile:1
# The API image: one process per container (`python -m backend.serve`, README "Deployment").
# Every stage starts from Debian 13 (trixie) slim and takes Python 3.13 and Node.js from Debian's
# own packages, so the whole image can be rebuilt from Debian's archive alone
# (deploy/verify-compose.sh does exactly that, docs "Compose, verified").
# Stage 1 builds the virtualenv (compilers only here, for any package without a wheel);
# stage 2 installs the Avatars icon sets; stage 3 is the slim runtime with the venv, the code and
# the collected admin static files.
ARG DEBIAN_IMAGE=debian:trixie-slim

FROM ${DEBIAN_IMAGE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3.13 python3.13-venv python3.13-dev build-essential \
 && rm -rf /var/lib/apt/lists/*
RUN python3.13 -m venv /opt/venv
COPY requirements.txt /tmp/requirements.txt
RUN /opt/venv/bin/pip install -r /tmp/requirements.txt


# The Avatars icon sets (npm packages, apps/avatars/assets) from their lockfile, with Debian's
# Node.js and npm; only the files are copied into the runtime image, no Node.
FROM ${DEBIAN_IMAGE} AS icons
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends nodejs npm ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /icons
COPY apps/avatars/assets/package.json apps/avatars/assets/package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund


FROM ${DEBIAN_IMAGE}
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    DJANGO_SETTINGS_MODULE=backend.settings \
    BIND_HOST=0.0.0.0 \
    PORT=8000 \
    STATIC_ROOT=/app/static \
    STORAGE_ROOT=/data/files
# The interpreter the venv was made with (/usr/bin/python3.13), nothing else: no compilers here.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3.13 ca-certificates netbase tzdata \
 && rm -rf /var/lib/apt/lists/*
RUN groupadd --system --gid 10001 app \
 && useradd --system --uid 10001 --gid app --home-dir /app --no-create-home --shell /usr/sbin/nologin app \
 && mkdir -p /data/files \
 && chown app:app /data/files
COPY --from=build /opt/venv /opt/venv
WORKDIR /app
# Code and static files stay owned by root: the app user can read, not change them.
COPY . /app
COPY --from=icons /icons/node_modules /app/apps/avatars/assets/node_modules
# A throw-away key for this step only, so that settings load without generating a key file that
# would be baked into the image (at run time SECRET_KEY comes from the environment).
RUN SECRET_KEY="$(python -c 'import secrets; print(secrets.token_urlsafe(64))')" python manage.py collectstatic --noinput
USER app
EXPOSE 8000
VOLUME ["/data/files"]
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen(f\"http://127.0.0.1:{os.environ.get('PORT', '8000')}/v1/health/version\", timeout=2)"]
CMD ["python", "-m", "backend.serve"]
