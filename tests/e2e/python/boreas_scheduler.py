"""A Boreas-style scheduler written with the official Kubernetes Python client (Debian's
python3-kubernetes), run by python_client_e2e_test against `kubesched apiserver`.

It does what the Boreas thesis's scheduler did through this client: list the nodes, list the pods
page by page (limit/continue), bind the unscheduled pods of its scheduler name, then watch from
the list's resourceVersion and bind each new one with create_namespaced_binding (POST
/api/v1/namespaces/{ns}/bindings). It prints one line per step for the test to read, and exits 0
once `--expect` pods are bound (1 on any error).

    boreas_scheduler.py --kubeconfig FILE --scheduler-name NAME --expect N
"""

import argparse
import sys

from kubernetes import client, config, watch


def cpu_millis(quantity):
    if quantity.endswith("m"):
        return int(quantity[:-1])
    return int(float(quantity) * 1000)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--scheduler-name", required=True)
    parser.add_argument("--expect", type=int, required=True)
    parser.add_argument("--page", type=int, default=2)
    args = parser.parse_args()

    config.load_kube_config(config_file=args.kubeconfig)
    v1 = client.CoreV1Api()

    # list_node deserializes every Node into the client's models (status.nodeInfo included).
    nodes = v1.list_node().items
    free = {n.metadata.name: cpu_millis(n.status.allocatable["cpu"]) for n in nodes}
    print(f"nodes {len(nodes)}", flush=True)

    # Every pod, `--page` at a time.
    pods, pages, token = [], 0, None
    while True:
        kwargs = {"limit": args.page}
        if token:
            kwargs["_continue"] = token
        page = v1.list_pod_for_all_namespaces(**kwargs)
        pages += 1
        pods.extend(page.items)
        token = page.metadata._continue
        resource_version = page.metadata.resource_version
        if not token:
            break
    print(f"listed {len(pods)} pods in {pages} pages", flush=True)

    for p in pods:
        if p.spec.node_name:
            for c in p.spec.containers:
                requests = (c.resources.requests or {}) if c.resources else {}
                free[p.spec.node_name] -= cpu_millis(requests.get("cpu", "0"))

    bound = 0

    def bind(pod):
        nonlocal bound
        request = sum(
            cpu_millis(((c.resources.requests or {}) if c.resources else {}).get("cpu", "0"))
            for c in pod.spec.containers)
        # The node with the most CPU left that fits (the thesis's spread heuristic).
        node = max((n for n in free if free[n] >= request), key=lambda n: free[n], default=None)
        if node is None:
            print(f"no node for {pod.metadata.namespace}/{pod.metadata.name}", flush=True)
            return
        body = client.V1Binding(
            metadata=client.V1ObjectMeta(name=pod.metadata.name),
            target=client.V1ObjectReference(api_version="v1", kind="Node", name=node))
        # The server answers a Status, which the client cannot read as a V1Binding: the usual
        # workaround is to not deserialize the response.
        v1.create_namespaced_binding(pod.metadata.namespace, body, _preload_content=False)
        free[node] -= request
        bound += 1
        print(f"bound {pod.metadata.namespace}/{pod.metadata.name} {node}", flush=True)

    def mine(pod):
        return pod.spec.scheduler_name == args.scheduler_name and not pod.spec.node_name

    for p in pods:
        if mine(p) and bound < args.expect:
            bind(p)

    print(f"watching from {resource_version}", flush=True)
    w = watch.Watch()
    for event in w.stream(v1.list_pod_for_all_namespaces, resource_version=resource_version,
                          timeout_seconds=60):
        if bound >= args.expect:
            break
        pod = event["object"]
        if event["type"] == "ADDED" and mine(pod):
            bind(pod)
        if bound >= args.expect:
            break
    w.stop()
    print(f"done {bound}", flush=True)
    return 0 if bound >= args.expect else 1


if __name__ == "__main__":
    sys.exit(main())
