/**
 * Reading a large WfFormat 1.5 text without holding it all parsed at once: the big arrays
 * (specification tasks and files, execution tasks) are found in the text and parsed about a megabyte
 * at a time, each item handed over and then dropped (young garbage, cheap to collect), and the rest
 * of the document (the skeleton, with a sentinel where each big array was) is parsed apart.
 *
 * Nothing is taken on trust; any surprise returns undefined and the caller parses the text whole:
 * a piece boundary is accepted only if the piece parses as whole items (a cut inside a string or a
 * nested value cannot), and each array must turn out, in the parsed skeleton, to be exactly where
 * its sentinel is.
 */
export type BigArray = 'specTasks' | 'specFiles' | 'execTasks';

export interface Skeleton {
  /** The document without its big arrays; each present one holds its first item (or nothing). */
  doc: Record<string, unknown>;
  counts: Record<BigArray, number>;
}

const PIECE = 1 << 20;
/** Candidate boundaries that did not parse (a "}," inside a string, a nested "}]") before giving up. */
const MAX_MISSES = 64;
const SENTINEL = '\u0000tidepool-big-array-';
const SPACE = new Set([0x20, 0x0a, 0x0d, 0x09]);

function skipSpace(text: string, i: number): number {
  while (SPACE.has(text.charCodeAt(i))) i++;
  return i;
}

/** Hands each item of the big arrays to `onItem` (false: stop, give up) and returns the skeleton. */
export function readInPieces(text: string, onItem: (array: BigArray, item: unknown) => boolean): Skeleton | undefined {
  const key = /"(tasks|files)"\s*:\s*\[/g;
  const regions: { array: BigArray; start: number; end: number }[] = [];
  const counts: Record<BigArray, number> = { specTasks: 0, specFiles: 0, execTasks: 0 };
  const first: Partial<Record<BigArray, unknown>> = {};
  let misses = 0;
  for (let m = key.exec(text); m; m = key.exec(text)) {
    // Which array this is, guessed from the section it follows; the skeleton confirms it.
    const execution = m[1] === 'files' ? -1 : text.lastIndexOf('"execution"', m.index);
    const specification = execution < 0 ? -1 : text.indexOf('"specification"', execution);
    const array: BigArray = m[1] === 'files' ? 'specFiles' : execution >= 0 && (specification < 0 || specification > m.index) ? 'execTasks' : 'specTasks';
    if (regions.some((r) => r.array === array)) return undefined;
    const start = m.index + m[0].length;
    let pos = skipSpace(text, start);
    let end = text.charCodeAt(pos) === 0x5d ? pos : -1; // "]": empty
    while (end < 0) {
      let items: unknown[] | undefined;
      let next = -1;
      for (let b = text.indexOf('}', pos); b >= 0 && !items; b = text.indexOf('}', b + 1)) {
        // A piece ends after an item: "}" then "]" (the last), or "}" "," "{" once the piece is large enough.
        const after = skipSpace(text, b + 1);
        const closes = text.charCodeAt(after) === 0x5d;
        const following = !closes && text.charCodeAt(after) === 0x2c ? skipSpace(text, after + 1) : -1;
        if (!closes && (following < 0 || text.charCodeAt(following) !== 0x7b || b - pos < PIECE)) continue;
        try {
          items = JSON.parse(`[${text.slice(pos, b + 1)}]`) as unknown[];
        } catch {
          if (++misses > MAX_MISSES) return undefined;
          continue;
        }
        if (closes) end = after;
        else next = following;
      }
      if (!items) return undefined;
      for (const item of items) {
        if (counts[array]++ === 0) first[array] = item;
        if (!onItem(array, item)) return undefined;
      }
      pos = next;
    }
    regions.push({ array, start, end });
    key.lastIndex = end + 1;
  }
  let skeletonText = '';
  let at = 0;
  regions.forEach((r, k) => {
    skeletonText += `${text.slice(at, r.start)}${JSON.stringify(SENTINEL + k)}`;
    at = r.end;
  });
  skeletonText += text.slice(at);
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(skeletonText) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  return confirm(doc, regions, first) ? { doc, counts } : undefined;
}

type Obj = Record<string, unknown>;
const isObject = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);

/** Each big array is exactly where its sentinel is, and no other is missing; then each gets its first item back. */
function confirm(doc: unknown, regions: { array: BigArray }[], first: Partial<Record<BigArray, unknown>>): boolean {
  if (!isObject(doc) || !isObject(doc.workflow) || !isObject(doc.workflow.specification)) return false;
  const spec = doc.workflow.specification;
  const exec = doc.workflow.execution;
  if (exec !== undefined && !isObject(exec)) return false;
  const holder = (array: BigArray): [Obj | undefined, string] => (array === 'execTasks' ? [exec, 'tasks'] : [spec, array === 'specTasks' ? 'tasks' : 'files']);
  const found = new Set<BigArray>();
  for (const [k, r] of regions.entries()) {
    const [obj, name] = holder(r.array);
    const value = obj?.[name];
    if (!Array.isArray(value) || value.length !== 1 || value[0] !== SENTINEL + k) return false;
    obj![name] = r.array in first ? [first[r.array]] : [];
    found.add(r.array);
  }
  // An array the pieces did not read (absent is fine where the schema allows it).
  return found.has('specTasks') && (found.has('specFiles') || spec.files === undefined) && (exec === undefined || found.has('execTasks'));
}
