/** RESULTS.md sections for TASKWORK's search experiments: Table 1, Fig. 5, Fig. 6–7 and maximum clique. */
import { writeElasticityCharts, type ElasticityResults } from '../elasticity-charts.js';
import { f, int, load, mean, table, when, type Json, type Section, type Target } from './format.js';

export async function searchSections(): Promise<Section> {
  const search = load('search');
  const elasticity = load('elasticity');
  const clique = load('search-clique');
  const dimacs = load('clique-dimacs');
  const targets: Target[] = [];
  const out: string[] = [];
  if (search) {
    const scal = search.scalability as Json[];
    const effs = scal.map((r) => r.efficiency as number);
    const ceil = scal.map((r) => r.ceiling as number);
    targets.push({ what: '2-worker efficiency, pruning disabled', target: '≥ 0.95', value: effs.map((e) => f(e)).join(', '), met: effs.every((e) => e >= 0.95), note: `machine ceiling in the same run: ${ceil.map((c) => f(c)).join(', ')} (two plain solvers at once); relative to it ${scal.map((r) => f((r.efficiency as number) / (r.ceiling as number))).join(', ')}` });
    const over = (search.table1 as Json[]).map((r) => r.overheadPercent as number);
    targets.push({ what: 'framework overhead on 1 worker (pruned TSP)', target: '≤ 3 %', value: `${f(Math.min(...over), 1)} … ${f(Math.max(...over), 1)} %`, met: over.every((o) => o <= 3), note: 'Table-1 instances' });
  }
  // ---- Table 1 ----------------------------------------------------------------------------------
  out.push('## Table 1: speedup and efficiency on random symmetric TSP instances', '');
  out.push('**TASKWORK (paper):** five random 35-city instances, sequential 1,195–10,286 s on 1 VM; on 60 single-vCPU VMs speedups 22.1–59.5, efficiencies 0.37–0.99 ("highly problem-specific": pruning makes the work differ between runs).', '');
  if (search) {
    const t1 = search.table1 as Json[];
    const sel = search.selection as Json | undefined;
    const rule = sel?.seeds ? `seeds ${(sel.seeds as number[]).join(', ')}` : `the first ${sel?.instances ?? 5} seeds of ${sel?.sizes ?? 45} cities whose plain solve takes ${sel?.minSeconds ?? 2}–${sel?.maxSeconds ?? 8} s (a stated rule, so nobody picks favourable instances; the paper's were 35 cities and 20 min–3 h on its VMs)`;
    out.push(`**Here** (\`node dist/bench/search.js\`, embedded cluster, 1 node with 1 and 2 worker threads, fastest of ${search.repeat} interleaved runs each — the machine's neighbours only ever add time; every sample is in \`results/search.json\`; instances: ${rule}):`, '');
    out.push(table([['instance', 'optimum', 'plain solver (s)', 'tidepool 1 worker (s)', 'overhead', 'tidepool 2 workers (s)', 'speedup', 'efficiency', '2 node processes, ZooKeeper (s)', 'their speedup'],
      ...t1.map((r) => [r.instance, r.optimum, f(r.plain), f(r.one), `${f(r.overheadPercent, 1)} %`, f(r.two), f(r.speedup), f(r.efficiency),
        r.twoProcesses === undefined ? '–' : f(r.twoProcesses as number), r.twoProcesses === undefined ? '–' : f((r.plain as number) / (r.twoProcesses as number))])]));
    const over = t1.map((r) => r.overheadPercent as number);
    const spreads = t1.flatMap((r) => (r.samples?.plain ? [((Math.max(...(r.samples.plain as number[])) / Math.min(...(r.samples.plain as number[]))) - 1) * 100] : []));
    if (over.some((o) => o > 3)) {
      out.push('', `The 1-worker overhead target (≤ 3 %) is missed on ${over.filter((o) => o > 3).length} of ${over.length} instances (worst ${f(Math.max(...over), 1)} %).${spreads.length ? ` On this machine the plain solver alone varies by up to ${f(Math.max(...spreads), 0)} % between its own repeats in the same run,` : ''} and one worker explores exactly the plain solver's tree (same nodes, no splits); what tidepool adds per run is the job's start (a few tens of ms: workers load the problem module, the leader is elected, the root task is created) and a shared-memory read per potential split point.`);
    }
    out.push('', 'With pruning, 2 workers explore a different tree than 1 (a thief starts where a sequential search would have arrived late, with a worse bound), so speedups scatter around 1 on 2 cores, as the paper\'s 0.37–0.99 do on 60.', '');
  }
  // ---- Fig. 5 -----------------------------------------------------------------------------------
  out.push('## Fig. 5: scalability with pruning disabled', '');
  out.push('**TASKWORK (paper):** 14- and 15-city instances (1,170 s and 16,959 s sequential) without pruning; efficiency stays near 1 up to 60 VMs for the larger instance and falls for the smaller one.', '');
  if (search) {
    const sc = search.scalability as Json[];
    out.push(`**Here** (same command; random 12-city instances, every run explores the same tree; *ceiling* = what 2 cores give two independent plain solvers started together — two processes, no tidepool):`, '');
    out.push(table([['instance', 'plain (s)', '1 worker (s)', '2 workers (s)', 'speedup', 'efficiency', 'machine ceiling', 'efficiency / ceiling', '2 node processes, ZooKeeper (s)', 'their efficiency'],
      ...sc.map((r) => [r.instance, f(r.plain), f(r.one), f(r.two), f(r.speedup), f(r.efficiency), f(r.ceiling), f((r.efficiency as number) / (r.ceiling as number)),
        r.twoProcesses === undefined ? '–' : f(r.twoProcesses as number), r.processEfficiency === undefined ? '–' : f(r.processEfficiency as number)])]));
    if (sc.some((r) => r.twoProcesses !== undefined)) {
      out.push('', 'The node-process columns (here and in Table 1) run two `tidepool node` processes and a 3-server ZooKeeper ensemble — three JVMs — on the same 2 cores; every split, steal and completion is then a ZooKeeper transaction over loopback (milliseconds) instead of an in-memory one. They were measured after the in-process runs, and this machine\'s speed drifts: the same plain 12-city solve took 12.6 s in the run below and 16.5 s half an hour later.');
    }
    const effs = sc.map((r) => r.efficiency as number);
    const rel = sc.map((r) => (r.efficiency as number) / (r.ceiling as number));
    out.push('', effs.every((e) => e >= 0.95)
      ? 'Both instances reach the 0.95 target.'
      : `The 0.95 target is missed by ${f(Math.max(...effs.map((e) => 0.95 - e)), 2)} at worst. What limits it is the machine: its two vCPUs do not deliver twice one vCPU's work even to two unrelated processes started together (the *ceiling* column, measured in the same run); against that ceiling tidepool reaches ${rel.map((x) => f(x)).join(' and ')}. A profile of a 2-worker run (\`node --cpu-prof\`) has both workers in the search loop and the node's main thread idle more than 95 % of the time: a job of this size costs the runtime a few dozen split requests and ledger writes.`, '');
  }
  // ---- Fig. 5 on node processes, before and after issue #16 ------------------------------------------
  const procs = load('search-processes');
  if (procs) {
    const rows = procs.rows as Json[];
    const revs = procs.checkouts as Json[];
    const current = revs.at(-1)!.rev as string;
    const now = rows.filter((r) => r.checkout === current);
    const name = (rev: string) => {
      const c = revs.find((x) => x.rev === rev);
      // A baseline kept from an earlier run (bench/search-processes.ts keeps it when run on this checkout alone).
      const day = typeof c?.measured === 'string' && c.measured !== procs.machine?.date ? `, measured ${c.measured.slice(0, 16).replace('T', ' ')} UTC in an earlier run` : '';
      return rev === current ? `now (${current})` : `before (${rev}${day})`;
    };
    out.push('### Fig. 5 on node processes over ZooKeeper, before and after', '');
    out.push(`\`npx tsx bench/search-processes.ts --checkouts BEFORE,.\` (${when(procs)}; fastest of ${procs.repeat} interleaved runs): random ${procs.n}-city instances without pruning, \`tidepool solve\` of each checkout with 2 local \`tidepool node\` processes × 1 worker, a 3-server ZooKeeper ensemble and TCP, all on loopback (process start-up not timed); the same solve on 1 process × 2 worker threads (no ZooKeeper, no TCP) as the reference for what the multi-process path costs; *ceiling* as above, measured in the same run with the ensemble running. ZooKeeper requests: the servers' \`zk_packets_received\` (pings included) from the nodes' start to their exit, per task of the job.`, '');
    const pct = (x: unknown) => (typeof x === 'number' ? f(x) : '–');
    out.push(table([['instance', 'checkout', 'plain (s)', 'ceiling', '2 processes (s)', 'efficiency', 'of ceiling', 'workers busy', '2 threads (s)', 'processes ÷ threads', 'tasks', 'ZooKeeper requests', 'per task', 'ensemble CPU share'],
      ...rows.map((r) => [r.instance, name(r.checkout as string), f(r.plain), f(r.ceiling), f(r.twoProcesses), f(r.efficiency), f(r.relativeEfficiency), pct(r.workersBusy), f(r.twoThreads), f(r.processesOverThreads), int(r.tasks), int(r.zkRequests), f(r.zkRequestsPerTask, 1), pct(r.zkCpuShare)])]), '');
    const spreads = rows.flatMap((r) => ['plain', 'pair', 'twoProcesses', 'twoThreads'].map((k) => { const xs = (r.samples as Json)[k] as number[]; return Math.max(...xs) / Math.min(...xs); }));
    // Core-seconds the 2 workers spent per plain solve's worth of work (the plain solve is 1).
    const inflation = now.flatMap((r) => ((r.samples as Json).workerSeconds as Array<number | null> | undefined)?.filter((x): x is number => typeof x === 'number').map((x) => x / (r.plain as number)) ?? []);
    out.push(`*workers busy*: the share of the 2-process run its 2 workers spent running tasks (\`workerSeconds\` from the nodes' tallies over 2 × the run); *ensemble CPU share*: the 3 ZooKeeper JVMs' CPU time from the nodes' start to their exit over 2 × the run (median); *workers busy* needs a checkout that reports its workers' time (from 930dff6 on).`, '');
    out.push(`On this VM one setup's samples within a run spread by up to ${f(Math.max(...spreads))}× (every sample is in \`results/search-processes.json\`). Where the time goes, measured: the runtime keeps the workers busy ${now.map((r) => pct(r.workersBusy)).join(' and ')} of the run, and the ensemble takes ${now.map((r) => pct(r.zkCpuShare)).join(' and ')} of the two cores. The idle part (traced task by task with temporary instrumentation, 2 warm node processes): the root starts 80–110 ms after submission (the client's node list, job znode, ledger and spec, about 40 ms; the scheduler's assignment, about 18 ms; the node's join — spec, member, election, the leader's recovery scan and its claim of the root — about 50 ms), then each steal leaves the thief idle about 10 ms, the victim's split record being written to the ensemble before it offers the task (since 872c123 the thief starts a stolen task at once and its claim overlaps the run; before, 18–23 ms per steal). The rest of the gap is how fast the workers run: they spent ${inflation.length ? `${f(Math.min(...inflation))}–${f(Math.max(...inflation))}` : '–'} core-seconds per plain solve's worth of work. Per task, from each worker thread's own CPU clock (\`/proc/thread-self/schedstat\`) on 11-city instances: 162–174 ns of CPU per search node against the plain solver's 152 (two plain solves in two worker threads of one process: about 152 too), and each worker's run took about 9 % longer than its CPU time (other threads of its process ran meanwhile: V8's compiler and GC helpers, the node's main thread). It is not more work: under valgrind (callgrind, V8 single-threaded so that compilation is deterministic) the worker of a 1-worker job executes fewer instructions for a 10-city solve than the plain solver (1.85 against 1.91 billion); the difference is cycles per instruction, which this VM's missing hardware counters do not let us break down. Also ruled out: V8 element kinds of nodes that arrive by message, single-threaded GC, and inlining (the task context's checks once made V8 leave \`children\` out of the search loop; making them cheap to inline changed nothing measurable). A sampled CPU profile of a 1-worker job's worker (\`perf record -e cpu-clock\` with \`node --perf-basic-prof\`; the VM has no hardware counters, but sampling works) matches the plain solver's function for function, except that \`Atomics.load\` is a builtin call (about 8 ns; V8 does not inline it) at 1 % of the worker's time: the task context looked at its control words on every 16th of its two checks per node; since 8fe043d on every 64th (\`CONTROL_CHECK_EVERY\`), which in an interleaved A/B (5 runs each) took the 2-worker solve from 9.16 to 8.80 s and the 1-worker one from 16.33 to 15.80 s. 2 node processes take about as long as 2 threads in one process (*processes ÷ threads*): ZooKeeper, TCP and the extra process cost little beside it.`, '');
    out.push(`ZooKeeper requests are per job more than per task: a trace of one 7-task run's requests (temporary instrumentation) counted 276, of which the ledger's transactions (about 2.4 per task) and the leader's reads of the task list are the per-task part; the rest is each node, the client and the scheduler following membership, assignments, the job's result and the bound (a watch re-read per change per watcher). Since the *before* checkout, jobs gained kinds, a control channel, tallies and node statistics, which is most of the rise; global variables now publish with one write instead of a read and a write (and coalesce proposals made while a write is in flight), and a scheduler pass in a steady cluster reads only the epoch; a task split off another starts from the job's bound (it used to propose worse values until its first sync, each costing the ensemble a read: 18 in a traced 2-second job), and a job is submitted in one transaction instead of five requests.`, '');
    const rel = now.map((r) => r.relativeEfficiency as number);
    targets.push({ what: '2 node processes over ZooKeeper, pruning disabled, efficiency of the machine ceiling', target: '≥ 0.95', value: rel.map((x) => f(x)).join(', '), met: rel.every((x) => x >= 0.95),
      note: `processes ÷ threads ${now.map((r) => f(r.processesOverThreads)).join(', ')}; ZooKeeper requests per task ${now.map((r) => f(r.zkRequestsPerTask, 1)).join(', ')} (before: ${rows.filter((r) => r.checkout !== current).map((r) => f(r.zkRequestsPerTask, 1)).join(', ') || 'not measured'})` });
  }
  // ---- Fig. 6/7 ---------------------------------------------------------------------------------
  out.push('## Fig. 6 and Fig. 7: elastic scaling, S% = (S_E − S_k) / S_k · 100 (Eq. 1)', '');
  out.push('**TASKWORK (paper):** 14-city TSP without pruning; 10 VMs, +20 or +40 VMs at t1 for 10–30 s, then decommissioned. With 10 s of phase 2, +40 VMs *lowered* the speedup while +20 raised it; longer phases gave higher S% for more VMs (up to roughly +100 % for 30 s with 40 VMs).', '');
  if (elasticity) {
    const rs = elasticity.results as Json[];
    out.push(`**Here** (\`node dist/bench/elasticity.js\`; ${elasticity.instance} without pruning, plain solver ${f(elasticity.sequentialSeconds)} s; k = ${elasticity.k} node × 1 worker; nodes added at t1 = ${elasticity.t1} s (already running, as in the paper) and drained after the phase-2 duration; means of ${elasticity.repeat} runs):`, '');
    out.push(table([['backend', 'nodes in phase 2', 'phase 2 (s)', 'mean time (s)', 'speedup', 'S%', 'migrations'],
      ...rs.map((r) => [r.backend, (elasticity.k as number) + (r.add as number), r.phase2 === 0 ? 'static' : r.phase2, f(mean(r.seconds as number[])), f(r.speedup as number), f(r.speedupChangePercent as number, 1), r.migrations && r.backend === 'embedded' ? (r.migrations as number[]).join('/') : '–'])]));
    out.push('', '![S% by phase-2 duration](results/elasticity-speedup.svg)', '', '![nodes and busy workers over time in an elastic run](results/elasticity-timeline.svg)', '');
    out.push('On 2 cores a third node only shares the two cores (3 threads), so "3 nodes in phase 2" shows the cost of scaling out beyond the hardware — the analogue of the paper\'s +40 VMs for 10 s. The ZooKeeper rows include real TCP between node processes and coordination through a 3-server ensemble whose three JVMs share the same 2 cores; migrations happen inside the node processes and are not counted from outside (–).', '');
  }
  if (clique) {
    out.push('## Maximum clique: the bitset colour bound (MCS/BBMC family)', '',
      `\`node dist/bench/search.js --clique-only\`: DIMACS graphs, fastest of ${clique.repeat}; *before* is the MCQ-style solver of commit ${String((clique.before as Json).commit).slice(0, 7)} measured on this machine the same day (every sample in the JSON):`, '');
    out.push(table([['graph', 'ω', 'search nodes', 'sequential s', '2 workers s', 'before: 2 workers s', '× faster (2 workers)'], ...(clique.graphs as Json[]).map((g) => [
      g.graph, g.omega, int(g.sequential.searchNodes as number), f(g.sequential.seconds as number, 3), f(g.twoWorkers.seconds as number, 3),
      g.before ? f(g.before.twoWorkers.seconds as number, 2) : '–', g.fasterThanBefore ? f(g.fasterThanBefore.twoWorkers as number, 1) : '–',
    ])]), '');
  }

  if (dimacs) {
    const rows = dimacs.rows as Json[];
    out.push('## Maximum clique: every DIMACS graph of the curated set', '',
      `\`node dist/bench/clique-dimacs.js --data DIR\`: all ${rows.length} graphs of the set's \`clique/\` solved by \`tidepool solve clique\` as a user runs it, embedded (one process, ${dimacs.machine?.usableCores ?? 2} worker threads) and on 3 \`tidepool node\` processes × 1 worker over a 3-server ZooKeeper ensemble, all on loopback (${when(dimacs)}). Every answer equals the published ω and the CLI checked its clique against the graph; graphs travel through the data plane (MANN_a27's input is larger than a znode).`, '');
    out.push(table([['graph', 'vertices', 'edges', 'ω', 'embedded (s)', 'search nodes', '3 node processes (s)', 'search nodes'], ...rows.map((r) => [
      r.graph, int(r.vertices as number), int(r.edges as number), r.omega, f(r.embedded.seconds as number, 2), int(r.embedded.searchNodes as number), f(r.threeProcesses.seconds as number, 2), int(r.threeProcesses.searchNodes as number),
    ])]), '');
    const all = rows.every((r) => r.embedded.objective === r.omega && r.threeProcesses.objective === r.omega && r.embedded.verified && r.threeProcesses.verified);
    targets.push({ what: 'every curated DIMACS graph solved to its published ω, embedded and on 3 node processes', target: 'all', value: `${rows.filter((r) => r.embedded.objective === r.omega && r.threeProcesses.objective === r.omega).length} of ${rows.length}`, met: all, note: 'TASKWORK §5 / issue 11' });
  }
  if (elasticity) await writeElasticityCharts(elasticity as ElasticityResults);
  return { targets, lines: out };
}
