"""kubernetes.dynamic.DynamicClient: discovery (the server's version, each served group's
resources found by api_version and kind), then get, create, list, patch, server-side apply,
delete and watch through the Resource objects it hands out, on a Scope and a ConfigMap.

Its discovery cache goes to a file of the caller's (argv[2]), so that no cache of another
run, kept in the temporary directory under the server's URL, answers for this server.

Usage: dynamic_client.py NAMESPACE CACHE_FILE
"""

import json

from kubernetes import client, dynamic

from support import create_namespace, main


def script(steps, argv):
    ns, cache_file = argv[0], argv[1]
    create_namespace(ns)
    dyn = dynamic.DynamicClient(client.ApiClient(), cache_file=cache_file)

    steps.run("version", lambda: dyn.version)
    found = {}
    for api_version, kind in (
        ("v1", "Namespace"), ("v1", "ConfigMap"), ("v1", "Secret"), ("v1", "Event"),
        ("v1", "ServiceAccount"), ("coordination.k8s.io/v1", "Lease"),
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
        ("platform.nrn.dev/v1alpha1", "Scope"), ("platform.nrn.dev/v1alpha1", "Application"),
        ("platform.nrn.dev/v1alpha1", "Service"),
        ("platform.nrn.dev/v1alpha1", "ServiceSpecification"),
    ):
        key = "%s %s" % (api_version, kind)
        found[key] = steps.run("discover " + key, lambda: dyn.resources.get(
            api_version=api_version, kind=kind))
    steps.run("discover a kind not served", lambda: dyn.resources.get(
        api_version="platform.nrn.dev/v1alpha1", kind="Cluster"))
    steps.run("search by short name", lambda: [
        r.kind for r in dyn.resources.search(short_names=["nscope"])])

    scopes = found["platform.nrn.dev/v1alpha1 Scope"]
    configmaps = found["v1 ConfigMap"]
    if scopes is None or configmaps is None:
        return

    body = {
        "apiVersion": "platform.nrn.dev/v1alpha1", "kind": "Scope",
        "metadata": {"name": "dynamic", "namespace": ns, "labels": {"via": "dynamic"}},
        "spec": {"name": "dynamic", "type": "serverless", "application_id": 5,
                 "requested_spec": {}},
    }
    listed = steps.run("list empty", lambda: scopes.get(namespace=ns))
    steps.run("create", lambda: scopes.create(body=body, namespace=ns))
    steps.run("get", lambda: scopes.get(name="dynamic", namespace=ns))
    steps.run("get missing", lambda: scopes.get(name="missing", namespace=ns))
    steps.run("list by label", lambda: [
        item.metadata.name
        for item in scopes.get(namespace=ns, label_selector="via=dynamic").items])
    steps.run("merge patch", lambda: scopes.patch(
        body={"metadata": {"name": "dynamic"}, "spec": {"tier": "important"}}, namespace=ns,
        content_type="application/merge-patch+json"))
    steps.run("json patch", lambda: scopes.patch(
        body=[{"op": "replace", "path": "/spec/tier", "value": "critical"}], name="dynamic",
        namespace=ns, content_type="application/json-patch+json"))
    # The dynamic client's default patch type; custom resources have no strategic merge.
    steps.run("strategic merge patch", lambda: scopes.patch(
        body={"metadata": {"name": "dynamic"}, "spec": {"tier": "testing"}}, namespace=ns))
    steps.run("patch status", lambda: scopes.status.patch(
        body={"metadata": {"name": "dynamic"}, "status": {"status": "active"}}, namespace=ns,
        content_type="application/merge-patch+json"))
    # server_side_apply sends a dict it cannot encode as YAML in 22.x ("Cannot prepare a
    # request message"): its callers pass the applied configuration as JSON text.
    applied = json.dumps({
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dynamic"},
        "data": {"applied": "yes"}})
    steps.run("server side apply", lambda: configmaps.server_side_apply(
        body=applied, name="dynamic", namespace=ns, field_manager="dynamic",
        force_conflicts=True))
    steps.run("delete", lambda: scopes.delete(name="dynamic", namespace=ns))
    if listed is not None:
        steps.run("watch", lambda: [
            [event["type"], event["object"].metadata.name]
            for event in scopes.watch(
                namespace=ns, resource_version=listed.metadata.resourceVersion, timeout=2)])


if __name__ == "__main__":
    main(script)
