"""What every script of this suite shares: the cluster of the kubeconfig the local control
plane wrote (KUBECONFIG, read by config.load_kube_config as users' scripts read it), one JSON
document on stdout, and failures that say what happened.

Each script records every step's answer, or the error the client raised for it, under the
step's name; test/integration/python-client.test.ts asserts on them one by one, so a
difference from kube-apiserver fails the assertion about that step, not the whole script.
A script exits non-zero, with a message on stderr, only when it cannot run at all.
"""

import json
import sys
import time
import traceback

from kubernetes import client, config
from kubernetes.client.rest import ApiException
from kubernetes.dynamic.resource import Resource, ResourceInstance


def plain(value):
    """A client value as JSON: models under their wire names (camelCase), dates as text;
    the dynamic client's resources and objects as their own to_dict() gives them."""
    if isinstance(value, (Resource, ResourceInstance)):
        return value.to_dict()
    return client.ApiClient().sanitize_for_serialization(value)


def api_error(error):
    """What an ApiException carries: the HTTP status, its reason, and the Status body."""
    body = error.body
    if isinstance(body, bytes):
        body = body.decode("utf8", "replace")
    try:
        body = json.loads(body) if body else None
    except ValueError:
        pass
    return {"status": error.status, "reason": error.reason, "body": body}


class Steps:
    """Runs named steps, keeping each one's value or error for the JSON result."""

    def __init__(self):
        self.results = {}

    def run(self, name, action):
        """The step's value (None when it raised: the error is what is recorded)."""
        try:
            value = action()
        except ApiException as error:
            self.results[name] = {"error": api_error(error)}
            return None
        except Exception as error:  # noqa: BLE001 - recorded for the test to report
            self.results[name] = {
                "error": {
                    "exception": type(error).__name__,
                    "message": str(error),
                    "trace": traceback.format_exc(limit=4),
                }
            }
            return None
        self.results[name] = {"value": plain(value)}
        return value


def with_code(call):
    """A *_with_http_info call as {code, object}: creates answer 201, updates 200."""
    data, code, _headers = call()
    return {"code": code, "object": plain(data)}


def raw_json(response):
    """The JSON of a response read with _preload_content=False (what the server sent)."""
    return json.loads(response.data)


def until(condition, what, timeout=20.0):
    """Polls `condition` until it returns something other than None (background work)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value is not None:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError("gave up waiting for " + what)
        time.sleep(0.05)


def create_namespace(name):
    """The namespace a script works in; it may exist already (another script made it)."""
    try:
        client.CoreV1Api().create_namespace({"metadata": {"name": name}})
    except ApiException as error:
        if error.status != 409:
            raise


def main(script):
    """Runs `script(steps, argv)` against the cluster and prints what it recorded."""
    try:
        config.load_kube_config()
        steps = Steps()
        script(steps, sys.argv[1:])
    except Exception as error:  # noqa: BLE001 - the message is the script's failure report
        detail = api_error(error) if isinstance(error, ApiException) else repr(error)
        sys.stderr.write("%s could not run: %s\n" % (sys.argv[0], detail))
        traceback.print_exc()
        sys.exit(1)
    json.dump(steps.results, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")
