#!/bin/bash
# Entrypoint of the redis stand-in: the official redis image's contract, written anew.
#   "-opt ..." or "file.conf ..." runs redis-server with them; redis-server runs as the redis
#   user; the official image builds Redis with protected mode off (its network is the
#   container's), Debian's binary has it on, so it is switched off here unless an argument or a
#   config file says otherwise.
set -Eeuo pipefail

if [ "${1:0:1}" = '-' ] || [ "${1%.conf}" != "$1" ]; then
  set -- redis-server "$@"
fi

if [ "$1" = redis-server ]; then
  if [ "$(id -u)" = 0 ]; then
    find . \! -user redis -exec chown redis '{}' + 2>/dev/null || true
    exec setpriv --reuid=redis --regid=redis --init-groups "$BASH_SOURCE" "$@"
  fi
  second="${2:-}"
  if [[ "$*" != *protected-mode* ]] && [ "${second%.conf}" = "$second" ]; then
    set -- "$@" --protected-mode no
  fi
fi

exec "$@"
