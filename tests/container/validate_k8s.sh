#!/usr/bin/env bash
# Validates the Kubernetes example (deploy/kubernetes/*.yaml) against the
# Kubernetes schemas that kubernetes-validate ships (offline), strictly: an
# unknown field fails. Then checks what the example promises (README, "Many
# workspaces"): probes on /healthz and /readyz, the security context.
#
#   tests/container/validate_k8s.sh
#
# The virtual environment lives in target/k8s-venv (K8S_VENV=DIR puts it
# elsewhere), made on the first run with the pinned versions below.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="${K8S_VENV:-$root/target/k8s-venv}"
pins=("kubernetes-validate==1.37.0" "jsonschema==4.26.0" "PyYAML==6.0.4")
# The oldest Kubernetes release still maintained when this was written, and
# the newest the package knows.
versions=(1.33.0 1.37.0)

. "$root/tests/pinned_venv.sh"
VENV_VAR=K8S_VENV pinned_venv tests/container/validate_k8s "$venv" "${pins[@]}"

manifests=("$root"/deploy/kubernetes/*.yaml)
for version in "${versions[@]}"; do
    "$venv/bin/kubernetes-validate" --strict --quiet -k "$version" "${manifests[@]}"
    echo "validate_k8s: ${#manifests[@]} manifests valid against Kubernetes $version (strict)"
done
exec "$venv/bin/python" "$here/check_k8s.py" "${manifests[@]}"
