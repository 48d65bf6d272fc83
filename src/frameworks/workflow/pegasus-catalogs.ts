/**
 * Pegasus' three catalogs, as a workflow embeds them or as separate files: the transformation
 * catalog (a logical transformation → its executable on each site), the replica catalog (a logical
 * file → where it is: local paths and file URLs) and the site catalog (a site's shared scratch
 * directory, where a run's files live, and its local scratch, where a task's working directory is
 * made). Read here: Pegasus 5 YAML for all three (`transformationCatalog`, `replicaCatalog`,
 * `siteCatalog` inside a workflow, or the same documents alone), the 4.x text format of the
 * transformation catalog (`tr ns::name:version { site local { pfn "…" } }`), the 4.x file format of
 * the replica catalog (`lfn pfn site="local"`), and DAX 3's `<executable>` and `<file>` entries.
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMap, isSeq, LineCounter, parseDocument, type Document } from 'yaml';
import { WorkflowError } from './workflow-error.js';

export interface TransformationEntry {
  name: string;
  namespace?: string;
  version?: string;
  /** Executable path by site. */
  sites: Map<string, string>;
  /** Where it was declared (`FILE:LINE`), for errors. */
  from: string;
}

export interface SiteEntry {
  sharedScratch?: string;
  localScratch?: string;
}

export interface Catalogs {
  transformations: TransformationEntry[];
  /** Logical file name → location by site. */
  replicas: Map<string, Map<string, string>>;
  sites: Map<string, SiteEntry>;
}

export const emptyCatalogs = (): Catalogs => ({ transformations: [], replicas: new Map(), sites: new Map() });

/** `file:///a/b` or `/a/b` → `/a/b`; anything else (a remote URL) is refused by the caller. */
export function localPath(pfn: string): string | undefined {
  if (pfn.startsWith('file://')) return fileURLToPath(pfn);
  if (isAbsolute(pfn)) return pfn;
  return undefined;
}

/**
 * A pfn as written in a catalog: a URL or an absolute path as is; a relative path (beyond Pegasus,
 * which wants absolute ones) from the directory of the file that holds it, so that a workflow and its
 * catalogs can move together.
 */
export function pfnFrom(pfn: string, baseDir: string): string {
  return /^[a-z][a-z0-9+.-]*:/i.test(pfn) || isAbsolute(pfn) ? pfn : resolve(baseDir, pfn);
}

/** Adds `more` to `into`; an entry `into` has already (the workflow's own, read first) is kept. */
export function mergeCatalogs(into: Catalogs, more: Catalogs): Catalogs {
  const key = (t: TransformationEntry) => `${t.namespace ?? ''}::${t.name}:${t.version ?? ''}`;
  const have = new Set(into.transformations.map(key));
  for (const t of more.transformations) if (!have.has(key(t))) into.transformations.push(t);
  for (const [lfn, sites] of more.replicas) {
    const mine = into.replicas.get(lfn) ?? new Map<string, string>();
    for (const [site, pfn] of sites) if (!mine.has(site)) mine.set(site, pfn);
    into.replicas.set(lfn, mine);
  }
  for (const [site, entry] of more.sites) into.sites.set(site, { ...entry, ...into.sites.get(site) });
  return into;
}

type Json = Record<string, unknown>;
const str = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v) : undefined);

/** Reads the YAML catalog sections of a document (a workflow, or a catalog file). */
export function catalogsFromYaml(doc: Document, counter: LineCounter, file: string): Catalogs {
  const out = emptyCatalogs();
  const base = dirname(resolve(file));
  const lineOf = (path: (string | number)[]) => {
    const node = doc.getIn(path, true) as { range?: [number, number, number] } | undefined;
    return node?.range ? counter.linePos(node.range[0]).line : undefined;
  };
  const data = doc.toJS() as Json;
  const section = (name: string): [Json | undefined, (string | number)[]] => {
    if (data[name] !== undefined) return [data[name] as Json, [name]];
    return [undefined, []];
  };
  const [tc, tcPath] = section('transformationCatalog');
  const transformations = (tc ?? data).transformations;
  if (Array.isArray(transformations)) {
    transformations.forEach((t: Json, i) => {
      const at = [...tcPath, 'transformations', i];
      const line = lineOf(at);
      const name = str(t?.name);
      if (name === undefined) throw new WorkflowError(file, line, `transformations[${i}] has no name`);
      const sites = new Map<string, string>();
      const siteList = Array.isArray(t.sites) ? (t.sites as Json[]) : [];
      siteList.forEach((s, j) => {
        const site = str(s?.name);
        const pfn = str(s?.pfn);
        if (site === undefined || pfn === undefined) throw new WorkflowError(file, lineOf([...at, 'sites', j]) ?? line, `transformation ${name}: a site needs a name and a pfn`);
        sites.set(site, pfnFrom(pfn, base));
      });
      out.transformations.push({ name, ...optional('namespace', str(t.namespace)), ...optional('version', str(t.version)), sites, from: `${file}:${line ?? '?'}` });
    });
  }
  const [rc, rcPath] = section('replicaCatalog');
  const replicas = (rc ?? data).replicas;
  if (Array.isArray(replicas)) {
    replicas.forEach((r: Json, i) => {
      const lfn = str(r?.lfn);
      const line = lineOf([...rcPath, 'replicas', i]);
      if (lfn === undefined) throw new WorkflowError(file, line, `replicas[${i}] has no lfn`);
      const sites = out.replicas.get(lfn) ?? new Map<string, string>();
      for (const p of Array.isArray(r.pfns) ? (r.pfns as Json[]) : []) {
        const pfn = str(p?.pfn);
        if (pfn === undefined) throw new WorkflowError(file, line, `replica ${lfn}: a pfn entry has no pfn`);
        sites.set(str(p.site) ?? 'local', pfnFrom(pfn, base));
      }
      out.replicas.set(lfn, sites);
    });
  }
  const [sc] = section('siteCatalog');
  const sites = (sc ?? data).sites;
  if (Array.isArray(sites)) {
    for (const s of sites as Json[]) {
      const name = str(s?.name);
      if (name === undefined) continue;
      const entry: SiteEntry = {};
      for (const d of Array.isArray(s.directories) ? (s.directories as Json[]) : []) {
        const path = str(d?.path);
        if (path === undefined) continue;
        if (d.type === 'sharedScratch') entry.sharedScratch = resolve(base, path);
        if (d.type === 'localScratch') entry.localScratch = resolve(base, path);
      }
      out.sites.set(name, entry);
    }
  }
  return out;
}

function optional<K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, string>);
}

/** A catalog file: YAML (any of the three), the 4.x text transformation catalog, or the 4.x file replica catalog. */
export function readCatalogFile(path: string, kind: 'tc' | 'rc' | 'sc'): Catalogs {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new WorkflowError(path, undefined, `cannot read the ${kind === 'tc' ? 'transformation' : kind === 'rc' ? 'replica' : 'site'} catalog: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  if (kind === 'tc' && /^\s*tr\s/m.test(text)) return textTransformations(text, path);
  if (kind === 'rc' && !/^\s*(pegasus|replicas)\s*:/m.test(text)) return fileReplicas(text, path);
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter });
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    throw new WorkflowError(path, e.linePos?.[0].line, `malformed YAML: ${e.message.split('\n')[0]}`);
  }
  if (!isMap(doc.contents)) throw new WorkflowError(path, 1, 'not a Pegasus catalog (a YAML mapping was expected)');
  const found = catalogsFromYaml(doc, counter, path);
  const wanted = kind === 'tc' ? found.transformations.length : kind === 'rc' ? found.replicas.size : found.sites.size;
  const key = kind === 'tc' ? 'transformations' : kind === 'rc' ? 'replicas' : 'sites';
  if (wanted === 0 && !isSeq(doc.get(key))) throw new WorkflowError(path, 1, `no "${key}" list: not a Pegasus ${kind === 'tc' ? 'transformation' : kind === 'rc' ? 'replica' : 'site'} catalog`);
  return found;
}

/** `tr ns::name:version { site local { pfn "/path" arch "x86_64" type "INSTALLED" } }` (Pegasus 4.x text format). */
function textTransformations(text: string, file: string): Catalogs {
  const out = emptyCatalogs();
  const tokens: { t: string; line: number }[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|([{}])|(#[^\n]*)|([^\s{}"#]+)|(\n)/g;
  let line = 1;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m[5]) line++;
    else if (m[3]) continue;
    else tokens.push({ t: m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : (m[2] ?? m[4])!, line });
  }
  let i = 0;
  const next = (what: string) => {
    const tok = tokens[i++];
    if (!tok) throw new WorkflowError(file, line, `unexpected end: ${what} expected`);
    return tok;
  };
  const expect = (t: string) => {
    const tok = next(`"${t}"`);
    if (tok.t !== t) throw new WorkflowError(file, tok.line, `"${t}" expected, got "${tok.t}"`);
  };
  while (i < tokens.length) {
    const tr = next('tr');
    if (tr.t !== 'tr') throw new WorkflowError(file, tr.line, `"tr" expected, got "${tr.t}"`);
    const id = next('a transformation name');
    const m = /^(?:(.+)::)?([^:]+)(?::(.+))?$/.exec(id.t)!;
    const sites = new Map<string, string>();
    expect('{');
    for (let tok = next('"site" or "}"'); tok.t !== '}'; tok = next('"site" or "}"')) {
      if (tok.t !== 'site') {
        next('a value'); // a transformation-wide setting (profile, …)
        continue;
      }
      const site = next('a site name').t;
      expect('{');
      for (let key = next('a key or "}"'); key.t !== '}'; key = next('a key or "}"')) {
        const value = next(`a value for ${key.t}`);
        if (key.t === 'pfn') sites.set(site, pfnFrom(value.t, dirname(resolve(file))));
        if (key.t === 'profile') {
          next('a profile key');
          next('a profile value');
        }
      }
    }
    out.transformations.push({ name: m[2]!, ...optional('namespace', m[1]), ...optional('version', m[3]), sites, from: `${file}:${id.line}` });
  }
  return out;
}

/** `lfn pfn site="local"` per line (Pegasus 4.x file replica catalog); `#` comments. */
function fileReplicas(text: string, file: string): Catalogs {
  const out = emptyCatalogs();
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const m = /^(\S+)\s+(\S+)(.*)$/.exec(line);
    if (!m) throw new WorkflowError(file, i + 1, `a replica line is "LFN PFN site=\\"SITE\\"", got "${line}"`);
    const site = /site\s*=\s*"?([^"\s]+)"?/.exec(m[3]!)?.[1] ?? 'local';
    const sites = out.replicas.get(m[1]!) ?? new Map<string, string>();
    sites.set(site, pfnFrom(m[2]!, dirname(resolve(file))));
    out.replicas.set(m[1]!, sites);
  });
  return out;
}
