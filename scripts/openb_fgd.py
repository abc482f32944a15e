#!/usr/bin/env python3
"""GPU fragmentation on the openb trace, measured the way the FGD paper measures it.

The paper (Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with
Fragmentation Gradient Descent", USENIX ATC'23) replays the openb pods against its 1,523 nodes
(6,212 GPUs) until the arrived GPU demand is 130% of the cluster's GPUs (its artifact's
`-tune 1.3`); pods never leave, so by then every scheduler has saturated, and the figure of merit
is the share of the cluster's GPU capacity left unallocated at the end. Published for the default
trace: FGD 4.77%, BestFit 7.14%, DotProduct 9.38%.

Here each GPU is a Dynamic Resource Allocation device (resource.k8s.io/v1) with consumable
capacity, as a GPU-sharing driver would publish it:
  * DeviceClass `gpu.openb.example.com`; per GPU node one ResourceSlice whose devices gpu-0 ..
    gpu-(N-1) allow multiple allocations and have the capacity `gpuMilli: 1000` (a qualified name
    must be a C identifier, so not `gpu-milli`, which the API server rejects);
  * a pod asking a fraction of one GPU references the ResourceClaimTemplate
    `openb-gpu-share-<milli>` (one device, capacity request `gpu.openb.example.com/gpuMilli:
    <milli>`: a request names the capacity fully qualified); a pod asking whole GPUs
    `openb-gpu-whole-<n>` (n devices, a capacity request of 1000 each);
  * arrivals in trace order (creation_time, then name), the trace repeated (pod names suffixed
    `-r<k>`) until the arrived GPU demand reaches the inflation factor times the cluster's GPUs;
    one pod a second on simulate's virtual clock (`simulate.kubesched.io/create-after`), so that
    each is scheduled as it arrives (its claim made first by the resourceclaim controller), as in
    the paper's replay, and not in the order in which pods become ready to schedule.

`manifests` writes that cluster; `measure` runs `kubesched simulate -o json` on it with each
scheduler configuration given and prints the table (placed pods, allocated and unallocated GPU
capacity, read from the ResourceClaims' allocations in the result).

  openb_fgd.py manifests [--inflate 1.3] [NODES.csv PODS.csv] > openb-fgd.yaml
  openb_fgd.py measure --kubesched build/release/kubesched [--config NAME=FILE ...] [--manifests F]
  (--node-stride 10 --node-offset 3: the cluster's nodes 3, 13, 23, ...: a tenth of it)
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "shared", "data", "openb")
DRIVER = "gpu.openb.example.com"
CAPACITY = "gpuMilli"


def template_of(num_gpu, milli):
    if not num_gpu or not milli:
        return None
    return f"openb-gpu-share-{milli}" if milli < 1000 else f"openb-gpu-whole-{num_gpu}"


def read_nodes(path, stride=1, offset=0):
    """The trace's nodes, or every stride-th from offset (a smaller cluster of the same shapes)."""
    with open(path, newline="") as f:
        return list(csv.DictReader(f))[offset::stride]


def write_manifests(nodes_csv, pods_csv, inflate, out, stride=1, offset=0):
    nodes = read_nodes(nodes_csv, stride, offset)
    with open(pods_csv, newline="") as f:
        pods = list(csv.DictReader(f))
    pods.sort(key=lambda p: (int(p["creation_time"]), p["name"]))
    total_gpus = sum(int(n["gpu"]) for n in nodes)

    for n in nodes:
        out.write("---\napiVersion: v1\nkind: Node\nmetadata:\n")
        out.write(f"  name: {n['sn']}\n  labels:\n    kubernetes.io/hostname: {n['sn']}\n")
        if n["model"]:
            out.write(f"    alibaba.com/gpu-model: {n['model']}\n")
        out.write("status:\n")
        for key in ("capacity", "allocatable"):
            out.write(f"  {key}:\n    cpu: {n['cpu_milli']}m\n    memory: {n['memory_mib']}Mi\n    pods: \"110\"\n")
        if int(n["gpu"]):
            out.write(f"---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata:\n  name: {n['sn']}-gpus\n")
            out.write(f"spec:\n  driver: {DRIVER}\n  nodeName: {n['sn']}\n")
            out.write(f"  pool:\n    name: {n['sn']}\n    generation: 1\n    resourceSliceCount: 1\n  devices:\n")
            for g in range(int(n["gpu"])):
                out.write(f"  - name: gpu-{g}\n    allowMultipleAllocations: true\n")
                if n["model"]:
                    out.write(f"    attributes:\n      model:\n        string: {n['model']}\n")
                out.write(f"    capacity:\n      {CAPACITY}:\n        value: \"1000\"\n")

    out.write(f"---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata:\n  name: {DRIVER}\n")
    out.write(f"spec:\n  selectors:\n  - cel:\n      expression: device.driver == \"{DRIVER}\"\n")
    templates = {template_of(int(p["num_gpu"]), int(p["gpu_milli"] or 0)) for p in pods} - {None}
    for name in sorted(templates):
        out.write(f"---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata:\n  name: {name}\n")
        out.write("  namespace: default\nspec:\n  spec:\n    devices:\n      requests:\n      - name: gpu\n")
        out.write(f"        exactly:\n          deviceClassName: {DRIVER}\n          allocationMode: ExactCount\n")
        kind, size = name.rsplit("-", 2)[1:]
        count, milli = (1, size) if kind == "share" else (size, 1000)
        out.write(f"          count: {count}\n          capacity:\n            requests:\n")
        out.write(f"              {DRIVER}/{CAPACITY}: \"{milli}\"\n")

    arrived, index, round_ = 0, 0, 0
    target = inflate * total_gpus * 1000
    while arrived < target:
        for p in pods:
            if arrived >= target:
                break
            num, milli = int(p["num_gpu"]), int(p["gpu_milli"] or 0)
            arrived += num * milli
            name = p["name"] if round_ == 0 else f"{p['name']}-r{round_}"
            index += 1
            out.write("---\napiVersion: v1\nkind: Pod\nmetadata:\n")
            out.write(f"  name: {name}\n  namespace: default\n")
            out.write(f"  annotations:\n    simulate.kubesched.io/create-after: \"{index}s\"\n")
            out.write(f"  labels:\n    app: openb\n    qos: {p['qos'].lower()}\nspec:\n")
            if p["gpu_spec"]:
                models = ", ".join(p["gpu_spec"].split("|"))
                out.write("  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n")
                out.write("        nodeSelectorTerms:\n        - matchExpressions:\n")
                out.write(f"          - {{key: alibaba.com/gpu-model, operator: In, values: [{models}]}}\n")
            template = template_of(num, milli)
            if template:
                out.write(f"  resourceClaims:\n  - name: gpu\n    resourceClaimTemplateName: {template}\n")
            out.write("  containers:\n  - name: main\n    image: registry.local/openb:latest\n")
            out.write(f"    resources:\n      requests:\n        cpu: {p['cpu_milli']}m\n        memory: {p['memory_mib']}Mi\n")
            if template:
                out.write("      claims:\n      - name: gpu\n")
        round_ += 1
    return total_gpus, index, arrived / 1000


def allocated_milli(result):
    """GPU capacity (milli) the result's claims hold: consumed capacity, or a whole device."""
    total = 0
    for claim in result.get("resourceClaims", []):
        if not claim["allocated"]:
            continue
        for d in claim["devices"]:
            consumed = d.get("consumedCapacity", {}).get(f"{DRIVER}/{CAPACITY}")
            total += int(consumed) if consumed is not None else 1000
    return total


def measure(args):
    manifests = args.manifests
    tmp = None
    if not manifests:
        tmp = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
        write_manifests(args.nodes, args.pods, args.inflate, tmp, args.node_stride, args.node_offset)
        tmp.close()
        manifests = tmp.name
    total_gpus = sum(int(n["gpu"]) for n in read_nodes(args.nodes, args.node_stride, args.node_offset))
    rows = []
    for spec in args.config:
        name, _, path = spec.partition("=")
        cmd = [args.kubesched, "simulate", "-f", manifests, "-o", "json"]
        if path:
            cmd += ["--config", path]
        start = time.monotonic()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        seconds = time.monotonic() - start
        if proc.returncode != 0:
            sys.stderr.write(f"{name}: {' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-4000:]}\n")
            return 1
        result = json.loads(proc.stdout)
        pods = result["pods"]
        placed = sum(1 for p in pods if p.get("node"))
        milli = allocated_milli(result)
        unallocated = 100.0 * (1 - milli / (total_gpus * 1000))
        rows.append((name, placed, len(pods), milli / 1000, unallocated, seconds))
        sys.stderr.write(f"{name}: {placed}/{len(pods)} placed, {unallocated:.2f}% unallocated, {seconds:.1f}s\n")
    print(f"| configuration | pods placed (of {rows[0][2]:,}) | GPUs allocated (of {total_gpus:,}) "
          "| unallocated GPUs | simulate time |")
    print("|---|---:|---:|---:|---:|")
    for name, placed, n, gpus, unallocated, seconds in rows:
        print(f"| {name} | {placed:,} | {gpus:,.1f} | {unallocated:.2f}% | {seconds:.0f} s |")
    if tmp:
        os.unlink(tmp.name)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("manifests", "measure"):
        p = sub.add_parser(name)
        p.add_argument("--nodes", default=os.path.join(DATA, "openb_node_list_all_node.csv"))
        p.add_argument("--pods", default=os.path.join(DATA, "openb_pod_list_default.csv"))
        p.add_argument("--inflate", type=float, default=1.3,
                       help="arrived GPU demand, as a multiple of the cluster's GPUs (FGD: 1.3)")
        p.add_argument("--node-stride", type=int, default=1, help="keep every N-th node (a smaller cluster)")
        p.add_argument("--node-offset", type=int, default=0, help="starting from this node")
    m = sub.choices["measure"]
    m.add_argument("--kubesched", required=True)
    m.add_argument("--manifests", help="use this cluster instead of writing one")
    m.add_argument("--config", action="append", default=[],
                   help="NAME=CONFIG.yaml (NAME alone: the default profile); repeatable")
    args = ap.parse_args()
    if args.cmd == "manifests":
        gpus, pods, arrived = write_manifests(args.nodes, args.pods, args.inflate, sys.stdout, args.node_stride,
                                              args.node_offset)
        sys.stderr.write(f"{pods} pods arrive asking {arrived:,.1f} GPUs of {gpus:,}\n")
        return 0
    if not args.config:
        args.config = ["default profile"]
    return measure(args)


if __name__ == "__main__":
    sys.exit(main())
