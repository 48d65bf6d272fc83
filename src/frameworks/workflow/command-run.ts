/**
 * One attempt of a command task as a child process, the way an operator expects it: it runs in its
 * own process group (a timeout or the end of the task kills every process it started, not only the
 * first), its stdout and stderr go to `<run>/logs/<task>.out|.err` (cut at a size, with a line saying
 * so; the files of an earlier attempt are kept as `<task>.try<N>.out|.err`), or to the files its
 * `<stdin>/<stdout>/<stderr>` redirects name, and its environment names the task, attempt and node.
 */
import { spawn } from 'node:child_process';
import { createReadStream, createWriteStream, mkdirSync, renameSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';

export interface CommandAttempt {
  program: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** Where stdout and stderr go when not redirected: `<dir>/<name>.out|.err`, at most `capBytes` each. */
  logs?: { dir: string; name: string; attempt: number; capBytes: number };
  timeoutSeconds?: number;
  /** Redirects: paths of files (in the working directory) read as stdin, written from stdout and stderr. */
  stdin?: string;
  stdout?: string;
  stderr?: string;
}

export interface CommandOutcome {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  /** The last lines of its stderr (at most about 1,000 characters). */
  stderrTail: string;
  /** Where its stderr went, relative to the run directory when it is a log (`logs/x.err`), else the redirect's name. */
  stderrFile: string | undefined;
  bytesOut: number;
  bytesErr: number;
}

/** A task id as a file name: characters a file system or a shell could mind are written %XX. */
export function logName(id: string): string {
  return id.replace(/[^\w.@+=-]/g, (c) => [...Buffer.from(c)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join(''));
}

/** A log file that stops growing at `cap` bytes and says at its end how much it dropped. */
class CappedFile {
  private readonly stream: WriteStream;
  written = 0;
  private dropped = 0;

  constructor(readonly path: string, private readonly cap: number, private readonly what: string) {
    this.stream = createWriteStream(path);
  }

  write(chunk: Buffer): void {
    const room = this.cap - this.written;
    if (room > 0) this.stream.write(room >= chunk.length ? chunk : chunk.subarray(0, room));
    this.written += Math.min(room > 0 ? room : 0, chunk.length);
    this.dropped += Math.max(0, chunk.length - Math.max(0, room));
  }

  close(): Promise<void> {
    if (this.dropped > 0) this.stream.write(`\n[tidepool: ${this.what} cut at ${this.cap} bytes; ${this.dropped} more bytes were dropped]\n`);
    return new Promise((resolve, reject) => this.stream.end((err?: Error | null) => (err ? reject(err) : resolve())));
  }
}

/** Keeps an earlier attempt's logs beside the new ones (`x.out` → `x.try1.out`). */
function keepEarlier(dir: string, name: string, attempt: number): void {
  if (attempt <= 1) return;
  for (const ext of ['out', 'err']) {
    try {
      renameSync(join(dir, `${name}.${ext}`), join(dir, `${name}.try${attempt - 1}.${ext}`));
    } catch {
      // no log of that attempt (it ran with redirects, or on a member that could not write it)
    }
  }
}

export async function runAttempt(a: CommandAttempt): Promise<CommandOutcome> {
  let out: CappedFile | WriteStream | undefined;
  let err: CappedFile | WriteStream | undefined;
  let stderrFile: string | undefined;
  if (a.logs) {
    mkdirSync(a.logs.dir, { recursive: true });
    keepEarlier(a.logs.dir, a.logs.name, a.logs.attempt);
  }
  if (a.stdout !== undefined) out = createWriteStream(join(a.cwd, a.stdout));
  else if (a.logs) out = new CappedFile(join(a.logs.dir, `${a.logs.name}.out`), a.logs.capBytes, 'stdout');
  if (a.stderr !== undefined) {
    err = createWriteStream(join(a.cwd, a.stderr));
    stderrFile = a.stderr;
  } else if (a.logs) {
    err = new CappedFile(join(a.logs.dir, `${a.logs.name}.err`), a.logs.capBytes, 'stderr');
    stderrFile = `logs/${a.logs.name}.err`;
  }
  const child = spawn(a.program, a.args, { cwd: a.cwd, env: a.env, stdio: [a.stdin !== undefined ? 'pipe' : 'ignore', 'pipe', 'pipe'], detached: true });
  if (a.stdin !== undefined) {
    const input = createReadStream(join(a.cwd, a.stdin));
    input.on('error', () => child.stdin!.destroy());
    child.stdin!.on('error', () => undefined); // a program that does not read its stdin closes it early
    input.pipe(child.stdin!);
  }
  let tail = Buffer.alloc(0);
  let bytesOut = 0;
  let bytesErr = 0;
  child.stdout!.on('data', (d: Buffer) => {
    bytesOut += d.length;
    out?.write(d);
  });
  child.stderr!.on('data', (d: Buffer) => {
    bytesErr += d.length;
    err?.write(d);
    tail = Buffer.concat([tail, d]);
    if (tail.length > 4096) tail = tail.subarray(tail.length - 4096);
  });
  let timedOut = false;
  /** Every process of the attempt: the child leads its own group. */
  const killGroup = () => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // the group is gone already
    }
  };
  const timer = a.timeoutSeconds === undefined ? undefined : setTimeout(() => {
    timedOut = true;
    killGroup();
  }, a.timeoutSeconds * 1000);
  try {
    const { code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
      child.on('error', (e) => reject(new Error(`${a.program}: ${e.message}`)));
      // When the first process exits, what it left running in the background is ended too (it would hold the pipes open).
      child.on('exit', killGroup);
      child.on('close', (c, s) => resolve({ code: c, signal: s }));
    });
    return { exitCode: code, signal, timedOut, stderrTail: lastLines(tail.toString()), stderrFile, bytesOut, bytesErr };
  } finally {
    clearTimeout(timer);
    await Promise.all([out, err].map((s) => (s instanceof CappedFile ? s.close() : s ? new Promise<void>((r) => s.end(() => r())) : undefined)));
  }
}

/** The last lines of a text, at most about 1,000 characters (whole lines, unless one line is longer). */
function lastLines(text: string): string {
  const lines = text.trimEnd().split('\n');
  const kept: string[] = [];
  let size = 0;
  for (let i = lines.length - 1; i >= 0 && kept.length < 10; i--) {
    if (size + lines[i]!.length > 1000 && kept.length > 0) break;
    kept.unshift(lines[i]!.length > 1000 ? `…${lines[i]!.slice(-1000)}` : lines[i]!);
    size += lines[i]!.length;
  }
  return kept.join('\n');
}
