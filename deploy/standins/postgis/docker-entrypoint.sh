#!/bin/bash
# Entrypoint of the postgis stand-in: the official postgres image's contract, written anew.
#   first run (empty PGDATA): initdb with POSTGRES_USER as superuser and POSTGRES_PASSWORD
#   (required), password (scram-sha-256) auth for TCP, trust on the local socket; creates
#   POSTGRES_DB; runs /docker-entrypoint-initdb.d/*.sh and *.sql against it
#   every run: drops root for the postgres user and execs the command ("postgres ...").
set -Eeuo pipefail

if [ "${1:0:1}" = '-' ]; then
  set -- postgres "$@"
fi

if [ "$1" = postgres ] && [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA"
  chown postgres:postgres "$PGDATA"
  chmod 700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$BASH_SOURCE" "$@"
fi

if [ "$1" = postgres ] && [ ! -s "$PGDATA/PG_VERSION" ]; then
  if [ -z "${POSTGRES_PASSWORD:-}" ] && [ "${POSTGRES_HOST_AUTH_METHOD:-}" != trust ]; then
    echo "error: database is uninitialized and POSTGRES_PASSWORD is not set" >&2
    exit 1
  fi
  export POSTGRES_USER="${POSTGRES_USER:-postgres}"
  export POSTGRES_DB="${POSTGRES_DB:-$POSTGRES_USER}"
  pwfile="$(mktemp)"
  printf '%s\n' "${POSTGRES_PASSWORD:-}" > "$pwfile"
  # shellcheck disable=SC2086  # POSTGRES_INITDB_ARGS is a list of options, as in the official image
  initdb --username="$POSTGRES_USER" --pwfile="$pwfile" --auth-local=trust ${POSTGRES_INITDB_ARGS:-}
  rm -f "$pwfile"
  printf '\nhost all all all %s\n' "${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}" >> "$PGDATA/pg_hba.conf"

  # A server on the socket only while the database and the init scripts are set up.
  pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start
  export PGUSER="$POSTGRES_USER"
  if [ "$POSTGRES_DB" != postgres ]; then
    psql -v ON_ERROR_STOP=1 --dbname postgres --set db="$POSTGRES_DB" <<<'CREATE DATABASE :"db";'
  fi
  for f in /docker-entrypoint-initdb.d/*; do
    case "$f" in
      *.sh) echo "running $f"; if [ -x "$f" ]; then "$f"; else . "$f"; fi ;;
      *.sql) echo "running $f"; psql -v ON_ERROR_STOP=1 --dbname "$POSTGRES_DB" -f "$f" ;;
      *) ;;
    esac
  done
  pg_ctl -D "$PGDATA" -m fast -w stop
  unset PGUSER
  echo "PostgreSQL init process complete; ready for start up."
fi

exec "$@"
