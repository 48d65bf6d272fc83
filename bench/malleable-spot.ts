/**
 * Seed 003 §VII-B on node processes: a static set plus a dynamic spot set (seed Fig. 10's setup).
 * - The fleet model (spot-fleet.ts): 2 static instances always on, 2 spot instances used while the
 *   price is below a threshold and vacated on the cloud's 2-minute interruption notice when it
 *   reaches it; each instance-hour charged the price at its start. Priced on two 2010 market-days
 *   (Crosby): the one cheapest against always-on at the seed's threshold (0.725 × the day's always-on
 *   price), and the one replayed below.
 * - The replay: the 2010 market-day and threshold with the most interruptions (to measure as many
 *   vacates as possible), its price crossings replayed in order and as fast as the job carries them
 *   out, onto four `tidepool node` processes over a 1-server ZooKeeper with the resource manager: a
 *   malleable Wave2D job (1024², 16 MiB of state, Table II's slowest rescale) on the two static
 *   nodes, expanded onto the two spot nodes when the price falls below the threshold (their warning
 *   cleared) and vacated from them on a notice (`warnNode`: the manager asks the job to shrink
 *   away). A vacate's time runs from the notice to both spot nodes having left the job; it must be
 *   well inside the 120 s notice.
 *
 *   node --import tsx bench/malleable-spot.ts --data DIR [--json] [--cycles N]
 * (DIR: the curated data set's root, holding traces/spot-aws-2010-crosby/…; see bench/curated-data.ts)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { MALLEABLE_APPS } from '../src/frameworks/malleable/applications.js';
import { malleableJob } from '../src/frameworks/malleable/malleable-kind-ref.js';
import { readManagedJob, submitManagedJob } from '../src/frameworks/malleable/manager/manager-store.js';
import { clearWarning, ResourceManager, warnNode } from '../src/frameworks/malleable/manager/resource-manager.js';
import { spotFleetRun, SPOT_NOTICE_MS, type FleetEvent } from '../src/frameworks/malleable/manager/traces/spot-fleet.js';
import { parseCrosbyJson, type PriceSeries } from '../src/frameworks/malleable/manager/traces/spot-price-trace.js';
import { priceSensitiveRun } from '../src/frameworks/malleable/manager/traces/spot-rescale.js';
import { malleableProgress } from '../src/frameworks/malleable/submit.js';
import { cancelJob } from '../src/runtime/job/outcome.js';
import { listNodes } from '../src/runtime/scheduler/index.js';
import { waitFor } from '../test/support/wait.js';
import { curatedPath, DATA_OPTION } from './curated-data.js';
import { machineInfo, resultsFile } from './machine.js';
import { withNodeProcesses } from './malleable-cluster.js';
import { printTable } from './table.js';

const { values } = parseArgs({ options: { json: { type: 'boolean', default: false }, ...DATA_OPTION, cycles: { type: 'string', default: '4' } } });
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** The seed's threshold relative to the always-on price: $0.50 against $0.69 (§VII-B). */
const SEED_THRESHOLD_RATIO = 0.5 / 0.69;
const STATIC = 2;
const SPOT = 2;
const JOB = { app: 'wave', params: { grid: 1024, blocks: 8, iterations: 1_000_000 } };
/** Iterations the job runs between two replayed price changes (it is computing when told). */
const RUN_BETWEEN = 5;

interface MarketDay { market: string; from: number; points: PriceSeries['points']; threshold: number; alwaysOn: number; notices: number; reduction: number | null }

/** Every UTC day of every market with its always-on price and the price points in force that day. */
function* marketDays(series: PriceSeries[]) {
  for (const s of series) {
    const first = Math.ceil(s.points[0]!.time / DAY) * DAY;
    for (let from = first; from + DAY <= s.points.at(-1)!.time; from += DAY) {
      const alwaysOn = priceSensitiveRun(s.points, from, from + DAY, Infinity).effectivePrice;
      const prices = [...new Set(s.points.filter((p) => p.time < from + DAY && p.time >= from - DAY).map((p) => p.price))];
      yield { market: s.market, from, points: s.points, alwaysOn, prices };
    }
  }
}

function assess(d: { market: string; from: number; points: PriceSeries['points']; alwaysOn: number }, threshold: number): MarketDay {
  const one = spotFleetRun(d.points, d.from, d.from + DAY, { onDemand: 0, onDemandPrice: 0, spot: 1, threshold, vacateMs: 0 });
  const reduction = one.spot.usableHours > 0 ? 1 - one.spot.effectivePrice / d.alwaysOn : null;
  return { market: d.market, from: d.from, points: d.points, alwaysOn: d.alwaysOn, threshold, notices: one.events.filter((e) => e.type === 'notice').length, reduction };
}

/**
 * Two market-days of 2010: the one cheapest against always-on at the seed's threshold (Fig. 10's
 * economics), and, to replay as many interruptions as possible, the market-day and threshold (one of
 * its prices) with the most notices (ties: the lower threshold, then the earliest).
 */
function chooseDays(series: PriceSeries[]): { seed: MarketDay; replay: MarketDay } {
  let seed: MarketDay | undefined;
  let replay: MarketDay | undefined;
  for (const d of marketDays(series)) {
    const atSeed = assess(d, d.alwaysOn * SEED_THRESHOLD_RATIO);
    if (atSeed.reduction !== null && (!seed || atSeed.reduction > seed.reduction!)) seed = atSeed;
    for (const price of d.prices) {
      const r = assess(d, price * 1.0001);
      if (!replay || r.notices > replay.notices) replay = r;
    }
  }
  if (!seed || !replay || replay.notices === 0) throw new Error('no 2010 market-day has a usable hour at the seed\'s threshold or any interruption: nothing to replay');
  return { seed, replay };
}

const ms = (t0: number) => Date.now() - t0;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

async function main(): Promise<void> {
  const series = ['CA', 'VA', 'EU'].flatMap((r) => {
    const file = curatedPath(values.data, `traces/spot-aws-2010-crosby/ec2-spot-market-${r}.json`, 'bench/malleable-spot');
    return parseCrosbyJson(readFileSync(file, 'utf8'), file, r);
  });
  const { seed, replay: day } = chooseDays(series);
  const to = day.from + DAY;
  // The static set priced as the seed allows when no on-demand instance is near: spot instances with a high bid (always on).
  const fleetOf = (d: MarketDay, vacateMs: number, threshold: number) => spotFleetRun(d.points, d.from, d.from + DAY, { onDemand: STATIC, onDemandPrice: d.alwaysOn, spot: SPOT, threshold, vacateMs });
  const plan = fleetOf(day, 0, day.threshold).events.filter((e) => e.t < to);
  const cycles = Number(values.cycles);
  // The job starts on the static set; the replay begins at the first expand.
  const start = plan.findIndex((e) => e.type === 'expand');
  const replay: FleetEvent[] = plan.slice(start, start + 2 * cycles);
  process.stderr.write(`${day.market} ${new Date(day.from).toISOString().slice(0, 10)}: ${day.notices} notices at threshold ${day.threshold.toFixed(4)}; replaying ${replay.length} changes\n`);

  const vacates: Array<{ at: string; price: number; ms: number; shrinks: number; tRescaleMs: number }> = [];
  const expands: Array<{ at: string; price: number; ms: number }> = [];
  await withNodeProcesses(STATIC + SPOT, async (cluster, procs) => {
    const client = cluster.coordination;
    const manager = new ResourceManager(client, { id: 'bench', policy: 'equipartition', tGapMs: 0 });
    const spotNodes = procs.map((p) => p.id).sort().slice(STATIC);
    const members = async (job: string) => (await listNodes(client)).filter((n) => n.job === job).map((n) => n.id);
    const shrinks = async (job: string) => (await readManagedJob(client, job))?.record.events.filter((x) => x.type === 'shrink') ?? [];
    let jobId: string | undefined;
    try {
      await manager.start();
      await waitFor(async () => (await listNodes(client)).length === STATIC + SPOT, 'the nodes', 60_000);
      for (const n of spotNodes) await warnNode(client, n); // no spot instance yet
      const job = await submitManagedJob(client, { ...malleableJob(MALLEABLE_APPS[JOB.app]!, JOB.params, { startWaitMs: 30_000 }), secret: cluster.secret!, flexibility: 'malleable', minNodes: STATIC, maxNodes: STATIC + SPOT });
      jobId = job.id;
      await waitFor(async () => (await members(job.id)).length === STATIC, 'the job on the static set', 120_000);
      const running = async () => {
        const from = (await malleableProgress(client, job.id)).iteration;
        await waitFor(async () => (await malleableProgress(client, job.id)).iteration >= from + RUN_BETWEEN, 'the job to run', 120_000);
      };
      for (const e of replay) {
        await running();
        const t0 = Date.now();
        if (e.type === 'expand') {
          await Promise.all(spotNodes.map((n) => clearWarning(client, n)));
          await waitFor(async () => (await members(job.id)).length === STATIC + SPOT, 'the expand onto the spot set', 120_000);
          expands.push({ at: new Date(e.t).toISOString(), price: e.price, ms: ms(t0) }); // until the spot nodes joined the job
        } else {
          const before = (await shrinks(job.id)).length;
          await Promise.all(spotNodes.map((n) => warnNode(client, n))); // both instances get their notice
          await waitFor(async () => (await members(job.id)).every((n) => !spotNodes.includes(n)), 'the vacate of the spot set', SPOT_NOTICE_MS);
          const took = ms(t0);
          await waitFor(async () => (await shrinks(job.id)).length > before, 'the manager to record the shrink', 30_000);
          const done = (await shrinks(job.id)).slice(before);
          vacates.push({ at: new Date(e.t).toISOString(), price: e.price, ms: took, shrinks: done.length, tRescaleMs: done.reduce((a, x) => a + (x.tRescaleMs ?? 0), 0) });
        }
        process.stderr.write(`${e.type} at ${new Date(e.t).toISOString().slice(11, 16)} (price ${e.price}): ${ms(t0)} ms\n`);
      }
    } finally {
      if (jobId) await cancelJob(client, jobId).catch(() => false);
      await manager.stop();
    }
  });

  const worst = Math.max(...vacates.map((v) => v.ms));
  const fleets = (d: MarketDay) => {
    const atThreshold = fleetOf(d, worst, d.threshold);
    const alwaysOn = fleetOf(d, worst, Infinity);
    return {
      market: d.market, date: new Date(d.from).toISOString().slice(0, 10), threshold: d.threshold, alwaysOnPrice: d.alwaysOn, notices: d.notices,
      atThreshold: { ...atThreshold, events: undefined }, alwaysOn: { ...alwaysOn, events: undefined },
      reduction: 1 - atThreshold.effectivePrice / alwaysOn.effectivePrice, spotReduction: 1 - atThreshold.spot.effectivePrice / alwaysOn.spot.effectivePrice,
    };
  };
  const out = {
    machine: machineInfo(),
    note: `${STATIC + SPOT} node processes on loopback over a 1-server ZooKeeper with the resource manager, on a 2-core machine (its load average at the start is in machine.loadAverage); price changes replayed in order, as fast as the job carries them out`,
    setup: { static: STATIC, spot: SPOT, job: JOB, noticeMs: SPOT_NOTICE_MS, seedThresholdRatio: SEED_THRESHOLD_RATIO, staticPrice: 'the day\'s always-on spot price (a high bid)' },
    vacates, expands,
    vacateMs: { median: median(vacates.map((v) => v.ms)), max: worst, ofNotice: worst / SPOT_NOTICE_MS },
    /** The replayed day at its threshold, and the best day at the seed's threshold, priced with the worst vacate measured. */
    replayDay: fleets(day), seedDay: fleets(seed),
  };
  writeFileSync(resultsFile('malleable-spot'), `${JSON.stringify(out, null, 2)}\n`);
  if (values.json) return void console.log(JSON.stringify(out));
  console.log(`replayed: ${out.replayDay.market} on ${out.replayDay.date}, threshold ${day.threshold.toFixed(4)} USD/h (${day.notices} notices that day; always-on ${day.alwaysOn.toFixed(4)})`);
  printTable([['change', 'trace time', 'price', 'took (ms)', 'job T_rescale (ms, shrinks)', 'of the 120 s notice'],
    ...replay.map((e, i) => {
      const v = e.type === 'notice' ? vacates.find((x) => x.at === new Date(e.t).toISOString()) : undefined;
      const x = e.type === 'expand' ? expands.find((y) => y.at === new Date(e.t).toISOString()) : undefined;
      const took = v?.ms ?? x?.ms ?? NaN;
      return [`${i + 1}. ${e.type === 'notice' ? 'vacate (notice)' : 'expand'}`, new Date(e.t).toISOString().slice(11, 16), e.price, took, v ? `${Math.round(v.tRescaleMs)} (${v.shrinks})` : '', v ? `${((took / SPOT_NOTICE_MS) * 100).toFixed(2)} %` : ''];
    })]);
  console.log(`\nvacate: median ${out.vacateMs.median} ms, worst ${worst} ms = ${(out.vacateMs.ofNotice * 100).toFixed(2)} % of the notice`);
  const versus = (x: number) => (x >= 0 ? `${(x * 100).toFixed(0)} % lower` : `${(-x * 100).toFixed(0)} % higher`);
  for (const f of [out.replayDay, out.seedDay]) {
    console.log(`${f.market} ${f.date}, threshold ${f.threshold.toFixed(4)}: fleet of ${STATIC} static + ${SPOT} spot ${f.atThreshold.effectivePrice.toFixed(4)} USD/h vs ${f.alwaysOn.effectivePrice.toFixed(4)} always-on (${versus(f.reduction)}); the spot set alone ${versus(f.spotReduction)} with ${f.atThreshold.spot.usableHours.toFixed(1)} of ${f.alwaysOn.spot.usableHours.toFixed(1)} spot hours usable; vacates in time ${f.atThreshold.vacatedInTime}, late ${f.atThreshold.late}`);
  }
}

await main();
