#!/usr/bin/env bash
# Builds the image of packaging/Containerfile from this build's .deb and runs the DaemonSet's loop in
# it (ctest packaging.container, label packaging): the .deb installs with its Depends resolved by apt,
# the entrypoint loops, each round prints a report that `cudadiag fleet` reads and writes the
# Prometheus textfile.
#
#   check_container.sh BUILD_DIR WORK_DIR      (exit 77 = skipped, saying why)
#
# The base is BASE_IMAGE when set, else a Debian 12 minbase root made here with debootstrap and
# imported as localhost/debian:bookworm-minbase (kept for the next run): the .deb is built on this
# Debian 12, and NVIDIA's CUDA base image (the Containerfile's default) is on a registry that this
# machine cannot reach. Needs root, buildah and debootstrap (`apt-get install buildah debootstrap`)
# and Debian's package mirror; buildah runs with the vfs storage driver and chroot isolation, so no
# overlay mounts or user namespaces are needed. Everything it creates but the base image is removed.
set -euo pipefail
build=$(realpath "$1") work=$2
source_dir=$(cd "$(dirname "$0")/.." && pwd)
for tool in buildah debootstrap dpkg-deb; do
  command -v "$tool" >/dev/null || { echo "skipped: $tool not found (apt-get install buildah debootstrap dpkg-dev)"; exit 77; }
done
[ "$(id -u)" = 0 ] || { echo "skipped: buildah here runs as root (vfs storage, chroot isolation)"; exit 77; }
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
export STORAGE_DRIVER=vfs
bh() { buildah --storage-driver vfs "$@"; }
rm -rf "$work"
mkdir -p "$work/context"
work=$(realpath "$work")

cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/deb" >"$work/cpack.log" 2>&1 || { cat "$work/cpack.log"; exit 1; }
cp "$(find "$work/deb" -maxdepth 1 -name 'cudadiag_*.deb')" "$work/context/cudadiag.deb"
cp "$source_dir/packaging/Containerfile" "$work/context/"

base=${BASE_IMAGE:-localhost/debian:bookworm-minbase}
if [ -z "${BASE_IMAGE:-}" ] && ! bh inspect --type image "$base" >/dev/null 2>&1; then
  if ! debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1; then
    tail -5 "$work/debootstrap.log"
    echo "skipped: debootstrap could not make a Debian 12 root from $mirror"
    exit 77
  fi
  # Storing an image is buildah's own work, not the recipe's: where this machine refuses it (inside
  # a chroot, buildah cannot remount / to apply a layer) that is the machine's limit, a skip with
  # buildah's own words, as for the run probe below.
  scratch=$(bh from scratch)
  cp -a "$work/rootfs/." "$(bh mount "$scratch")/"
  bh umount "$scratch" >/dev/null
  if ! bh commit -q "$scratch" "$base" >"$work/commit.log" 2>&1; then
    bh rm "$scratch" >/dev/null 2>&1
    echo "skipped: buildah cannot store an image on this machine: $(tail -1 "$work/commit.log")"
    exit 77
  fi
  bh rm "$scratch" >/dev/null
  rm -rf "$work/rootfs"
  echo "base image $base made with debootstrap"
fi

image=localhost/cudadiag-check:$$
container=
cleanup() {
  [ -n "$container" ] && bh rm "$container" >/dev/null 2>&1
  bh rmi "$image" >/dev/null 2>&1 || true
}
trap cleanup EXIT
# Whether this machine can run a container at all (a sandbox may refuse chroot or mounts): that is
# the machine's limit, not the recipe's, and is a skip with buildah's own words.
probe=$(bh from "$base")
if ! bh run --isolation chroot "$probe" -- true >"$work/probe.log" 2>&1; then
  bh rm "$probe" >/dev/null 2>&1
  echo "skipped: buildah cannot run a container on this machine: $(tail -1 "$work/probe.log")"
  exit 77
fi
bh rm "$probe" >/dev/null
(cd "$work/context" && bh bud --isolation chroot --network host -f Containerfile --build-arg "BASE_IMAGE=$base" \
   --build-arg CUDADIAG_DEB=cudadiag.deb -t "$image" .) >"$work/build.log" 2>&1 || { tail -30 "$work/build.log"; exit 1; }
echo "built $image from $(dpkg-deb -f "$work/context/cudadiag.deb" Package)_$(dpkg-deb -f "$work/context/cudadiag.deb" Version)"

container=$(bh from "$image")
entrypoint=$(bh inspect --type image --format '{{.OCIv1.Config.Entrypoint}}' "$image")
echo "entrypoint: $entrypoint"
# The loop, every second for 4 s: `timeout` ends it (exit 124), as Kubernetes would end the pod.
status=0
bh run --isolation chroot --env CUDADIAG_INTERVAL=1 --env CUDADIAG_TEXTFILE=/tmp/cudadiag.prom "$container" -- \
  timeout 4 /usr/share/cudadiag/kubernetes/cudadiag-node.sh >"$work/loop.out" 2>"$work/loop.err" || status=$?
[ "$status" = 124 ] || { echo "the loop ended with $status before its time"; cat "$work/loop.err"; exit 1; }
"$build/cli/cudadiag" --json fleet "$work/loop.out" >"$work/fleet.json" || true
# One host: fleet counts its newest report as the node and lists the rest as older reports.
reports=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d["nodes"]) + len(d.get("older_reports", [])))' "$work/fleet.json")
problems=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d["input_problems"]))' "$work/fleet.json")
echo "the loop printed $reports reports in 4 s ($problems input problems)"
if [ "$reports" -lt 2 ] || [ "$problems" != 0 ]; then
  head -c 2000 "$work/loop.out"
  exit 1
fi
bh run --isolation chroot "$container" -- cat /tmp/cudadiag.prom >"$work/textfile.prom"
grep -q '^cudadiag_up 1$' "$work/textfile.prom" || { echo "no cudadiag_up 1 in the textfile"; cat "$work/textfile.prom"; exit 1; }
echo "textfile: $(grep -c '^cudadiag_' "$work/textfile.prom") samples, cudadiag_up 1"
bh run --isolation chroot "$container" -- cudadiag --version
