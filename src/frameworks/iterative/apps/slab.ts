/**
 * Photon transport through a homogeneous slab (a one-speed, one-dimensional Monte Carlo code of the
 * kind PenRed runs in full): photons enter normally at z = 0, fly exponentially distributed
 * distances (total attenuation μ), and at each collision are absorbed (probability 1 − albedo) or
 * scattered isotropically, until they leave through either face. One history is one iteration; its
 * length (number of collisions) is random. The uncollided transmission has the closed form e^{−μx}.
 */
import { defineIterative } from '../define-iterative.js';

export interface SlabParams {
  /** Thickness x (cm). */
  thickness: number;
  /** Total attenuation coefficient μ (1/cm). */
  mu: number;
  /** Probability that a collision scatters instead of absorbing. */
  albedo: number;
}

export interface SlabTally {
  histories: number;
  /** Left through the far face without a collision. */
  uncollided: number;
  transmitted: number;
  reflected: number;
  absorbed: number;
  collisions: number;
}

export const SLAB_DEFAULTS: SlabParams = { thickness: 2, mu: 1, albedo: 0.9 };

export const emptySlabTally = (): SlabTally => ({ histories: 0, uncollided: 0, transmitted: 0, reflected: 0, absorbed: 0, collisions: 0 });

export default defineIterative<SlabTally, SlabParams>({
  name: 'slab-transport',
  iterate(first, count, t, ctx) {
    const { thickness, mu, albedo } = ctx.params;
    for (let i = first; i < first + count; i++) {
      const r = ctx.random(i);
      let z = 0;
      let cos = 1;
      let collided = false;
      t.histories++;
      for (;;) {
        z += (cos * r.exponential()) / mu;
        if (z >= thickness) {
          t.transmitted++;
          if (!collided) t.uncollided++;
          break;
        }
        if (z < 0) {
          t.reflected++;
          break;
        }
        t.collisions++;
        collided = true;
        if (r.uniform() >= albedo) {
          t.absorbed++;
          break;
        }
        cos = 2 * r.uniform() - 1;
      }
    }
  },
  result: {
    initial: emptySlabTally,
    combine: (a, b) => ({
      histories: a.histories + b.histories, uncollided: a.uncollided + b.uncollided, transmitted: a.transmitted + b.transmitted,
      reflected: a.reflected + b.reflected, absorbed: a.absorbed + b.absorbed, collisions: a.collisions + b.collisions,
    }),
  },
});

/** The uncollided transmission estimate, its statistical error and the closed form e^{−μx}. */
export function slabAnswer(p: SlabParams, t: SlabTally): { estimate: number; stderr: number; exact: number } {
  const estimate = t.uncollided / t.histories;
  return { estimate, stderr: Math.sqrt((estimate * (1 - estimate)) / t.histories), exact: Math.exp(-p.mu * p.thickness) };
}
