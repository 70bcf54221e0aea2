#!/usr/bin/env bash
# Build localhost/debian:trixie-slim with debootstrap from Debian's archive alone (no registry),
# for deploy/verify-compose.sh and the functions' runtime images: a minbase plus the updates and security sources,
# no services started by package scripts, apt's caches emptied, and this machine's extra
# certificate authorities (an egress proxy that inspects TLS) so image builds can reach PyPI/npm.
# Usage: deploy/debian-base.sh            (a no-op when the image exists; needs root and podman)
# Exit 3 when debootstrap or podman cannot run here.
set -euo pipefail
IMAGE=localhost/debian:trixie-slim
podman image exists "$IMAGE" && { echo "$IMAGE exists"; exit 0; }
command -v debootstrap >/dev/null || { echo "debootstrap is missing (apt-get install debootstrap)"; exit 3; }
mirror="$(grep -hsoE '(URIs:|^deb)[[:space:]]+[^[:space:]]+/debian/?' /etc/apt/sources.list /etc/apt/sources.list.d/* \
  | awk '{print $2}' | head -1 || true)"
mirror="${mirror:-http://deb.debian.org/debian}"; mirror="${mirror%/}"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
rootfs="$work/rootfs"
echo "building $IMAGE with debootstrap from $mirror"
debootstrap --variant=minbase trixie "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 \
  || { tail -20 "$work/debootstrap.log"; exit 3; }
rm -f "$rootfs/etc/apt/sources.list"
cat > "$rootfs/etc/apt/sources.list.d/debian.sources" <<EOS
Types: deb
URIs: $mirror
Suites: trixie trixie-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${mirror}-security
Suites: trixie-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOS
printf '#!/bin/sh\nexit 101\n' > "$rootfs/usr/sbin/policy-rc.d"; chmod 0755 "$rootfs/usr/sbin/policy-rc.d"
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/log/*.log
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  mkdir -p "$rootfs/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/*.crt "$rootfs/usr/local/share/ca-certificates/"
fi
tar -C "$rootfs" -c . | podman import -q \
  --change 'CMD ["bash"]' --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  - "$IMAGE" >/dev/null
echo "built $IMAGE"
