"""watch.Watch().stream(...) as scripts use it: on namespaces, ConfigMaps and Scopes (a
custom resource), from a listed resourceVersion, resumed from the last one the Watch saw,
with a label selector, ended by timeout_seconds; and a resourceVersion older than the
server's watch window, which the client raises as ApiException 410, and the relist after it.

Usage: watch.py NAMESPACE WINDOW  (WINDOW: how many changes the server's watch window holds)
"""

import re

from kubernetes import client, watch

from support import create_namespace, main

GROUP, VERSION, SCOPES = "platform.nrn.dev", "v1alpha1", "scopes"


def collect(stream, count=None, name=None):
    """[type, name] of each event (of `name` only, if given), up to `count` of them."""
    seen = []
    for event in stream:
        obj = event["raw_object"]
        if name is not None and obj["metadata"]["name"] != name:
            continue
        seen.append([event["type"], obj["metadata"]["name"]])
        if count is not None and len(seen) >= count:
            break
    return seen


def scope(name):
    return {
        "apiVersion": "%s/%s" % (GROUP, VERSION), "kind": "Scope",
        "metadata": {"name": name},
        "spec": {"name": name, "type": "web_pool", "application_id": 3, "requested_spec": {}},
    }


def script(steps, argv):
    ns, window = argv[0], int(argv[1])
    create_namespace(ns)
    v1 = client.CoreV1Api()
    custom = client.CustomObjectsApi()
    other = ns + "-watched"

    # Namespaces: from a listed resourceVersion, and from now (every namespace ADDED first).
    listed = v1.list_namespace().metadata.resource_version
    v1.create_namespace({"metadata": {"name": other}})
    steps.run("namespaces from a resourceVersion", lambda: collect(
        watch.Watch().stream(v1.list_namespace, resource_version=listed, timeout_seconds=10),
        count=1, name=other))
    steps.run("namespaces until timeout_seconds", lambda: sorted(
        name for _, name in collect(watch.Watch().stream(v1.list_namespace, timeout_seconds=1))
        if name in (ns, other)))

    # ConfigMaps: the changes since a list, then resumed where the Watch left off.
    listed = v1.list_namespaced_config_map(ns).metadata.resource_version
    v1.create_namespaced_config_map(ns, {"metadata": {"name": "a"}})
    v1.create_namespaced_config_map(ns, {"metadata": {"name": "b"}})
    v1.patch_namespaced_config_map("a", ns, {"data": {"k": "1"}})
    v1.delete_namespaced_config_map("b", ns)
    configmaps = watch.Watch()
    steps.run("configmaps from a resourceVersion", lambda: collect(configmaps.stream(
        v1.list_namespaced_config_map, ns, resource_version=listed, timeout_seconds=10), 4))
    v1.patch_namespaced_config_map("a", ns, {"data": {"k": "2"}})
    steps.run("configmaps resumed", lambda: collect(configmaps.stream(
        v1.list_namespaced_config_map, ns, resource_version=configmaps.resource_version,
        timeout_seconds=10), 1))

    # A label selector: an object entering the selection is ADDED, leaving it DELETED.
    listed = v1.list_namespaced_config_map(ns).metadata.resource_version
    v1.patch_namespaced_config_map("a", ns, {"metadata": {"labels": {"watched": "yes"}}})
    v1.patch_namespaced_config_map("a", ns, {"metadata": {"labels": {"watched": "no"}}})
    steps.run("configmaps by label", lambda: collect(watch.Watch().stream(
        v1.list_namespaced_config_map, ns, label_selector="watched=yes",
        resource_version=listed, timeout_seconds=10), 2))

    # Custom objects, the status subresource's writes included.
    listed = custom.list_namespaced_custom_object(
        GROUP, VERSION, ns, SCOPES)["metadata"]["resourceVersion"]
    custom.create_namespaced_custom_object(GROUP, VERSION, ns, SCOPES, scope("watched"))
    custom.patch_namespaced_custom_object_status(
        GROUP, VERSION, ns, SCOPES, "watched", {"status": {"status": "active"}})
    scopes = watch.Watch()
    steps.run("scopes from a resourceVersion", lambda: collect(scopes.stream(
        custom.list_namespaced_custom_object, GROUP, VERSION, ns, SCOPES,
        resource_version=listed, timeout_seconds=10), 2))
    custom.delete_namespaced_custom_object(GROUP, VERSION, ns, SCOPES, "watched")
    steps.run("scopes resumed", lambda: collect(scopes.stream(
        custom.list_namespaced_custom_object, GROUP, VERSION, ns, SCOPES,
        resource_version=scopes.resource_version, timeout_seconds=10), 1))

    # Past the window: the server ends the watch with an ERROR event (410 Expired), which the
    # Watch raises; with timeout_seconds it does not retry. Then relist and watch again.
    expired = v1.list_namespaced_config_map(ns).metadata.resource_version
    for i in range(window + 5):
        v1.patch_namespaced_config_map("a", ns, {"data": {"k": "x%d" % i}})
    steps.run("watch from before the window", lambda: collect(watch.Watch().stream(
        v1.list_namespaced_config_map, ns, resource_version=expired, timeout_seconds=10)))
    # Without timeout_seconds the Watch retries once from its last resourceVersion: the same.
    steps.run("watch from before the window, retried by the client", lambda: collect(
        watch.Watch().stream(v1.list_namespaced_config_map, ns, resource_version=expired,
                             _request_timeout=30)))
    relisted = v1.list_namespaced_config_map(ns).metadata.resource_version
    v1.patch_namespaced_config_map("a", ns, {"data": {"k": "after"}})
    steps.run("watch after relisting", lambda: collect(watch.Watch().stream(
        v1.list_namespaced_config_map, ns, resource_version=relisted, timeout_seconds=10), 1))

    # The Status names the oldest resourceVersion a watch may still resume from.
    def oldest_resumable():
        try:
            collect(watch.Watch().stream(v1.list_namespaced_config_map, ns,
                                         resource_version=expired, timeout_seconds=10))
        except client.ApiException as error:
            return int(re.search(r"\((\d+)\)", error.reason).group(1))
        raise AssertionError("a watch from %s was not refused" % expired)

    oldest = steps.run("oldest resumable resourceVersion", oldest_resumable)
    if oldest is not None:
        steps.run("watch from the oldest resumable", lambda: collect(watch.Watch().stream(
            v1.list_namespaced_config_map, ns, resource_version=str(oldest),
            timeout_seconds=1)))
        steps.run("watch from just before it", lambda: collect(watch.Watch().stream(
            v1.list_namespaced_config_map, ns, resource_version=str(oldest - 1),
            timeout_seconds=1)))


if __name__ == "__main__":
    main(script)
