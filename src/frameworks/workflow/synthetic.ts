/**
 * Synthetic workflows in WfFormat 1.5, for load-time and dispatch benchmarks: `width` tasks per
 * level; each task of a level above the first reads the outputs of two tasks of the level below
 * (a butterfly, like Montage's mDiffFit reading two mProject outputs), so every task has explicit
 * parents, file-implied parents, and the file lists a runtime for each task.
 */
export interface SyntheticOptions {
  tasks: number;
  width?: number;
  runtime?: number;
  fileBytes?: number;
  /** false: independent tasks with no files (a bag of tasks, for dispatch measurements). */
  files?: boolean;
}

export function syntheticWfFormat(opts: SyntheticOptions): string {
  const { tasks: n, width = 1000, runtime = 1, fileBytes = 1024 } = opts;
  if (opts.files === false) {
    const tasks = Array.from({ length: n }, (_, t) => `{"name":"t${t}","id":"t${t}","parents":[],"children":[],"inputFiles":[],"outputFiles":[]}`);
    const exec = Array.from({ length: n }, (_, t) => `{"id":"t${t}","runtimeInSeconds":${runtime}}`);
    return `{"name":"bag-${n}","schemaVersion":"1.5","workflow":{"specification":{"tasks":[\n${tasks.join(',\n')}\n],"files":[]},` +
      `"execution":{"makespanInSeconds":0,"executedAt":"synthetic","tasks":[${exec.join(',\n')}]}}}`;
  }
  const spec: string[] = [];
  const files: string[] = [];
  const exec: string[] = [];
  for (let t = 0; t < n; t++) {
    const id = `t${t}`;
    const parents = t < width ? [] : [t - width, t - width + ((t % width) + 1 < width && t - width + 1 < n ? 1 : 0)];
    const unique = [...new Set(parents)];
    const inputs = t < width ? [`in${t}`] : unique.map((p) => `f${p}`);
    if (t < width) files.push(`{"id":"in${t}","sizeInBytes":${fileBytes}}`);
    files.push(`{"id":"f${t}","sizeInBytes":${fileBytes}}`);
    spec.push(`{"name":"${id}","id":"${id}","parents":[${unique.map((p) => `"t${p}"`).join(',')}],"children":[],"inputFiles":[${inputs.map((f) => `"${f}"`).join(',')}],"outputFiles":["f${t}"]}`);
    exec.push(`{"id":"${id}","runtimeInSeconds":${runtime}}`);
  }
  return `{"name":"synthetic-${n}","schemaVersion":"1.5","workflow":{"specification":{"tasks":[\n${spec.join(',\n')}\n],"files":[${files.join(',\n')}]},` +
    `"execution":{"makespanInSeconds":0,"executedAt":"synthetic","tasks":[${exec.join(',\n')}]}}}`;
}
