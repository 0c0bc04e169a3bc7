"""Secrets from the Python client: string_data given on create, patch and replace is merged
into data (base64 of its UTF-8, over a key of the same name) and never stored or returned;
type defaults to Opaque and is a field selector.

Usage: secret_string_data.py NAMESPACE
"""

import base64

from kubernetes import client

from support import create_namespace, main


def b64(text):
    return base64.b64encode(text.encode("utf8")).decode("ascii")


def script(steps, argv):
    ns = argv[0]
    create_namespace(ns)
    v1 = client.CoreV1Api()

    steps.run("create", lambda: v1.create_namespaced_secret(ns, client.V1Secret(
        metadata=client.V1ObjectMeta(name="db"),
        data={"user": b64("overwritten"), "host": b64("db.local")},
        string_data={"user": "admin", "password": "pässwörd"})))
    steps.run("read", lambda: v1.read_namespaced_secret("db", ns))
    steps.run("strategic merge patch", lambda: v1.patch_namespaced_secret(
        "db", ns, {"stringData": {"password": "rotated"}}))
    merging = client.ApiClient()
    merging.set_default_header("Content-Type", "application/merge-patch+json")
    steps.run("merge patch", lambda: client.CoreV1Api(merging).patch_namespaced_secret(
        "db", ns, {"stringData": {"port": "5432"}}))
    current = steps.run("read before replace", lambda: v1.read_namespaced_secret("db", ns))
    if current is not None:
        current.string_data = {"host": "replica.local"}
        steps.run("replace", lambda: v1.replace_namespaced_secret("db", ns, current))
    steps.run("create typed", lambda: v1.create_namespaced_secret(ns, client.V1Secret(
        metadata=client.V1ObjectMeta(name="tls-like"), type="example.com/token",
        string_data={"token": "t"})))
    steps.run("list type=Opaque", lambda: [
        item.metadata.name
        for item in v1.list_namespaced_secret(ns, field_selector="type=Opaque").items])
    steps.run("list by an unknown field", lambda: v1.list_namespaced_secret(
        ns, field_selector="data.user=x"))
    steps.run("create with data that is not base64", lambda: v1.create_namespaced_secret(
        ns, {"metadata": {"name": "garbled"}, "data": {"key": "not base64!"}}))


if __name__ == "__main__":
    main(script)
