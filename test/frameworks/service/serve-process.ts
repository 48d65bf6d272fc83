/**
 * Test support: `tidepool serve … --json` (the built CLI) as a child process, ready once it printed its
 * JSON line; and a directory holding a certificate, its key and a token for it.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { withDeadline } from '../../support/wait.js';
import { childEnv } from '../../support/child-env.js';

export const BIN = fileURLToPath(new URL('../../../bin/tidepool.mjs', import.meta.url));

export interface ServeProcess {
  /** What serve printed when ready (rejects, with its stderr, if it exits first). */
  ready: Promise<{ url: string; cluster: string }>;
  exited: Promise<number | null>;
  /** SIGTERM (or `signal`); resolves with its exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts serve with `args` after `serve`, or a shell command line (`{ shell }`) run in `cwd`; its
 * environment is `opts.env` when given, else `childEnv()` (none of the caller's TIDEPOOL_* variables).
 */
export function startServe(command: string[] | { shell: string }, opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): ServeProcess {
  const options = { stdio: ['ignore', 'pipe', 'pipe'] as ['ignore', 'pipe', 'pipe'], ...opts, env: opts.env ?? childEnv() };
  const child = Array.isArray(command)
    ? spawn(process.execPath, [BIN, 'serve', ...command], options)
    : spawn('sh', ['-c', `exec ${command.shell}`], options);
  let err = '';
  const ready = withDeadline(new Promise<{ url: string; cluster: string }>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line) as { url: string; cluster: string });
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  }), 'the served URL', 60_000);
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { ready, exited, stop: (signal = 'SIGTERM') => { child.kill(signal); return exited; } };
}

/** A directory with `cert.pem`, `key.pem` and `token` (a trailing newline, as `head | base64` writes it). */
export function serveFiles(tls: { cert: string; key: string }, token: string, prefix = 'tidepool-serve-'): { dir: string; args: string[] } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  writeFileSync(path.join(dir, 'cert.pem'), tls.cert);
  writeFileSync(path.join(dir, 'key.pem'), tls.key);
  writeFileSync(path.join(dir, 'token'), `${token}\n`);
  return { dir, args: ['--tls-cert', path.join(dir, 'cert.pem'), '--tls-key', path.join(dir, 'key.pem'), '--token-file', path.join(dir, 'token')] };
}
