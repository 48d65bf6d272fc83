import { defineSearch } from '../define-search.js';
import type { OptimisationProblem } from '../search-problem.js';
import type { KnapsackInstance } from './knapsack-format.js';

/** A decision prefix over the items in density order: [next position, value, weight, …chosen item ids]. */
export type KnapsackNode = number[];

/** Items by decreasing value/weight, computed once per instance (per worker). */
const orders = new WeakMap<KnapsackInstance, number[]>();
function densityOrder(k: KnapsackInstance): number[] {
  let order = orders.get(k);
  if (!order) {
    order = k.values.map((_, i) => i).sort((a, b) => k.values[b]! * k.weights[a]! - k.values[a]! * k.weights[b]! || a - b);
    orders.set(k, order);
  }
  return order;
}

/**
 * 0/1 knapsack by branch-and-bound: decide the items in decreasing density, taking before
 * skipping; bound = the fractional (Dantzig) relaxation of the remaining items.
 */
export const knapsackProblem: OptimisationProblem<KnapsackNode, KnapsackInstance> = {
  name: 'knapsack',
  kind: 'optimise',
  sense: 'max',
  root: () => [0, 0, 0],
  objective: (node, k) => (node[0] === k.values.length ? node[1]! : undefined),
  solutionOf: (node) => node.slice(3).sort((a, b) => a - b),
  bound(node, k) {
    const order = densityOrder(k);
    let value = node[1]!;
    let room = k.capacity - node[2]!;
    for (let p = node[0]!; p < order.length && room > 0; p++) {
      const i = order[p]!;
      if (k.weights[i]! <= room) {
        room -= k.weights[i]!;
        value += k.values[i]!;
      } else {
        value += (k.values[i]! * room) / k.weights[i]!;
        room = 0;
      }
    }
    return value;
  },
  children(node, k) {
    const order = densityOrder(k);
    const p = node[0]!;
    if (p >= order.length) return [];
    const i = order[p]!;
    const skip = [p + 1, node[1]!, node[2]!, ...node.slice(3)];
    if (node[2]! + k.weights[i]! > k.capacity) return [skip];
    return [[p + 1, node[1]! + k.values[i]!, node[2]! + k.weights[i]!, ...node.slice(3), i], skip];
  },
  initial(k) {
    let weight = 0;
    let value = 0;
    const items: number[] = [];
    for (const i of densityOrder(k)) {
      if (weight + k.weights[i]! <= k.capacity) {
        weight += k.weights[i]!;
        value += k.values[i]!;
        items.push(i);
      }
    }
    return { value, solution: items.sort((a, b) => a - b) };
  },
};

export default defineSearch(knapsackProblem);
