#!/usr/bin/env bash
# Build rolloutgym's base container images offline, from Debian's mirror (no registry), for the docker
# sandbox provider on podman (issue 41). Used by .ci/run; run it by hand once on a new machine.
#
#   scripts/build_base_images.sh            # configure podman if unconfigured, build what is missing
#   scripts/build_base_images.sh --force    # rebuild the images (the rootfs tar stays cached)
#
# Images: localhost/rolloutgym/bookworm-python:latest (Debian bookworm minbase + python3 + python3-pytest: the code envs run pytest).
# Map Dockerfile bases onto it with --image-map, e.g. --image-map python:3.11-slim=localhost/rolloutgym/bookworm-python
# The rootfs tar is cached in $ROLLOUTGYM_IMAGE_CACHE (default /var/cache/rolloutgym/base-images): a second
# run with the image present does nothing; with the image gone it re-imports the tar (seconds).
set -euo pipefail

image="localhost/rolloutgym/bookworm-python:latest"
cache="${ROLLOUTGYM_IMAGE_CACHE:-/var/cache/rolloutgym/base-images}"
mirror="${ROLLOUTGYM_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
force=0
[ "${1:-}" = "--force" ] && force=1

for tool in podman mmdebstrap; do
  command -v "$tool" >/dev/null || { echo "build_base_images: $tool is missing: apt-get install podman runc mmdebstrap uidmap" >&2; exit 1; }
done

# podman on these machines: runc (crun refuses hybrid cgroups), cgroupfs (no systemd), explicit ulimits
# no higher than this host's hard limits (podman's defaults are refused otherwise).
conf=/etc/containers/containers.conf
if [ "$(id -u)" = 0 ] && ! grep -q 'rolloutgym' "$conf" 2>/dev/null; then
  nofile=$(ulimit -Hn); [ "$nofile" = unlimited ] || [ "$nofile" -gt 16384 ] && nofile=16384
  nproc=$(ulimit -Hu); [ "$nproc" = unlimited ] || [ "$nproc" -gt 16384 ] && nproc=16384
  mkdir -p /etc/containers
  cat >"$conf" <<CONF
# written by rolloutgym's scripts/build_base_images.sh (issue 41)
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
  echo "build_base_images: wrote $conf (runc, cgroupfs, nofile=$nofile, nproc=$nproc)"
fi

if [ "$force" = 0 ] && podman image exists "$image"; then
  echo "build_base_images: $image is there"
  exit 0
fi
mkdir -p "$cache"
tar="$cache/bookworm-python3-pytest-minbase.tar"
if [ ! -s "$tar" ]; then
  echo "build_base_images: mmdebstrap bookworm (minbase + python3 + python3-pytest) from $mirror ..."
  mmdebstrap --quiet --format=tar --variant=minbase --include=python3,python3-pytest bookworm "$tar.part" "$mirror"
  mv "$tar.part" "$tar"
fi
podman import --quiet --change 'CMD ["/bin/bash"]' --change 'LABEL io.rolloutgym.base=bookworm-python' \
  "$tar" "$image" >/dev/null
echo "build_base_images: $image imported from $tar"
