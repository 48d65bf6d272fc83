"""Replays a WfCommons 1.5 workflow as bench/workflow-peers.ts does with tidepool, on two peers.

Every task computes (a busy loop, not a sleep) for its recorded runtime x SCALE and writes each output
at its recorded size x SCALE; workflow inputs are files in a shared directory, final outputs go there.
The DAG is the file's: explicit parents and the edges its files imply (a bag of tasks has neither).

  dask:      a LocalCluster of WORKERS single-threaded worker processes; intermediate outputs travel
             between workers as task results (Dask's own peer-to-peer transfers).
  snakemake: one wildcard rule; a task's job waits for its parents' completion markers (the same DAG,
             explicit and file-implied edges alike) and writes its outputs next to them, so every file,
             intermediate or not, goes through the shared directory. Run with --cores WORKERS and the
             greedy scheduler (the default ILP scheduler solves an integer program at every scheduling
             round, which dominated an earlier measurement); DAG building is in the wall time only.

Both record each task's start and end (time.time()) as tidepool's trace does, and report the span from
the first start to the last end, plus the wall time of the whole run (cluster start-up excluded).
Prints one JSON line: {"peer": ..., "seconds": ..., "wall": ..., "tasks": ...}.
  /usr/bin/python3 workflow_peers.py dask|snakemake WORKFLOW.json SCALE WORKERS SHARED_DIR
"""
import json, os, subprocess, sys, time

def load(path):
    doc = json.load(open(path))
    spec = doc["workflow"]["specification"]
    runtime = {t["id"]: max(0.0, t["runtimeInSeconds"]) for t in doc["workflow"]["execution"]["tasks"]}
    sizes = {f["id"]: f["sizeInBytes"] for f in spec.get("files", [])}
    tasks = spec["tasks"]
    writer = {o: t["id"] for t in tasks for o in t["outputFiles"]}
    read = {i for t in tasks for i in t["inputFiles"]}
    # Parents: explicit ones and those implied by files (the writer of each input).
    parents = {t["id"]: sorted(set(t.get("parents", [])) | {writer[i] for i in t["inputFiles"] if i in writer} - {t["id"]}) for t in tasks}
    return tasks, runtime, sizes, writer, read, parents

def compute(seconds):
    end = time.perf_counter() + seconds
    x = 1
    while time.perf_counter() < end:
        for _ in range(100):
            x = (x * 1103515245 + 12345) & 0xFFFFFFFF
    return x

def prepare_inputs(tasks, sizes, writer, scale, shared):
    os.makedirs(shared, exist_ok=True)
    for t in tasks:
        for name in t["inputFiles"]:
            if name not in writer:
                path = os.path.join(shared, name)
                if not os.path.exists(path):
                    with open(path, "wb") as f:
                        f.write(b"\1" * int(round(sizes.get(name, 0) * scale)))

def run_task(seconds, inputs, outputs, shared, parents):
    start = time.time()
    data = {}
    for name in inputs:
        found = next((p[1][name] for p in parents if name in p[1]), None)
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
    return (start, time.time()), out

def dask_run(path, scale, workers, shared):
    from distributed import Client, LocalCluster
    tasks, runtime, sizes, writer, read, parents = load(path)
    prepare_inputs(tasks, sizes, writer, scale, shared)
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, Client(cluster) as client:
        client.submit(compute, 0).result()
        wall = time.perf_counter()
        futures = {}
        pending = {t["id"]: t for t in tasks}
        while pending:  # submit in dependency order (the file may list children first)
            for tid in list(pending):
                t = pending[tid]
                if all(p in futures for p in parents[tid]):
                    outputs = [(o, int(round(sizes.get(o, 0) * scale)), o not in read) for o in t["outputFiles"]]
                    futures[tid] = client.submit(run_task, runtime[tid] * scale, t["inputFiles"], outputs, shared, [futures[p] for p in parents[tid]], key=tid, pure=False)
                    del pending[tid]
        done = client.gather(list(futures.values()))
        wall = time.perf_counter() - wall
        spans = [d[0] for d in done]
        return max(e for _, e in spans) - min(s for s, _ in spans), wall, len(tasks)

REPLAY = """import sys, time
start = time.time()
marker, seconds = sys.argv[1], float(sys.argv[2])
end = time.perf_counter() + seconds
x = 1
while time.perf_counter() < end:
    x = (x * 1103515245 + 12345) & 0xFFFFFFFF
for a in sys.argv[3:]:
    name, size = a.rsplit(':', 1)
    open(name, 'wb').write(b'\\2' * int(size))
open(marker, 'w').write('%r %r' % (start, time.time()))
"""

def snakemake_run(path, scale, workers, shared):
    tasks, runtime, sizes, writer, read, parents = load(path)
    prepare_inputs(tasks, sizes, writer, scale, shared)
    with open(os.path.join(shared, "replay_task.py"), "w") as f:
        f.write(REPLAY)
    table = {t["id"]: {"after": [f".done/{p}" for p in parents[t["id"]]] + [i for i in t["inputFiles"] if i not in writer],
                       "seconds": runtime[t["id"]] * scale,
                       "outs": " ".join(f"'{o}:{int(round(sizes.get(o, 0) * scale))}'" for o in t["outputFiles"])} for t in tasks}
    with open(os.path.join(shared, "tasks.json"), "w") as f:
        json.dump(table, f)
    with open(os.path.join(shared, "Snakefile"), "w") as f:
        f.write("import json\nT = json.load(open('tasks.json'))\n"
                "rule all:\n    input: [f'.done/{t}' for t in T]\n"
                "rule task:\n    input: lambda wc: T[wc.t]['after']\n    output: '.done/{t}'\n"
                "    params: seconds=lambda wc: T[wc.t]['seconds'], outs=lambda wc: T[wc.t]['outs']\n"
                "    shell: 'python3 replay_task.py {output} {params.seconds} {params.outs}'\n")
    wall = time.perf_counter()
    subprocess.run(["snakemake", "--cores", str(workers), "--scheduler", "greedy", "--quiet", "--nolock", "--latency-wait", "1"],
                   cwd=shared, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - wall
    spans = [tuple(map(float, open(os.path.join(shared, ".done", t["id"])).read().split())) for t in tasks]
    return max(e for _, e in spans) - min(s for s, _ in spans), wall, len(tasks)

if __name__ == "__main__":
    peer, path, scale, workers, shared = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    try:
        seconds, wall, n = (dask_run if peer == "dask" else snakemake_run)(path, scale, workers, shared)
    except subprocess.CalledProcessError as err:
        sys.stderr.write(err.stderr.decode(errors="replace")[-2000:])
        raise
    print(json.dumps({"peer": peer, "seconds": seconds, "wall": wall, "tasks": n}))
