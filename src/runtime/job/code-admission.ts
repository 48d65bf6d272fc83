/**
 * Which code a node runs. A job names code (its kind, its task type or application, a workflow's
 * functions); before a node imports any of it, the job must pass these rules:
 *
 *   1. Its spec is signed with the cluster secret (job-signature.ts) and was found under its own id.
 *   2. Every module it names is
 *      a. a built-in, by its `builtin:` name, resolved in this node's own installation (builtin-code.ts);
 *      b. a file inside this node's installation of tidepool (a development checkout's examples and tests);
 *      c. a package installed where this node resolves packages (a bare specifier, `my-app/tasks`);
 *      d. under a location the operator allow-listed (`tidepool node --allow-code file:///opt/apps/`,
 *         NodeOptions.allowCode): a directory's file: URL, or an exact specifier;
 *      e. a file an embedded cluster's own client submitted to its in-process nodes (Cluster.embedded:
 *         submitter and nodes are one program, which could import the file itself), by exact URL;
 *      or the job ships its task module (`spec.code`): the bundle is admitted by rule 1 (the signature
 *      covers its content hash) and the bytes are checked against that hash when obtained.
 *   Refused by default: `data:` URLs (code written into the spec itself), `http(s):` and other schemes,
 *   files outside the installation, relative specifiers, `node:` built-ins (they hold no task).
 *
 * A refused job fails with a CodeRefused error naming the module and the rule; the node publishes it as
 * the job's outcome and goes on serving other jobs. Nothing of a refused job is imported.
 */
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { ClusterSecret } from '../../util/cluster-secret.js';
import { isInside, realPath } from '../../util/installation.js';
import { packageRoot } from '../../util/package-info.js';
import { builtinNames, isBuiltinName, isKnownBuiltin, TASK_POOL_MODULE } from '../worker/builtin-code.js';
import { specSignatureValid } from './job-signature.js';
import type { JobSpec } from './job-spec.js';

/** A job refused before any of its code ran. */
export class CodeRefused extends Error {
  constructor(
    /** The module (or spec) refused. */
    readonly module: string,
    /** Which rule refused it, in words. */
    readonly rule: string,
    what: string,
  ) {
    super(`${what} ${module} refused: ${rule}`);
    this.name = 'CodeRefused';
  }
}

export interface CodeAdmissionOptions {
  /** The cluster secret: spec signatures verify with it (any accepted one while rotating). */
  secret: ClusterSecret;
  /** Operator allow-list: file: URLs of directories (or plain paths), or exact module specifiers. */
  allow?: readonly string[];
  /** The installation whose files are admitted (default: this copy of tidepool's package directory). */
  installation?: string;
  /**
   * Modules this process's own client submitted to in-process nodes (an embedded cluster): file: URLs
   * admitted as named. Live: the client adds to it as it submits.
   */
  submittedHere?: ReadonlySet<string>;
}

const ALLOW_FLAG = '--allow-code';

export class CodeAdmission {
  private readonly secret: ClusterSecret;
  private readonly installation: string;
  private readonly directories: string[];
  private readonly exact: Set<string>;
  private readonly submittedHere: ReadonlySet<string>;

  constructor(opts: CodeAdmissionOptions) {
    this.secret = opts.secret;
    this.submittedHere = opts.submittedHere ?? new Set();
    this.installation = realPath(opts.installation ?? packageRoot());
    const { directories, exact } = parseAllowList(opts.allow ?? []);
    this.directories = directories;
    this.exact = exact;
  }

  /** Checks a job found at jobs/`jobId` before anything of it is imported; throws CodeRefused. */
  admitJob(spec: JobSpec, jobId: string): void {
    if (spec.id !== jobId) {
      throw new CodeRefused(`of job ${spec.id}`, `it is stored as job ${jobId}: a spec runs only under the id it was signed for`, 'the spec');
    }
    if (spec.kind.module !== TASK_POOL_MODULE) this.admitModule(spec.kind.module, 'job kind');
    if (specSignatureValid(spec, this.secret)) return;
    if (spec.code) {
      throw new CodeRefused(`${spec.code.module} (shipped, ${spec.code.bundle.hash.slice(0, 12)}…)`,
        'shipped code runs only when its spec carries an HMAC by the cluster secret over the code\'s hash; this one does not verify (written without the secret, or changed after it was signed)', 'task module');
    }
    throw new CodeRefused(`of job ${spec.id}`, spec.signature === undefined
      ? 'it carries no HMAC by the cluster secret (a node runs only jobs submitted with the secret)'
      : 'its HMAC does not verify with the cluster secret (written without the secret, or changed after it was signed)', 'the spec');
  }

  /**
   * Checks a module of the job's kind spec before the kind imports it (`what`: "task module",
   * "malleable application"): the module the job ships (`spec.code`, admitted with the signature, its
   * bytes checked against the signed hash when obtained), or one admitModule admits; throws CodeRefused.
   */
  admitJobModule(spec: JobSpec, module: string, what: string): void {
    if (spec.code?.module === module) return;
    this.admitModule(module, what);
  }

  /** Checks one module a job names (`what`: "task module", "job kind", "workflow function of task T"); throws CodeRefused. */
  admitModule(specifier: string, what: string): void {
    const refuse = (rule: string): never => {
      throw new CodeRefused(specifier, rule, what);
    };
    if (typeof specifier !== 'string' || specifier === '') refuse('a module must be named by a non-empty string');
    if (isBuiltinName(specifier)) {
      if (!isKnownBuiltin(specifier)) refuse(`no built-in module has that name (known: ${builtinNames().join(', ')})`);
      return;
    }
    if (this.exact.has(specifier)) return;
    const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(specifier)?.[1]?.toLowerCase();
    const file = scheme === 'file' ? filePath(specifier) : path.isAbsolute(specifier) && scheme === undefined ? specifier : undefined;
    if (file !== undefined) {
      const where = realPath(file);
      if (isInside(where, this.installation)) return;
      if (this.directories.some((d) => isInside(where, d))) return;
      if (scheme === 'file' && this.submittedHere.has(specifier)) return;
      refuse(`a file outside this node's installation (${this.installation}) runs only from a location the operator allows (${ALLOW_FLAG} ${pathToFileURL(path.dirname(where)).href}/), or shipped by the submitter (signed)`);
    }
    if (scheme === 'data') refuse(`data: URLs are code written into the job spec itself; a node runs only built-in code, files of its installation, allow-listed locations (${ALLOW_FLAG}) or shipped code signed with the cluster secret`);
    if (scheme === 'http' || scheme === 'https') refuse(`code from the network runs only from a location the operator allows (${ALLOW_FLAG} ${specifier.replace(/[^/]*$/, '')})`);
    if (scheme === 'node') refuse('Node\'s built-in modules hold no task type or job kind');
    if (scheme !== undefined) refuse(`${scheme}: modules run only from a location the operator allows (${ALLOW_FLAG})`);
    if (specifier.startsWith('.')) refuse('a relative specifier names no file a node can find: use a file: URL, a package name, or ship the module');
    // A bare specifier: a package installed where this node resolves packages (the operator installed it).
  }
}

/** Allow-list entries: directories (file: URLs or paths; a trailing slash optional) and exact specifiers of other schemes. */
function parseAllowList(entries: readonly string[]): { directories: string[]; exact: Set<string> } {
  const directories: string[] = [];
  const exact = new Set<string>();
  for (const raw of entries) {
    const entry = raw.trim();
    if (entry === '') continue;
    if (entry.startsWith('file:')) directories.push(realPath(filePath(entry)));
    else if (path.isAbsolute(entry)) directories.push(realPath(entry));
    else exact.add(entry);
  }
  return { directories, exact };
}

function filePath(url: string): string {
  try {
    return fileURLToPath(url);
  } catch (err) {
    throw new CodeRefused(url, `not a file URL (${(err as Error).message})`, 'module');
  }
}
