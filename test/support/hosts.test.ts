/**
 * Self-test of the test hosts harness (hosts.ts): hosts reach each other at their own addresses,
 * each sees only its own installation, a partition and a cut stop traffic and healing restores it,
 * a share of packets is dropped, the latency proxy delays at least as much as it was told, a host's
 * processes die with killAll, and nothing is left after teardown, nor after a run that was killed.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { waitFor } from './wait.js';
import { PROJECT_ROOT, removeStaleHosts, TestHosts, type TestHost } from './hosts.js';

const PROBE = 'test/support/net-probe.mjs';
const PORT = 7001;

/** One round trip from `from` to host:port, as seen by the probe ("ok MS" or "fail CODE"). */
async function ping(from: TestHost, host: string, port: number, timeoutMs = 1_500): Promise<string> {
  const run = await from.run(process.execPath, [PROBE, 'ping', host, String(port), String(timeoutMs)], { timeoutMs: 30_000 });
  return run.stdout.trim();
}

describe('test hosts', () => {
  let hosts: TestHosts;
  let a: TestHost;
  let b: TestHost;
  let c: TestHost;

  before(async () => {
    hosts = await TestHosts.create({ names: ['a', 'b', 'c'] });
    [a, b, c] = hosts.hosts as [TestHost, TestHost, TestHost];
    for (const h of hosts.hosts) await h.spawn(process.execPath, [PROBE, 'echo', h.address, String(PORT)]).line(/^listening$/);
  });
  after(() => hosts.teardown());

  it('gives each host its own address in the harness subnet, and they reach each other there', async () => {
    assert.match(a.address, /^10\.213\.\d+\.1$/);
    assert.equal(new Set(hosts.hosts.map((h) => h.address)).size, 3);
    const seen = await b.run('ip', ['-4', '-o', 'addr', 'show', 'dev', 'eth0']);
    assert.match(seen.stdout, new RegExp(` ${b.address.replaceAll('.', '\\.')}/24 `));
    assert.match(await ping(b, a.address, PORT), /^ok /);
    assert.match(await ping(a, c.address, PORT), /^ok /);
    // Only the harness's subnet: no default route out of a host.
    assert.match(await ping(a, '192.0.2.1', 9, 500), /^fail (ENETUNREACH|EHOSTUNREACH|TIMEOUT)/);
  });

  it('shows each host only its own installation, at a path that holds nothing elsewhere', async () => {
    const own = await a.run('sh', ['-c', `test -f ${a.tidepoolBin} && echo own; test -e ${b.tidepoolBin} || echo no-b; test -e ${path.join(PROJECT_ROOT, 'package.json')} || echo no-project`]);
    assert.deepEqual(own.stdout.trim().split('\n'), ['own', 'no-b', 'no-project']);
    // The test process (the root namespace) sees the project where it is, and no host's copy.
    assert.ok(existsSync(path.join(PROJECT_ROOT, 'package.json')));
    assert.ok(!existsSync(a.tidepoolBin) && !existsSync(b.tidepoolBin));
    const version = await a.runTidepool(['--version']);
    assert.equal(version.code, 0, version.stderr);
  });

  it('partition cuts a host off and heal restores it', async () => {
    await hosts.partition(a);
    assert.match(await ping(b, a.address, PORT), /^fail /);
    assert.match(await ping(a, c.address, PORT), /^fail /);
    assert.match(await ping(b, c.address, PORT), /^ok /, 'the others still reach each other');
    await hosts.heal(a);
    assert.match(await ping(b, a.address, PORT, 10_000), /^ok /);
  });

  it('cut drops traffic between two chosen hosts only, uncut restores it', async () => {
    await hosts.cut(a, b);
    assert.match(await ping(a, b.address, PORT), /^fail TIMEOUT/);
    assert.match(await ping(b, a.address, PORT), /^fail TIMEOUT/);
    assert.match(await ping(a, c.address, PORT), /^ok /);
    await hosts.uncut(a, b);
    assert.match(await ping(a, b.address, PORT), /^ok /);
  });

  it('drops the share of packets asked for (50 %: about half, 100 %: all, 0 %: none)', async () => {
    await c.spawn(process.execPath, [PROBE, 'udp-echo', c.address, String(PORT)]).line(/^listening$/);
    const burst = async () => Number((await a.run(process.execPath, [PROBE, 'udp-burst', c.address, String(PORT), '200'])).stdout.trim().split(' ')[1]);
    assert.equal(await burst(), 200, 'no loss before');
    await hosts.dropShare(c, 50);
    const half = await burst();
    // Binomial(200, 0.5): 100 ± 7; outside 50–150 with a probability below 1e-12.
    assert.ok(half >= 50 && half <= 150, `${half} of 200 datagrams answered with 50 % dropped`);
    const rules = await c.run('nft', ['list', 'table', 'inet', 'tph']);
    assert.match(rules.stdout, /numgen random mod 100 < 50 drop/);
    await hosts.dropShare(c, 100);
    assert.equal(await burst(), 0);
    assert.match(await ping(a, c.address, PORT), /^fail TIMEOUT/);
    await hosts.dropShare(c, 0);
    assert.equal(await burst(), 200);
    assert.match(await ping(a, c.address, PORT), /^ok /);
  });

  it('adds at least the latency asked for through its proxy', async () => {
    const proxy = await hosts.latency({ host: a.address, port: PORT }, { latencyMs: 100, jitterMs: 20 });
    const direct = Number((await ping(b, a.address, PORT)).split(' ')[1]);
    const delayed = await ping(b, proxy.host, proxy.port, 5_000);
    assert.match(delayed, /^ok /);
    const rtt = Number(delayed.split(' ')[1]);
    // Two one-way trips of at least 100 - 20 ms each.
    assert.ok(rtt >= 160, `round trip through the proxy ${rtt} ms, set 100 ± 20 ms each way (direct: ${direct} ms)`);
    proxy.set({ latencyMs: 250 });
    const slower = Number((await ping(b, proxy.host, proxy.port, 5_000)).split(' ')[1]);
    assert.ok(slower >= 500, `round trip ${slower} ms, set 250 ms each way`);
  });

  it('kills every process of a host with killAll', async () => {
    const sleeper = c.spawn('sh', ['-c', 'sleep 300 & sleep 300 & wait']);
    // The shell and its two sleeps, beside the echo server.
    await waitFor(async () => (await c.pids()).length >= 4, `the shell and its sleeps in ${c.name}`);
    await c.killAll();
    assert.equal(await sleeper.exited, 'SIGKILL');
    assert.deepEqual(await c.pids(), []);
  });
});

describe('test hosts teardown', () => {
  it('leaves nothing behind: namespaces, links, bridge, addresses, directories, locks, processes', async () => {
    const hosts = await TestHosts.create({ names: ['x', 'y'] });
    const proc = hosts.hosts[0]!.spawn('sleep', ['300']);
    await hosts.latency({ host: hosts.hosts[1]!.address, port: PORT }, { latencyMs: 1 });
    await hosts.cut(hosts.hosts[0]!, hosts.hosts[1]!);
    assert.ok(hosts.leftovers().length >= 6, hosts.leftovers().join(', '));
    await hosts.teardown();
    assert.deepEqual(hosts.leftovers(), []);
    assert.equal(await proc.exited, 'SIGKILL');
  });

  it('removes what a killed run left when the next one starts', async () => {
    // A separate process creates hosts and is SIGKILLed: no exit hook of its own runs.
    const script = `import { TestHosts } from ${JSON.stringify(new URL('./hosts.ts', import.meta.url).href)};
      const h = await TestHosts.create({ names: ['z'] });
      h.hosts[0].spawn('sleep', ['300']);
      console.log(JSON.stringify({ ns: h.hosts[0].ns, link: h.hosts[0].link, bridge: h.bridge, dir: h.baseDir, octet: h.octet }));
      setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n')) resolve(out.split('\n')[0]!);
      });
      child.once('exit', (code) => reject(new Error(`the crashing run ended (${code}) before creating its hosts`)));
    });
    const made = JSON.parse(line) as { ns: string; link: string; bridge: string; dir: string; octet: number };
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const removed = removeStaleHosts();
    assert.ok(removed.includes(`netns ${made.ns}`), removed.join(', '));
    assert.ok(removed.includes(`link ${made.bridge}`), removed.join(', '));
    assert.ok(removed.includes(`lock tph-subnet-${made.octet}.lock`), removed.join(', '));
    assert.ok(!existsSync(made.dir));
  });
});
