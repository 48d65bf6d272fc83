// Piscina worker for bench/peers/small-tasks.ts: the no-op task.
export default function noop(i) {
  return i === -1 ? 0 : 1;
}
