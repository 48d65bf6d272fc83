/**
 * TSPLIB95 distances of the coordinate-based EDGE_WEIGHT_TYPEs, as confirmed against the published
 * optima (the rules are listed at the top of tsplib.ts): the n×n integer matrix a reader builds.
 */

/** The coordinate-based edge weight types (EXPLICIT instances carry their matrix). */
export type CoordinateWeightType = 'EUC_2D' | 'CEIL_2D' | 'ATT' | 'GEO';

const INT32_MAX = 0x7fff_ffff;

/** nint as TSPLIB defines it: (int)(x + 0.5) for the non-negative values it is used on. */
function nint(x: number): number {
  return Math.floor(x + 0.5);
}

const GEO_PI = 3.141592;
const GEO_RRR = 6378.388;

function geoRadians(x: number): number {
  const deg = Math.trunc(x);
  const min = x - deg;
  return (GEO_PI * (deg + (5 * min) / 3)) / 180;
}

/** The n×n matrix for a coordinate-based EDGE_WEIGHT_TYPE; `overflow` is called for a distance above 2^31-1. */
export function coordinateDistances(
  type: CoordinateWeightType,
  n: number,
  xy: Float64Array,
  overflow: (a: number, b: number, d: number) => never,
): Int32Array {
  const d = new Int32Array(n * n);
  let lat: Float64Array | undefined;
  let lon: Float64Array | undefined;
  if (type === 'GEO') {
    lat = new Float64Array(n);
    lon = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      lat[i] = geoRadians(xy[2 * i]!);
      lon[i] = geoRadians(xy[2 * i + 1]!);
    }
  }
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      let dist: number;
      if (lat !== undefined && lon !== undefined) {
        const q1 = Math.cos(lon[i]! - lon[j]!);
        const q2 = Math.cos(lat[i]! - lat[j]!);
        const q3 = Math.cos(lat[i]! + lat[j]!);
        const c = Math.min(1, Math.max(-1, 0.5 * ((1 + q1) * q2 - (1 - q1) * q3)));
        dist = Math.trunc(GEO_RRR * Math.acos(c) + 1);
      } else {
        const dx = xy[2 * i]! - xy[2 * j]!;
        const dy = xy[2 * i + 1]! - xy[2 * j + 1]!;
        if (type === 'ATT') {
          const rij = Math.sqrt((dx * dx + dy * dy) / 10);
          const tij = nint(rij);
          dist = tij < rij ? tij + 1 : tij;
        } else if (type === 'CEIL_2D') {
          dist = Math.ceil(Math.sqrt(dx * dx + dy * dy));
        } else {
          dist = nint(Math.sqrt(dx * dx + dy * dy));
        }
      }
      if (!(dist <= INT32_MAX)) overflow(i, j, dist);
      d[i * n + j] = dist;
      d[j * n + i] = dist;
    }
  }
  return d;
}
