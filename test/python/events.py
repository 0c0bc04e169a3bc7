"""Events (core/v1) created the way controllers record them and listed with the field
selectors kube-apiserver supports for Events (involvedObject.*, reason, type, source,
reportingComponent, metadata.*), and a field it does not support; their times as stored.

Usage: events.py NAMESPACE
"""

import datetime

from kubernetes import client

from support import create_namespace, main, raw_json


def script(steps, argv):
    ns = argv[0]
    create_namespace(ns)
    v1 = client.CoreV1Api()
    cm = v1.create_namespaced_config_map(ns, {"metadata": {"name": "subject"}})

    def event(name, kind, obj, reason, kind_of_event, **extra):
        return client.CoreV1Event(
            metadata=client.V1ObjectMeta(name=name),
            involved_object=client.V1ObjectReference(
                api_version="v1", kind=kind, name=obj, namespace=ns,
                uid=cm.metadata.uid if obj == "subject" else None),
            reason=reason, message="%s happened" % reason, type=kind_of_event, **extra)

    steps.run("create", lambda: v1.create_namespaced_event(ns, event(
        "subject.1", "ConfigMap", "subject", "Created", "Normal",
        source=client.V1EventSource(component="py-controller"))))
    steps.run("create reported", lambda: v1.create_namespaced_event(ns, event(
        "subject.2", "ConfigMap", "subject", "Failed", "Warning",
        reporting_component="py-reporter", reporting_instance="py-reporter-1")))
    steps.run("create other", lambda: v1.create_namespaced_event(ns, event(
        "other.1", "Secret", "other", "Created", "Normal",
        source=client.V1EventSource(component="py-controller"))))

    def names(selector):
        return sorted(
            item.metadata.name
            for item in v1.list_namespaced_event(ns, field_selector=selector).items)

    for selector in (
        "involvedObject.name=subject",
        "involvedObject.kind=ConfigMap,involvedObject.name=subject",
        "involvedObject.uid=" + cm.metadata.uid,
        "involvedObject.namespace=" + ns,
        "involvedObject.apiVersion=v1",
        "reason=Created",
        "type=Warning",
        "type!=Warning",
        "source=py-controller",
        "source=py-reporter",
        "reportingComponent=py-reporter",
        "metadata.name=other.1",
        "involvedObject.name=subject,reason!=Created",
    ):
        steps.run("list " + selector, lambda: names(selector))
    steps.run("list all namespaces reason=Failed", lambda: sorted(
        item.metadata.name
        for item in v1.list_event_for_all_namespaces(field_selector="reason=Failed").items
        if item.metadata.namespace == ns))
    steps.run("list by an unknown field", lambda: names("message=x"))

    # Times as the client sends them: microseconds and a +00:00 offset.
    when = datetime.datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=datetime.timezone.utc)
    v1.create_namespaced_event(ns, event(
        "timed.1", "ConfigMap", "timed", "Timed", "Normal", first_timestamp=when,
        last_timestamp=when, count=1))
    steps.run("read times", lambda: {
        key: value for key, value in raw_json(v1.read_namespaced_event(
            "timed.1", ns, _preload_content=False)).items()
        if key in ("firstTimestamp", "lastTimestamp", "eventTime")})


if __name__ == "__main__":
    main(script)
