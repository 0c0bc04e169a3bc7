"""CustomObjectsApi on this project's CRDs (platform.nrn.dev/v1alpha1), read through
ApiextensionsV1Api first: Scopes and an
Application created, read, listed with label selectors (in a namespace and across all of
them), patched (a merge patch: the method's one content type), their status subresource
patched and replaced, refused when the schema refuses them, and deleted.

Usage: custom_objects.py NAMESPACE
"""

from kubernetes import client

from support import create_namespace, main, with_code

GROUP, VERSION = "platform.nrn.dev", "v1alpha1"


def scope(name, labels):
    return {
        "apiVersion": "%s/%s" % (GROUP, VERSION), "kind": "Scope",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "name": name, "type": "web_pool", "application_id": 10,
            "requested_spec": {"memory_in_gb": 2, "cpu_profile": "standard",
                               "local_storage_in_gb": 10},
        },
    }


def script(steps, argv):
    ns = argv[0]
    create_namespace(ns)
    custom = client.CustomObjectsApi()

    def names(listed):
        return sorted(item["metadata"]["name"] for item in listed["items"])

    steps.run("read the CRD", lambda: client.ApiextensionsV1Api().read_custom_resource_definition(
        "scopes.platform.nrn.dev"))
    steps.run("create application", lambda: custom.create_namespaced_custom_object(
        GROUP, VERSION, ns, "applications", {
            "apiVersion": "%s/%s" % (GROUP, VERSION), "kind": "Application",
            "metadata": {"name": "checkout"},
            "spec": {"id": 10, "name": "checkout",
                     "nrn": "organization=1:account=2:namespace=3:application=10"}}))
    steps.run("create", lambda: with_code(
        lambda: custom.create_namespaced_custom_object_with_http_info(
            GROUP, VERSION, ns, "scopes", scope("web", {"tier": "front", "team": "a"}))))
    steps.run("create db", lambda: custom.create_namespaced_custom_object(
        GROUP, VERSION, ns, "scopes", scope("db", {"tier": "back", "team": "a"})))
    steps.run("create invalid", lambda: custom.create_namespaced_custom_object(
        GROUP, VERSION, ns, "scopes", dict(scope("bad", {}), spec={
            "name": "bad", "type": "mainframe", "application_id": -1, "requested_spec": {}})))
    steps.run("create duplicate", lambda: custom.create_namespaced_custom_object(
        GROUP, VERSION, ns, "scopes", scope("web", {})))
    steps.run("get", lambda: custom.get_namespaced_custom_object(
        GROUP, VERSION, ns, "scopes", "web"))
    steps.run("get missing", lambda: custom.get_namespaced_custom_object(
        GROUP, VERSION, ns, "scopes", "missing"))
    steps.run("get application", lambda: custom.get_namespaced_custom_object(
        GROUP, VERSION, ns, "applications", "checkout"))

    steps.run("list", lambda: custom.list_namespaced_custom_object(GROUP, VERSION, ns, "scopes"))
    steps.run("list tier=front", lambda: names(custom.list_namespaced_custom_object(
        GROUP, VERSION, ns, "scopes", label_selector="tier=front")))
    steps.run("list team=a,tier!=front", lambda: names(custom.list_namespaced_custom_object(
        GROUP, VERSION, ns, "scopes", label_selector="team=a,tier!=front")))
    steps.run("list tier in (front,back)", lambda: names(custom.list_namespaced_custom_object(
        GROUP, VERSION, ns, "scopes", label_selector="tier in (front,back)")))
    steps.run("list all namespaces tier=back", lambda: [
        [item["metadata"]["namespace"], item["metadata"]["name"]]
        for item in custom.list_cluster_custom_object(
            GROUP, VERSION, "scopes", label_selector="tier=back")["items"]
        if item["metadata"]["namespace"] == ns])
    steps.run("list by name", lambda: names(custom.list_namespaced_custom_object(
        GROUP, VERSION, ns, "scopes", field_selector="metadata.name=db")))
    steps.run("list by an unknown field", lambda: custom.list_namespaced_custom_object(
        GROUP, VERSION, ns, "scopes", field_selector="spec.type=web_pool"))

    steps.run("patch spec", lambda: custom.patch_namespaced_custom_object(
        GROUP, VERSION, ns, "scopes", "web", {"spec": {"tier": "critical"},
                                              "status": {"status": "active"}}))
    steps.run("patch status", lambda: custom.patch_namespaced_custom_object_status(
        GROUP, VERSION, ns, "scopes", "web", {"status": {"status": "active", "id": 42},
                                              "spec": {"tier": "testing"}}))
    steps.run("patch invalid status", lambda: custom.patch_namespaced_custom_object_status(
        GROUP, VERSION, ns, "scopes", "web", {"status": {"status": "sleeping"}}))
    current = steps.run("get status", lambda: custom.get_namespaced_custom_object_status(
        GROUP, VERSION, ns, "scopes", "web"))
    if current is not None:
        current["status"]["slug"] = "web"
        steps.run("replace status", lambda: custom.replace_namespaced_custom_object_status(
            GROUP, VERSION, ns, "scopes", "web", current))

    unversioned = scope("web", {"tier": "front", "team": "a"})
    steps.run("replace without resourceVersion", lambda: custom.replace_namespaced_custom_object(
        GROUP, VERSION, ns, "scopes", "web", unversioned))

    steps.run("delete", lambda: custom.delete_namespaced_custom_object(
        GROUP, VERSION, ns, "scopes", "db"))
    steps.run("delete missing", lambda: custom.delete_namespaced_custom_object(
        GROUP, VERSION, ns, "scopes", "db"))


if __name__ == "__main__":
    main(script)
