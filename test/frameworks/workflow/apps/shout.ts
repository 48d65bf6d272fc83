/** A function task for the workflow tests: upper-cases its input. */
export function shout(inputs: Record<string, Uint8Array>): Record<string, string> {
  return { 'shout.txt': new TextDecoder().decode(inputs['unique.txt']).toUpperCase() };
}
