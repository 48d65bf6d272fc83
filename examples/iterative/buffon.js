/**
 * Buffon's needle as an iterative application in plain JavaScript, as `tidepool iterate` takes a
 * module (a file resolved from the current directory, or a package; every node imports it). Each
 * iteration drops a needle of length `needleLength` on a floor ruled every `lineSpacing`
 * (needleLength ≤ lineSpacing); it crosses a line with probability 2·needleLength / (π·lineSpacing),
 * so π ≈ 2·needleLength·dropped / (lineSpacing·crossed).
 *
 *   tidepool iterate examples/iterative/buffon.js --iterations 200000 --input '{"needleLength":1,"lineSpacing":2}' --balance ruper
 *   # result {"dropped":200000,"crossed":…}; π ≈ 2 · 1 · 200000 / (2 · crossed)
 */
import { defineIterative } from 'tidepool-runtime/iterative';

export default defineIterative({
  name: 'buffon-needle',
  iterate(first, count, tally, ctx) {
    const { needleLength = 1, lineSpacing = 2 } = ctx.params ?? {};
    for (let i = first; i < first + count; i++) {
      const r = ctx.random(i); // iteration i's own stream: the same numbers wherever i runs
      const centre = r.uniform() * (lineSpacing / 2); // distance from the needle's centre to the nearest line
      const angle = r.uniform() * (Math.PI / 2);
      if (centre <= (needleLength / 2) * Math.sin(angle)) tally.crossed++;
      tally.dropped++;
    }
  },
  result: {
    initial: () => ({ dropped: 0, crossed: 0 }),
    combine: (a, b) => ({ dropped: a.dropped + b.dropped, crossed: a.crossed + b.crossed }),
  },
});
