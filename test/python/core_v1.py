"""CoreV1Api as scripts use it: namespaces and ConfigMaps created, read, listed (label and
field selectors, pages), patched three ways, replaced, and deleted with each propagation
policy, plus the errors a script meets (missing, duplicate, invalid, stale, bad selector).

Usage: core_v1.py NAMESPACE
"""

from kubernetes import client

from support import main, raw_json, until, with_code


def script(steps, argv):
    ns = argv[0]
    v1 = client.CoreV1Api()

    steps.run("create namespace", lambda: with_code(
        lambda: v1.create_namespace_with_http_info(
            client.V1Namespace(metadata=client.V1ObjectMeta(name=ns)))))
    steps.run("read namespace", lambda: v1.read_namespace(ns))
    steps.run("list namespaces by name", lambda: v1.list_namespace(
        field_selector="metadata.name=" + ns))

    web = client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name="web", labels={"app": "shop", "tier": "front"}),
        data={"colour": "blue"})
    steps.run("create", lambda: with_code(
        lambda: v1.create_namespaced_config_map_with_http_info(ns, web)))
    steps.run("create db", lambda: v1.create_namespaced_config_map(ns, client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name="db", labels={"app": "shop", "tier": "back"}))))
    steps.run("read", lambda: v1.read_namespaced_config_map("web", ns))
    steps.run("read missing", lambda: v1.read_namespaced_config_map("missing", ns))
    steps.run("create duplicate", lambda: v1.create_namespaced_config_map(ns, web))
    steps.run("create invalid name", lambda: v1.create_namespaced_config_map(
        ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="Not_A_Name"))))

    def names(listed):
        return [item.metadata.name for item in listed.items]

    steps.run("list", lambda: v1.list_namespaced_config_map(ns))
    steps.run("list app=shop,tier=front", lambda: names(
        v1.list_namespaced_config_map(ns, label_selector="app=shop,tier=front")))
    steps.run("list tier in (front,back)", lambda: names(
        v1.list_namespaced_config_map(ns, label_selector="tier in (front,back)")))
    steps.run("list tier!=front", lambda: names(
        v1.list_namespaced_config_map(ns, label_selector="tier!=front")))
    steps.run("list !tier", lambda: names(
        v1.list_namespaced_config_map(ns, label_selector="!tier")))
    steps.run("list all namespaces by field", lambda: names(
        v1.list_config_map_for_all_namespaces(field_selector="metadata.namespace=" + ns)))
    steps.run("list unknown field", lambda: v1.list_namespaced_config_map(
        ns, field_selector="data.colour=blue"))
    steps.run("list bad label selector", lambda: v1.list_namespaced_config_map(
        ns, label_selector="tier in front"))

    first = steps.run("list page 1", lambda: v1.list_namespaced_config_map(ns, limit=1))
    if first is not None:
        steps.run("list page 2", lambda: v1.list_namespaced_config_map(
            ns, limit=1, _continue=first.metadata._continue))

    # After the lists: where the server differs, these may be stored.
    steps.run("create with a resourceVersion", lambda: v1.create_namespaced_config_map(
        ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="versioned",
                                                            resource_version="5"))))
    steps.run("create with an invalid key", lambda: v1.create_namespaced_config_map(
        ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="badkey"),
                               data={"bad key": "1"})))
    steps.run("create immutable", lambda: v1.create_namespaced_config_map(ns, client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name="frozen"), data={"a": "1"}, immutable=True)))
    steps.run("patch immutable data", lambda: v1.patch_namespaced_config_map(
        "frozen", ns, {"data": {"a": "2"}}))

    # The generated client sends a list body as a JSON patch and a dict as a strategic merge
    # patch; a merge patch takes the Content-Type header set on the ApiClient (22.x has no
    # per-call content type).
    steps.run("json patch", lambda: v1.patch_namespaced_config_map(
        "web", ns, [{"op": "add", "path": "/data/size", "value": "L"}]))
    steps.run("json patch failing test", lambda: v1.patch_namespaced_config_map(
        "web", ns, [{"op": "test", "path": "/data/colour", "value": "red"}]))
    steps.run("strategic merge patch", lambda: v1.patch_namespaced_config_map(
        "web", ns, {"data": {"shape": "round"}, "metadata": {"labels": {"tier": None}}}))
    merging = client.ApiClient()
    merging.set_default_header("Content-Type", "application/merge-patch+json")
    steps.run("merge patch", lambda: client.CoreV1Api(merging).patch_namespaced_config_map(
        "web", ns, {"data": {"colour": "green", "size": None}}))
    steps.run("strategic merge patch removing the last label", lambda: raw_json(
        v1.patch_namespaced_config_map(
            "db", ns, {"metadata": {"labels": {"app": None, "tier": None}}},
            _preload_content=False)))
    steps.run("patch with force", lambda: v1.patch_namespaced_config_map(
        "web", ns, {"data": {"colour": "red"}}, force=True))

    current = steps.run("read before replace", lambda: v1.read_namespaced_config_map("web", ns))
    if current is not None:
        current.data["colour"] = "yellow"
        stale = client.V1ConfigMap(metadata=client.V1ObjectMeta(
            name="web", resource_version="1"), data={"colour": "black"})
        steps.run("replace", lambda: v1.replace_namespaced_config_map("web", ns, current))
        steps.run("replace stale", lambda: v1.replace_namespaced_config_map("web", ns, stale))

    steps.run("delete", lambda: v1.delete_namespaced_config_map("web", ns))
    steps.run("delete missing", lambda: v1.delete_namespaced_config_map("web", ns))

    def gone(name):
        try:
            v1.read_namespaced_config_map(name, ns)
        except client.ApiException as error:
            if error.status == 404:
                return True
            raise
        return None

    def read(name):
        return v1.read_namespaced_config_map(name, ns)

    for policy in ("Foreground", "Background", "Orphan"):
        key = policy.lower()
        owner = v1.create_namespaced_config_map(
            ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="owner-" + key)))
        v1.create_namespaced_config_map(ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(
            name="child-" + key,
            owner_references=[client.V1OwnerReference(
                api_version="v1", kind="ConfigMap", name=owner.metadata.name,
                uid=owner.metadata.uid)])))
        # The answer is read as sent: the generated method would cast an object to V1Status.
        steps.run("delete " + key, lambda: raw_json(v1.delete_namespaced_config_map(
            "owner-" + key, ns, body=client.V1DeleteOptions(propagation_policy=policy),
            _preload_content=False)))
        steps.run("delete %s: owner gone" % key, lambda: until(
            lambda: gone("owner-" + key), "owner-" + key + " to go"))
        if policy == "Orphan":
            steps.run("delete orphan: child", lambda: read("child-orphan"))
        else:
            steps.run("delete %s: child gone" % key, lambda: until(
                lambda: gone("child-" + key), "child-" + key + " to go"))

    # A namespace being emptied refuses a second delete (namespace storage's Delete).
    gone = ns + "-gone"
    v1.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=gone)))
    steps.run("delete namespace", lambda: raw_json(v1.delete_namespace(
        gone, _preload_content=False)))
    steps.run("delete namespace again", lambda: v1.delete_namespace(gone))

    steps.run("delete with a stale uid precondition", lambda: v1.delete_namespaced_config_map(
        "db", ns, body=client.V1DeleteOptions(
            preconditions=client.V1Preconditions(uid="00000000-0000-0000-0000-000000000000"))))
    steps.run("delete with propagation_policy=", lambda: v1.delete_namespaced_config_map(
        "db", ns, propagation_policy="Background"))


if __name__ == "__main__":
    main(script)
