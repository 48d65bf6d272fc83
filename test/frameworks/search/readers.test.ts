import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { hasEdge, parseDimacs, validateClique, type Graph } from '../../../src/frameworks/search/clique/dimacs.js';
import { InputError } from '../../../src/frameworks/search/input-error.js';
import { knapsackByDynamicProgramming, parseKnapsack, randomKnapsack } from '../../../src/frameworks/search/knapsack/knapsack-format.js';
import { NQUEENS_SOLUTIONS } from '../../../src/frameworks/search/nqueens/known-counts.js';
import { parseTour, parseTsplib, type TspInstance } from '../../../src/frameworks/search/tsp/tsplib.js';
import { randomEuclideanInstance, tourLength, validateTour } from '../../../src/frameworks/search/tsp/tsp-tours.js';

const DATA = new URL('../../data/', import.meta.url);
const read = (relative: string): string => readFileSync(new URL(relative, DATA), 'utf8');

interface Optimum { n: number; edge_weight_type: string; edge_weight_format: string | null; optimal_tour_length: number }
interface Omega { vertices: number; edges: number; omega: number }
const OPTIMA = JSON.parse(read('tsplib/optima.json')) as Record<string, Optimum>;
const OMEGA = JSON.parse(read('clique/omega.json')) as Record<string, Omega>;

const TSP_FILES = readdirSync(new URL('tsplib/', DATA)).filter((f) => f.endsWith('.tsp')).map((f) => f.slice(0, -'.tsp'.length)).sort();
const TOUR_FILES = TSP_FILES.filter((name) => existsSync(new URL(`tsplib/${name}.opt.tour`, DATA)));
const CLQ_FILES = readdirSync(new URL('clique/', DATA)).filter((f) => f.endsWith('.clq')).map((f) => f.slice(0, -'.clq'.length)).sort();

/** Asserts that fn throws an InputError for `file` at exactly `line`, whose detail matches `detail`. */
function throwsInput(fn: () => unknown, line: number | undefined, detail: RegExp, file = '<input>'): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof InputError, `expected an InputError, got ${String(err)}`);
    assert.equal(err.file, file);
    assert.equal(err.line, line, `line of: ${err.message}`);
    assert.match(err.detail, detail);
    assert.equal(err.message, line === undefined ? `${file}: ${err.detail}` : `${file}:${line}: ${err.detail}`);
    return true;
  });
}

/** Joins lines with '\n' so line numbers in the tests can be read off the array (index + 1). */
const lines = (...l: string[]): string => l.join('\n');

function matrix(t: TspInstance): number[][] {
  const n = t.dimension;
  return Array.from({ length: n }, (_, i) => Array.from(t.distance.subarray(i * n, (i + 1) * n)));
}

function assertSymmetricZeroDiagonal(t: TspInstance): void {
  const n = t.dimension;
  assert.equal(t.distance.length, n * n);
  for (let i = 0; i < n; i++) {
    assert.equal(t.distance[i * n + i], 0, `d(${i},${i})`);
    for (let j = i + 1; j < n; j++) assert.equal(t.distance[i * n + j], t.distance[j * n + i], `d(${i},${j})`);
  }
}

/** Held–Karp dynamic programme: exact optimum for small n (test oracle only). */
function heldKarp(t: TspInstance): number {
  const n = t.dimension;
  const d = t.distance;
  const m = n - 1; // city n-1 is the start; subsets over cities 0..n-2
  const full = 1 << m;
  const best = new Float64Array(full * m).fill(Infinity);
  for (let j = 0; j < m; j++) best[(1 << j) * m + j] = d[(n - 1) * n + j]!;
  for (let set = 1; set < full; set++) {
    for (let j = 0; j < m; j++) {
      const here = best[set * m + j]!;
      if (here === Infinity) continue;
      for (let k = 0; k < m; k++) {
        if (set & (1 << k)) continue;
        const next = (set | (1 << k)) * m + k;
        const cost = here + d[j * n + k]!;
        if (cost < best[next]!) best[next] = cost;
      }
    }
  }
  let opt = Infinity;
  for (let j = 0; j < m; j++) opt = Math.min(opt, best[(full - 1) * m + j]! + d[j * n + n - 1]!);
  return opt;
}

describe('InputError', () => {
  it('formats FILE:LINE: detail, or FILE: detail without a line', () => {
    const e = new InputError('a.tsp', 7, 'bad thing');
    assert.equal(e.message, 'a.tsp:7: bad thing');
    assert.equal(e.name, 'InputError');
    assert.ok(e instanceof Error);
    assert.deepEqual([e.file, e.line, e.detail], ['a.tsp', 7, 'bad thing']);
    assert.equal(new InputError('a.tsp', undefined, 'bad thing').message, 'a.tsp: bad thing');
  });
});

describe('TSPLIB instances (published optima)', () => {
  it('has the copied instances and tours', () => {
    assert.deepEqual(TSP_FILES, [
      'att48', 'bayg29', 'bays29', 'berlin52', 'brazil58', 'burma14', 'dantzig42', 'eil51', 'fri26', 'gr17', 'gr21',
      'gr24', 'st70', 'ulysses16', 'ulysses22',
    ]);
    assert.deepEqual(TOUR_FILES, ['att48', 'bayg29', 'bays29', 'berlin52', 'eil51', 'fri26', 'gr24', 'st70', 'ulysses16', 'ulysses22']);
  });

  it('re-measures every .opt.tour to exactly the published optimum (EUC_2D, GEO, ATT, EXPLICIT rules)', () => {
    const covered = new Set<string>();
    for (const name of TOUR_FILES) {
      const instance = parseTsplib(read(`tsplib/${name}.tsp`), `${name}.tsp`);
      const tour = parseTour(read(`tsplib/${name}.opt.tour`), `${name}.opt.tour`);
      const published = OPTIMA[name]!;
      assert.equal(instance.dimension, published.n, name);
      assert.equal(instance.edgeWeightType, published.edge_weight_type, name);
      assert.equal(validateTour(instance, tour), null, name);
      assert.equal(tourLength(instance, tour), published.optimal_tour_length, name);
      covered.add(published.edge_weight_format ? `${published.edge_weight_type}/${published.edge_weight_format}` : published.edge_weight_type);
    }
    for (const kind of ['EUC_2D', 'GEO', 'ATT', 'EXPLICIT/FULL_MATRIX', 'EXPLICIT/UPPER_ROW', 'EXPLICIT/LOWER_DIAG_ROW']) {
      assert.ok(covered.has(kind), `a tour checks ${kind}`);
    }
  });

  it('parses every instance into a symmetric matrix with a zero diagonal, with coordinates only from NODE_COORD_SECTION', () => {
    for (const name of TSP_FILES) {
      const t = parseTsplib(read(`tsplib/${name}.tsp`), `test/data/tsplib/${name}.tsp`);
      const published = OPTIMA[name]!;
      assert.equal(t.dimension, published.n, name);
      assert.equal(t.edgeWeightType, published.edge_weight_type, name);
      assertSymmetricZeroDiagonal(t);
      if (t.edgeWeightType === 'EXPLICIT') assert.equal(t.coords, undefined, `${name}: DISPLAY_DATA_SECTION is not NODE_COORD_SECTION`);
      else assert.equal(t.coords?.length, 2 * t.dimension, name);
    }
    const att = parseTsplib(read('tsplib/att48.tsp'));
    assert.equal(att.name, 'att48');
    assert.equal(att.comment, '48 capitals of the US (Padberg/Rinaldi)');
    assert.deepEqual(Array.from(att.coords!.subarray(0, 4)), [6734, 1453, 2233, 10]);
  });

  it('agrees with an exact Held–Karp on the tour-less burma14 (GEO) and gr17 (LOWER_DIAG_ROW)', () => {
    for (const name of ['burma14', 'gr17']) {
      assert.equal(heldKarp(parseTsplib(read(`tsplib/${name}.tsp`))), OPTIMA[name]!.optimal_tour_length, name);
    }
  });

  it('reads the gr24 tour as 0-based cities', () => {
    const tour = parseTour(read('tsplib/gr24.opt.tour'));
    assert.equal(tour.length, 24);
    assert.deepEqual(tour.slice(0, 4), [15, 10, 2, 6]);
    assert.deepEqual([...tour].sort((a, b) => a - b), Array.from({ length: 24 }, (_, i) => i));
  });
});

describe('TSPLIB EXPLICIT formats and header quirks (hand-written)', () => {
  // The same symmetric 5-city matrix in every layout, with numbers wrapped across lines at random places.
  const EXPECTED = [
    [0, 12, 15, 20, 31],
    [12, 0, 17, 24, 28],
    [15, 17, 0, 11, 19],
    [20, 24, 11, 0, 13],
    [31, 28, 19, 13, 0],
  ];
  const explicit = (format: string, ...data: string[]): string =>
    lines('NAME : five', 'TYPE : TSP', 'DIMENSION : 5', 'EDGE_WEIGHT_TYPE : EXPLICIT', `EDGE_WEIGHT_FORMAT : ${format}`, 'EDGE_WEIGHT_SECTION', ...data, 'EOF');

  it('gives the same matrix from FULL_MATRIX, UPPER_ROW, LOWER_ROW, UPPER_DIAG_ROW and LOWER_DIAG_ROW', () => {
    const cases: Record<string, string> = {
      FULL_MATRIX: explicit('FULL_MATRIX', '0 12 15 20 31 12 0', '   17 24 28 15 17 0 11 19', '20 24 11', '0 13 31 28 19 13 0'),
      UPPER_ROW: explicit('UPPER_ROW', '12 15 20', '31 17 24 28 11', '19 13'),
      LOWER_ROW: explicit('LOWER_ROW', '12 15 17 20 24 11 31', '28', '', '19  13'),
      UPPER_DIAG_ROW: explicit('UPPER_DIAG_ROW', '0 12', '15 20 31 0 17 24 28 0', '\t11 19 0 13 0'),
      LOWER_DIAG_ROW: explicit('LOWER_DIAG_ROW', '0 12 0 15 17', '0 20 24 11 0 31 28 19 13 0'),
      // For a symmetric matrix the column layouts list the same numbers as the mirrored row layouts.
      UPPER_COL: explicit('UPPER_COL', '12 15 17 20 24 11 31 28 19 13'),
      LOWER_DIAG_COL: explicit('LOWER_DIAG_COL', '0 12 15 20 31 0 17 24 28 0 11 19 0 13 0'),
    };
    for (const [format, text] of Object.entries(cases)) {
      const t = parseTsplib(text, `${format}.tsp`);
      assert.equal(t.name, 'five');
      assert.equal(t.dimension, 5);
      assert.equal(t.edgeWeightType, 'EXPLICIT');
      assert.deepEqual(matrix(t), EXPECTED, format);
      assert.equal(t.coords, undefined);
    }
  });

  it('ignores a non-zero diagonal in FULL_MATRIX', () => {
    const t = parseTsplib(explicit('FULL_MATRIX', '9 12 15 20 31 12 9 17 24 28 15 17 9 11 19 20 24 11 9 13 31 28 19 13 9'));
    assert.deepEqual(matrix(t), EXPECTED);
  });

  it('accepts KEY: v, KEY : v, KEY:v and CRLF, skips DISPLAY_DATA_SECTION and tolerates a missing EOF', () => {
    const t = parseTsplib(
      [
        'NAME:five', 'COMMENT : first', 'COMMENT: second: with a colon', 'TYPE: TSP', 'DIMENSION:5',
        'EDGE_WEIGHT_TYPE :EXPLICIT', 'EDGE_WEIGHT_FORMAT: UPPER_ROW ', 'DISPLAY_DATA_TYPE: TWOD_DISPLAY',
        'DISPLAY_DATA_SECTION', '1 1000.0 1000.0', '2 -5e3 2.5', '3 7 7', '4 8 8', '5 9 9',
        'EDGE_WEIGHT_SECTION   ', '12 15 20 31', '17 24 28', '11 19', '13',
        'DISPLAY_DATA_SECTION', '1 0 0',
      ].join('\r\n'),
    );
    assert.equal(t.name, 'five');
    assert.equal(t.comment, 'first\nsecond: with a colon');
    assert.deepEqual(matrix(t), EXPECTED);
    assert.equal(t.coords, undefined);
  });

  it('rounds CEIL_2D up and EUC_2D to nearest, and keeps the coordinates', () => {
    const coords = ['NODE_COORD_SECTION', '1 0 0', '2 1.0 1e0', '3 3 4', '4 2 1', 'EOF'];
    const ceil = parseTsplib(lines('NAME: c', 'TYPE: TSP', 'DIMENSION: 4', 'EDGE_WEIGHT_TYPE: CEIL_2D', ...coords));
    // d12 = √2 ≈ 1.41, d13 = 5, d14 = √5 ≈ 2.24, d23 = √13 ≈ 3.61, d24 = 1, d34 = √10 ≈ 3.16
    assert.deepEqual(matrix(ceil), [
      [0, 2, 5, 3],
      [2, 0, 4, 1],
      [5, 4, 0, 4],
      [3, 1, 4, 0],
    ]);
    assert.deepEqual(Array.from(ceil.coords!), [0, 0, 1, 1, 3, 4, 2, 1]);
    const euc = parseTsplib(lines('NAME: c', 'TYPE: TSP', 'DIMENSION: 4', 'EDGE_WEIGHT_TYPE: EUC_2D', ...coords));
    assert.deepEqual(matrix(euc), [
      [0, 1, 5, 2],
      [1, 0, 4, 1],
      [5, 4, 0, 3],
      [2, 1, 3, 0],
    ]);
  });

  it('applies the ATT pseudo-Euclidean rule (rounding up unless exact)', () => {
    const att = parseTsplib(lines('NAME: a', 'TYPE: TSP', 'DIMENSION: 3', 'EDGE_WEIGHT_TYPE: ATT', 'NODE_COORD_SECTION', '1 0 0', '2 10 0', '3 0 30'));
    // √(100/10) ≈ 3.16 → 4;  √(900/10) ≈ 9.49 → 10;  √(1000/10) = 10 exactly → 10
    assert.deepEqual(matrix(att), [
      [0, 4, 10],
      [4, 0, 10],
      [10, 10, 0],
    ]);
  });

  it('accepts nodes in any order in NODE_COORD_SECTION', () => {
    const t = parseTsplib(lines('DIMENSION: 3', 'EDGE_WEIGHT_TYPE: EUC_2D', 'NODE_COORD_SECTION', '3 0 4', '1 0 0', '2 3 0'), 'dir/tri.tsp');
    assert.equal(t.name, 'tri');
    assert.deepEqual(matrix(t), [[0, 3, 4], [3, 0, 5], [4, 5, 0]]);
  });
});

describe('TSPLIB errors', () => {
  const header = (type = 'EUC_2D', n = 4): string[] => ['NAME: bad', 'TYPE: TSP', `DIMENSION: ${n}`, `EDGE_WEIGHT_TYPE: ${type}`];

  it('missing DIMENSION, or a data section before it', () => {
    throwsInput(() => parseTsplib(lines('NAME: bad', 'TYPE: TSP', 'EDGE_WEIGHT_TYPE: EUC_2D', 'EOF')), undefined, /^missing DIMENSION$/);
    throwsInput(() => parseTsplib(lines('NAME: bad', 'EDGE_WEIGHT_TYPE: EUC_2D', 'NODE_COORD_SECTION', '1 0 0', 'DIMENSION: 3')), 3, /missing DIMENSION before NODE_COORD_SECTION/);
    throwsInput(
      () => parseTsplib(lines('EDGE_WEIGHT_TYPE: EXPLICIT', 'EDGE_WEIGHT_FORMAT: UPPER_ROW', 'EDGE_WEIGHT_SECTION', '1 2 3')),
      3,
      /missing DIMENSION before EDGE_WEIGHT_SECTION/,
    );
  });

  it('absurd or too large DIMENSION, and a non-numeric one', () => {
    throwsInput(() => parseTsplib(lines('NAME: bad', 'DIMENSION: 2')), 2, /DIMENSION 2 is absurd \(expected 3\.\.100000\)/);
    throwsInput(() => parseTsplib(lines('NAME: bad', 'DIMENSION : 0')), 2, /DIMENSION 0 is absurd/);
    throwsInput(() => parseTsplib(lines('DIMENSION: 100001')), 1, /DIMENSION 100001 is absurd/);
    throwsInput(() => parseTsplib(lines('DIMENSION: 20000')), 1, /DIMENSION 20000 is too large: .*1\.6 GB.*at most 5000/);
    throwsInput(() => parseTsplib(lines('NAME: x', 'DIMENSION: many')), 2, /non-numeric token "many"/);
    throwsInput(() => parseTsplib(lines('NAME: x', 'DIMENSION: 4.5')), 2, /"4\.5" is not an integer/);
  });

  it('unknown or unsupported EDGE_WEIGHT_TYPE and EDGE_WEIGHT_FORMAT', () => {
    throwsInput(() => parseTsplib(lines(...header('EUC_3D'), 'NODE_COORD_SECTION')), 4, /unsupported EDGE_WEIGHT_TYPE "EUC_3D" \(supported: EUC_2D, CEIL_2D, ATT, GEO, EXPLICIT\)/);
    throwsInput(() => parseTsplib(lines(...header('EXPLICIT'), 'EDGE_WEIGHT_FORMAT: DIAGONAL', 'EDGE_WEIGHT_SECTION')), 5, /unknown EDGE_WEIGHT_FORMAT "DIAGONAL"/);
    throwsInput(() => parseTsplib(lines(...header('EXPLICIT'), 'EDGE_WEIGHT_SECTION', '1 2 3 4 5 6')), 5, /missing EDGE_WEIGHT_FORMAT before EDGE_WEIGHT_SECTION/);
    throwsInput(() => parseTsplib(lines(...header('EXPLICIT'), 'EDGE_WEIGHT_FORMAT: FUNCTION', 'EDGE_WEIGHT_SECTION')), 6, /not FUNCTION/);
    throwsInput(() => parseTsplib(lines('NAME: bad', 'TYPE: TSP', 'DIMENSION: 3', 'NODE_COORD_SECTION', '1 0 0', '2 0 1', '3 1 1')), undefined, /missing EDGE_WEIGHT_TYPE/);
  });

  it('rejects TYPEs other than TSP and unknown keywords', () => {
    throwsInput(() => parseTsplib(lines('NAME: br17', 'TYPE: ATSP')), 2, /TYPE ATSP is not supported \(only symmetric TSP/);
    throwsInput(() => parseTsplib(read('tsplib/gr24.opt.tour'), 'gr24.opt.tour'), 3, /TYPE TOUR is not supported/, 'gr24.opt.tour');
    throwsInput(() => parseTsplib(lines('NAME: x', 'TYPE: TSP', 'DIMENSON: 5')), 3, /unknown keyword "DIMENSON"/);
    throwsInput(() => parseTsplib(lines('NAME: x', '1 2 3')), 2, /data outside any section: "1 2 3"/);
    throwsInput(() => parseTsplib(lines('NAME: x', 'DIMENSION: 3', 'DIMENSION: 4')), 3, /duplicate DIMENSION \(first given on line 2\)/);
  });

  it('too few or malformed coordinates', () => {
    throwsInput(
      () => parseTsplib(lines(...header(), 'NODE_COORD_SECTION', '1 0 0', '2 0 1', '3 1 1', 'EOF')),
      5,
      /too few coordinates in NODE_COORD_SECTION: expected 4 nodes \(DIMENSION\), found 3 \(node 4 is missing\)/,
    );
    throwsInput(() => parseTsplib(lines(...header(), 'NODE_COORD_SECTION', '2 0 1', '3 1 1', '4 1 0')), 5, /expected 4 nodes.*found 3 \(node 1 is missing\)/);
    throwsInput(() => parseTsplib(lines(...header(), 'NODE_COORD_SECTION', '1 0 0', '2 5')), 7, /too few numbers: expected "index x y", found 2/);
    throwsInput(() => parseTsplib(lines(...header(), 'NODE_COORD_SECTION', '1 0 0 0')), 6, /too many numbers: expected "index x y", found 4/);
    throwsInput(() => parseTsplib(lines(...header(), 'NODE_COORD_SECTION', '1 0 0', '2 1.5 abc')), 7, /non-numeric token "abc"/);
    throwsInput(() => parseTsplib(lines(...header(), 'NODE_COORD_SECTION', '1 0 0', '2 0x10 1')), 7, /non-numeric token "0x10"/);
    throwsInput(() => parseTsplib(lines(...header(), 'NODE_COORD_SECTION', '1 0 0', '5 1 1')), 7, /node index 5 is out of range 1\.\.4/);
    throwsInput(() => parseTsplib(lines(...header(), 'NODE_COORD_SECTION', '0 1 1')), 6, /node index 0 is out of range/);
    throwsInput(() => parseTsplib(lines(...header(), 'NODE_COORD_SECTION', '1 0 0', '2 0 1', '', '2 1 1')), 9, /duplicate node index 2 \(first given on line 7\)/);
    throwsInput(() => parseTsplib(lines(...header(), 'EOF')), undefined, /missing NODE_COORD_SECTION/);
    throwsInput(() => parseTsplib(lines(...header('GEO', 3), 'NODE_COORD_SECTION', '1 0 0', '2 0 1', '3 1 1', 'EDGE_WEIGHT_SECTION', '1')), 9, /EDGE_WEIGHT_SECTION given but EDGE_WEIGHT_TYPE is GEO/);
  });

  it('too few, too many or bad weights', () => {
    const explicit = (format: string, ...data: string[]): string =>
      lines('NAME: bad', 'TYPE: TSP', 'DIMENSION: 3', 'EDGE_WEIGHT_TYPE: EXPLICIT', `EDGE_WEIGHT_FORMAT: ${format}`, 'EDGE_WEIGHT_SECTION', ...data);
    throwsInput(() => parseTsplib(explicit('LOWER_DIAG_ROW', '0 1 0', '2 3', 'EOF')), 6, /too few weights in EDGE_WEIGHT_SECTION: expected 6 for LOWER_DIAG_ROW with DIMENSION 3, found 5/);
    throwsInput(() => parseTsplib(explicit('FULL_MATRIX', '0 1 2 1 0 3')), 6, /too few weights.*expected 9 for FULL_MATRIX.*found 6/);
    throwsInput(() => parseTsplib(explicit('UPPER_ROW', '1 2', '3 4')), 8, /too many weights in EDGE_WEIGHT_SECTION: expected 3 for UPPER_ROW/);
    throwsInput(() => parseTsplib(explicit('UPPER_ROW', '1 2', 'x3')), 8, /non-numeric token "x3"/);
    throwsInput(() => parseTsplib(explicit('UPPER_ROW', '1 2.5 3')), 7, /edge weight "2\.5" is not an integer/);
    throwsInput(() => parseTsplib(explicit('UPPER_ROW', '1 -2 3')), 7, /edge weight -2 is out of range/);
    throwsInput(() => parseTsplib(explicit('FULL_MATRIX', '0 1 2', '1 0 3', '2 4 0')), 6, /FULL_MATRIX is not symmetric: row 2 column 3 is 3 but row 3 column 2 is 4/);
    throwsInput(() => parseTsplib(lines('NAME: bad', 'TYPE: TSP', 'DIMENSION: 3', 'EDGE_WEIGHT_TYPE: EXPLICIT', 'EDGE_WEIGHT_FORMAT: UPPER_ROW')), undefined, /missing EDGE_WEIGHT_SECTION/);
  });

  it('names the file in the message', () => {
    throwsInput(() => parseTsplib(lines('NAME: x', 'DIMENSION: 1'), 'inst/x.tsp'), 2, /absurd/, 'inst/x.tsp');
    assert.throws(() => parseTsplib(lines('NAME: x', 'DIMENSION: 1'), 'inst/x.tsp'), { message: /^inst\/x\.tsp:2: DIMENSION 1 is absurd/ });
  });
});

describe('TSPLIB tours', () => {
  const three = randomEuclideanInstance(4, 1);

  it('parses wrapped tours, ending at -1, with or without DIMENSION', () => {
    assert.deepEqual(parseTour(lines('NAME : t', 'TYPE : TOUR', 'DIMENSION : 4', 'TOUR_SECTION', '1 3', '2', '4 -1', 'EOF')), [0, 2, 1, 3]);
    assert.deepEqual(parseTour(lines('TOUR_SECTION', '2 1 3', '-1', '-1')), [1, 0, 2]);
    assert.deepEqual(parseTour(lines('TOUR_SECTION', '2 1 3')), [1, 0, 2]); // no -1, no EOF
  });

  it('reports bad tours with their line', () => {
    throwsInput(() => parseTour(lines('NAME: t', 'TYPE: TOUR')), undefined, /missing TOUR_SECTION/);
    throwsInput(() => parseTour(lines('TYPE: TSP')), 1, /TYPE TSP is not a tour file/);
    throwsInput(() => parseTour(lines('DIMENSION: 3', 'TOUR_SECTION', '1 2', '2 3 -1')), 4, /duplicate city 2 in TOUR_SECTION \(first on line 3\)/);
    throwsInput(() => parseTour(lines('DIMENSION: 3', 'TOUR_SECTION', '1 2 4 -1')), 3, /city 4 is out of range 1\.\.3/);
    throwsInput(() => parseTour(lines('DIMENSION: 3', 'TOUR_SECTION', '1 0 -1')), 3, /city 0 is out of range/);
    throwsInput(() => parseTour(lines('DIMENSION: 4', 'TOUR_SECTION', '1 2 3 -1')), 2, /tour has 3 cities, expected 4 \(DIMENSION\)/);
    throwsInput(() => parseTour(lines('TOUR_SECTION', '1 3 -1')), 1, /does not visit city 2/);
    throwsInput(() => parseTour(lines('TOUR_SECTION', '1 two -1')), 2, /non-numeric token "two"/);
    throwsInput(() => parseTour(lines('TOUR_SECTION', '-1')), 1, /empty TOUR_SECTION/);
  });

  it('validateTour and tourLength', () => {
    assert.equal(validateTour(three, [3, 1, 0, 2]), null);
    assert.match(validateTour(three, [0, 1, 2]) ?? '', /tour has 3 cities, expected 4/);
    assert.match(validateTour(three, [0, 1, 1, 2]) ?? '', /city 1 appears more than once/);
    assert.match(validateTour(three, [0, 1, 2, 4]) ?? '', /city 4 at position 3 is out of range 0\.\.3/);
    assert.match(validateTour(three, [0, 1, 2, 1.5]) ?? '', /out of range/);
    const d = (a: number, b: number): number => three.distance[a * 4 + b]!;
    assert.equal(tourLength(three, [3, 1, 0, 2]), d(3, 1) + d(1, 0) + d(0, 2) + d(2, 3));
    assert.equal(tourLength(three, [0, 1, 2, 3]), tourLength(three, [2, 3, 0, 1]), 'rotation');
    assert.equal(tourLength(three, [0, 1, 2, 3]), tourLength(three, [3, 2, 1, 0]), 'reversal');
    assert.throws(() => tourLength(three, [0, 9]), RangeError);
  });
});

describe('random Euclidean instances', () => {
  it('are reproducible from the seed, EUC_2D over integer coordinates in [0, size)', () => {
    const a = randomEuclideanInstance(30, 7);
    const b = randomEuclideanInstance(30, 7);
    const c = randomEuclideanInstance(30, 8);
    assert.equal(a.name, 'rand30-7');
    assert.equal(a.edgeWeightType, 'EUC_2D');
    assert.equal(a.dimension, 30);
    assert.deepEqual(a.distance, b.distance);
    assert.deepEqual(a.coords, b.coords);
    assert.notDeepEqual(a.coords, c.coords);
    assertSymmetricZeroDiagonal(a);
    const xy = a.coords!;
    for (const v of xy) assert.ok(Number.isInteger(v) && v >= 0 && v < 1000);
    for (let i = 0; i < 30; i++) {
      for (let j = 0; j < 30; j++) {
        const exact = Math.hypot(xy[2 * i]! - xy[2 * j]!, xy[2 * i + 1]! - xy[2 * j + 1]!);
        assert.equal(a.distance[i * 30 + j], Math.floor(exact + 0.5));
      }
    }
    const small = randomEuclideanInstance(20, 3, 10);
    for (const v of small.coords!) assert.ok(v >= 0 && v < 10);
    assert.throws(() => randomEuclideanInstance(0, 1), RangeError);
  });
});

describe('DIMACS graphs', () => {
  function popcount(x: number): number {
    let c = 0;
    for (let v = x >>> 0; v !== 0; v &= v - 1) c++;
    return c;
  }

  function assertWellFormed(g: Graph): void {
    assert.equal(g.wordsPerRow, Math.ceil(g.n / 32));
    assert.equal(g.adjacency.length, g.n * g.wordsPerRow);
    let bits = 0;
    for (const w of g.adjacency) bits += popcount(w);
    assert.equal(bits, 2 * g.edges, 'each edge is stored in both rows');
    for (let a = 0; a < g.n; a++) {
      assert.equal(hasEdge(g, a, a), false, 'no self-loops');
      for (let b = a + 1; b < g.n; b++) assert.equal(hasEdge(g, a, b), hasEdge(g, b, a));
    }
  }

  it('has the copied graphs, each known in omega.json', () => {
    assert.deepEqual(CLQ_FILES, [
      'C125.9', 'MANN_a27', 'MANN_a9', 'brock200_1', 'brock200_2', 'brock200_3', 'brock200_4', 'hamming6-4', 'hamming8-4',
      'johnson8-2-4', 'johnson8-4-4', 'keller4', 'p_hat300-1', 'p_hat300-2', 'p_hat300-3',
    ]);
    for (const name of CLQ_FILES) assert.ok(OMEGA[name], name);
  });

  it('parses the copied graphs (CRLF, `p col`, `n` weight lines) with the header vertex count and distinct edge count', () => {
    for (const name of CLQ_FILES) {
      const g = parseDimacs(read(`clique/${name}.clq`), `test/data/clique/${name}.clq`);
      assert.equal(g.name, name);
      assert.equal(g.n, OMEGA[name]!.vertices, name);
      assert.equal(g.edges, OMEGA[name]!.edges, name);
      assertWellFormed(g);
    }
  });

  it('accepts the planted clique listed (0-based) in the brock200_2 header', () => {
    const g = parseDimacs(read('clique/brock200_2.clq'));
    const planted = [26, 120, 119, 157, 69, 182, 47, 148, 104, 134, 54, 144];
    assert.equal(planted.length, OMEGA.brock200_2!.omega);
    assert.equal(validateClique(g, planted), null);
  });

  it('handles CRLF, comments, `n` lines, self-loops and duplicate edges', () => {
    const g = parseDimacs(['c tiny', 'p edge 4 6', 'n 1 5', 'e 1 2', 'e 2 1', 'e 2 3', 'e 3 3', '', 'e 1 3', 'e 4 1', 'c end'].join('\r\n'), 'tiny.clq');
    assert.equal(g.name, 'tiny');
    assert.equal(g.n, 4);
    assert.equal(g.edges, 4);
    assert.equal(g.wordsPerRow, 1);
    assertWellFormed(g);
    assert.ok(hasEdge(g, 0, 1) && hasEdge(g, 1, 2) && hasEdge(g, 0, 2) && hasEdge(g, 3, 0));
    assert.ok(!hasEdge(g, 1, 3) && !hasEdge(g, 2, 3) && !hasEdge(g, 2, 2));
    assert.equal(validateClique(g, [0, 1, 2]), null);
    assert.equal(validateClique(g, []), null);
    assert.equal(validateClique(g, [3]), null);
    assert.match(validateClique(g, [0, 1, 3]) ?? '', /vertices 1 and 3 are not adjacent/);
    assert.match(validateClique(g, [0, 1, 0]) ?? '', /vertex 0 appears more than once/);
    assert.match(validateClique(g, [0, 4]) ?? '', /vertex 4 is out of range 0\.\.3/);
    assert.match(validateClique(g, [-1]) ?? '', /out of range/);
  });

  it('accepts irregular whitespace in the p line (as in the p_hat files) and `p col`', () => {
    const g = parseDimacs(lines('p  edge  3     2\t', 'e\t1 2', 'e 2  3 '));
    assert.deepEqual([g.n, g.edges], [3, 2]);
    assert.deepEqual([parseDimacs(lines('p col 3 1', 'e 1 3')).edges], [1]);
  });

  it('sets bits across word boundaries', () => {
    const g = parseDimacs(lines('p edge 70 3', 'e 1 70', 'e 32 33', 'e 64 65'));
    assert.equal(g.wordsPerRow, 3);
    assert.ok(hasEdge(g, 0, 69) && hasEdge(g, 69, 0) && hasEdge(g, 31, 32) && hasEdge(g, 63, 64));
    assert.ok(!hasEdge(g, 0, 68) && !hasEdge(g, 31, 33));
    assertWellFormed(g);
  });

  it('reports malformed graphs with their line', () => {
    throwsInput(() => parseDimacs(lines('c nothing here', '')), undefined, /missing "p edge N M" line/);
    throwsInput(() => parseDimacs(lines('c x', 'p edge 3 1', 'e 1 2', 'p edge 3 1')), 4, /duplicate "p" line \(first on line 2\)/);
    throwsInput(() => parseDimacs(lines('c x', 'e 1 2', 'p edge 3 1')), 2, /edge line before the "p" line/);
    throwsInput(() => parseDimacs(lines('p edge 3 2', 'e 1 2', 'e 3 4')), 3, /vertex 4 is out of range 1\.\.3/);
    throwsInput(() => parseDimacs(lines('p edge 3 2', 'e 0 2')), 2, /vertex 0 is out of range 1\.\.3/);
    throwsInput(() => parseDimacs(lines('p edge 3 2', 'e 1 two')), 2, /non-numeric token "two"/);
    throwsInput(() => parseDimacs(lines('p edge 3 2', 'e 1 2.0')), 2, /"2\.0" is not an integer/);
    throwsInput(() => parseDimacs(lines('p edge three 2')), 1, /non-numeric token "three"/);
    throwsInput(() => parseDimacs(lines('p edge 3 2', 'e 1 2', 'x 1 2')), 3, /unknown line type "x"/);
    throwsInput(() => parseDimacs(lines('p edge 3 2', '1 2')), 2, /unknown line type "1"/);
    throwsInput(() => parseDimacs(lines('p edge 3 2', 'e 1 2 3')), 2, /expected "e u v", found 4 fields/);
    throwsInput(() => parseDimacs(lines('p edge 3')), 1, /expected "p edge N M"/);
    throwsInput(() => parseDimacs(lines('p matrix 3 2')), 1, /unknown problem format "matrix"/);
    throwsInput(() => parseDimacs(lines('p edge 0 0')), 1, /vertex count 0 is out of range/);
    throwsInput(() => parseDimacs(lines('p edge 1000000 0')), 1, /vertex count 1000000 is out of range 1\.\.20000/);
    throwsInput(() => parseDimacs(lines('c', 'p edge 3 2', 'e 1 4'), 'g.clq'), 3, /out of range/, 'g.clq');
  });
});

describe('knapsack format', () => {
  const TEXT = lines(
    '# a tiny instance', //      1
    '', //                       2
    '4 10   # n capacity', //    3
    '60 5', //                   4
    '50 4', //                   5
    '# between items', //        6
    '70 6', //                   7
    '  30\t3  ', //              8
  );

  it('parses header, items, comments and blank lines (also with CRLF)', () => {
    const expected = { name: 'small', capacity: 10, values: [60, 50, 70, 30], weights: [5, 4, 6, 3] };
    assert.deepEqual(parseKnapsack(TEXT, 'data/small.txt'), expected);
    assert.deepEqual(parseKnapsack(TEXT.replaceAll('\n', '\r\n'), 'small.knap'), expected);
    assert.deepEqual(parseKnapsack('0 5\n'), { name: 'input', capacity: 5, values: [], weights: [] });
  });

  it('reports malformed instances with their line', () => {
    throwsInput(() => parseKnapsack(lines('# only', '', '# comments')), undefined, /missing header "n capacity"/);
    throwsInput(() => parseKnapsack(lines('# c', '3')), 2, /expected the header "n capacity", found 1 field/);
    throwsInput(() => parseKnapsack(lines('# c', '3 10', '1 1', '2 2')), 2, /too few items: expected 3 \(header\), found 2/);
    throwsInput(() => parseKnapsack(lines('2 10', '1 1', '2 2', '', '3 3')), 5, /too many items: expected 2 \(header, line 1\)/);
    throwsInput(() => parseKnapsack(lines('2 10', '1 1', '2 -2')), 3, /weight -2 is negative/);
    throwsInput(() => parseKnapsack(lines('2 -10')), 1, /capacity -10 is negative/);
    throwsInput(() => parseKnapsack(lines('2 10', '1.5 1')), 2, /value 1\.5 is not an integer/);
    throwsInput(() => parseKnapsack(lines('2 10', '1 1e3')), 2, /weight 1e3 is not an integer/);
    throwsInput(() => parseKnapsack(lines('2 10', 'ten 1')), 2, /non-numeric token "ten"/);
    throwsInput(() => parseKnapsack(lines('2 10', '1 1 1')), 2, /expected an item "value weight", found 3 fields/);
    throwsInput(() => parseKnapsack(lines('2 10', '1')), 2, /expected an item "value weight", found 1 field/);
    throwsInput(() => parseKnapsack('99999999999 1'), 1, /item count 99999999999 is absurd/);
    throwsInput(() => parseKnapsack('1 99999999999999999999'), 1, /capacity 99999999999999999999 is too large/);
    throwsInput(() => parseKnapsack('x', 'k.txt'), 1, /expected the header/, 'k.txt');
  });

  it('DP solves a hand-checked instance', () => {
    // capacity 10; (value, weight) = (60,5) (50,4) (70,6) (30,3). Feasible pairs: {0,1} 110 (w 9), {0,3} 90 (w 8),
    // {1,2} 120 (w 10), {1,3} 80 (w 7), {2,3} 100 (w 9), {0,2} w 11 ✗; every triple weighs ≥ 12 ✗. Best: {1,2} = 120.
    assert.deepEqual(knapsackByDynamicProgramming(parseKnapsack(TEXT)), { value: 120, items: [1, 2] });
    assert.deepEqual(knapsackByDynamicProgramming({ name: 'z', capacity: 0, values: [5], weights: [0] }), { value: 5, items: [0] });
    assert.deepEqual(knapsackByDynamicProgramming({ name: 'e', capacity: 2, values: [5], weights: [3] }), { value: 0, items: [] });
    assert.throws(() => knapsackByDynamicProgramming({ name: 'big', capacity: 10_000_001, values: [1], weights: [1] }), RangeError);
  });

  it('random instances are reproducible, correlated, and the DP matches brute force on them', () => {
    const a = randomKnapsack(14, 5);
    assert.deepEqual(a, randomKnapsack(14, 5));
    assert.notDeepEqual(a, randomKnapsack(14, 6));
    assert.equal(a.name, 'knap14-5');
    for (let seed = 1; seed <= 4; seed++) {
      const k = randomKnapsack(14, seed);
      assert.equal(k.values.length, 14);
      let total = 0;
      for (let i = 0; i < 14; i++) {
        const w = k.weights[i]!;
        const v = k.values[i]!;
        assert.ok(Number.isInteger(w) && w >= 1 && w <= 1000);
        assert.ok(Number.isInteger(v) && v >= 1 && Math.abs(v - w) <= 100);
        total += w;
      }
      assert.equal(k.capacity, Math.floor(total / 2));
      let best = 0;
      for (let mask = 0; mask < 1 << 14; mask++) {
        let w = 0;
        let v = 0;
        for (let i = 0; i < 14; i++) if (mask & (1 << i)) { w += k.weights[i]!; v += k.values[i]!; }
        if (w <= k.capacity && v > best) best = v;
      }
      const dp = knapsackByDynamicProgramming(k);
      assert.equal(dp.value, best, `seed ${seed}`);
      assert.equal(dp.items.reduce((s, i) => s + k.values[i]!, 0), dp.value);
      assert.ok(dp.items.reduce((s, i) => s + k.weights[i]!, 0) <= k.capacity);
    }
  });
});

describe('n-queens counts', () => {
  it('lists OEIS A000170 for n = 0..15', () => {
    assert.equal(NQUEENS_SOLUTIONS.length, 16);
    assert.deepEqual(NQUEENS_SOLUTIONS, [1, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365596, 2279184]);
    assert.ok(Object.isFrozen(NQUEENS_SOLUTIONS));
  });
});
