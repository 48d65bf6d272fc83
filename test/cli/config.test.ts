import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SettingsCommand, applySettings } from '../../src/cli/config.js';
import { UsageError } from '../../src/cli/errors.js';
import { assertCleanError, tidepool, type Run } from '../support/cli.js';

/** Writes `text` to a new file in a new temporary directory and returns its path. */
function configFile(text: string, name = 'tidepool.yaml'): string {
  const file = join(mkdtempSync(join(tmpdir(), 'tp-config-')), name);
  writeFileSync(file, text);
  return file;
}

/** Runs `fn` with exactly `env` as the TIDEPOOL_* variables (others set by the caller's shell are hidden). */
function withEnv<T>(env: Record<string, string>, fn: () => T): T {
  const saved = Object.entries(process.env).filter(([k]) => k.startsWith('TIDEPOOL_'));
  for (const [k] of saved) delete process.env[k];
  Object.assign(process.env, env);
  try {
    return fn();
  } finally {
    for (const k of Object.keys(env)) delete process.env[k];
    for (const [k, v] of saved) process.env[k] = v;
  }
}

/** The CLI with exactly `env` as TIDEPOOL_* variables (the child copies the environment when it is spawned). */
function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return withEnv(env, () => tidepool(args));
}

/** A command that finishes at once (tidepool demo runs for half a minute). */
const FAST = ['solve', 'nqueens', '4', '--json'];

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

interface Seen {
  command?: string;
  opts?: Record<string, unknown>;
  origins?: Record<string, string>;
}

/** A small program shaped like tidepool's: global options, commands, a nested command. */
function program(seen: Seen): SettingsCommand {
  const root = new SettingsCommand('t')
    .exitOverride()
    .configureOutput({ writeErr: () => {} })
    .option('--log-level <level>', 'level', 'warn')
    .option('--config <file>', 'settings file')
    .hook('preAction', (cmd, action) => {
      seen.origins = applySettings(cmd, action);
    });
  const done = (name: string) => (opts: Record<string, unknown>) => {
    seen.command = name;
    seen.opts = { ...root.opts(), ...opts };
  };
  root.command('node')
    .option('--zk <conn>', 'zk').option('--workers <n>', 'workers').option('--secret-file <file>', 'secret')
    .option('--port <port>', 'port', '0').option('--json', 'json')
    .action(done('node'));
  root.command('solve').option('--workers <n>', 'workers').option('--no-prune', 'no pruning').option('--scale <schedule>', 'schedule').action(done('solve'));
  root.command('scale').option('--zk <conn>', 'zk').action(done('scale'));
  root.command('demo')
    .option('--dashboard <port>', 'dashboard port', true).option('--no-dashboard', 'no dashboard').option('--scale-out <seconds>', 'when')
    .action(done('demo'));
  root.command('coord').command('ls').option('--zk <conn>', 'zk').option('--depth <n>', 'depth', '1').action(done('coord ls'));
  return root;
}

async function parse(args: string[], env: Record<string, string> = {}): Promise<Seen> {
  const seen: Seen = {};
  await withEnv(env, () => program(seen).parseAsync(args, { from: 'user' }));
  return seen;
}

describe('settings from a file, the environment and flags', () => {
  const file = configFile([
    'zk: zk://10.0.0.5:2181',  // 1
    'workers: 2',              // 2
    'depth: 3',                // 3: only coord ls has it; node ignores it
    'secretFile: secret',      // 4: relative to this file
    'node:',                   // 5
    '  workers: 4',            // 6: beats the top level for node
    '  port: 7400',            // 7
    'solve:',                  // 8
    '  prune: false',          // 9
    'coord:',                  // 10
    '  ls:',                   // 11
    '    depth: 5',            // 12
    '',
  ].join('\n'));
  writeFileSync(join(file, '..', 'secret'), 'a-long-enough-cluster-secret');

  it('uses the file when no flag or variable is given, as the strings a flag would give', async () => {
    const seen = await parse(['--config', file, 'node']);
    assert.equal(seen.opts?.zk, 'zk://10.0.0.5:2181');
    assert.equal(seen.opts?.workers, '4', 'the node section beats the top level');
    assert.equal(seen.opts?.port, '7400', 'the file beats a default');
    assert.equal(seen.opts?.secretFile, join(file, '..', 'secret'), 'a relative path is relative to the file');
    assert.equal(seen.opts?.depth, undefined);
    assert.deepEqual(seen.origins, { config: '--config', zk: `${file}:1`, workers: `${file}:6`, secretFile: `${file}:4`, port: `${file}:7` });
  });

  it('applies nested sections and boolean settings', async () => {
    const ls = await parse(['--config', file, 'coord', 'ls']);
    assert.equal(ls.opts?.depth, '5', 'the coord ls section beats the top level');
    assert.equal(ls.opts?.zk, 'zk://10.0.0.5:2181');
    const solve = await parse(['--config', file, 'solve']);
    assert.equal(solve.opts?.prune, false);
    assert.equal(solve.opts?.workers, '2');
    assert.equal((await parse(['solve'])).opts?.prune, true, 'the default without a file');
  });

  it('the environment beats the file, and a flag beats the environment', async () => {
    const env = { TIDEPOOL_WORKERS: '6', TIDEPOOL_PRUNE: 'yes', TIDEPOOL_ZK: 'zk://10.0.0.9:2181' };
    const byEnv = await parse(['--config', file, 'node'], env);
    assert.equal(byEnv.opts?.workers, '6');
    assert.equal(byEnv.opts?.zk, 'zk://10.0.0.9:2181');
    assert.equal(byEnv.origins?.workers, 'TIDEPOOL_WORKERS');
    assert.equal((await parse(['--config', file, 'solve'], env)).opts?.prune, true);
    const byFlag = await parse(['--config', file, 'node', '--workers', '8'], env);
    assert.equal(byFlag.opts?.workers, '8');
    assert.equal(byFlag.origins?.workers, '--workers');
    assert.equal((await parse(['--config', file, 'solve', '--no-prune'], { TIDEPOOL_PRUNE: 'true' })).opts?.prune, false);
  });

  it('reads the file named by TIDEPOOL_CONFIG; an empty variable counts as unset', async () => {
    const seen = await parse(['node'], { TIDEPOOL_CONFIG: file, TIDEPOOL_WORKERS: '' });
    assert.equal(seen.opts?.workers, '4');
    assert.equal(seen.origins?.config, 'TIDEPOOL_CONFIG');
  });

  it('TIDEPOOL_LOG still sets the log level, after TIDEPOOL_LOG_LEVEL and before the file', async () => {
    const levels = configFile('logLevel: info\n');
    assert.equal((await parse(['--config', levels, 'solve'])).opts?.logLevel, 'info');
    assert.equal((await parse(['--config', levels, 'solve'], { TIDEPOOL_LOG: 'debug' })).opts?.logLevel, 'debug');
    assert.equal((await parse(['--config', levels, 'solve'], { TIDEPOOL_LOG: 'debug', TIDEPOOL_LOG_LEVEL: 'error' })).opts?.logLevel, 'error');
  });

  it('a key that names both a command and a setting is a section when it holds a mapping', async () => {
    const both = configFile('scale: 2s:+1\nscale:\n  zk: zk://10.0.0.7:2181\n');
    await assert.rejects(parse(['--config', both, 'solve']), /:2: Map keys must be unique/);
    const setting = configFile('scale: 2s:+1\n');
    assert.equal((await parse(['--config', setting, 'solve'])).opts?.scale, '2s:+1');
    const section = configFile('scale:\n  zk: zk://10.0.0.7:2181\n');
    assert.equal((await parse(['--config', section, 'scale'])).opts?.zk, 'zk://10.0.0.7:2181');
    assert.equal((await parse(['--config', section, 'solve'])).opts?.scale, undefined);
  });

  it('a setting with a value and a switch (--dashboard <port>, --no-dashboard) takes either', async () => {
    const dashboard = async (text: string | undefined, env: Record<string, string> = {}) =>
      (await parse([...(text === undefined ? [] : ['--config', configFile(text)]), 'demo'], env)).opts?.dashboard;
    assert.equal(await dashboard(undefined), true);
    assert.equal(await dashboard('dashboard: false\n'), false);
    assert.equal(await dashboard('dashboard: 8080\n'), '8080');
    assert.equal(await dashboard(undefined, { TIDEPOOL_DASHBOARD: 'false' }), false);
    assert.equal(await dashboard('dashboard: false\n', { TIDEPOOL_DASHBOARD: '9000' }), '9000');
    assert.equal((await parse(['demo'], { TIDEPOOL_SCALE_OUT: '1.5' })).opts?.scaleOut, '1.5');
    await assert.rejects(dashboard('demo:\n  dashboard: http\n'), /:2: dashboard: "http" is not a port number/);
    await assert.rejects(dashboard(undefined, { TIDEPOOL_SCALE_OUT: '-1' }), /^UsageError: TIDEPOOL_SCALE_OUT: "-1" is not a number of seconds ≥ 0$/);
  });

  it('rejects bad values naming the file line or the variable', async () => {
    const bad = (args: string[], pattern: RegExp, env: Record<string, string> = {}) =>
      assert.rejects(parse(args, env), (err: unknown) => err instanceof UsageError && pattern.test(err.message));
    const f = configFile('zk: zk://127.0.0.1:2181\nnode:\n  port: 70000\n');
    await bad(['--config', f, 'node'], new RegExp(`^${escape(f)}:3: port: "70000" is not a port number`));
    await bad(['--config', file, 'node'], /^TIDEPOOL_ZK: bad connection string "nope"/, { TIDEPOOL_ZK: 'nope' });
    await bad(['solve'], /^TIDEPOOL_PRUNE: "maybe" is not true or false$/, { TIDEPOOL_PRUNE: 'maybe' });
    const missing = configFile('secretFile: nowhere\n');
    await bad(['--config', missing, 'node'], new RegExp(`^${escape(missing)}:1: secretFile: cannot read ${escape(join(missing, '..', 'nowhere'))}: ENOENT$`));
    await bad(['--config', configFile('coord:\n  ls:\n    workers: 2\n'), 'node'], /:3: unknown setting "workers" for coord ls \(known: depth, logLevel, zk\)$/);
    await bad(['--config', configFile('coord:\n  lss:\n    depth: 2\n'), 'node'], /:2: unknown command "coord lss" \(commands for coord: ls\)$/);
    await bad(['--config', configFile('json: true\n'), 'node'], /:1: "json" can only be given on the command line$/);
    await bad(['--config', configFile('workers:\n'), 'node'], /:1: workers: no value given$/);
    await bad(['--config', configFile('workers: [1, 2]\n'), 'node'], /:1: workers: expected a single value, not a list$/);
    await bad(['--config', configFile('42\n'), 'node'], /:1: the top level must be settings written as "key: value", not a single value$/);
  });
});

describe('tidepool --config (the CLI)', () => {
  it('settings from the file reach the command; a section beats the top level, the environment the file, a flag the environment', { timeout: 60_000 }, async () => {
    // coord ls against a closed port fails after the timeout it was given, and says so.
    const file = configFile('zk: zk://127.0.0.1:1\ntimeout: 5000\ncoord:\n  ls:\n    timeout: 700\n');
    const fromFile = await cli(['--config', file, 'coord', 'ls', '/']);
    assert.equal(fromFile.code, 1, fromFile.stderr);
    assert.match(fromFile.stderr, /no ZooKeeper server answered within 700 ms/);
    assert.match((await cli(['--config', file, 'coord', 'ls', '/'], { TIDEPOOL_TIMEOUT: '800' })).stderr, /within 800 ms/);
    assert.match((await cli(['--config', file, 'coord', 'ls', '/', '--timeout', '900'], { TIDEPOOL_TIMEOUT: '800' })).stderr, /within 900 ms/);
  });

  it('a boolean setting from the file changes the run (prune: false explores the whole tree)', async () => {
    const searchNodes = async (args: string[]) => {
      const run = await cli([...args, 'solve', 'tsp', 'random:9:1', '--json']);
      assert.equal(run.code, 0, run.stderr);
      return (JSON.parse(run.stdout) as { stats: { searchNodes: number } }).stats.searchNodes;
    };
    const pruned = await searchNodes([]);
    const whole = await searchNodes(['--config', configFile('solve:\n  prune: false\n')]);
    assert.ok(whole > 10 * pruned, `${whole} search nodes without pruning, ${pruned} with`);
  });

  it('an unknown setting is an error naming the file line, with exit code 2', async () => {
    const file = configFile('zk: zk://127.0.0.1:2181\nwrokers: 3\n');
    const run = await cli(['--config', file, ...FAST]);
    assertCleanError(run, new RegExp(`^error: ${escape(file)}:2: unknown setting "wrokers" \\(known: [^)]*\\bworkers\\b[^)]*\\)$`, 'm'));
    assertCleanError(await cli(['--config', configFile('nodee:\n  workers: 2\n'), ...FAST]), /:1: unknown command "nodee" \(commands: [^)]*\bnode\b/);
  });

  it('a bad value is an error naming the file line, with exit code 2', async () => {
    const file = configFile('zk: zk://127.0.0.1:2181\nnode:\n  workers: four\n');
    assertCleanError(await cli(['--config', file, 'node']), new RegExp(`^error: ${escape(file)}:3: workers: "four" is not a positive whole number$`, 'm'));
  });

  it('a YAML syntax error names the file line', async () => {
    const file = configFile('zk: zk://127.0.0.1:2181\nworkers: [1\nport: 2\n');
    assertCleanError(await cli(['--config', file, ...FAST]), new RegExp(`^error: ${escape(file)}:3: Flow sequence`, 'm'));
    const tabs = configFile('node:\n\tworkers: 2\n');
    assertCleanError(await cli(['--config', tabs, ...FAST]), new RegExp(`^error: ${escape(tabs)}:2: `, 'm'));
  });

  it('a missing file is an error naming --config or TIDEPOOL_CONFIG', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'tp-config-')), 'missing.yaml');
    assertCleanError(await cli(['--config', file, ...FAST]), new RegExp(`^error: --config: cannot read ${escape(file)}: ENOENT$`, 'm'));
    assertCleanError(await cli([...FAST], { TIDEPOOL_CONFIG: file }), new RegExp(`^error: TIDEPOOL_CONFIG: cannot read ${escape(file)}: ENOENT$`, 'm'));
  });

  it('a bad environment value is an error naming the variable', async () => {
    assertCleanError(await cli(['node'], { TIDEPOOL_WORKERS: 'x' }), /^error: TIDEPOOL_WORKERS: "x" is not a positive whole number$/m);
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

  it('help names the environment variable of each option', async () => {
    const run = await cli(['node', '--help']);
    assert.equal(run.code, 0);
    for (const name of ['TIDEPOOL_ZK', 'TIDEPOOL_WORKERS', 'TIDEPOOL_SECRET_FILE', 'TIDEPOOL_PORT']) assert.match(run.stdout, new RegExp(`env:\\s+${name}\\b`));
    assert.doesNotMatch(run.stdout, /TIDEPOOL_JSON/);
  });
});
