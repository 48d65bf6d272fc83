/**
 * The application model of malleable iterative jobs (seed 003 §III): an array of migratable objects
 * (the seed's chares), each with plain-data state and a step per iteration. Objects talk only by
 * messages addressed to an object index; the runtime routes each to wherever that object lives now.
 * Messages sent in iteration i are read in iteration i + 1 (those sent by `init` in iteration 0), and
 * every iteration boundary is a synchronization point (the seed's AtSync) where the runtime may
 * balance, checkpoint, shrink or expand. State must be data the runtime can copy (numbers, strings,
 * arrays, typed arrays, plain objects): that is all it takes for an application to be malleable.
 * Collectives (collectives.ts) follow the same rhythm: what objects reduce or broadcast in iteration
 * i, every object reads in iteration i + 1.
 */
import { resolveModule } from '../../runtime/worker/builtin-code.js';
import { checkReductions, type ReduceOp } from './collectives.js';
import type { Delivered, Send } from './object-messages.js';

/** Reduction names and the type of their values (the sixth type parameter of an application). */
export type Reductions = Record<string, unknown>;

export interface StepContext<P, S, M, C extends Reductions = Reductions> {
  readonly index: number;
  readonly iteration: number;
  readonly params: P;
  /** The object's state; `step` may change it in place or return a new one. */
  readonly state: S;
  /** Messages sent to this object in the previous iteration, ordered by sender index then send order. */
  readonly inbox: readonly Delivered<M>[];
  send: Send<M>;
  /**
   * The previous iteration's reductions, each folded over the objects that contributed in index
   * order: the same value for every object and bit-identical however objects are placed ({} in
   * iteration 0; a reduction nobody contributed to is absent).
   */
  readonly reduced: Readonly<Partial<C>>;
  /** What objects broadcast in the previous iteration, by sender index then send order; the same list for every object. */
  readonly broadcasts: readonly Delivered<M>[];
  /** Contributes this object's value to reduction `name` (declared in `reductions`) of this iteration; at most once per iteration. */
  reduce<K extends keyof C & string>(name: K, value: C[K]): void;
  /** Sends `msg` to every object (each reads it in `broadcasts` in the next iteration). */
  broadcast(msg: M): void;
  /**
   * Asks to run on between `min` and `max` nodes from now on (an evolving job). The runtime passes the
   * request on at the next sync point: a job under the resource manager gets these bounds and a size in
   * them, as an operator's request would; another job is shrunk or expanded into them itself. If
   * several objects ask in one iteration, the lowest index's request counts.
   */
  requestResize(min: number, max: number): void;
}

export interface MalleableDefinition<P, S, M, Sum, R, C extends Reductions = Reductions> {
  /** Stable name (logs, CLI, results). */
  name: string;
  /** Checks the parameters before anything runs; returns what is wrong (naming the field) or undefined. */
  validate?(params: P): string | undefined;
  /** How many objects the application is decomposed into. */
  objects(params: P): number;
  /** How many iterations to run. */
  iterations(params: P): number;
  /** Builds object `index`; messages it sends are read in iteration 0. */
  init(index: number, params: P, send: Send<M>): S;
  /** One iteration of one object; returns the new state (or undefined when it changed `ctx.state` in place). */
  step(ctx: StepContext<P, S, M, C>): S | void;
  /** The reductions objects may contribute to, by name, and how each combines (see ReduceOp). */
  reductions?: { readonly [K in keyof C]: ReduceOp<C[K]> };
  /**
   * Ends the run early (a convergence test): called with the reductions of iteration `iteration` once
   * they are combined; true ends the job after that iteration (`iterations` stays the upper bound).
   */
  done?(reduced: Readonly<Partial<C>>, iteration: number, params: P): boolean;
  /** What one object contributes to the result at the end. */
  summary(index: number, state: S, params: P): Sum;
  /** The job's result from every object's summary, in index order. */
  result(summaries: Sum[], params: P): R;
}

export interface MalleableApp<P = unknown, S = unknown, M = unknown, Sum = unknown, R = unknown, C extends Reductions = Reductions> extends MalleableDefinition<P, S, M, Sum, R, C> {
  readonly malleable: true;
}

/** Where an application lives: a module and its export (every node loads it from there). */
export interface AppRef {
  module: string;
  export: string;
}

/** Declares a malleable application; export it from a module so every node can load it by reference. */
export function defineMalleable<P, S, M, Sum, R, C extends Reductions = Reductions>(definition: MalleableDefinition<P, S, M, Sum, R, C>): MalleableApp<P, S, M, Sum, R, C> {
  for (const fn of ['objects', 'iterations', 'init', 'step', 'summary', 'result'] as const) {
    if (typeof definition?.[fn] !== 'function') throw new TypeError(`defineMalleable: \`${fn}\` must be a function`);
  }
  if (definition.done !== undefined && typeof definition.done !== 'function') throw new TypeError('defineMalleable: `done` must be a function');
  const wrong = checkReductions(definition.reductions);
  if (wrong) throw new TypeError(`defineMalleable: ${wrong}`);
  return { ...definition, malleable: true };
}

export function isMalleableApp(value: unknown): value is AnyMalleableApp {
  return typeof value === 'object' && value !== null && (value as { malleable?: unknown }).malleable === true;
}

/** Loads an application by module reference (the node side of weak migration). */
export async function loadMalleableApp(ref: AppRef): Promise<AnyMalleableApp> {
  const mod = (await import(resolveModule(ref.module))) as Record<string, unknown>;
  const app = mod[ref.export];
  if (!isMalleableApp(app)) throw new Error(`${ref.module} has no malleable application export "${ref.export}" (export the result of defineMalleable)`);
  return app;
}

/** Any application, as the runtime handles it (it never looks inside states, messages or summaries). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyMalleableApp = MalleableApp<any, any, any, any, any, any>;
