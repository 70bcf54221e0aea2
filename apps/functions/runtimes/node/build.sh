#!/bin/sh
# Build step of a node deployment, run in /usr/local/build (the unpacked source):
# the function's own commands when it has some, else `npm install` when it has a package.json.
set -e
cd /usr/local/build
if [ -n "$OPEN_RUNTIMES_BUILD_COMMAND" ]; then
  sh -c "$OPEN_RUNTIMES_BUILD_COMMAND"
elif [ -f package.json ]; then
  npm install --omit=dev --no-audit --no-fund
fi
echo "build done"
