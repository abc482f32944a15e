#!/usr/bin/env python3
"""Writes a large cluster snapshot as one JSON `kind: List`, for measuring how fast
`kubesched simulate` loads (README "Codec"). The defaults give 15,000 nodes and 55,000 pods
(~22 MB): nodes as kubelets report them (labels, capacity, allocatable, conditions), pods of
ReplicaSets (labels, one container with requests), most of them already bound, the rest pending.

    python3 bench/gen_cluster_list.py > /tmp/cluster.json
    kubesched simulate -f /tmp/cluster.json -o json
"""

import argparse
import json
import random
import sys


def node(i, rng):
    name = f"node-{i:05d}"
    zone = f"zone-{i % 3}"
    cpu = rng.choice([16, 32, 64])
    mem_gi = cpu * 4
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "topology.kubernetes.io/zone": zone,
                "node.kubernetes.io/instance-type": f"m6i.{cpu // 4}xlarge",
            },
        },
        "status": {
            "capacity": {"cpu": str(cpu), "memory": f"{mem_gi}Gi", "pods": "110"},
            "allocatable": {"cpu": f"{cpu * 1000 - 100}m", "memory": f"{mem_gi - 1}Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def pod(i, nodes, pending, rng):
    app = f"app-{i % 500}"
    rs = f"{app}-5d8f7c9b4"
    name = f"{rs}-{i:06d}"
    cpu = rng.choice([100, 250, 500, 1000])
    mem = rng.choice([128, 256, 512, 1024])
    spec = {
        "containers": [
            {
                "name": "main",
                "image": f"{app}:1.0",
                "resources": {"requests": {"cpu": f"{cpu}m", "memory": f"{mem}Mi"}},
            }
        ],
    }
    status = {"phase": "Pending"}
    if not pending:
        spec["nodeName"] = nodes[i % len(nodes)]
        status = {"phase": "Running"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": f"team-{i % 20}",
            "labels": {"app": app, "pod-template-hash": "5d8f7c9b4"},
        },
        "spec": spec,
        "status": status,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=15000)
    parser.add_argument("--pods", type=int, default=55000)
    parser.add_argument("--pending", type=int, default=1000, help="pods left to schedule (the rest are bound)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    nodes = [node(i, rng) for i in range(args.nodes)]
    names = [n["metadata"]["name"] for n in nodes]
    first_pending = args.pods - args.pending
    pods = [pod(i, names, i >= first_pending, rng) for i in range(args.pods)]
    json.dump({"apiVersion": "v1", "kind": "List", "items": nodes + pods}, sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
