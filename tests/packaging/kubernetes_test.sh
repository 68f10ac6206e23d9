#!/usr/bin/env bash
# Validates packaging/kubernetes/*.yaml offline against the Kubernetes API
# schema (kubernetes-validate from PyPI, pinned; strict: an unknown field is an
# error) for two Kubernetes versions, and checks what no schema can: the
# ServiceMonitor (a CRD) selects the exporter's Service and names its port, and
# both DaemonSets run the images' own programs. Prints the exporter
# DaemonSet's command line (for tests/packaging/images_test.sh) on the last line.
set -euo pipefail
cd "$(dirname "$0")/../.."

validator_version=1.37.0
venv="${ZEUS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/zeus-native}/kubernetes-validate-$validator_version"
if [ ! -x "$venv/bin/kubernetes-validate" ]; then
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet "kubernetes-validate==$validator_version" >&2
fi
for k in 1.28.0 1.33.0; do
  "$venv/bin/kubernetes-validate" --strict --quiet -k "$k" $(ls packaging/kubernetes/*.yaml | grep -v /kustomization.yaml) >&2 \
    || { echo "kubernetes_test: FAIL: packaging/kubernetes/ does not validate for Kubernetes $k" >&2; exit 1; }
done
# The attribution overlay (packaging/kubernetes-attribution/), rendered by
# kubectl's kustomize: valid too, with --attribution, hostPID and the
# kubelet's pod-resources folder mounted read-only where the exporter looks.
if command -v kubectl >/dev/null 2>&1; then
  rendered="$(mktemp)"
  trap 'rm -f "$rendered"' EXIT
  kubectl kustomize packaging/kubernetes-attribution/ > "$rendered" \
    || { echo "kubernetes_test: FAIL: packaging/kubernetes-attribution/ does not render" >&2; exit 1; }
  for k in 1.28.0 1.33.0; do
    "$venv/bin/kubernetes-validate" --strict --quiet -k "$k" "$rendered" >&2 \
      || { echo "kubernetes_test: FAIL: packaging/kubernetes-attribution/ does not validate for Kubernetes $k" >&2; exit 1; }
  done
  "$venv/bin/python" - "$rendered" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
spec = next(d for d in docs if d["kind"] == "DaemonSet" and d["metadata"]["name"] == "zeus-exporter")["spec"]["template"]["spec"]
container = spec["containers"][0]
def fail(msg):
    print("kubernetes_test: FAIL: packaging/kubernetes-attribution/: " + msg, file=sys.stderr); sys.exit(1)
if "--attribution" not in container["args"]: fail(f"the exporter runs without --attribution: {container['args']}")
if spec.get("hostPID") is not True: fail("no hostPID: NVML's host PIDs would name no process")
mounts = {m["mountPath"]: m for m in container.get("volumeMounts", [])}
socket_dir = "/var/lib/kubelet/pod-resources"  # where the exporter's --kubelet-socket points by default
if socket_dir not in mounts or mounts[socket_dir].get("readOnly") is not True:
    fail(f"{socket_dir} is not mounted read-only: {mounts}")
PY
fi
"$venv/bin/python" - <<'PY'
import glob, json, sys, yaml
manifests = sorted(f for f in glob.glob("packaging/kubernetes/*.yaml") if not f.endswith("/kustomization.yaml"))
docs = [d for f in manifests for d in yaml.safe_load_all(open(f)) if d]
by_kind = {}
for d in docs:
    by_kind.setdefault(d["kind"], {})[d["metadata"]["name"]] = d
def fail(msg):
    print("kubernetes_test: FAIL: " + msg, file=sys.stderr); sys.exit(1)
service = by_kind["Service"]["zeus-exporter"]
monitor = by_kind["ServiceMonitor"]["zeus-exporter"]
labels = service["metadata"]["labels"]
for k, v in monitor["spec"]["selector"]["matchLabels"].items():
    if labels.get(k) != v: fail(f"the ServiceMonitor selects {k}={v}, the Service is labelled {labels}")
ports = {p["name"] for p in service["spec"]["ports"]}
for e in monitor["spec"]["endpoints"]:
    if e["port"] not in ports: fail(f"the ServiceMonitor scrapes port {e['port']}, the Service has {ports}")
exporter = by_kind["DaemonSet"]["zeus-exporter"]["spec"]["template"]["spec"]["containers"][0]
zeusd = by_kind["DaemonSet"]["zeusd"]["spec"]["template"]["spec"]["containers"][0]
if exporter["command"][:2] != ["zeus", "exporter"]: fail(f"the exporter runs {exporter['command']}")
if zeusd["command"] != ["zeusd"] or zeusd["args"][0] != "serve": fail(f"zeusd runs {zeusd['command']} {zeusd['args']}")
if not any(p["containerPort"] == 9466 for p in exporter["ports"]): fail("the exporter container does not expose 9466")
# A default kube-prometheus-stack selects ServiceMonitors by its Helm release's name.
if monitor["metadata"]["labels"].get("release") != "kube-prometheus-stack":
    fail("the ServiceMonitor has no release: kube-prometheus-stack label, so a default kube-prometheus-stack ignores it")
# The images come from one place: kustomization.yaml lists each image the
# manifests name, with the manifests' tag (scripts/render-manifests.sh rewrites
# the same references).
kustomization = yaml.safe_load(open("packaging/kubernetes/kustomization.yaml"))
if sorted(kustomization["resources"]) != sorted(f.rsplit("/", 1)[1] for f in manifests):
    fail(f"kustomization.yaml's resources {kustomization['resources']} are not the manifests {manifests}")
listed = {i["name"]: i for i in kustomization["images"]}
for d in docs:
    for c in d.get("spec", {}).get("template", {}).get("spec", {}).get("containers", []):
        name, _, tag = c["image"].rpartition(":")
        if name not in listed: fail(f"{c['image']} is not in kustomization.yaml's images")
        if listed[name].get("newTag") != tag: fail(f"{c['image']}: kustomization.yaml says tag {listed[name].get('newTag')}")
print(json.dumps(exporter["command"] + exporter["args"]))
PY
