#!/usr/bin/env bash
# Builds Tritium's image with podman on this machine, runs it as Kubernetes would (non-root,
# read-only root filesystem, /tmp writable), waits for its HEALTHCHECK, answers an inference from
# inside the container, then checks that SIGTERM drains in-flight requests.
#
#   deploy/container/build-and-run.sh                   # ~12 min at load 12 the first time (base, npm ci, build, install)
#   TRITIUM_SET=all deploy/container/build-and-run.sh   # every package instead of server + ONNX
#   KEEP=1 deploy/container/build-and-run.sh            # leave the container running afterwards
#
# No image registry is reachable here, so the base image is made from Debian with debootstrap
# (minbase + tini), Node 22 and this machine's npm, and imported into podman. This machine is itself
# a container: podman runs with runc and explicit ulimits (deploy/container/containers.conf).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
VERSION=$(node -p "require('./apps/server/package.json').version")
IMAGE=${IMAGE:-localhost/tritium:$VERSION}
export CONTAINERS_CONF=${CONTAINERS_CONF:-$ROOT/deploy/container/containers.conf}
NAME=tritium-try-$$

# podman's periodic healthcheck timers need systemd, absent here: drop its complaints, keep the rest.
quiet_systemd() { grep -v 'systemd connection' >&2 || true; }
step() { printf '\n[%4ss] %s\n' "$SECONDS" "$*"; }
cleanup() {
  podman rm -f -t 0 "$NAME-mounted" >/dev/null 2>&1 || true
  if [ -z "${KEEP:-}" ]; then podman rm -f -t 0 "$NAME" >/dev/null 2>&1 || true; fi
  if [ -n "${ROOTFS:-}" ]; then rm -rf "$ROOTFS"; fi
}
trap cleanup EXIT

# ---- 0. tools (Debian packages; ~15 s)
if ! command -v podman >/dev/null || ! command -v debootstrap >/dev/null || ! command -v runc >/dev/null; then
  step "installing podman buildah debootstrap runc"
  if [ "$(id -u)" != 0 ]; then echo "run as root, or: sudo apt-get install podman buildah debootstrap runc" >&2; exit 1; fi
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman buildah debootstrap runc >/dev/null
fi
podman --version

# ---- 1. base image: Debian bookworm minbase + tini + Node (a line the engines name) and this machine's npm
# NODE_BIN: this machine's node when it is Node 22 or 24, else Node 22 from the npm registry's
# node-linux-<arch> package (as .ci/run installs it).
node_major() { "$1" -p 'process.versions.node.split(".")[0]'; }
NODE_BIN=${NODE_BIN:-$(command -v node)}
case "$(node_major "$NODE_BIN")" in
  22|24) ;;
  *)
    case "$(uname -m)" in x86_64) ARCH=x64 ;; aarch64) ARCH=arm64 ;; *) ARCH=$(uname -m) ;; esac
    NODE_DIR=$HOME/.cache/tritium-ci/node-22
    if [ ! -x "$NODE_DIR/node_modules/node-linux-$ARCH/bin/node" ]; then
      step "this machine has Node $("$NODE_BIN" --version); npm install node-linux-$ARCH@22 (registry) for the image"
      npm install --prefix "$NODE_DIR" --no-save --no-package-lock --no-audit --no-fund "node-linux-$ARCH@22" >/dev/null
    fi
    NODE_BIN=$NODE_DIR/node_modules/node-linux-$ARCH/bin/node
    ;;
esac
BASE=${BASE:-localhost/tritium-node:$(node_major "$NODE_BIN")-bookworm}
if podman image exists "$BASE"; then
  step "base image $BASE exists (podman rmi $BASE to rebuild it)"
else
  step "debootstrap --variant=minbase bookworm (+ tini, ca-certificates) and Node $("$NODE_BIN" --version) from $NODE_BIN"
  ROOTFS=$(mktemp -d /tmp/tritium-rootfs.XXXXXX)
  debootstrap --variant=minbase --include=tini,ca-certificates bookworm "$ROOTFS" >"$ROOTFS.log" 2>&1 || { tail -20 "$ROOTFS.log"; exit 1; }
  rm -f "$ROOTFS.log"
  NPM_DIR=$(node -p "require('path').dirname(require.resolve('npm/package.json', { paths: [require('path').join(process.execPath, '../../lib/node_modules')] }))")
  install -D -m 0755 "$NODE_BIN" "$ROOTFS/usr/local/bin/node"
  mkdir -p "$ROOTFS/usr/local/lib/node_modules"
  cp -a "$NPM_DIR" "$ROOTFS/usr/local/lib/node_modules/npm"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$ROOTFS/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$ROOTFS/usr/local/bin/npx"
  rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/lib/apt/lists/*
  step "podman import -> $BASE"
  tar -C "$ROOTFS" -c . | podman import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["/bin/bash"]' - "$BASE" >/dev/null 2>&1
  rm -rf "$ROOTFS"
  ROOTFS=
fi
podman run --rm "$BASE" sh -c 'echo "base: Debian $(cat /etc/debian_version), node $(node --version), npm $(npm --version), $(tini --version)"'

# ---- 2. the image (multi-stage: the workspace built and packed; the set installed from its tarballs;
# the final stage: the base, tini and the installed project). TRITIUM_SET=all for every package.
step "podman build -f deploy/Containerfile -t $IMAGE"
CA_ARGS=()
CA_FILE=${NODE_EXTRA_CA_CERTS:-$(npm config get cafile 2>/dev/null || true)}
if [ -n "$CA_FILE" ] && [ "$CA_FILE" != null ] && [ -f "$CA_FILE" ]; then
  # This machine reaches the npm registry through a proxy with its own CA: lend it to the build stage.
  echo "build stage trusts $CA_FILE (mounted for the build, not copied into the image)"
  CA_ARGS=(--volume "$CA_FILE:/run/build-ca/ca.crt:ro" --build-arg NODE_EXTRA_CA_CERTS=/run/build-ca/ca.crt --build-arg npm_config_cafile=/run/build-ca/ca.crt)
fi
BUILD_LOG=$(mktemp /tmp/tritium-build.XXXXXX.log)
if ! podman build --format docker --network host --ignorefile deploy/container/containerignore "${CA_ARGS[@]}" \
  --build-arg BASE="$BASE" --build-arg TRITIUM_SET="${TRITIUM_SET:-onnx}" -f deploy/Containerfile -t "$IMAGE" . >"$BUILD_LOG" 2>&1; then
  tail -30 "$BUILD_LOG" >&2
  echo "the build failed (log: $BUILD_LOG)" >&2
  exit 1
fi
grep -E '^(STEP|COMMIT)|model.ts runs|install set' "$BUILD_LOG" | sed 's/^/  /'
rm -f "$BUILD_LOG"
podman image inspect "$IMAGE" --format 'image: {{.Id}} {{.Size}} bytes, user {{.Config.User}}, entrypoint {{.Config.Entrypoint}} {{.Config.Cmd}}'

# ---- 3. run it as a pod would: non-root (the image's user), read-only root, /tmp writable, ports on 127.0.0.1 (any free ones)
step "podman run $IMAGE (read-only root, tmpfs /tmp, ports published on 127.0.0.1)"
# --health-interval=disable: podman's periodic checks need systemd, which this machine lacks; the
# script runs the image's HEALTHCHECK itself (podman healthcheck run).
podman run -d --name "$NAME" --health-interval=disable --read-only --tmpfs /tmp:rw,size=2g,mode=1777 \
  -p 127.0.0.1::8000 -p 127.0.0.1::8001 -p 127.0.0.1::8002 "$IMAGE" >/dev/null 2> >(quiet_systemd)
HTTP=$(podman port "$NAME" 8000/tcp | head -1)
METRICS=$(podman port "$NAME" 8002/tcp | head -1)
echo "published: HTTP $HTTP, gRPC $(podman port "$NAME" 8001/tcp | head -1), metrics $METRICS"

# Polls the image's HEALTHCHECK (GET /v2/health/ready inside the container) until it passes.
wait_healthy() {
  local start=$SECONDS
  until podman healthcheck run "$1" >/dev/null 2>&1; do
    if [ "$(podman inspect "$1" --format '{{.State.Running}}')" != true ]; then
      echo "the container stopped:" >&2; podman logs "$1" 2>&1 | tail -30 >&2; exit 1
    fi
    if [ $((SECONDS - start)) -gt 300 ]; then echo "not ready after 300 s" >&2; podman logs "$1" 2>&1 | tail -30 >&2; exit 1; fi
    sleep 0.5
  done
  echo "healthy $((SECONDS - start)) s after start: $(podman inspect "$1" --format '{{.State.Health.Status}}')"
}

step "waiting for the HEALTHCHECK (/v2/health/ready)"
wait_healthy "$NAME"
podman logs "$NAME" 2>&1 | grep -E 'Started|READY|UNAVAILABLE' || true
podman exec "$NAME" sh -c 'echo "inside: $(id), PID 1 = $(cat /proc/1/comm), its child = $(tr "\0" " " </proc/$(cut -d" " -f1 /proc/1/task/1/children)/cmdline)"' || true

# ---- 4. an inference from inside the container, then the same through the published port
step "inference from inside the container"
podman exec -i "$NAME" node --input-type=module - infer <deploy/container/in-container-client.mjs
step "inference through the published port $HTTP"
node -e "
fetch('http://$HTTP/v2/models/sentiment_ensemble/infer', { method: 'POST', headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ inputs: [{ name: 'TEXT', datatype: 'BYTES', shape: [1, 1], data: ['I am not impressed with the performance.'] }] }) })
  .then(async (r) => { console.log(r.status, await r.text()); process.exit(r.ok ? 0 : 1); })"
echo "metrics: $(node -e "fetch('http://$METRICS/metrics').then(r => r.text()).then(t => console.log(t.split('\n').filter(l => l.startsWith('nv_inference_request_success{model=\"sentiment_ensemble\"')).join(' ')))")"

# ---- 5. a repository mounted over the example: Triton's `simple` (examples/model_repository), read-only
step "a mounted repository: examples/model_repository at /models (read-only bind mount)"
podman run -d --name "$NAME-mounted" --health-interval=disable --read-only --tmpfs /tmp:rw,size=1g,mode=1777 \
  -v "$ROOT/examples/model_repository:/models:ro" "$IMAGE" serve --model-repository=/models >/dev/null 2> >(quiet_systemd)
wait_healthy "$NAME-mounted"
podman exec -i "$NAME-mounted" node --input-type=module - simple <deploy/container/in-container-client.mjs
podman rm -f -t 5 "$NAME-mounted" >/dev/null 2> >(quiet_systemd)

if [ -n "${KEEP:-}" ]; then
  step "KEEP=1: container $NAME left running (podman rm -f $NAME)"
  exit 0
fi

# ---- 6. SIGTERM drains: requests in flight finish, new ones are refused, the process exits 0
step "SIGTERM with requests in flight"
# The container stops when the server exits, so judge by what the client printed, not its exit status.
DRAIN=$(podman exec -i "$NAME" node --input-type=module - drain <deploy/container/in-container-client.mjs 2>&1 || true)
echo "$DRAIN"
grep -q '^DRAIN OK$' <<<"$DRAIN" || DRAIN_FAILED=1
podman wait "$NAME" >/dev/null 2>&1 || true
echo "exit code $(podman inspect "$NAME" --format '{{.State.ExitCode}}')"
podman logs "$NAME" 2>&1 | grep -E 'SIGTERM|stopping|stopped|Exit timeout' || true
if [ -n "${DRAIN_FAILED:-}" ]; then echo "the drain check failed" >&2; exit 1; fi
step "done in ${SECONDS} s"
