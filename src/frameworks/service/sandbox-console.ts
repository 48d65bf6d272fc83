/**
 * The `console` a task sees in its sandbox: what it prints is kept with the task's outcome, bounded,
 * and printed on the client prefixed by the task (distribution.ts). Formatting follows Node's
 * `util.format` for the common cases (`%s %d %i %f %j %o %O %%`, objects inspected two levels deep).
 * Pure JavaScript without host APIs: it is bundled into the sandbox runtime.
 */

export type ConsoleLevel = 'log' | 'warn' | 'error';

/** What one task printed, as it travels in its outcome: `[level, text]` lines and how many were dropped. */
export interface ConsoleRecord {
  lines: [ConsoleLevel, string][];
  dropped: number;
}

/** Text a task may print (UTF-16 code units, all lines together); what comes after is dropped and counted. */
export const CONSOLE_BYTES_PER_TASK = 64 * 1024;
/** A longer line is cut here (and ends with `…`). */
export const CONSOLE_LINE_CHARS = 4096;

/** The console methods a sandbox has (a captured alias such as `const log = console.log` travels by name). */
export const CONSOLE_METHODS: ReadonlySet<string> = new Set(['log', 'info', 'debug', 'dirxml', 'warn', 'error', 'trace', 'dir', 'table', 'assert', 'count', 'countReset', 'time', 'timeLog', 'timeEnd', 'group', 'groupCollapsed', 'groupEnd', 'clear']);

/** Collects one task's lines within the bound. */
export class ConsoleSink {
  private lines: [ConsoleLevel, string][] = [];
  private chars = 0;
  private dropped = 0;

  write(level: ConsoleLevel, text: string): void {
    const line = text.length > CONSOLE_LINE_CHARS ? `${text.slice(0, CONSOLE_LINE_CHARS - 1)}…` : text;
    if (this.chars + line.length > CONSOLE_BYTES_PER_TASK) {
      this.dropped++;
      return;
    }
    this.chars += line.length;
    this.lines.push([level, line]);
  }

  /** The record to send (undefined when nothing was printed), and a fresh start. */
  take(): ConsoleRecord | undefined {
    const out = this.lines.length + this.dropped > 0 ? { lines: this.lines, dropped: this.dropped } : undefined;
    this.lines = [];
    this.chars = 0;
    this.dropped = 0;
    return out;
  }
}

/** A console whose output goes to `sink()` (the running task's sink). */
export function sandboxConsole(sink: () => ConsoleSink): Record<string, (...args: unknown[]) => void> {
  let indent = '';
  const counts = new Map<string, number>();
  const timers = new Map<string, number>();
  const out = (level: ConsoleLevel) => (...args: unknown[]) => sink().write(level, indent + format(args).split('\n').join(`\n${indent}`));
  const log = out('log');
  const error = out('error');
  return {
    log, info: log, debug: log, dirxml: log,
    warn: out('warn'), error,
    trace: (...args: unknown[]) => error(`Trace${args.length > 0 ? `: ${format(args)}` : ''}`),
    dir: (value: unknown) => log(inspect(value, 2)),
    table: (value: unknown) => log(inspect(value, 2)),
    assert: (ok: unknown, ...args: unknown[]) => { if (!ok) error(`Assertion failed${args.length > 0 ? `: ${format(args)}` : ''}`); },
    count: (label = 'default') => { const n = (counts.get(String(label)) ?? 0) + 1; counts.set(String(label), n); log(`${String(label)}: ${n}`); },
    countReset: (label = 'default') => { counts.delete(String(label)); },
    time: (label = 'default') => { timers.set(String(label), Date.now()); },
    timeLog: (label = 'default', ...args: unknown[]) => log(`${String(label)}: ${Date.now() - (timers.get(String(label)) ?? Date.now())}ms${args.length > 0 ? ` ${format(args)}` : ''}`),
    timeEnd: (label = 'default') => { log(`${String(label)}: ${Date.now() - (timers.get(String(label)) ?? Date.now())}ms`); timers.delete(String(label)); },
    group: (...args: unknown[]) => { if (args.length > 0) log(...args); indent += '  '; },
    groupCollapsed: (...args: unknown[]) => { if (args.length > 0) log(...args); indent += '  '; },
    groupEnd: () => { indent = indent.slice(2); },
    clear: () => undefined,
  };
}

/** Node's `util.format`, for the usual directives. */
export function format(args: unknown[]): string {
  let rest = args;
  let head = '';
  if (typeof args[0] === 'string' && args.length > 1 && args[0].includes('%')) {
    let i = 1;
    head = args[0].replace(/%([sdifjoOc%])/g, (whole, d: string) => {
      if (d === '%') return '%';
      if (i >= args.length) return whole;
      const v = args[i++];
      switch (d) {
        case 's': return typeof v === 'string' ? v : typeof v === 'bigint' ? `${v}n` : inspect(v, 1);
        case 'd': case 'i': {
          if (typeof v === 'bigint') return `${v}n`;
          const n = Number(v);
          return String(d === 'i' ? Math.trunc(n) : n);
        }
        case 'f': return String(Number.parseFloat(String(v)));
        case 'j': try { return JSON.stringify(v); } catch { return '[Circular]'; }
        case 'c': return '';
        default: return inspect(v, d === 'o' ? 4 : 2);
      }
    });
    rest = args.slice(i);
    return [head, ...rest.map((v) => (typeof v === 'string' ? v : inspect(v, 2)))].join(' ');
  }
  return rest.map((v) => (typeof v === 'string' ? v : inspect(v, 2))).join(' ');
}

/** A short description of a value, like Node's `util.inspect` (depth-limited, cycles marked). */
export function inspect(value: unknown, depth: number, seen: unknown[] = []): string {
  switch (typeof value) {
    case 'string': return seen.length > 0 ? `'${value}'` : value;
    case 'bigint': return `${value}n`;
    case 'symbol': return value.toString();
    case 'undefined': return 'undefined';
    case 'function': return `[${/^class\b/.test(Function.prototype.toString.call(value)) ? 'class' : 'Function'}${value.name ? `: ${value.name}` : ' (anonymous)'}]`;
    case 'number': return Object.is(value, -0) ? '-0' : String(value);
    case 'boolean': return String(value);
    default: break;
  }
  if (value === null) return 'null';
  const o = value as object;
  if (seen.includes(o)) return '[Circular]';
  if (o instanceof Error) return o.stack ?? `${o.name}: ${o.message}`;
  if (o instanceof Date) return Number.isNaN(o.getTime()) ? 'Invalid Date' : o.toISOString();
  if (o instanceof RegExp) return String(o);
  const inner = (v: unknown) => (depth <= 0 ? shallow(v) : inspect(v, depth - 1, [...seen, o]));
  const list = (items: string[], open: string, close: string) => (items.length === 0 ? `${open}${close}` : `${open} ${items.join(', ')} ${close}`);
  if (Array.isArray(o)) return list(o.slice(0, 100).map(inner).concat(o.length > 100 ? [`... ${o.length - 100} more items`] : []), '[', ']');
  if (ArrayBuffer.isView(o) && !(o instanceof DataView)) {
    const a = o as unknown as ArrayLike<number | bigint>;
    const items = Array.from({ length: Math.min(a.length, 100) }, (_, i) => inspect(a[i], 0));
    return `${o.constructor.name}(${a.length}) ${list(items.concat(a.length > 100 ? [`... ${a.length - 100} more items`] : []), '[', ']')}`;
  }
  if (o instanceof Map) return `Map(${o.size}) ${list([...o].slice(0, 100).map(([k, v]) => `${inner(k)} => ${inner(v)}`), '{', '}')}`;
  if (o instanceof Set) return `Set(${o.size}) ${list([...o].slice(0, 100).map(inner), '{', '}')}`;
  const proto = Object.getPrototypeOf(o) as { constructor?: { name?: string } } | null;
  const name = proto === null ? '[Object: null prototype] ' : proto.constructor?.name && proto.constructor.name !== 'Object' ? `${proto.constructor.name} ` : '';
  const entries = Object.keys(o).slice(0, 100).map((k) => {
    const d = Object.getOwnPropertyDescriptor(o, k)!;
    const key = /^[A-Za-z_$][\w$]*$/.test(k) ? k : `'${k}'`;
    return 'value' in d ? `${key}: ${inner(d.value)}` : `${key}: [Getter${d.set ? '/Setter' : ''}]`;
  });
  return `${name}${list(entries, '{', '}')}`;
}

function shallow(v: unknown): string {
  if (Array.isArray(v)) return '[Array]';
  if (typeof v === 'object' && v !== null) return `[${(Object.getPrototypeOf(v) as { constructor?: { name?: string } } | null)?.constructor?.name ?? 'Object'}]`;
  return inspect(v, 0, [null]);
}
