"""Dask.distributed as a peer of tidepool's runtime benchmark, on this machine.

Runs with Debian's interpreter (python3-distributed installs there, see scripts/ensure-dask.sh):

    /usr/bin/python3 bench/peers/dask_bench.py [--n 10000] [--depth 10] [--repeat 3]

A LocalCluster of 2 worker processes with 1 thread each, on loopback, measures
  a. flat no-op throughput: client.gather(client.map(noop, range(N), pure=False));
  b. a spawned binary tree: a task at depth < D submits its two children from inside the task
     (distributed.worker_client(), which secedes the task's thread from the worker's pool while it
     waits, so a 1-thread worker does not deadlock) and returns 1 + the sum of their results;
  c. an added worker: cluster.scale(n + 1) until the new worker registered with the scheduler, and
     until it completed a first task pinned to it (client.submit(..., workers=[address])).
Each is repeated --repeat times, at Dask's default configuration; (a) is repeated on a second
cluster with scheduler-side queuing off (worker-saturation inf) to show what the default costs. Prints ONE JSON object on stdout; progress goes to stderr.
"""

import os
import sys

# Silence Dask before importing it; the environment reaches the worker processes too.
os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "error")
os.environ["PYTHONWARNINGS"] = "ignore"
os.environ.setdefault("DASK_DISTRIBUTED__ADMIN__TICK__LIMIT", "1h")  # no "event loop unresponsive"

import argparse  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

warnings.filterwarnings("ignore")


def log(*args):
    print("dask-bench:", *args, file=sys.stderr, flush=True)


def noop(x):
    return x


def tree(depth, max_depth):
    """1 + the sizes of two subtrees spawned from inside this task: 2^(D - depth + 1) - 1."""
    if depth >= max_depth:
        return 1
    from distributed import worker_client

    with worker_client() as client:
        left = client.submit(tree, depth + 1, max_depth, pure=False)
        right = client.submit(tree, depth + 1, max_depth, pure=False)
        return 1 + sum(client.gather([left, right]))


def summary(samples):
    return {"median": statistics.median(samples), "samples": samples}


def bench_flat(client, n, repeat):
    expected = n * (n - 1) // 2
    seconds = []
    for i in range(repeat):
        start = time.perf_counter()
        futures = client.map(noop, range(n), pure=False)
        total = sum(client.gather(futures))
        elapsed = time.perf_counter() - start
        del futures
        if total != expected:
            raise RuntimeError(f"flat: sum of results {total}, expected {expected}")
        seconds.append(elapsed)
        log(f"flat #{i + 1}: {n} tasks in {elapsed:.3f} s ({n / elapsed:.0f} tasks/s)")
    return {**throughput(n, seconds), "checked": f"sum of results == {expected}"}


def throughput(tasks, seconds):
    """Times of `tasks` tasks per repeat, as seconds, tasks/s and µs per task (median and samples)."""
    med = statistics.median(seconds)
    return {
        "tasks": tasks,
        "seconds": summary(seconds),
        "tasksPerSecond": summary([tasks / s for s in seconds]),
        "perTaskMicros": summary([1e6 * s / tasks for s in seconds]),
        "medianTasksPerSecond": tasks / med,
        "medianPerTaskMicros": 1e6 * med / tasks,
    }


def bench_tree(client, depth, repeat):
    expected = 2 ** (depth + 1) - 1
    seconds = []
    for i in range(repeat):
        start = time.perf_counter()
        count = client.submit(tree, 0, depth, pure=False).result()
        elapsed = time.perf_counter() - start
        if count != expected:
            raise RuntimeError(f"tree: counted {count} tasks, expected {expected}")
        seconds.append(elapsed)
        log(f"tree #{i + 1}: {expected} tasks in {elapsed:.3f} s ({expected / elapsed:.0f} tasks/s)")
    return {"depth": depth, **throughput(expected, seconds), "checked": f"count of tasks == {expected}"}


def bench_add_worker(cluster, client, base_workers, repeat):
    from distributed.diagnostics.plugin import SchedulerPlugin

    class Registrations(SchedulerPlugin):
        """Stamps each worker's registration with the scheduler (same process, same clock)."""

        name = "tidepool-bench-registrations"

        def __init__(self):
            self.times = {}
            self.changed = threading.Condition()

        def add_worker(self, scheduler, worker):
            with self.changed:
                self.times[worker] = time.perf_counter()
                self.changed.notify_all()

    plugin = Registrations()
    # The scheduler runs in this process (LocalCluster); the plugin only records timestamps.
    cluster.scheduler.add_plugin(plugin)

    registered_ms, first_task_ms = [], []
    for i in range(repeat):
        before = set(client.scheduler_info()["workers"])
        start = time.perf_counter()
        cluster.scale(base_workers + 1)
        with plugin.changed:
            ok = plugin.changed.wait_for(lambda: set(plugin.times) - before, timeout=120)
            if not ok:
                raise RuntimeError("added worker did not register within 120 s")
            (address,) = set(plugin.times) - before
            registered = plugin.times.pop(address)
        result = client.submit(noop, 42, workers=[address], allow_other_workers=False, pure=False).result()
        done = time.perf_counter()
        if result != 42:
            raise RuntimeError(f"first task on the added worker returned {result!r}")
        registered_ms.append(1000 * (registered - start))
        first_task_ms.append(1000 * (done - start))
        log(f"added worker #{i + 1}: registered after {registered_ms[-1]:.0f} ms, "
            f"first task done after {first_task_ms[-1]:.0f} ms")
        # Back to the base shape (SpecCluster drops the newest worker spec) before the next round.
        cluster.scale(base_workers)
        deadline = time.monotonic() + 60
        while len(client.scheduler_info()["workers"]) != base_workers:
            if time.monotonic() > deadline:
                raise RuntimeError("added worker was not retired within 60 s")
            time.sleep(0.05)
    cluster.scheduler.remove_plugin(name=plugin.name)
    return {
        "how": "cluster.scale(n+1): spawn a Nanny + worker process; "
               "registered = scheduler add_worker; ready = a pinned no-op task completed",
        "registeredMs": summary(registered_ms),
        "firstTaskMs": summary(first_task_ms),
    }


class Cluster:
    """LocalCluster(n_workers, threads_per_worker=1, processes=True) on loopback, plus a client."""

    def __init__(self, workers):
        from distributed import Client, LocalCluster

        start = time.perf_counter()
        self.cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            silence_logs=logging.CRITICAL,
        )
        self.client = Client(self.cluster)
        self.client.wait_for_workers(workers)
        self.start_ms = 1000 * (time.perf_counter() - start)
        self.saturation = self.cluster.scheduler.WORKER_SATURATION
        log(f"cluster of {workers} workers (worker-saturation {self.saturation}) up in {self.start_ms:.0f} ms")
        # Warm up (ship the functions, start the workers' own clients) outside the measurements.
        if sum(self.client.gather(self.client.map(noop, range(200), pure=False))) != 199 * 100:
            raise RuntimeError("warm-up: wrong sum")
        if self.client.submit(tree, 0, 3, pure=False).result() != 15:
            raise RuntimeError("warm-up: wrong tree count")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.client.close()
        self.cluster.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=20000, help="flat no-op tasks")
    parser.add_argument("--depth", type=int, default=12, help="spawned tree depth D (2^(D+1)-1 tasks)")
    parser.add_argument("--repeat", type=int, default=3, help="repetitions of each measurement")
    parser.add_argument("--workers", type=int, default=2, help="worker processes")
    parser.add_argument("--no-unqueued", action="store_true",
                        help="skip the flat run with scheduler queuing off (worker-saturation inf)")
    args = parser.parse_args()

    # Only the final JSON may reach stdout: point fd 1 (inherited by the worker processes) at
    # stderr and keep a private copy of the real stdout for the result.
    sys.stdout.flush()
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)

    import dask
    import distributed
    import tornado

    for name in ("distributed", "tornado", "asyncio", "bokeh"):
        logging.getLogger(name).setLevel(logging.CRITICAL)

    began = time.perf_counter()
    log(f"dask {dask.__version__}, distributed {distributed.__version__}, python {platform.python_version()}")
    with Cluster(args.workers) as c:
        workers = [
            {"nthreads": w["nthreads"], "memoryLimitBytes": w.get("memory_limit")}
            for w in c.client.scheduler_info()["workers"].values()
        ]
        saturation, start_ms = c.saturation, c.start_ms
        flat = bench_flat(c.client, args.n, args.repeat)
        spawned = bench_tree(c.client, args.depth, args.repeat)
        added = bench_add_worker(c.cluster, c.client, args.workers, args.repeat)

    # Sensitivity: since 2022.11 the scheduler queues tasks and keeps only ~1.1 x nthreads in flight
    # per worker, so a 1-thread worker waits a scheduler round trip between no-op tasks. The same
    # flat run with queuing off (the earlier behaviour: all runnable tasks sent to workers at once).
    unqueued = None
    if not args.no_unqueued:
        with dask.config.set({"distributed.scheduler.worker-saturation": "inf"}):
            with Cluster(args.workers) as c:
                unqueued = bench_flat(c.client, args.n, args.repeat)
                unqueued["workerSaturation"] = "inf"

    result = {
        "peer": "dask.distributed",
        "versions": {
            "dask": dask.__version__,
            "distributed": distributed.__version__,
            "tornado": tornado.version,
            "python": platform.python_version(),
            "pythonExecutable": sys.executable,
        },
        "params": {"n": args.n, "depth": args.depth, "repeat": args.repeat},
        "cluster": {
            "kind": "LocalCluster",
            "nWorkers": args.workers,
            "threadsPerWorker": 1,
            "processes": True,
            "scheduler": "in the benchmark process (LocalCluster), client in the same process",
            "transport": "tcp on 127.0.0.1",
            "multiprocessingMethod": dask.config.get("distributed.worker.multiprocessing-method"),
            "workerSaturation": saturation if saturation != float("inf") else "inf",
            "workers": workers,
            "startMs": start_ms,
        },
        "flat": flat,
        "flatUnqueued": unqueued,
        "tree": spawned,
        "addWorker": added,
        "totalSeconds": time.perf_counter() - began,
    }
    out.write(json.dumps(result) + "\n")
    out.flush()


if __name__ == "__main__":
    main()
