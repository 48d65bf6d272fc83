/** RESULTS.md section for issue 27's numbers across test hosts (bench/hosts.ts): Fig. 5 and S% with latency added on every link. */
import { f, load, table, when, type Json, type Section } from './format.js';

export function hostsSections(): Section {
  const hosts = load('hosts');
  const out: string[] = ['## Across test hosts: Fig. 5 and S% with latency on every link', ''];
  out.push('TASKWORK\'s Fig. 5 workload (random TSP, pruning off) and its elasticity run repeated across test hosts (`test/support/host-cluster.ts`: network namespaces, a 3-server ensemble on three of them, `tidepool node` × 1 worker on two more, every link through a userspace proxy that adds the latency), beside the loopback figures above.', '');
  if (!hosts) {
    out.push('Not measured yet: `sudo node dist/bench/hosts.js` (needs root for the namespaces; `npm run bench` runs it).', '');
    return { targets: [], lines: out };
  }
  const rows = hosts.rows as Json[];
  out.push(`**Here** (\`node dist/bench/hosts.js --n ${hosts.n as number} --seed ${hosts.seed as number} --repeat ${hosts.repeat as number}\`, ${when(hosts)}; S%: one node, the other added at ${hosts.t1 as number} s and drained at ${(hosts.t1 as number) + (hosts.d as number)} s; steal latency: the bucket bound of \`tidepool_steal_latency_seconds\` each percentile falls under):`, '');
  const ms = (s: unknown) => (typeof s === 'number' ? `≤ ${f(s * 1000, 1)} ms` : '–');
  out.push(table([['added latency', 'efficiency', '÷ ceiling', 'ZooKeeper requests per task', 'steals', 'steal p50', 'p90', 'p99', 'S%'],
    ...rows.map((r) => [`${r.latencyMs as number} ms`, f(r.efficiency as number), f(r.relativeEfficiency as number), f(r.zkRequestsPerTask as number, 1), r.steals as number, ms(r.stealLatencyP50), ms(r.stealLatencyP90), ms(r.stealLatencyP99), `${f(r.speedupChangePercent as number, 1)} %`])]));
  out.push('');
  return { targets: [], lines: out };
}
