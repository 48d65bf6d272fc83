import { TraceError } from './trace-error.js';

/** One spot price change: from `time` (ms since the epoch) on, `price` USD per instance-hour. */
export interface PricePoint { time: number; price: number }

/** A market: one instance type with one product in one place, its price changes in time order. */
export interface PriceSeries { market: string; points: PricePoint[] }

/**
 * The 2010 EC2 console export (Crosby): one `describeSpotHistory` JSON object per line, each with a
 * `priceChange` list of {instanceType, productDescription, spotPrice, timestamp, epochtime}.
 * `region` prefixes the market names ("CA/m1.small/Linux/UNIX").
 */
export function parseCrosbyJson(text: string, file: string, region: string): PriceSeries[] {
  const byMarket = new Map<string, PricePoint[]>();
  for (const [i, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (line === '') continue;
    let doc: unknown;
    try {
      doc = JSON.parse(line);
    } catch (err) {
      throw new TraceError(file, i + 1, `not JSON (${(err as Error).message})`);
    }
    const changes = (doc as { priceChange?: unknown }).priceChange;
    if (!Array.isArray(changes)) throw new TraceError(file, i + 1, 'no "priceChange" list');
    for (const [k, c] of changes.entries()) {
      const { instanceType, productDescription, spotPrice, epochtime } = c as Record<string, unknown>;
      const where = `priceChange[${k}]`;
      if (typeof instanceType !== 'string' || typeof productDescription !== 'string') throw new TraceError(file, i + 1, `${where}: instanceType and productDescription must be strings`);
      if (typeof spotPrice !== 'number' || !(spotPrice >= 0)) throw new TraceError(file, i + 1, `${where}.spotPrice: not a price (${JSON.stringify(spotPrice)})`);
      if (typeof epochtime !== 'number' || !Number.isFinite(epochtime)) throw new TraceError(file, i + 1, `${where}.epochtime: not a time (${JSON.stringify(epochtime)})`);
      add(byMarket, `${region}/${instanceType}/${productDescription}`, { time: epochtime, price: spotPrice });
    }
  }
  return finish(byMarket);
}

/**
 * The 2022 monthly TSV (Pauley): `AZ-id<TAB>instanceType<TAB>product<TAB>price<TAB>ISO time`;
 * market names are "use1-az1/m5.large/Linux/UNIX".
 */
export function parsePauleyTsv(text: string, file: string): PriceSeries[] {
  const byMarket = new Map<string, PricePoint[]>();
  for (const [i, raw] of text.split('\n').entries()) {
    if (raw.trim() === '') continue;
    const fields = raw.split('\t');
    if (fields.length !== 5) throw new TraceError(file, i + 1, `expected 5 tab-separated fields (zone, type, product, price, time), got ${fields.length}`);
    const [zone, type, product, priceText, timeText] = fields.map((f) => f.trim()) as [string, string, string, string, string];
    const price = Number(priceText);
    if (priceText === '' || !(price >= 0)) throw new TraceError(file, i + 1, `field 4 (price): "${priceText}" is not a price`);
    const time = Date.parse(timeText);
    if (!Number.isFinite(time)) throw new TraceError(file, i + 1, `field 5 (time): "${timeText}" is not an ISO time`);
    add(byMarket, `${zone}/${type}/${product}`, { time, price });
  }
  return finish(byMarket);
}

function add(map: Map<string, PricePoint[]>, market: string, p: PricePoint): void {
  const list = map.get(market);
  if (list) list.push(p);
  else map.set(market, [p]);
}

/** Time order; of two changes at the same time the later line wins. */
function finish(map: Map<string, PricePoint[]>): PriceSeries[] {
  return [...map].map(([market, points]) => {
    const sorted = points.map((p, i) => ({ p, i })).sort((a, b) => a.p.time - b.p.time || a.i - b.i).map((x) => x.p);
    const dedup = sorted.filter((p, i) => i === sorted.length - 1 || sorted[i + 1]!.time !== p.time);
    return { market, points: dedup };
  }).sort((a, b) => (a.market < b.market ? -1 : 1));
}
