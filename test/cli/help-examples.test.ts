/**
 * Every example a `--help` text prints, and every `tidepool …` / `npx tidepool …` command of README.md
 * (in its `sh` code blocks, and `npx tidepool …` in its prose; the command table holds synopses with
 * placeholders, not commands), runs as printed: exit code 0, no error, JSON where --json asks for it.
 * Each block of examples runs in order in one working directory that has the repository's `test/`,
 * `examples/` and `data/` (so the files the examples name are there, and what they write stays out of
 * the repository), with `tidepool` on the PATH (the built CLI). Commands that serve (node, monitor,
 * manager, serve, zk-tunnel, provision, up) run until the end of their block and must then stop cleanly on
 * SIGTERM, unless a later line of the block stopped them (`tidepool down`), with exit code 0 too.
 *
 * What the test changes before running a line, and why:
 *   - `npx tidepool` → `tidepool`: what npx runs once the package is installed (no registry here);
 *   - ZooKeeper addresses (`127.0.0.1:2181`, `10.0.0.11:2181,…`) → the ensemble this test starts on loopback,
 *     and the other machines' addresses (`--host 10.0.0.11`) → 127.0.0.1 (one machine plays them all);
 *   - `/etc/tidepool/secret`, `~/.tidepool/secret` → a file holding the secret of the test's cluster;
 *   - the fixed ports 8080 and 7480 → a free port (tests run side by side on one machine);
 *   - the placeholders JOB and NODE → a job and a node of the test's cluster: for `result` a finished
 *     job, otherwise a fresh running job; NODE a node of that running job;
 *   - `tidepool demo` without `--quick` gets the documented `--instance data/tsplib/att48.tsp` (the
 *     bundled gr48 takes minutes on a loaded 2-core machine; att48 is what --quick solves).
 * Nothing else is changed: flags, files and values are as printed.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { connect } from '../../src/coord/connect.js';
import type { CoordClient } from '../../src/coord/types.js';
import { allCommands, buildProgram } from '../../src/cli/main.js';
import { commandPath } from '../../src/cli/settings/settings-command.js';
import { awaitOutcome, cancelJob } from '../../src/runtime/job/outcome.js';
import { listNodes } from '../../src/runtime/scheduler/index.js';
import { submitJob } from '../../src/runtime/client/submit.js';
import { taskPoolJob } from '../../src/runtime/pool/task-pool-ref.js';
import type { TaskRef } from '../../src/runtime/worker/task.js';
import { runCommand, startServing, type Run, type Serving } from '../support/cli.js';
import { secretFile, secretIn, startNodeProcess, type NodeProcess } from '../support/node-process.js';
import { waitFor, withDeadline } from '../support/wait.js';
import { startEnsemble, type ZkEnsemble } from '../support/zk-ensemble.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'bin/tidepool.mjs');
/** The jobs the placeholders stand for run examples/count.js: plain JavaScript, so that a node of the built CLI (README's) can run it too. */
const COUNT: TaskRef = { module: new URL('../../examples/count.js', import.meta.url).href, export: 'default' };
/** Commands that serve until they are stopped. */
const SERVING = new Set(['node', 'monitor', 'coordinator', 'manager', 'serve', 'zk-tunnel', 'provision', 'up']);

interface Example {
  source: string;
  lines: string[];
}

/** The "Example(s):" block of every command's help, as the CLI prints it. */
function helpExamples(): Example[] {
  return allCommands(buildProgram()).filter((c) => c.name() !== 'help').flatMap((cmd) => {
    let text = '';
    cmd.configureOutput({ writeOut: (s) => void (text += s) });
    cmd.outputHelp();
    const lines = text.split('\n');
    const at = lines.findIndex((l) => /^Examples?:$/.test(l));
    if (at < 0) return [];
    const block: string[] = [];
    for (const l of lines.slice(at + 1)) {
      if (!/^ {2}\S/.test(l)) break;
      block.push(l.trim());
    }
    return [{ source: `tidepool ${commandPath(cmd).join(' ')} --help`.replace(/ +--help$/, ' --help'), lines: block }];
  });
}

/** README.md's commands: each `sh` block's tidepool lines (without a leading `npm ci &&`), and inline `npx tidepool …`. */
function readmeExamples(): Example[] {
  const text = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const out: Example[] = [];
  let block: Example | undefined;
  text.split('\n').forEach((line, i) => {
    if (block === undefined && /^```sh\s*$/.test(line)) block = { source: `README.md:${i + 1}`, lines: [] };
    else if (block !== undefined && /^```\s*$/.test(line)) {
      if (block.lines.length > 0) out.push(block);
      block = undefined;
    } else if (block !== undefined) {
      const command = /^(?:npm ci && )?((?:npx )?tidepool .*)$/.exec(line)?.[1];
      if (command !== undefined) block.lines.push(command);
    }
  });
  for (const m of text.matchAll(/(?<!`)`(npx tidepool [^`]+)`/g)) {
    out.push({ source: `README.md:${text.slice(0, m.index).split('\n').length} (inline)`, lines: [m[1]!] });
  }
  return out;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe('every --help example and README command runs as printed', () => {
  let zk: ZkEnsemble;
  let client: CoordClient;
  const nodes: NodeProcess[] = [];
  const secret = secretFile();
  const work = mkdtempSync(join(tmpdir(), 'tp-examples-'));
  const shims = join(work, '.bin');
  const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TIDEPOOL_')));
  let finished = '';
  let running: string | undefined;

  before(async () => {
    for (const dir of ['test', 'examples', 'data']) symlinkSync(join(ROOT, dir), join(work, dir));
    mkdirSync(shims);
    writeFileSync(join(shims, 'tidepool'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
    chmodSync(join(shims, 'tidepool'), 0o755);
    env.PATH = `${shims}:${env.PATH ?? ''}`;
    zk = await startEnsemble({ size: 1 });
    client = await connect(zk.connectionString, { secret: secretIn(secret) });
    nodes.push(...await Promise.all([1, 2].map(() => startNodeProcess({ zk: zk.connectionString, secretFile: secret }))));
    const done = await submitJob(client, { ...taskPoolJob(COUNT, { n: 1000 }), nodes: 1, secret: secretIn(secret) });
    const outcome = await withDeadline(awaitOutcome(client, done.id), 'the finished job', 60_000);
    assert.equal(outcome.status === 'done' && outcome.value, 168, 'examples/count.js counts the 168 primes below 1000');
    finished = done.id;
  });
  after(async () => {
    for (const n of nodes) n.kill('SIGKILL');
    await Promise.all(nodes.map((n) => n.exited));
    await client.close();
    await zk.stop();
  });

  /** A fresh job running on one of the test's nodes (the one before is cancelled). */
  async function runningJob(): Promise<string> {
    await idle();
    const spec = await submitJob(client, { ...taskPoolJob(COUNT, { n: 1e15 }), nodes: 1, secret: secretIn(secret) }); // runs until cancelled
    running = spec.id;
    await waitFor(async () => (await listNodes(client)).some((n) => n.job === spec.id), 'the job to run on a node', 60_000);
    return spec.id;
  }

  /** No job of the test's running: every node idle again. */
  async function idle(): Promise<void> {
    if (running !== undefined) await cancelJob(client, running).catch(() => false);
    running = undefined;
    await waitFor(async () => (await listNodes(client)).every((n) => n.job === null), 'every node to be idle', 60_000);
  }

  async function adjust(line: string, port: number): Promise<string> {
    const command = /\btidepool\s+(\S+)/.exec(line)?.[1];
    let out = line.replace(/\bnpx tidepool\b/g, 'tidepool')
      .replace(/(zk:\/\/)?(127\.0\.0\.1|zk\d|10\.0\.0\.\d+):2181(,(zk\d|10\.0\.0\.\d+):2181)*/g, zk.hosts)
      .replace(/\b10\.0\.0\.\d+\b/g, '127.0.0.1')
      .replace(/(\/etc\/tidepool|~\/\.tidepool)\/secret/g, secret)
      .replace(/\b(8080|7480)\b/g, String(port));
    if (command === 'demo' && !/--quick/.test(out)) out = out.replace(/^(tidepool demo[^#]*?)(\s*#.*)?$/, '$1 --instance data/tsplib/att48.tsp$2');
    if (/\bJOB\b/.test(out)) out = out.replace(/\bJOB\b/g, command === 'result' ? finished : (running ?? await runningJob()));
    if (/\bNODE\b/.test(out)) {
      const job = running ?? await runningJob();
      const node = (await listNodes(client)).find((n) => n.job === job)!;
      out = out.replace(/\bNODE\b/g, node.id);
    }
    return out;
  }

  /** A serving command with its exit code, once it has ended (by SIGTERM at the end of the block, or stopped by a line of it). */
  type ServingUntilStopped = Serving & { exited: Promise<number | null> };

  async function serve(line: string): Promise<ServingUntilStopped> {
    const s = await startServing('sh', ['-c', `exec ${line}`], { cwd: work, env, what: line, timeoutMs: 180_000 });
    const ended = s.child.exitCode !== null || s.child.signalCode !== null;
    return { ...s, exited: ended ? Promise.resolve(s.child.exitCode) : new Promise((resolve) => s.child.once('exit', (c) => resolve(c))) };
  }

  /** Commands that ran already (the README repeats some help examples), without comments: each runs once. */
  const ran = new Set<string>();
  const key = (line: string) => line.replace(/\s+#.*$/, '').replace(/\bnpx tidepool\b/g, 'tidepool').replace(/\s+/g, ' ').trim();

  async function runBlock(example: Example): Promise<void> {
    if (example.lines.every((l) => ran.has(key(l)))) return;
    await idle();
    const port = await freePort();
    const serving: Array<{ line: string } & ServingUntilStopped> = [];
    try {
      for (const printed of example.lines) {
        const line = await adjust(printed, port);
        const command = /^tidepool\s+(\S+)/.exec(line)?.[1];
        if (command !== undefined && SERVING.has(command)) {
          serving.push({ line, ...await serve(line) });
          continue;
        }
        if (!/\b(JOB|NODE)\b/.test(printed) && ran.has(key(printed))) continue;
        const run: Run = await runCommand('sh', ['-c', line], { cwd: work, env, timeoutMs: 240_000 });
        assert.equal(run.code, 0, `${example.source}: ${printed}\n(ran: ${line})\n${run.stdout}${run.stderr}`);
        assert.doesNotMatch(run.stderr, /^error:/m, `${example.source}: ${printed}`);
        if (/\btidepool\b.*\s--json\b/.test(line)) {
          const last = run.stdout.trim().split('\n').at(-1) ?? '';
          assert.doesNotThrow(() => JSON.parse(last), `${example.source}: ${printed} prints JSON, got: ${run.stdout}`);
        }
        ran.add(key(printed));
      }
    } finally {
      for (const s of serving.reverse()) {
        if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGTERM');
        const code = await withDeadline(s.exited, `${s.line} to stop`, 90_000);
        assert.equal(code, 0, `${example.source}: ${s.line} stops cleanly on SIGTERM:\n${s.output()}`);
      }
    }
  }

  const examples = [...helpExamples(), ...readmeExamples()];

  it('finds the examples: every command with work or a cluster to act on has some, and README has its blocks', () => {
    const sources = new Set(examples.map((e) => e.source));
    for (const cmd of ['demo', 'solve', 'iterate', 'node', 'monitor', 'status', 'jobs', 'scale', 'cancel', 'control', 'drain', 'result', 'manager', 'submit', 'warn', 'clear', 'serve', 'coord', 'coord ls', 'coord get', 'malleable run', 'workflow run', 'workflow validate', 'workflow info', 'workflow status', 'workflow statistics', 'provision', 'up', 'down', 'deploy k8s']) {
      assert.ok(sources.has(`tidepool ${cmd} --help`), `tidepool ${cmd} --help has examples`);
    }
    assert.ok(examples.filter((e) => e.source.startsWith('README.md')).length >= 5, 'README\'s commands');
  });

  for (const example of examples) {
    it(`${example.source}: ${example.lines.join(' ; ')}`, { timeout: 600_000 }, () => runBlock(example));
  }
});
