/**
 * Messages between the objects of a malleable application: addressed to an object index, routed by
 * the runtime to wherever that object lives, read by it in the next iteration (malleable-app.ts).
 */

/** A message as the receiving object sees it: the sender's index and what it sent. */
export interface Delivered<M> {
  from: number;
  msg: M;
}

/** Sends a message to the object with index `to` (read by it in the next iteration). */
export type Send<M> = (to: number, msg: M) => void;
