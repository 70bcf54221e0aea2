#!/bin/sh
# Build step of a python deployment, run in /usr/local/build (the unpacked source):
# the function's own commands when it has some, else its requirements.txt into .deps.
set -e
cd /usr/local/build
if [ -n "$OPEN_RUNTIMES_BUILD_COMMAND" ]; then
  export PIP_TARGET=/usr/local/build/.deps
  sh -c "$OPEN_RUNTIMES_BUILD_COMMAND"
elif [ -f requirements.txt ]; then
  python3 -m pip install --no-cache-dir --target /usr/local/build/.deps -r requirements.txt
fi
echo "build done"
