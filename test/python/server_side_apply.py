"""Server-side apply from the Python client: PATCH with application/apply-patch+yaml, a
field_manager, and force=True to take fields another manager owns, on a ConfigMap (CoreV1Api)
and on a Scope (CustomObjectsApi); conflicts, ownership in managedFields, and the options
kube-apiserver refuses.

The 22.x generated client picks a method's first patch content type itself and sends only
strings for a type without "json" in it, so an apply is made as its users make one: the
ApiClient's default Content-Type header set to application/apply-patch+yaml, and the body a
YAML (or JSON) string.

Usage: server_side_apply.py NAMESPACE
"""

import json

from kubernetes import client

from support import create_namespace, main, with_code

GROUP, VERSION, SCOPES = "platform.nrn.dev", "v1alpha1", "scopes"

CONFIG = """apiVersion: v1
kind: ConfigMap
metadata:
  name: applied
  labels: {owner: first}
data:
  colour: blue
  size: L
"""

LABEL_ONLY = """apiVersion: v1
kind: ConfigMap
metadata:
  name: applied
  labels: {owner: first}
"""

SECOND = """apiVersion: v1
kind: ConfigMap
metadata:
  name: applied
data:
  colour: red
"""


def scope(ns, tier):
    return json.dumps({
        "apiVersion": "%s/%s" % (GROUP, VERSION),
        "kind": "Scope",
        "metadata": {"name": "applied", "namespace": ns},
        "spec": {
            "name": "applied", "type": "web_pool", "application_id": 7, "tier": tier,
            "requested_spec": {"memory_in_gb": 1, "cpu_profile": "standard",
                               "local_storage_in_gb": 5},
        },
    })


def managers(obj):
    return sorted([entry.manager, entry.operation] for entry in obj.metadata.managed_fields)


def script(steps, argv):
    ns = argv[0]
    create_namespace(ns)
    applying = client.ApiClient()
    applying.set_default_header("Content-Type", "application/apply-patch+yaml")
    apply_v1 = client.CoreV1Api(applying)
    apply_custom = client.CustomObjectsApi(applying)
    v1 = client.CoreV1Api()

    steps.run("apply creates", lambda: with_code(
        lambda: apply_v1.patch_namespaced_config_map_with_http_info(
            "applied", ns, CONFIG, field_manager="first")))
    steps.run("apply again", lambda: with_code(
        lambda: apply_v1.patch_namespaced_config_map_with_http_info(
            "applied", ns, CONFIG, field_manager="first")))
    steps.run("apply conflicting", lambda: apply_v1.patch_namespaced_config_map(
        "applied", ns, SECOND, field_manager="second"))
    steps.run("apply conflicting with force=False", lambda: apply_v1.patch_namespaced_config_map(
        "applied", ns, SECOND, field_manager="second", force=False))
    forced = steps.run("apply with force=True", lambda: apply_v1.patch_namespaced_config_map(
        "applied", ns, SECOND, field_manager="second", force=True))
    if forced is not None:
        steps.run("managers after force", lambda: managers(forced))
    # The first manager stops applying both keys: the one it alone owned goes, the one the
    # second took stays.
    steps.run("apply dropping fields", lambda: apply_v1.patch_namespaced_config_map(
        "applied", ns, LABEL_ONLY, field_manager="first"))
    steps.run("apply without field_manager", lambda: apply_v1.patch_namespaced_config_map(
        "applied", ns, CONFIG))
    steps.run("update by another client", lambda: v1.patch_namespaced_config_map(
        "applied", ns, {"data": {"colour": "green"}}))
    steps.run("apply after an update", lambda: apply_v1.patch_namespaced_config_map(
        "applied", ns, SECOND, field_manager="second"))

    steps.run("apply creates a scope", lambda: apply_custom.patch_namespaced_custom_object(
        GROUP, VERSION, ns, SCOPES, "applied", scope(ns, "testing"), field_manager="first"))
    steps.run("apply a scope conflicting", lambda: apply_custom.patch_namespaced_custom_object(
        GROUP, VERSION, ns, SCOPES, "applied", scope(ns, "critical"), field_manager="second"))
    steps.run("apply a scope with force=True", lambda: apply_custom.patch_namespaced_custom_object(
        GROUP, VERSION, ns, SCOPES, "applied", scope(ns, "critical"), field_manager="second",
        force=True))
    steps.run("apply an invalid scope", lambda: apply_custom.patch_namespaced_custom_object(
        GROUP, VERSION, ns, SCOPES, "applied", scope(ns, "sometimes"), field_manager="first",
        force=True))


if __name__ == "__main__":
    main(script)
