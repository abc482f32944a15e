#!/usr/bin/env python3
"""Writes a Boreas test at K times its size: K*6 workers and K times every Deployment's replicas.

    python3 examples/boreas/scale.py test-d.yaml 10 > /tmp/d10.yaml
    kubesched simulate --config examples/optimizer.yaml -f /tmp/d10.yaml

The control-plane node is kept once. Reads the example files beside this script.
"""
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    test, k = sys.argv[1], int(sys.argv[2])
    if k < 1:
        print("scale: K must be >= 1", file=sys.stderr)
        return 2
    cluster = (HERE / "cluster.yaml").read_text()
    docs = cluster.split("\n---\n")
    control = [d for d in docs if "name: control-plane" in d]
    worker = next(d for d in docs if "name: worker-1" in d)
    out = [control[0].strip()]
    for i in range(1, 6 * k + 1):
        out.append(worker.replace("worker-1", f"worker-{i}").strip())
    workloads = (HERE / Path(test).name).read_text()
    workloads = re.sub(r"replicas: (\d+)", lambda m: f"replicas: {int(m.group(1)) * k}", workloads)
    print("\n---\n".join(out))
    print("---")
    print(workloads)
    return 0


if __name__ == "__main__":
    sys.exit(main())
