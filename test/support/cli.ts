/** Test support: run the built `tidepool` command as a user would and capture what it printed. */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { childEnv } from './child-env.js';

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

/** A bad-input failure as users must see it: exit code 2, a message matching `pattern`, no stack trace. */
export function assertCleanError(run: Run, pattern: RegExp): void {
  assert.equal(run.code, 2, `exit code 2 (stderr: ${run.stderr})`);
  assert.match(run.stderr, pattern);
  assert.doesNotMatch(run.stderr, /\n\s+at /, 'no stack trace');
}
