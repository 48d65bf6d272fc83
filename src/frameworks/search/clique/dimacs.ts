// Reader for DIMACS ASCII graphs as used by the maximum-clique benchmarks:
//   c <comment>           ignored
//   p edge <N> <M>        (or `p col N M`) exactly once, before any edge; N vertices, M as declared
//   e <u> <v>             an undirected edge, vertices 1-based
//   n <v> <weight>        vertex weights (weighted variants): ignored
// Lines may end in CRLF and fields may be separated by any whitespace. Self-loops are ignored and an edge
// listed twice (in either direction) is counted once, so `edges` can differ from the header's M.
import { InputError } from '../input-error.js';

export interface Graph {
  name: string;
  n: number;
  edges: number;
  /** adjacency bitsets: row i is words [i*wordsPerRow, (i+1)*wordsPerRow) of 32-bit masks */
  adjacency: Uint32Array;
  wordsPerRow: number;
}

/** Largest vertex count accepted: the adjacency bitsets of 20000 vertices take 50 MB. */
export const MAX_DIMACS_VERTICES = 20_000;

const DEFAULT_FILE = '<input>';

function basenameOf(file: string): string {
  if (file === DEFAULT_FILE) return 'input';
  const base = file.slice(Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\')) + 1);
  return base.replace(/\.(clq|col|dimacs|txt)$/i, '');
}

/** Parses a DIMACS graph. Throws {@link InputError} with the 1-based line number on malformed input. */
export function parseDimacs(text: string, file: string = DEFAULT_FILE): Graph {
  function fail(line: number | undefined, detail: string): never {
    throw new InputError(file, line, detail);
  }
  function integer(token: string, line: number, what: string): number {
    if (/^[+-]?\d+$/.test(token)) {
      const x = Number(token);
      if (Number.isSafeInteger(x)) return x;
      return fail(line, `${what} ${token} is out of range`);
    }
    if (/^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/.test(token)) return fail(line, `${what} "${token}" is not an integer`);
    return fail(line, `non-numeric token "${token}" (expected ${what})`);
  }

  let n = 0;
  let wordsPerRow = 0;
  let adjacency: Uint32Array | undefined;
  let pLine = 0;
  let edges = 0;

  let lineNo = 0;
  for (const raw of text.split('\n')) {
    lineNo++;
    const line = raw.trim();
    if (line.length === 0 || line[0] === 'c') continue;
    const t = line.split(/\s+/);
    switch (t[0]) {
      case 'p': {
        if (pLine !== 0) fail(lineNo, `duplicate "p" line (first on line ${pLine})`);
        if (t.length !== 4) fail(lineNo, `expected "p edge N M", found ${t.length} fields`);
        const format = t[1]!;
        if (format !== 'edge' && format !== 'col' && format !== 'edges') {
          fail(lineNo, `unknown problem format "${format}" in the "p" line (expected "edge" or "col")`);
        }
        n = integer(t[2]!, lineNo, 'a vertex count');
        const m = integer(t[3]!, lineNo, 'an edge count');
        if (n < 1 || n > MAX_DIMACS_VERTICES) fail(lineNo, `vertex count ${n} is out of range 1..${MAX_DIMACS_VERTICES}`);
        if (m < 0) fail(lineNo, `edge count ${m} is negative`);
        wordsPerRow = Math.ceil(n / 32);
        adjacency = new Uint32Array(n * wordsPerRow);
        pLine = lineNo;
        break;
      }
      case 'e': {
        if (adjacency === undefined) fail(lineNo, 'edge line before the "p" line');
        if (t.length !== 3) fail(lineNo, `expected "e u v", found ${t.length} fields`);
        const u = integer(t[1]!, lineNo, 'a vertex number');
        const v = integer(t[2]!, lineNo, 'a vertex number');
        for (const x of [u, v]) if (x < 1 || x > n) fail(lineNo, `vertex ${x} is out of range 1..${n}`);
        if (u === v) break; // self-loop: meaningless for cliques
        const a = u - 1;
        const b = v - 1;
        const ia = a * wordsPerRow + (b >>> 5);
        const bit = 1 << (b & 31);
        if ((adjacency[ia]! & bit) !== 0) break; // listed before
        adjacency[ia] = adjacency[ia]! | bit;
        const ib = b * wordsPerRow + (a >>> 5);
        adjacency[ib] = adjacency[ib]! | (1 << (a & 31));
        edges++;
        break;
      }
      case 'n':
        break; // vertex weight: not used for unweighted max clique
      default:
        fail(lineNo, `unknown line type "${t[0]!.length > 20 ? `${t[0]!.slice(0, 20)}…` : t[0]}" (expected c, p, e or n)`);
    }
  }
  if (adjacency === undefined) fail(undefined, 'missing "p edge N M" line');
  return { name: basenameOf(file), n, edges, adjacency, wordsPerRow };
}

/** Whether a and b (0-based, not checked against n) are adjacent. */
export function hasEdge(g: Graph, a: number, b: number): boolean {
  return ((g.adjacency[a * g.wordsPerRow + (b >>> 5)]! >>> (b & 31)) & 1) !== 0;
}

/** null when `vertices` (0-based) are distinct and pairwise adjacent, else the reason they are not a clique. */
export function validateClique(g: Graph, vertices: readonly number[]): string | null {
  const seen = new Set<number>();
  for (const v of vertices) {
    if (!Number.isInteger(v) || v < 0 || v >= g.n) return `vertex ${v} is out of range 0..${g.n - 1}`;
    if (seen.has(v)) return `vertex ${v} appears more than once`;
    seen.add(v);
  }
  for (let i = 0; i < vertices.length; i++) {
    for (let j = i + 1; j < vertices.length; j++) {
      const a = vertices[i]!;
      const b = vertices[j]!;
      if (!hasEdge(g, a, b)) return `vertices ${a} and ${b} are not adjacent`;
    }
  }
  return null;
}
