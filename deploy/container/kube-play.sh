#!/usr/bin/env bash
# Runs `tritium deploy kubernetes` output with a real container runtime that executes Kubernetes
# YAML: `podman kube play` of the rendered Deployment, with the project's image. It waits for the
# pod's probes as the kubelet would (startup and readiness on the health port, liveness through
# podman's healthcheck), infers on each pod's ports, scales to two pods, then takes them down and
# checks that each server drained and exited 0.
#
#   deploy/container/kube-play.sh        # needs localhost/tritium:<version> (deploy/container/build-and-run.sh)
#
# podman kube play has no Service, PodDisruptionBudget, ScaledObject or PodMonitor, and creates one
# pod per Deployment whatever `replicas` says: the script plays the Deployment only, and a second
# pod is the same Deployment played under a second name (what a ReplicaSet's second pod is).
# podman publishes each containerPort on the host under the same number, so the second pod's ports
# are moved by HOST_PORT_OFFSET (as hostPort: the one change besides its name); the probes and
# inferences go through those published ports on 127.0.0.1.
# The last lines list what podman did not honour, each read off this run, beside what was checked.
set -euo pipefail
cd "$(dirname "$0")/../.."
VERSION=$(node -p "require('./apps/server/package.json').version")
IMAGE=${IMAGE:-localhost/tritium:$VERSION}
export CONTAINERS_CONF=${CONTAINERS_CONF:-$PWD/deploy/container/containers.conf}
WORK=$(mktemp -d /tmp/tritium-kube-play.XXXXXX)
NAMES=(tritium tritium-2)
HOST_PORT_OFFSET=${HOST_PORT_OFFSET:-10000}
declare -A OFFSET=([tritium]=0 [tritium-2]=$HOST_PORT_OFFSET)
declare -A STOP_AT=() SIGTERM_AT=()
step() { printf '\n[%4ss] %s\n' "$SECONDS" "$*"; }
cleanup() {
  for f in "$WORK"/*.play.yaml; do [ -f "$f" ] && podman kube down "$f" >/dev/null 2>&1 || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

command -v podman >/dev/null || { echo "SKIP: podman is not installed (Debian package podman; runc)"; exit 77; }
podman image exists "$IMAGE" || { echo "SKIP: image $IMAGE is not built (deploy/container/build-and-run.sh builds it)"; exit 77; }
podman --version

# ---- 1. the manifests, as an operator renders them
step "tritium deploy kubernetes --image $IMAGE --output-dir $WORK/manifests"
node apps/server/bin/tritium.mjs deploy kubernetes --image "$IMAGE" --pod-monitor --output-dir "$WORK/manifests" >/dev/null 2>&1
ls "$WORK/manifests"
# podman plays Pods, Deployments, ConfigMaps and PersistentVolumeClaims: the Deployment is what runs.
DEPLOYMENT=$(grep -l '^kind: Deployment' "$WORK"/manifests/*.yaml)

# ---- 2. play it: one pod per played Deployment
play() {
  local name=$1 file="$WORK/$1.play.yaml"
  local offset=${OFFSET[$name]}
  # The Deployment as rendered; a second pod gets its own name and host ports.
  if [ "$offset" = 0 ]; then cp "$DEPLOYMENT" "$file"; else
    sed -e "0,/^  name: tritium$/s//  name: $name/" "$DEPLOYMENT" |
      awk -v off="$offset" '{ print } /^ *containerPort: [0-9]+$/ { n = $2; sub(/containerPort: [0-9]+/, "hostPort: " n + off); print }' >"$file"
  fi
  # To files, not pipes: conmon, which podman leaves running, would hold a pipe open.
  podman kube play "$file" >"$WORK/$name.out" 2>"$WORK/$name.err" || { cat "$WORK/$name.err" >&2; exit 1; }
  sed 's/^/  /' "$WORK/$name.out"
  grep -v 'systemd connection' "$WORK/$name.err" | sed 's/^/  /' || true
}
# podman names a Deployment's pod <name>-pod-0 and its container <pod>-<container>.
pod_of() { podman pod ps --format '{{.Name}}' | grep -E "^$1-pod(-[0-9]+)?$" | head -1; }
pod_ip() { podman pod inspect "$(pod_of "$1")" --format '{{.InfraContainerID}}' | xargs podman inspect --format '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}'; }
container_of() { podman pod inspect "$(pod_of "$1")" --format '{{range .Containers}}{{.Name}} {{end}}' | tr ' ' '\n' | grep -v -- '-infra$' | grep . | head -1; }

# The kubelet's probes, from outside the pod: startup then readiness on the health port (8003),
# through its published port.
wait_ready() {
  local name=$1 ip start=$SECONDS health=$((8003 + ${OFFSET[$1]}))
  ip=$(pod_ip "$name")
  until node -e "fetch('http://127.0.0.1:$health/v2/health/ready').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"; do
    if [ "$(podman inspect "$(container_of "$name")" --format '{{.State.Running}}')" != true ]; then
      echo "pod $name stopped:" >&2; podman logs "$(container_of "$name")" 2>&1 | tail -30 >&2; exit 1
    fi
    [ $((SECONDS - start)) -lt 600 ] || { echo "pod $name not ready after 600 s (startupProbe allows 120 x 5 s)" >&2; exit 1; }
    sleep 1
  done
  echo "pod $name ($ip): startup/readiness probe GET :8003/v2/health/ready (published 127.0.0.1:$health) passed after $((SECONDS - start)) s"
  # podman turns the livenessProbe into a healthcheck, but as `curl -f http://localhost:0/...` (the
  # named port is lost, and the image has no curl): it reports unhealthy, so the kubelet's GET is made here.
  echo "pod $name: podman healthcheck from the livenessProbe: $(podman healthcheck run "$(container_of "$name")" 2>&1 || true) ($(podman inspect "$(container_of "$name")" --format '{{if .Config.Healthcheck}}{{.Config.Healthcheck.Test}}{{end}}'))"
  node -e "fetch('http://127.0.0.1:$health/v2/health/live').then(r => { console.log('pod $name: livenessProbe GET :8003/v2/health/live ' + r.status); process.exit(r.ok ? 0 : 1); })"
}

infer() {
  local name=$1 http=$((8000 + ${OFFSET[$1]})) metrics=$((8002 + ${OFFSET[$1]}))
  node -e "
fetch('http://127.0.0.1:$http/v2/models/sentiment_ensemble/infer', { method: 'POST', headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ inputs: [{ name: 'TEXT', datatype: 'BYTES', shape: [1, 1], data: ['The pods came up and answered.'] }] }) })
  .then(async (r) => { const t = await r.text(); console.log('pod $name: POST 127.0.0.1:$http/v2/models/sentiment_ensemble/infer ' + r.status + ' ' + t.slice(0, 160)); process.exit(r.ok ? 0 : 1); })"
  node -e "fetch('http://127.0.0.1:$metrics/metrics').then(r => r.text()).then(t => console.log('pod $name: ' + t.split('\n').filter(l => l.startsWith('nv_inference_request_success{model=\"sentiment_ensemble\"')).join(' ')))"
}

step "podman kube play (pod 1 of the Deployment)"
play tritium
wait_ready tritium
infer tritium

# ---- 3. scale to two pods
step "scale to two pods: the Deployment played again as tritium-2"
play tritium-2
wait_ready tritium-2
for n in "${NAMES[@]}"; do infer "$n"; done
podman pod ps --format '{{.Name}} {{.Status}} {{.NumberOfContainers}} containers (infra + tritium)' | grep tritium | sed 's/^/  /'

# ---- 4. what the runtime took from the pod spec
step "the pod spec as podman ran it"
C=$(container_of tritium)
podman inspect "$C" --format '  user {{.Config.User}}, read-only root {{.HostConfig.ReadonlyRootfs}}, caps dropped {{.HostConfig.CapDrop}}, no-new-privileges {{.HostConfig.SecurityOpt}}, memory limit {{.HostConfig.Memory}}, stop timeout {{.Config.StopTimeout}} s, healthcheck {{if .Config.Healthcheck}}{{.Config.Healthcheck.Test}}{{else}}none{{end}}'
podman inspect "$C" --format '  mounts: {{range .Mounts}}{{.Destination}} ({{.Type}}) {{end}}'
podman exec "$C" sh -c 'echo "  inside: $(id), PID 1 = $(cat /proc/1/comm), /tmp writable: $(touch /tmp/x && echo yes), / writable: $(touch /x 2>/dev/null && echo yes || echo no), seccomp mode $(sed -n "s/^Seccomp:\t//p" /proc/self/status) (2 = filter)"'
# What the kubelet would have done and podman did not, read off the running containers for the list at the end.
STOP_TIMEOUT=$(podman inspect "$C" --format '{{.Config.StopTimeout}}')
HEALTHCHECK=$(podman inspect "$C" --format '{{if .Config.Healthcheck}}{{.Config.Healthcheck.Test}}{{else}}none{{end}}')
CPU=$(podman inspect "$C" --format 'CpuShares {{.HostConfig.CpuShares}}, CpuQuota {{.HostConfig.CpuQuota}}, MemoryReservation {{.HostConfig.MemoryReservation}}')
VOLUMES=$(for n in "${NAMES[@]}"; do podman inspect "$(container_of "$n")" --format "$n:{{range .Mounts}}{{.Name}}{{end}}"; done | paste -sd' ')
ANNOTATIONS=$(podman inspect "$C" --format '{{range $k, $v := .Config.Annotations}}{{$k}} {{end}}' | tr ' ' '\n' | grep -c '^prometheus\.io/' || true)

# ---- 5. take both down: SIGTERM, drain, exit 0, then the pods removed
step "podman pod stop (SIGTERM; each server drains within --exit-timeout-secs), podman kube down"
for n in "${NAMES[@]}"; do
  C=$(container_of "$n")
  P=$(pod_of "$n")
  # terminationGracePeriodSeconds (40) is not applied by podman (its stop timeout stays 10 s): given here.
  STOP_AT[$n]=$(date -u +%H:%M:%S.%3N)
  echo "pod $n: podman pod stop at ${STOP_AT[$n]} UTC (a preStop sleep of 5 s would delay the SIGTERM below)"
  podman pod stop -t 40 "$P" >/dev/null 2>&1
  code=$(podman inspect "$C" --format '{{.State.ExitCode}}')
  SIGTERM_AT[$n]=$(podman logs "$C" 2>&1 | sed -n 's/^I[0-9]* \([0-9:.]*\) .*Received SIGTERM.*/\1/p' | head -1)
  echo "pod $n: exit code $code; $(podman logs "$C" 2>&1 | grep -E 'Received SIGTERM|Server stopped|successfully unloaded' | wc -l) drain lines:"
  podman logs "$C" 2>&1 | grep -E 'Received SIGTERM|Server stopped' | sed 's/^/  /'
  [ "$code" = 0 ] || { echo "pod $n did not stop cleanly" >&2; exit 1; }
  podman kube down "$WORK/$n.play.yaml" >"$WORK/$n.down" 2>&1 || { cat "$WORK/$n.down" >&2; exit 1; }
  sed 's/^/  /' "$WORK/$n.down"
  rm -f "$WORK/$n.play.yaml"
  if podman pod exists "$P"; then echo "pod $P still exists" >&2; exit 1; fi
done
# The emptyDir became one named volume, shared by both pods: removed with the last of them.
if podman volume exists tmp; then podman volume rm tmp >/dev/null; echo "volume tmp (the emptyDir) removed"; fi
echo "both pods stopped with exit code 0 and removed"

# ---- 6. what podman kube play did not honour, each as observed above
step "not honoured by podman kube play $(podman --version | awk '{print $3}') (observed in this run)"
secs() { awk -F: '{ printf "%.3f", $1 * 3600 + $2 * 60 + $3 }' <<<"$1"; }
field() { sed -n "s/^ *$1: *\([^ #]*\).*/\1/p" "$DEPLOYMENT" | head -1; }
PRESTOP=$(for n in "${NAMES[@]}"; do awk -v a="$(secs "${STOP_AT[$n]}")" -v b="$(secs "${SIGTERM_AT[$n]:-0}")" -v n="$n" 'BEGIN { printf "%s %.2f s, ", n, b - a }'; done)
cat <<LIST
- kinds $(grep -h '^kind:' "$WORK"/manifests/*.yaml | grep -v Deployment | awk '{print $2}' | paste -sd, | sed 's/,/, /g'): not played (podman plays Pod, Deployment, ConfigMap, PersistentVolumeClaim)
- replicas and autoscaling: one pod per played Deployment; the second pod is the Deployment played again
- startupProbe, readinessProbe: not run, no readiness gate (the GETs above are the script's)
- livenessProbe: became the healthcheck $HEALTHCHECK (named port 'health' lost, no curl in the image); its timer needs systemd
- terminationGracePeriodSeconds $(field terminationGracePeriodSeconds): stop timeout $STOP_TIMEOUT s (the script stopped with -t 40)
- preStop sleep 5: SIGTERM reached the server ${PRESTOP%, } after podman pod stop
- emptyDir: one named volume shared by both pods ($VOLUMES); sizeLimit $(field sizeLimit) not applied
- resources.requests.cpu: not applied ($CPU: the memory request and limit are)
- topologySpreadConstraints, strategy (rolling update): no effect on one host; pod template annotations: $ANNOTATIONS of 3 prometheus.io/* on the container
LIST
step "done in ${SECONDS} s"
