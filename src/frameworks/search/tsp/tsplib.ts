// Reader for symmetric TSPLIB instances (TYPE: TSP) and optimal-tour files (TYPE: TOUR).
// Distances follow the TSPLIB95 rules as confirmed against the published optima (see test/data/README.md):
//   EUC_2D  nint(sqrt(dx² + dy²))
//   CEIL_2D ceil(sqrt(dx² + dy²))
//   ATT     r = sqrt((dx² + dy²) / 10); t = nint(r); t < r ? t + 1 : t
//   GEO     deg = trunc(x) (not nint), min = x - deg, rad = PI * (deg + 5 * min / 3) / 180 with PI = 3.141592,
//           d = trunc(RRR * acos(0.5 * ((1 + q1) * q2 - (1 - q1) * q3)) + 1) with RRR = 6378.388
//   EXPLICIT a matrix in EDGE_WEIGHT_SECTION, numbers wrapping across lines arbitrarily.
// DISPLAY_DATA_SECTION holds drawing coordinates only and is skipped.
import { InputError } from '../input-error.js';
import { coordinateDistances } from './tsplib-distances.js';


export interface TspInstance {
  name: string;
  comment: string;
  dimension: number;
  edgeWeightType: string;
  /** n*n row-major symmetric integer distances, 0 on the diagonal */
  distance: Int32Array;
  /** city coordinates when the file has NODE_COORD_SECTION (for drawing), else undefined */
  coords?: Float64Array;
}

/** DIMENSION values outside 3..MAX_TSPLIB_DIMENSION are rejected as absurd. */
export const MAX_TSPLIB_DIMENSION = 100_000;
/** Largest instance whose full n×n Int32 distance matrix is built (5000² × 4 B = 100 MB). */
export const MAX_MATRIX_DIMENSION = 5000;

const DEFAULT_FILE = '<input>';
const INT32_MAX = 0x7fff_ffff;

const SUPPORTED_TYPES = ['EUC_2D', 'CEIL_2D', 'ATT', 'GEO', 'EXPLICIT'] as const;
type EdgeWeightType = (typeof SUPPORTED_TYPES)[number];

/** Matrix layouts; the *_COL layouts of a symmetric matrix list the same numbers as the mirrored *_ROW layouts. */
const FORMAT_LAYOUT: Record<string, Layout | 'FUNCTION'> = {
  FULL_MATRIX: 'FULL_MATRIX',
  UPPER_ROW: 'UPPER_ROW',
  LOWER_ROW: 'LOWER_ROW',
  UPPER_DIAG_ROW: 'UPPER_DIAG_ROW',
  LOWER_DIAG_ROW: 'LOWER_DIAG_ROW',
  UPPER_COL: 'LOWER_ROW',
  LOWER_COL: 'UPPER_ROW',
  UPPER_DIAG_COL: 'LOWER_DIAG_ROW',
  LOWER_DIAG_COL: 'UPPER_DIAG_ROW',
  FUNCTION: 'FUNCTION',
};
type Layout = 'FULL_MATRIX' | 'UPPER_ROW' | 'LOWER_ROW' | 'UPPER_DIAG_ROW' | 'LOWER_DIAG_ROW';

/** Header keywords that take a value (all but the ones we read are accepted and ignored). */
const HEADER_KEYS = new Set([
  'NAME', 'TYPE', 'COMMENT', 'DIMENSION', 'CAPACITY', 'EDGE_WEIGHT_TYPE', 'EDGE_WEIGHT_FORMAT',
  'EDGE_DATA_FORMAT', 'NODE_COORD_TYPE', 'DISPLAY_DATA_TYPE',
]);
const SECTION_KEYS = new Set([
  'NODE_COORD_SECTION', 'EDGE_WEIGHT_SECTION', 'DISPLAY_DATA_SECTION', 'DEPOT_SECTION', 'DEMAND_SECTION',
  'EDGE_DATA_SECTION', 'FIXED_EDGES_SECTION', 'TOUR_SECTION',
]);

/** Keywords that may occur only once (skipped sections such as DISPLAY_DATA_SECTION may repeat). */
const ONCE_ONLY_KEYS = new Set(['NAME', 'TYPE', 'DIMENSION', 'EDGE_WEIGHT_TYPE', 'EDGE_WEIGHT_FORMAT', 'NODE_COORD_SECTION', 'EDGE_WEIGHT_SECTION']);

const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
const KEYWORD_LINE = /^([A-Za-z_][A-Za-z0-9_]*)\s*(?::\s*(.*))?$|^([A-Za-z_][A-Za-z0-9_]*)\s+(.*)$/;

interface KeywordLine {
  key: string;
  value: string;
}

/** `KEY: value`, `KEY : value`, `KEY value` or a bare `KEY`, when KEY is a TSPLIB keyword; else undefined. */
function keywordOf(line: string): KeywordLine | undefined {
  const m = KEYWORD_LINE.exec(line);
  if (!m) return undefined;
  const key = (m[1] ?? m[3] ?? '').toUpperCase();
  if (key !== 'EOF' && !HEADER_KEYS.has(key) && !SECTION_KEYS.has(key)) return undefined;
  return { key, value: (m[2] ?? m[4] ?? '').trim() };
}

function splitLines(text: string): string[] {
  return text.split('\n');
}

function tokens(line: string): string[] {
  return line.split(/\s+/).filter((t) => t.length > 0);
}

class Reader {
  constructor(readonly file: string) {}

  fail(line: number | undefined, detail: string): never {
    throw new InputError(this.file, line, detail);
  }

  number(token: string, line: number, what: string): number {
    if (!NUMBER.test(token)) this.fail(line, `non-numeric token "${token}" (expected ${what})`);
    const x = Number(token);
    if (!Number.isFinite(x)) this.fail(line, `number "${token}" is out of range (expected ${what})`);
    return x;
  }

  integer(token: string, line: number, what: string): number {
    const x = this.number(token, line, what);
    if (!Number.isSafeInteger(x)) this.fail(line, `"${token}" is not an integer (expected ${what})`);
    return x;
  }

  /** A DIMENSION value: an integer in 3..MAX_TSPLIB_DIMENSION whose matrix fits MAX_MATRIX_DIMENSION. */
  dimension(value: string, line: number, minimum: number): number {
    const token = tokens(value)[0];
    if (token === undefined) this.fail(line, 'DIMENSION has no value');
    const n = this.integer(token, line, 'the number of cities after DIMENSION');
    if (n < minimum || n > MAX_TSPLIB_DIMENSION) {
      this.fail(line, `DIMENSION ${n} is absurd (expected ${minimum}..${MAX_TSPLIB_DIMENSION})`);
    }
    return n;
  }
}

function basenameOf(file: string): string {
  if (file === DEFAULT_FILE) return 'input';
  const base = file.slice(Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\')) + 1);
  const dot = base.indexOf('.');
  return dot > 0 ? base.slice(0, dot) : base;
}

/** Where a section started (for messages) and how its data lines are consumed. */
interface Section {
  key: string;
  line: number;
  data(line: string, lineNo: number): void;
  end(): void;
}

/**
 * Parses a TSPLIB symmetric TSP file. Throws {@link InputError} (with `file` and a 1-based line) on malformed input.
 */
export function parseTsplib(text: string, file: string = DEFAULT_FILE): TspInstance {
  const r: Reader = new Reader(file);
  let name: string | undefined;
  const comments: string[] = [];
  let dimension: number | undefined;
  let edgeWeightType: EdgeWeightType | undefined;
  let format: { layout: Layout | 'FUNCTION'; name: string; line: number } | undefined;
  const firstLine = new Map<string, number>();

  let coords: Float64Array | undefined;
  let coordLine: Int32Array | undefined; // line of each node's coordinates, 0 = not seen
  let distance: Int32Array | undefined;
  let weightSectionLine: number | undefined;

  let section: Section | undefined;

  const needDimension = (key: string, line: number): number => {
    if (dimension === undefined) r.fail(line, `missing DIMENSION before ${key}`);
    return dimension;
  };

  const openNodeCoordSection = (line: number): Section => {
    const n = needDimension('NODE_COORD_SECTION', line);
    const xy = new Float64Array(2 * n);
    const seenAt = new Int32Array(n);
    coords = xy;
    coordLine = seenAt;
    let count = 0;
    return {
      key: 'NODE_COORD_SECTION',
      line,
      data(text, lineNo) {
        const t = tokens(text);
        if (t.length < 3) r.fail(lineNo, `too few numbers: expected "index x y", found ${t.length} token${t.length === 1 ? '' : 's'}`);
        if (t.length > 3) r.fail(lineNo, `too many numbers: expected "index x y", found ${t.length} tokens (only 2-D coordinates are supported)`);
        const index = r.integer(t[0]!, lineNo, 'a node index');
        const x = r.number(t[1]!, lineNo, 'an x coordinate');
        const y = r.number(t[2]!, lineNo, 'a y coordinate');
        if (index < 1 || index > n) r.fail(lineNo, `node index ${index} is out of range 1..${n} (DIMENSION ${n})`);
        const first = seenAt[index - 1]!;
        if (first !== 0) r.fail(lineNo, `duplicate node index ${index} (first given on line ${first})`);
        seenAt[index - 1] = lineNo;
        xy[2 * (index - 1)] = x;
        xy[2 * (index - 1) + 1] = y;
        count++;
      },
      end() {
        if (count < n) {
          const missing = seenAt.indexOf(0) + 1;
          r.fail(line, `too few coordinates in NODE_COORD_SECTION: expected ${n} nodes (DIMENSION), found ${count} (node ${missing} is missing)`);
        }
      },
    };
  };

  const openEdgeWeightSection = (line: number): Section => {
    const n = needDimension('EDGE_WEIGHT_SECTION', line);
    if (edgeWeightType !== undefined && edgeWeightType !== 'EXPLICIT') {
      r.fail(line, `EDGE_WEIGHT_SECTION given but EDGE_WEIGHT_TYPE is ${edgeWeightType}, not EXPLICIT`);
    }
    if (format === undefined) r.fail(line, 'missing EDGE_WEIGHT_FORMAT before EDGE_WEIGHT_SECTION');
    const layout = format.layout;
    if (layout === 'FUNCTION') r.fail(line, 'EDGE_WEIGHT_SECTION needs a matrix EDGE_WEIGHT_FORMAT, not FUNCTION');
    const expected = layout === 'FULL_MATRIX' ? n * n
      : layout === 'UPPER_ROW' || layout === 'LOWER_ROW' ? (n * (n - 1)) / 2
        : (n * (n + 1)) / 2;
    const lo = (i: number): number => (layout === 'UPPER_ROW' ? i + 1 : layout === 'UPPER_DIAG_ROW' ? i : 0);
    const hi = (i: number): number => (layout === 'LOWER_ROW' ? i : layout === 'LOWER_DIAG_ROW' ? i + 1 : n);
    const d = new Int32Array(n * n);
    distance = d;
    weightSectionLine = line;
    const what = `${format.name} with DIMENSION ${n}`;
    let count = 0;
    let i = 0;
    let j = lo(0);
    const settle = (): void => {
      while (i < n && j >= hi(i)) {
        i++;
        j = lo(i);
      }
    };
    settle();
    return {
      key: 'EDGE_WEIGHT_SECTION',
      line,
      data(text, lineNo) {
        for (const token of tokens(text)) {
          const w = r.number(token, lineNo, 'an edge weight');
          if (count >= expected) r.fail(lineNo, `too many weights in EDGE_WEIGHT_SECTION: expected ${expected} for ${what}`);
          if (!Number.isInteger(w)) r.fail(lineNo, `edge weight "${token}" is not an integer`);
          if (w < 0 || w > INT32_MAX) r.fail(lineNo, `edge weight ${token} is out of range 0..${INT32_MAX}`);
          d[i * n + j] = w;
          if (layout !== 'FULL_MATRIX') d[j * n + i] = w;
          count++;
          j++;
          settle();
        }
      },
      end() {
        if (count < expected) r.fail(line, `too few weights in EDGE_WEIGHT_SECTION: expected ${expected} for ${what}, found ${count}`);
        if (layout === 'FULL_MATRIX') {
          for (let a = 0; a < n; a++) {
            for (let b = a + 1; b < n; b++) {
              const ab = d[a * n + b]!;
              const ba = d[b * n + a]!;
              if (ab !== ba) {
                r.fail(line, `FULL_MATRIX is not symmetric: row ${a + 1} column ${b + 1} is ${ab} but row ${b + 1} column ${a + 1} is ${ba} (TYPE TSP needs a symmetric matrix)`);
              }
            }
          }
        }
        for (let a = 0; a < n; a++) d[a * n + a] = 0; // a diagonal given in the file is ignored
      },
    };
  };

  const skippedSection = (key: string, line: number): Section => ({ key, line, data() {}, end() {} });

  const lines = splitLines(text);
  let lineNo = 0;
  for (const raw of lines) {
    lineNo++;
    const line = raw.trim();
    if (line.length === 0) continue;
    const kw = keywordOf(line);
    if (kw === undefined) {
      if (section !== undefined) {
        section.data(line, lineNo);
        continue;
      }
      const first = tokens(line)[0]!;
      if (/^[A-Za-z_]/.test(first)) r.fail(lineNo, `unknown keyword "${first.replace(/:.*$/, '')}"`);
      r.fail(lineNo, `data outside any section: "${line.length > 40 ? `${line.slice(0, 40)}…` : line}"`);
    }
    section?.end();
    section = undefined;
    const { key, value } = kw;
    if (key === 'EOF') break;
    if (ONCE_ONLY_KEYS.has(key)) {
      const first = firstLine.get(key);
      if (first !== undefined) r.fail(lineNo, `duplicate ${key} (first given on line ${first})`);
      firstLine.set(key, lineNo);
    }
    switch (key) {
      case 'NAME':
        name = value;
        break;
      case 'COMMENT':
        comments.push(value);
        break;
      case 'TYPE': {
        const type = (tokens(value)[0] ?? '').toUpperCase();
        if (type !== 'TSP') r.fail(lineNo, `TYPE ${type || '(empty)'} is not supported (only symmetric TSP files, TYPE: TSP)`);
        break;
      }
      case 'DIMENSION': {
        const n = r.dimension(value, lineNo, 3);
        if (n > MAX_MATRIX_DIMENSION) {
          const gb = ((n * n * 4) / 1e9).toFixed(1);
          r.fail(lineNo, `DIMENSION ${n} is too large: its distance matrix would need ${gb} GB (at most ${MAX_MATRIX_DIMENSION} cities are supported)`);
        }
        dimension = n;
        break;
      }
      case 'EDGE_WEIGHT_TYPE': {
        const type = (tokens(value)[0] ?? '').toUpperCase();
        if (!(SUPPORTED_TYPES as readonly string[]).includes(type)) {
          r.fail(lineNo, `unsupported EDGE_WEIGHT_TYPE "${type}" (supported: ${SUPPORTED_TYPES.join(', ')})`);
        }
        edgeWeightType = type as EdgeWeightType;
        break;
      }
      case 'EDGE_WEIGHT_FORMAT': {
        const f = (tokens(value)[0] ?? '').toUpperCase();
        const layout = FORMAT_LAYOUT[f];
        if (layout === undefined) {
          r.fail(lineNo, `unknown EDGE_WEIGHT_FORMAT "${f}" (supported: ${Object.keys(FORMAT_LAYOUT).join(', ')})`);
        }
        format = { layout, name: f, line: lineNo };
        break;
      }
      case 'NODE_COORD_SECTION':
        section = openNodeCoordSection(lineNo);
        break;
      case 'EDGE_WEIGHT_SECTION':
        section = openEdgeWeightSection(lineNo);
        break;
      default:
        // DISPLAY_DATA_SECTION (drawing coordinates only), DEPOT/DEMAND/FIXED_EDGES/EDGE_DATA/TOUR sections: skipped.
        if (SECTION_KEYS.has(key)) section = skippedSection(key, lineNo);
        // CAPACITY, EDGE_DATA_FORMAT, NODE_COORD_TYPE, DISPLAY_DATA_TYPE: not needed.
        break;
    }
  }
  section?.end();

  if (dimension === undefined) r.fail(undefined, 'missing DIMENSION');
  if (edgeWeightType === undefined) r.fail(undefined, 'missing EDGE_WEIGHT_TYPE');
  const n = dimension;

  if (edgeWeightType === 'EXPLICIT') {
    if (format === undefined) r.fail(undefined, 'missing EDGE_WEIGHT_FORMAT (required with EDGE_WEIGHT_TYPE EXPLICIT)');
    if (format.layout === 'FUNCTION') r.fail(format.line, 'EDGE_WEIGHT_TYPE EXPLICIT needs a matrix EDGE_WEIGHT_FORMAT, not FUNCTION');
    if (distance === undefined) r.fail(undefined, 'missing EDGE_WEIGHT_SECTION (required with EDGE_WEIGHT_TYPE EXPLICIT)');
  } else {
    if (weightSectionLine !== undefined) {
      r.fail(weightSectionLine, `EDGE_WEIGHT_SECTION given but EDGE_WEIGHT_TYPE is ${edgeWeightType}, not EXPLICIT`);
    }
    if (coords === undefined || coordLine === undefined) r.fail(undefined, `missing NODE_COORD_SECTION (required with EDGE_WEIGHT_TYPE ${edgeWeightType})`);
    const nodeLines = coordLine;
    distance = coordinateDistances(edgeWeightType, n, coords, (a, b, d) =>
      r.fail(Math.max(nodeLines[a]!, nodeLines[b]!), `distance ${d} between nodes ${a + 1} and ${b + 1} does not fit a 32-bit integer`));
  }

  const instance: TspInstance = {
    name: name ?? basenameOf(file),
    comment: comments.join('\n'),
    dimension: n,
    edgeWeightType,
    distance,
  };
  if (coords !== undefined) instance.coords = coords;
  return instance;
}

/**
 * Parses a TSPLIB tour file (`.opt.tour`): the 1-based cities of TOUR_SECTION up to `-1`, returned 0-based.
 * Only the first tour is read. A DIMENSION, when given, bounds the city numbers and must equal the tour length.
 */
export function parseTour(text: string, file: string = DEFAULT_FILE): number[] {
  const r: Reader = new Reader(file);
  let dimension: number | undefined;
  let sectionLine: number | undefined;
  let inSection = false;
  let ended = false;
  const tour: number[] = [];
  const seenAt = new Map<number, number>();
  const firstLine = new Map<string, number>();

  let lineNo = 0;
  for (const raw of splitLines(text)) {
    lineNo++;
    const line = raw.trim();
    if (line.length === 0) continue;
    const kw = keywordOf(line);
    if (kw === undefined) {
      if (!inSection) {
        const first = tokens(line)[0]!;
        if (/^[A-Za-z_]/.test(first)) r.fail(lineNo, `unknown keyword "${first.replace(/:.*$/, '')}"`);
        r.fail(lineNo, `data outside TOUR_SECTION: "${line.length > 40 ? `${line.slice(0, 40)}…` : line}"`);
      }
      if (ended) continue;
      for (const token of tokens(line)) {
        const c = r.integer(token, lineNo, 'a city number or -1');
        if (c === -1) {
          ended = true;
          break;
        }
        if (c < 1 || (dimension !== undefined && c > dimension)) {
          r.fail(lineNo, `city ${c} is out of range 1..${dimension ?? 'DIMENSION'}`);
        }
        const first = seenAt.get(c);
        if (first !== undefined) r.fail(lineNo, `duplicate city ${c} in TOUR_SECTION (first on line ${first})`);
        seenAt.set(c, lineNo);
        tour.push(c - 1);
      }
      continue;
    }
    inSection = false;
    const { key, value } = kw;
    if (key === 'EOF') break;
    if (key === 'DIMENSION' || key === 'TYPE' || key === 'TOUR_SECTION') {
      const first = firstLine.get(key);
      if (first !== undefined) r.fail(lineNo, `duplicate ${key} (first given on line ${first})`);
      firstLine.set(key, lineNo);
    }
    if (key === 'TYPE') {
      const type = (tokens(value)[0] ?? '').toUpperCase();
      if (type !== 'TOUR') r.fail(lineNo, `TYPE ${type || '(empty)'} is not a tour file (expected TYPE: TOUR)`);
    } else if (key === 'DIMENSION') {
      dimension = r.dimension(value, lineNo, 1);
    } else if (key === 'TOUR_SECTION') {
      inSection = true;
      sectionLine = lineNo;
    } else if (SECTION_KEYS.has(key)) {
      r.fail(lineNo, `unexpected ${key} in a tour file`);
    }
  }
  if (sectionLine === undefined) r.fail(undefined, 'missing TOUR_SECTION');
  if (tour.length === 0) r.fail(sectionLine, 'empty TOUR_SECTION');
  if (dimension !== undefined) {
    if (tour.length !== dimension) r.fail(sectionLine, `tour has ${tour.length} cities, expected ${dimension} (DIMENSION)`);
  } else {
    for (let c = 1; c <= tour.length; c++) {
      if (!seenAt.has(c)) r.fail(sectionLine, `tour of ${tour.length} cities does not visit city ${c}`);
    }
  }
  return tour;
}
