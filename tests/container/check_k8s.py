"""What the Kubernetes example promises beyond the schemas (README, "Many
workspaces"): each check prints its name, and a broken one says what it
found. Run by tests/container/validate_k8s.sh with the manifests' paths."""

import sys

import yaml

docs = [doc for path in sys.argv[1:] for doc in yaml.safe_load_all(open(path)) if doc]
by_kind = {doc["kind"]: doc for doc in docs}
pod = by_kind["Deployment"]["spec"]["template"]["spec"]
(container,) = pod["containers"]
failed = 0
passed = 0


def check(name, found, wanted):
    global failed, passed
    if found == wanted:
        passed += 1
        print(f"check_k8s: ok: {name}")
    else:
        failed += 1
        print(f"check_k8s: FAILED: {name}: found {found!r}, wanted {wanted!r}")


check("liveness probes GET /healthz", container["livenessProbe"]["httpGet"], {"path": "/healthz", "port": "mcp"})
check("readiness probes GET /readyz", container["readinessProbe"]["httpGet"], {"path": "/readyz", "port": "mcp"})
check("the port is the image's 8000", container["ports"][0]["containerPort"], 8000)
check("the pod runs as 65534, not root", {k: pod["securityContext"][k] for k in ("runAsNonRoot", "runAsUser")},
      {"runAsNonRoot": True, "runAsUser": 65534})
security = container["securityContext"]
check("the container's security context",
      {k: security.get(k) for k in ("runAsNonRoot", "runAsUser", "readOnlyRootFilesystem",
                                     "allowPrivilegeEscalation", "capabilities", "seccompProfile")},
      {"runAsNonRoot": True, "runAsUser": 65534, "readOnlyRootFilesystem": True,
       "allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]},
       "seccompProfile": {"type": "RuntimeDefault"}})
mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
volumes = {v["name"]: v for v in pod["volumes"]}
check("/workspace and /tmp are emptyDirs",
      sorted(p for p, name in mounts.items() if "emptyDir" in volumes[name]), ["/tmp", "/workspace"])
token = next(e for e in container["env"] if e["name"] == "IKIGAI_TOOLS_MCP_TOKEN")
secret = by_kind["Secret"]
check("the token comes from the Secret",
      token["valueFrom"]["secretKeyRef"], {"name": secret["metadata"]["name"], "key": "token"})
check("no service account token in the pod", pod["automountServiceAccountToken"], False)
service = by_kind["Service"]
check("the Service selects the pod", service["spec"]["selector"],
      by_kind["Deployment"]["spec"]["template"]["metadata"]["labels"])
check("the Service leads to the port", service["spec"]["ports"][0]["targetPort"], container["ports"][0]["name"])
print(f"check_k8s: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
