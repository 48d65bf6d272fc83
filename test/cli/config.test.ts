/**
 * Settings per command: flags, scoped environment variables and a configuration file with a section
 * per command, checked against each command's schema. First on a small program shaped like tidepool's
 * (in process, typed values visible), then through the built CLI.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { applySettings } from '../../src/cli/settings/apply-settings.js';
import { UsageError } from '../../src/cli/errors.js';
import { duration, kinds } from '../../src/cli/settings/kinds.js';
import { SettingsCommand } from '../../src/cli/settings/settings-command.js';
import { assertCleanError, tidepool, type Run } from '../support/cli.js';

/** Writes `text` to a new file in a new temporary directory and returns its path. */
function configFile(text: string, name = 'tidepool.yaml'): string {
  const file = join(mkdtempSync(join(tmpdir(), 'tp-config-')), name);
  writeFileSync(file, text);
  return file;
}

/** Runs `fn` with exactly `env` as the TIDEPOOL_* variables (others set by the caller's shell are hidden). */
async function withEnv<T>(env: Record<string, string>, fn: () => T | Promise<T>): Promise<T> {
  const saved = Object.entries(process.env).filter(([k]) => k.startsWith('TIDEPOOL_'));
  for (const [k] of saved) delete process.env[k];
  Object.assign(process.env, env);
  try {
    return await fn();
  } finally {
    for (const k of Object.keys(env)) delete process.env[k];
    for (const [k, v] of saved) process.env[k] = v;
  }
}

/** The CLI with exactly `env` as TIDEPOOL_* variables (tidepool() leaves the caller's out; the runner's TIDEPOOL_LOG too). */
function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return tidepool(args, 120_000, { TIDEPOOL_LOG: undefined, ...env });
}

/** A command that finishes at once. */
const FAST = ['solve', 'nqueens', '4', '--json'];

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

interface Seen {
  command?: string;
  opts?: Record<string, unknown>;
  origins?: Record<string, string>;
  stderr: string;
}

/** A small program shaped like tidepool's: global options, commands that share setting names with different meanings, a nested command. */
function program(seen: Seen): SettingsCommand {
  const root = new SettingsCommand('t')
    .exitOverride()
    .configureOutput({ writeErr: () => {} })
    .setting('--log-level <level>', 'level', kinds.logLevel, 'warn')
    .option('--config <file>', 'settings file')
    .hook('preAction', (cmd, action) => {
      seen.origins = applySettings(cmd, action);
    });
  const done = (name: string) => (opts: Record<string, unknown>) => {
    seen.command = name;
    seen.opts = { ...root.opts(), ...opts };
  };
  root.command('node')
    .option('--zk <conn>', 'zk').option('--timeout <duration>', 'timeout', '5s')
    .setting('--workers <n>', 'workers', kinds.positiveInt).option('--secret-file <file>', 'secret')
    .setting('--port <port>', 'port', kinds.port, '0').option('--json', 'json')
    .action(done('node'));
  root.command('solve')
    .option('--zk <conn>', 'zk').setting('--nodes <n>', 'nodes', kinds.count).setting('--workers <n>', 'workers', kinds.positiveInt)
    .option('--no-prune', 'no pruning').setting('--scale <plan>', 'plan', kinds.timePlan)
    .action(done('solve'));
  root.command('jobs').option('--zk <conn>', 'zk').setting('--prune <keep>', 'keep', kinds.count).setting('--grace <duration>', 'grace', duration('s'), '60s').action(done('jobs'));
  root.command('demo')
    .setting('--dashboard <port>', 'dashboard port', kinds.optionalPort, true).option('--no-dashboard', 'no dashboard')
    .setting('--scale-out <duration>', 'when', duration('s'))
    .action(done('demo'));
  const coord = root.command('coord');
  coord.command('ls').option('--zk <conn>', 'zk').option('--timeout <duration>', 'timeout', '5s').setting('--depth <n>', 'depth', kinds.positiveInt, '1').action(done('coord ls'));
  return root;
}

/** Parses `args` with exactly `env`; what the action saw, and what was written to stderr. */
async function parse(args: string[], env: Record<string, string> = {}): Promise<Seen> {
  const seen: Seen = { stderr: '' };
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string) => {
    seen.stderr += chunk;
    return true;
  }) as typeof process.stderr.write;
  try {
    await withEnv(env, () => program(seen).parseAsync(args, { from: 'user' }));
  } finally {
    process.stderr.write = write;
  }
  return seen;
}

const bad = (args: string[], pattern: RegExp, env: Record<string, string> = {}) =>
  assert.rejects(parse(args, env), (err: unknown) => err instanceof UsageError && pattern.test(err.message));

describe('settings: a section per command, common settings at the top', () => {
  const file = configFile([
    'zk: zk://10.0.0.5:2181',  // 1: common
    'secretFile: secret',      // 2: common, relative to this file
    'timeout: 2s',             // 3: common
    'node:',                   // 4
    '  workers: 4',            // 5
    '  port: 7400',            // 6
    'solve:',                  // 7
    '  prune: false',          // 8: solve's prune is a switch …
    '  nodes: 1',              // 9
    'jobs:',                   // 10
    '  prune: 10',             // 11: … jobs' prune a count: each is checked by its own command
    'coord:',                  // 12
    '  timeout: 800ms',        // 13: a group's section takes common settings for its commands
    '  ls:',                   // 14
    '    depth: 5',            // 15
    '',
  ].join('\n'));
  writeFileSync(join(file, '..', 'secret'), 'a-long-enough-cluster-secret');

  it('gives each command its own section and the common settings, typed', async () => {
    const node = await parse(['--config', file, 'node']);
    assert.deepEqual(
      [node.opts?.zk, node.opts?.timeout, node.opts?.workers, node.opts?.port, node.opts?.secretFile],
      ['zk://10.0.0.5:2181', 2000, 4, 7400, join(file, '..', 'secret')],
    );
    assert.deepEqual(node.origins, { config: '--config', zk: `${file}:1`, timeout: `${file}:3`, workers: `${file}:5`, secretFile: `${file}:2`, port: `${file}:6` });
    const solve = await parse(['--config', file, 'solve']);
    assert.deepEqual([solve.opts?.prune, solve.opts?.nodes, solve.opts?.workers], [false, 1, undefined], 'node\'s workers stay in node\'s section');
    const jobs = await parse(['--config', file, 'jobs']);
    assert.deepEqual([jobs.opts?.prune, jobs.opts?.grace], [10, 60_000]);
    const ls = await parse(['--config', file, 'coord', 'ls']);
    assert.deepEqual([ls.opts?.depth, ls.opts?.timeout, ls.opts?.zk], [5, 800, 'zk://10.0.0.5:2181']);
    assert.equal((await parse(['solve'])).opts?.prune, true, 'the default without a file');
  });

  it('a command\'s own setting at the top of the file is refused, naming the line and the sections it belongs in', async () => {
    await bad(['--config', configFile('zk: 127.0.0.1:2181\nnodes: 4\n'), 'solve'],
      /^\S+:2: "nodes" is not a common setting: put it in the section of the command it is for \(solve:\); common settings: logFormat, logLevel, secretFile, timeout, zk$/);
    await bad(['--config', configFile('coord:\n  depth: 3\n'), 'coord', 'ls'], /:2: "depth" is not a common setting: put it in the section of the command it is for \(coord: ls:\)/);
  });

  it('scopes variables to their command: TIDEPOOL_JOBS_PRUNE is not solve\'s, and the old unscoped name is ignored with a warning', async () => {
    assert.equal((await parse(['jobs'], { TIDEPOOL_JOBS_PRUNE: '10' })).opts?.prune, 10);
    const solve = await parse(['solve'], { TIDEPOOL_JOBS_PRUNE: '10', TIDEPOOL_SOLVE_PRUNE: 'no' });
    assert.equal(solve.opts?.prune, false);
    const old = await parse(['solve'], { TIDEPOOL_PRUNE: '10', TIDEPOOL_WORKERS: '3' });
    assert.deepEqual([old.opts?.prune, old.opts?.workers], [true, undefined]);
    assert.match(old.stderr, /^warning: TIDEPOOL_PRUNE is not read any more: a command's own settings are named after it, here TIDEPOOL_SOLVE_PRUNE/m);
    assert.match(old.stderr, /^warning: TIDEPOOL_WORKERS is not read any more: .* here TIDEPOOL_SOLVE_WORKERS/m);
    assert.equal((await parse(['coord', 'ls'], { TIDEPOOL_COORD_LS_DEPTH: '4' })).opts?.depth, 4);
    assert.equal((await parse(['node'], { TIDEPOOL_ZK: '10.0.0.9:2181' })).opts?.zk, 'zk://10.0.0.9:2181', 'common settings keep one global name');
  });

  it('the environment beats the file, and a flag beats the environment', async () => {
    const env = { TIDEPOOL_NODE_WORKERS: '6', TIDEPOOL_SOLVE_PRUNE: 'yes', TIDEPOOL_ZK: 'zk://10.0.0.9:2181' };
    const byEnv = await parse(['--config', file, 'node'], env);
    assert.deepEqual([byEnv.opts?.workers, byEnv.opts?.zk, byEnv.origins?.workers], [6, 'zk://10.0.0.9:2181', 'TIDEPOOL_NODE_WORKERS']);
    assert.equal((await parse(['--config', file, 'solve'], env)).opts?.prune, true);
    const byFlag = await parse(['--config', file, 'node', '--workers', '8'], env);
    assert.deepEqual([byFlag.opts?.workers, byFlag.origins?.workers], [8, '--workers']);
    assert.equal((await parse(['--config', file, 'solve', '--no-prune'], { TIDEPOOL_SOLVE_PRUNE: 'true' })).opts?.prune, false);
  });

  it('reads the file named by TIDEPOOL_CONFIG; an empty variable counts as unset', async () => {
    const seen = await parse(['node'], { TIDEPOOL_CONFIG: file, TIDEPOOL_NODE_WORKERS: '' });
    assert.deepEqual([seen.opts?.workers, seen.origins?.config], [4, 'TIDEPOOL_CONFIG']);
  });

  it('TIDEPOOL_LOG still sets the log level, after TIDEPOOL_LOG_LEVEL and before the file', async () => {
    const levels = configFile('logLevel: info\n');
    assert.equal((await parse(['--config', levels, 'solve'])).opts?.logLevel, 'info');
    assert.equal((await parse(['--config', levels, 'solve'], { TIDEPOOL_LOG: 'debug' })).opts?.logLevel, 'debug');
    assert.equal((await parse(['--config', levels, 'solve'], { TIDEPOOL_LOG: 'debug', TIDEPOOL_LOG_LEVEL: 'error' })).opts?.logLevel, 'error');
  });

  it('durations take units; a bare number in a flag\'s old unit still works, with a note', async () => {
    assert.equal((await parse(['node', '--timeout', '1m30s'])).opts?.timeout, 90_000);
    assert.equal((await parse(['jobs', '--grace', '500ms'])).opts?.grace, 500);
    const old = await parse(['jobs', '--grace', '30']);
    assert.equal(old.opts?.grace, 30_000);
    assert.match(old.stderr, /^warning: deprecated: --grace 30: a number without a unit \(s\) is the old form; write 30s/m);
    await bad(['demo', '--scale-out', '2x'], /^--scale-out: "2x" is not a duration: 500ms, 10s, 2m, 1h/);
  });

  it('plans are parsed and checked where they are given', async () => {
    assert.deepEqual((await parse(['solve', '--scale', '2s:+2,500ms:3'])).opts?.scale, [
      { at: 500, change: { to: 3 }, text: '500ms:3' }, { at: 2000, change: { by: 2 }, text: '2s:+2' },
    ]);
    await bad(['solve', '--scale', '2:+1'], /^--scale: "2:\+1": "2" is not a time after the start: give it a unit, e.g. 2s$/);
    await bad(['solve'], /^TIDEPOOL_SOLVE_SCALE: "60it:2": "60it" is not a time after the start: this plan is in time, not iterations$/, { TIDEPOOL_SOLVE_SCALE: '60it:2' });
  });

  it('a setting with a value and a switch (--dashboard <port>, --no-dashboard) takes either', async () => {
    const dashboard = async (text: string | undefined, env: Record<string, string> = {}) =>
      (await parse([...(text === undefined ? [] : ['--config', configFile(text)]), 'demo'], env)).opts?.dashboard;
    assert.equal(await dashboard(undefined), true);
    assert.equal(await dashboard('demo:\n  dashboard: false\n'), false);
    assert.equal(await dashboard('demo:\n  dashboard: 8080\n'), 8080);
    assert.equal(await dashboard(undefined, { TIDEPOOL_DEMO_DASHBOARD: 'false' }), false);
    assert.equal(await dashboard('demo:\n  dashboard: false\n', { TIDEPOOL_DEMO_DASHBOARD: '9000' }), 9000);
    assert.equal((await parse(['demo'], { TIDEPOOL_DEMO_SCALE_OUT: '1.5s' })).opts?.scaleOut, 1500);
    await bad(['--config', configFile('demo:\n  dashboard: http\n'), 'demo'], /:2: dashboard: "http" is not a port number \(0–65535\), or true or false$/);
  });

  it('rejects bad values naming the file line or the variable', async () => {
    const f = configFile('zk: zk://127.0.0.1:2181\nnode:\n  port: 70000\n');
    await bad(['--config', f, 'solve'], new RegExp(`^${escape(f)}:3: port: "70000" is not a port number \\(0–65535\\)$`), {}); // the whole file is checked, whatever runs
    await bad(['--config', file, 'node'], /^TIDEPOOL_ZK: bad connection string "zk:\/\/nope": "nope" is not host:port$/, { TIDEPOOL_ZK: 'nope' });
    await bad(['solve'], /^TIDEPOOL_SOLVE_PRUNE: "maybe" is not true or false$/, { TIDEPOOL_SOLVE_PRUNE: 'maybe' });
    const missing = configFile('secretFile: nowhere\n');
    await bad(['--config', missing, 'node'], new RegExp(`^${escape(missing)}:1: secretFile: cannot read ${escape(join(missing, '..', 'nowhere'))}: ENOENT$`));
    await bad(['--config', configFile('coord:\n  ls:\n    workers: 2\n'), 'node'], /:3: unknown setting "workers" for coord ls \(known: depth, timeout, zk\)$/);
    await bad(['--config', configFile('coord:\n  lss:\n    depth: 2\n'), 'node'], /:2: unknown command "coord lss" \(commands for coord: ls\)$/);
    await bad(['--config', configFile('json: true\n'), 'node'], /:1: "json" can only be given on the command line$/);
    await bad(['--config', configFile('node:\n  workers:\n'), 'node'], /:2: workers: no value given$/);
    await bad(['--config', configFile('node:\n  workers: [1, 2]\n'), 'node'], /:2: workers: "1 2" is not a positive whole number$/);
    await bad(['--config', configFile('42\n'), 'node'], /:1: the top level must be settings and sections written as "key: value", not a single value$/);
    await bad(['--config', configFile('node: 3\n'), 'node'], /:1: node: the section of "node" must hold "key: value" settings$/);
  });
});

describe('tidepool --config (the CLI)', () => {
  it('settings from the file reach the command; a section beats the top level, the environment the file, a flag the environment', { timeout: 60_000 }, async () => {
    // coord ls against a closed port fails after the timeout it was given, and says so with the address.
    const file = configFile('zk: 127.0.0.1:1\ntimeout: 5s\ncoord:\n  ls:\n    timeout: 700ms\n');
    const fromFile = await cli(['--config', file, 'coord', 'ls', '/']);
    assert.equal(fromFile.code, 1, fromFile.stderr);
    assert.match(fromFile.stderr, /^error: no ZooKeeper server at zk:\/\/127\.0\.0\.1:1 answered within 700ms \(--timeout\)$/m);
    assert.match((await cli(['--config', file, 'coord', 'ls', '/'], { TIDEPOOL_TIMEOUT: '800ms' })).stderr, /within 800ms/);
    assert.match((await cli(['--config', file, 'coord', 'ls', '/', '--timeout', '900ms'], { TIDEPOOL_TIMEOUT: '800ms' })).stderr, /within 900ms/);
  });

  it('a switch in a command\'s section changes the run (prune: false explores the whole tree); another command\'s prune does not', async () => {
    const searchNodes = async (args: string[], env: Record<string, string> = {}) => {
      const run = await cli([...args, 'solve', 'tsp', 'random:9:1', '--json'], env);
      assert.equal(run.code, 0, run.stderr);
      return (JSON.parse(run.stdout) as { stats: { searchNodes: number } }).stats.searchNodes;
    };
    const pruned = await searchNodes([]);
    const whole = await searchNodes(['--config', configFile('solve:\n  prune: false\njobs:\n  prune: 10\n')]);
    assert.ok(whole > 10 * pruned, `${whole} search nodes without pruning, ${pruned} with`);
    assert.equal(await searchNodes([], { TIDEPOOL_PRUNE: '10', TIDEPOOL_JOBS_PRUNE: '10' }), pruned, 'TIDEPOOL_PRUNE=10 no longer breaks solve');
  });

  it('an unknown setting is an error naming the file line, with exit code 2', async () => {
    const file = configFile('zk: zk://127.0.0.1:2181\nsolve:\n  wrokers: 3\n');
    assertCleanError(await cli(['--config', file, ...FAST]), new RegExp(`^error: ${escape(file)}:3: unknown setting "wrokers" for solve \\(known: [^)]*\\bworkers\\b[^)]*\\)$`, 'm'));
    assertCleanError(await cli(['--config', configFile('nodee:\n  workers: 2\n'), ...FAST]), /:1: unknown command "nodee" \(commands: [^)]*\bnode\b/);
  });

  it('a bad value is an error naming the file line, with exit code 2', async () => {
    const file = configFile('zk: zk://127.0.0.1:2181\nnode:\n  workers: four\n');
    assertCleanError(await cli(['--config', file, 'node']), new RegExp(`^error: ${escape(file)}:3: workers: "four" is not a positive whole number$`, 'm'));
  });

  it('a YAML syntax error names the file line', async () => {
    const file = configFile('zk: zk://127.0.0.1:2181\nsolve:\n  workers: [1\n  nodes: 2\n');
    assertCleanError(await cli(['--config', file, ...FAST]), new RegExp(`^error: ${escape(file)}:4: `, 'm'));
    const tabs = configFile('node:\n\tworkers: 2\n');
    assertCleanError(await cli(['--config', tabs, ...FAST]), new RegExp(`^error: ${escape(tabs)}:2: `, 'm'));
  });

  it('a missing file is an error naming --config or TIDEPOOL_CONFIG', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'tp-config-')), 'missing.yaml');
    assertCleanError(await cli(['--config', file, ...FAST]), new RegExp(`^error: --config: cannot read ${escape(file)}: ENOENT$`, 'm'));
    assertCleanError(await cli([...FAST], { TIDEPOOL_CONFIG: file }), new RegExp(`^error: TIDEPOOL_CONFIG: cannot read ${escape(file)}: ENOENT$`, 'm'));
  });

  it('a bad environment value is an error naming the variable', async () => {
    assertCleanError(await cli(['node'], { TIDEPOOL_NODE_WORKERS: 'x' }), /^error: TIDEPOOL_NODE_WORKERS: "x" is not a positive whole number$/m);
    assertCleanError(await cli([...FAST], { TIDEPOOL_LOG_FORMAT: 'xml' }), /^error: TIDEPOOL_LOG_FORMAT: "xml" is not one of text, json$/m);
    assertCleanError(await cli(['--log-format', 'xml', ...FAST]), /^error: --log-format: "xml" is not one of text, json$/m);
  });

  it('--log-format json writes log lines as JSON, from a flag, the environment or the file', async () => {
    const jsonLines = (run: Run) => run.stderr.trim().split('\n').map((line) => JSON.parse(line) as { level: string; component: string; detail?: Record<string, string> });
    const flag = await cli(['--log-level', 'debug', '--log-format', 'json', ...FAST]);
    assert.equal(flag.code, 0, flag.stderr);
    const [line] = jsonLines(flag);
    assert.equal(line?.level, 'debug');
    assert.equal(line?.component, 'config');
    assert.deepEqual(line?.detail, { logLevel: '--log-level', logFormat: '--log-format' });
    const file = configFile('logLevel: debug\nlogFormat: json\n');
    assert.equal(jsonLines(await cli(['--config', file, ...FAST]))[0]?.detail?.logFormat, `${file}:2`);
    assert.equal(jsonLines(await cli([...FAST], { TIDEPOOL_LOG_FORMAT: 'json', TIDEPOOL_LOG_LEVEL: 'debug' }))[0]?.detail?.logFormat, 'TIDEPOOL_LOG_FORMAT');
    const text = await cli(['--config', file, ...FAST], { TIDEPOOL_LOG_FORMAT: 'text' });
    assert.match(text.stderr, /^\S+ DEBUG \[config\] settings given /, 'the environment beats the file');
  });

  it('help names the environment variable of each option: common ones global, a command\'s own under its name', async () => {
    const run = await cli(['node', '--help']);
    assert.equal(run.code, 0);
    for (const name of ['TIDEPOOL_ZK', 'TIDEPOOL_TIMEOUT', 'TIDEPOOL_NODE_WORKERS', 'TIDEPOOL_SECRET_FILE', 'TIDEPOOL_NODE_PORT']) assert.match(run.stdout, new RegExp(`env:\\s+${name}\\b`));
    assert.doesNotMatch(run.stdout, /TIDEPOOL_(NODE_)?JSON/);
    assert.match((await cli(['coord', 'ls', '--help'])).stdout, /env:\s+TIDEPOOL_COORD_LS_DEPTH\b/);
  });
});
