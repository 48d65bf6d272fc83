"""Replays a WfCommons 1.5 workflow as bench/workflow-peers.ts does with tidepool, on two peers.

Every task computes (a busy loop, not a sleep) for its recorded runtime x SCALE and writes each output
at its recorded size x SCALE; workflow inputs are files in a shared directory, final outputs go there.

  dask:      a LocalCluster of WORKERS single-threaded worker processes; intermediate outputs travel
             between workers as task results (Dask's own peer-to-peer transfers).
  snakemake: a generated Snakefile (a rule per task, its files as input/output) run with -j WORKERS;
             every file, intermediate or not, goes through the shared directory.

Prints one JSON line: {"peer": ..., "seconds": ..., "tasks": ...}.
  /usr/bin/python3 workflow_peers.py dask|snakemake WORKFLOW.json SCALE WORKERS SHARED_DIR
"""
import json, os, subprocess, sys, time

def load(path):
    doc = json.load(open(path))
    spec = doc["workflow"]["specification"]
    runtime = {t["id"]: max(0.0, t["runtimeInSeconds"]) for t in doc["workflow"]["execution"]["tasks"]}
    sizes = {f["id"]: f["sizeInBytes"] for f in spec.get("files", [])}
    tasks = spec["tasks"]
    produced = {o for t in tasks for o in t["outputFiles"]}
    read = {i for t in tasks for i in t["inputFiles"]}
    return tasks, runtime, sizes, produced, read

def compute(seconds):
    end = time.perf_counter() + seconds
    x = 1
    while time.perf_counter() < end:
        for _ in range(1000):
            x = (x * 1103515245 + 12345) & 0xFFFFFFFF
    return x

def prepare_inputs(tasks, sizes, produced, scale, shared):
    os.makedirs(shared, exist_ok=True)
    for t in tasks:
        for name in t["inputFiles"]:
            if name not in produced:
                path = os.path.join(shared, name)
                if not os.path.exists(path):
                    with open(path, "wb") as f:
                        f.write(b"\1" * int(round(sizes.get(name, 0) * scale)))

def run_task(seconds, inputs, outputs, shared, parents):
    data = {}
    for name in inputs:
        found = next((p[name] for p in parents if name in p), None)
        if found is None:
            with open(os.path.join(shared, name), "rb") as f:
                found = f.read()
        data[name] = found
    compute(seconds)
    out = {}
    for name, size, final in outputs:
        content = b"\2" * size
        if final:
            with open(os.path.join(shared, name), "wb") as f:
                f.write(content)
        else:
            out[name] = content
    return out

def dask_run(path, scale, workers, shared):
    from distributed import Client, LocalCluster
    tasks, runtime, sizes, produced, read = load(path)
    prepare_inputs(tasks, sizes, produced, scale, shared)
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, Client(cluster) as client:
        client.submit(compute, 0).result()
        start = time.perf_counter()
        futures, writer = {}, {}
        for t in tasks:
            for o in t["outputFiles"]:
                writer[o] = t["id"]
        pending = {t["id"]: t for t in tasks}
        while pending:  # submit in dependency order (the file may list children first)
            for tid in list(pending):
                t = pending[tid]
                if all(p in futures for p in t["parents"]):
                    outputs = [(o, int(round(sizes.get(o, 0) * scale)), o not in read) for o in t["outputFiles"]]
                    parents = [futures[writer[i]] for i in t["inputFiles"] if i in writer]
                    futures[tid] = client.submit(run_task, runtime[tid] * scale, t["inputFiles"], outputs, shared, parents, key=tid, pure=False)
                    del pending[tid]
        client.gather(list(futures.values()))
        return time.perf_counter() - start, len(tasks)

def snakemake_run(path, scale, workers, shared):
    tasks, runtime, sizes, produced, read = load(path)
    prepare_inputs(tasks, sizes, produced, scale, shared)
    script = os.path.join(shared, "replay_task.py")
    with open(script, "w") as f:
        f.write("import sys, time\nend = time.perf_counter() + float(sys.argv[1])\nx = 1\nwhile time.perf_counter() < end:\n    x = (x * 1103515245 + 12345) & 0xFFFFFFFF\n"
                "for a in sys.argv[2:]:\n    name, size = a.rsplit(':', 1)\n    open(name, 'wb').write(b'\\2' * int(size))\n")
    finals = [o for t in tasks for o in t["outputFiles"] if o not in read]
    rules = [f"rule all:\n    input: {finals!r}\n"]
    for i, t in enumerate(tasks):
        outs = " ".join(f"{o}:{int(round(sizes.get(o, 0) * scale))}" for o in t["outputFiles"])
        rules.append(f"rule t{i}:\n    input: {t['inputFiles']!r}\n    output: {t['outputFiles']!r}\n    shell: 'python3 replay_task.py {runtime[t['id']] * scale} {outs}'\n")
    with open(os.path.join(shared, "Snakefile"), "w") as f:
        f.write("\n".join(rules))
    start = time.perf_counter()
    subprocess.run(["snakemake", "-j", str(workers), "--quiet", "--nolock"], cwd=shared, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return time.perf_counter() - start, len(tasks)

if __name__ == "__main__":
    peer, path, scale, workers, shared = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    seconds, n = (dask_run if peer == "dask" else snakemake_run)(path, scale, workers, shared)
    print(json.dumps({"peer": peer, "seconds": seconds, "tasks": n}))
