/**
 * Structured logs: records carry the job, node and task ids as fields, to a logger a program supplies
 * (pino itself, or any object with pino's methods) or as JSON lines of the default logger; the default
 * level writes nothing at info.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { Cluster } from '../../src/runtime/client/cluster.js';
import type { TaskRef } from '../../src/runtime/worker/task.js';
import { LOG_LEVELS, log, logEnabled, setLogFormat, setLogger, setLogLevel, type Logger, type LogLevel } from '../../src/util/log.js';

const FLAKY: TaskRef = { module: new URL('../runtime/apps/failure-policies.ts', import.meta.url).href, export: 'flaky' };
const PROGRAM = fileURLToPath(new URL('./apps/retrying-job.ts', import.meta.url));
const T = { timeout: 60_000 };
const LEAVES = 5;
/** Leaves 0..4 each add their index: 10 once every failed run was retried. */
const SUM = 10;

interface RetryRecord {
  component: string;
  message: string;
  job?: string;
  node?: string;
  task?: string;
  level?: string | number;
}

/** Runs the flaky job (each leaf fails once and is retried) on an embedded cluster; returns the job and node ids. */
async function runFlaky(opts: { logger?: Logger } = {}): Promise<{ job: string; node: string }> {
  const cluster = await Cluster.embedded({ nodes: 1, workers: 1, ...opts });
  try {
    const job = await cluster.submit(FLAKY, { index: 0, leaves: LEAVES, fan: true });
    assert.equal(await job.result<number>(), SUM);
    return { job: job.id, node: cluster.localNodes()[0]!.id };
  } finally {
    await cluster.close();
  }
}

function retries(records: RetryRecord[]): RetryRecord[] {
  return records.filter((r) => r.component === 'runtime' && /failed \(attempt 1\); running it again/.test(r.message));
}

/** Captures what the default logger writes to stderr while `fn` runs, at `level` and `format`. */
async function capture(level: LogLevel, format: 'text' | 'json', fn: () => Promise<unknown>): Promise<string[]> {
  const previous: LogLevel = [...LOG_LEVELS].reverse().find((l) => l !== 'silent' && logEnabled(l)) ?? 'silent';
  const lines: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array) => {
    lines.push(...String(chunk).split('\n').filter((l) => l !== ''));
    return true;
  }) as typeof process.stderr.write;
  setLogLevel(level);
  setLogFormat(format);
  try {
    await fn();
  } finally {
    process.stderr.write = write;
    setLogLevel(previous);
    setLogFormat('text');
  }
  return lines;
}

describe('structured logs', () => {
  it('a program\'s pino logger gets the runtime\'s records with job, node and task fields', T, async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const { job, node } = await runFlaky({ logger });
    const records = lines.map((l) => JSON.parse(l) as RetryRecord & { msg: string }).map((r) => ({ ...r, message: r.msg }));
    const retried = retries(records);
    assert.equal(retried.length, LEAVES, 'one record per retried leaf');
    for (const r of retried) {
      assert.equal(r.job, job);
      assert.equal(r.node, node);
      assert.match(r.task ?? '', /\S/);
      assert.equal(r.level, 30, 'pino\'s own level number for info');
    }
    assert.equal(new Set(retried.map((r) => r.task)).size, LEAVES, 'each record names its own task');
  });

  it('any object with pino\'s methods will do; setLogger sends records without a node\'s logger there too', T, async () => {
    const records: Array<RetryRecord & { level: string }> = [];
    const at = (level: string) => (fields: object, message: string) => void records.push({ ...(fields as RetryRecord), message, level });
    const logger: Logger = { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug'), trace: at('trace') };
    setLogger(logger);
    try {
      const { job, node } = await runFlaky();
      log.child({ job: 'j-outside' }).info('test', 'a record of the program');
      const retried = retries(records);
      assert.equal(retried.length, LEAVES);
      assert.ok(retried.every((r) => r.job === job && r.node === node && r.level === 'info'));
      assert.deepEqual(records.at(-1), { component: 'test', job: 'j-outside', message: 'a record of the program', level: 'info' });
    } finally {
      setLogger(undefined);
    }
  });

  it('JSON lines of the default logger carry job, node and task; text lines name them too', T, async () => {
    let ids: { job: string; node: string } | undefined;
    const json = await capture('info', 'json', async () => (ids = await runFlaky()));
    const retried = retries(json.map((l) => JSON.parse(l) as RetryRecord));
    assert.equal(retried.length, LEAVES);
    for (const r of retried) {
      assert.equal(r.job, ids!.job);
      assert.equal(r.node, ids!.node);
      assert.match(r.task ?? '', /\S/);
      assert.equal(r.level, 'info');
    }
    const text = await capture('info', 'text', async () => (ids = await runFlaky()));
    const line = text.find((l) => /failed \(attempt 1\)/.test(l));
    assert.match(line ?? '', new RegExp(`^\\S+ INFO  \\[runtime\\] task \\S+ failed \\(attempt 1\\).* job=${ids!.job} node=${ids!.node} task=\\S+$`));
  });

  it('the default level writes nothing at info: a program whose run logs at info is silent unless asked', T, async () => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TIDEPOOL_')));
    const run = (extra: Record<string, string>) => promisify(execFile)(process.execPath, ['--import', 'tsx', PROGRAM], { env: { ...env, ...extra } });
    const quiet = await run({});
    assert.equal(quiet.stdout.trim(), String(SUM));
    assert.equal(quiet.stderr, '', 'nothing on stderr at the default level');
    const loud = await run({ TIDEPOOL_LOG: 'info' });
    assert.equal(loud.stdout.trim(), String(SUM));
    assert.match(loud.stderr, /INFO {2}\[runtime\] task \S+ failed \(attempt 1\)/, 'the same run logs at info when asked');
    assert.match(loud.stderr, /INFO {2}\[test\] the job ran/);
  });
});
