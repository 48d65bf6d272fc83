/** Test support: run the built `tidepool` command as a user would and capture what it printed. */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { childEnv } from './child-env.js';
import { withDeadline } from './wait.js';

const BIN = fileURLToPath(new URL('../../bin/tidepool.mjs', import.meta.url));

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The built CLI with `args`; its environment is `childEnv(env)`: none of the caller's TIDEPOOL_* variables, `env`'s. */
export function tidepool(args: string[], timeoutMs = 120_000, env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return runCommand(process.execPath, [BIN, ...args], { timeoutMs, env: childEnv(env) });
}

/**
 * Runs any command to its end and captures its output (killed, and rejected, after `timeoutMs`). Its
 * environment is `opts.env` when given (the whole of it), else `childEnv()`: none of the caller's
 * TIDEPOOL_* variables.
 */
export function runCommand(command: string, args: string[], opts: { cwd?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: opts.env ?? childEnv(), ...(opts.cwd ? { cwd: opts.cwd } : {}) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} ${args.join(' ')} timed out`));
    }, opts.timeoutMs ?? 120_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export interface Serving {
  child: ChildProcess;
  /** The first line it printed on stdout (its ready line). */
  firstLine: string;
  /** Everything it printed so far, stdout then stderr. */
  output: () => string;
}

/**
 * Starts a command that serves until it is stopped, and resolves once it has printed its first line on
 * stdout; rejects, with its output, if it exits first or has printed none within `timeoutMs`. Its
 * environment is as for `runCommand`.
 */
export function startServing(command: string, args: string[], opts: { cwd?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv; what?: string } = {}): Promise<Serving> {
  const what = opts.what ?? `${command} ${args.join(' ')}`;
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: opts.env ?? childEnv(), ...(opts.cwd ? { cwd: opts.cwd } : {}) });
  let stdout = '';
  let stderr = '';
  const output = () => `${stdout}${stderr}`;
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return withDeadline(new Promise((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (stdout.includes('\n')) resolve({ child, firstLine: stdout.slice(0, stdout.indexOf('\n')), output });
    });
    child.once('exit', (code) => reject(new Error(`${what}: exited (${code}) before it was ready:\n${output()}`)));
  }), `${what} to be ready`, opts.timeoutMs ?? 90_000);
}

/** A bad-input failure as users must see it: exit code 2, a message matching `pattern`, no stack trace. */
export function assertCleanError(run: Run, pattern: RegExp): void {
  assert.equal(run.code, 2, `exit code 2 (stderr: ${run.stderr})`);
  assert.match(run.stderr, pattern);
  assert.doesNotMatch(run.stderr, /\n\s+at /, 'no stack trace');
}
