/**
 * The packages a service has (seed 002 §3.2): declared when it starts (package names resolved from its
 * working directory, or package directories), announced in `GET /v1/health`, and bundled here for a
 * batch that refers to them — such a batch carries only their name, version and modules. A package
 * the service does not have (or has in another version) travels bundled by the client.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { PackageSpec } from './graph-format.js';
import type { InstalledPackage } from './package-refs.js';
import { bundlePackage } from './package-bundle.js';

export class ServicePackages {
  private constructor(private readonly byName: ReadonlyMap<string, InstalledPackage>) {}

  /** Resolves `specs`: a directory (`./x`, `/opt/x`) or a package name looked up in node_modules from `cwd` upwards. */
  static resolve(specs: readonly string[] = [], cwd = process.cwd()): ServicePackages {
    const byName = new Map<string, InstalledPackage>();
    for (const spec of specs) {
      const root = spec.startsWith('.') || path.isAbsolute(spec) ? path.resolve(cwd, spec) : findInstalled(spec, cwd);
      const manifest = root === undefined ? undefined : path.join(root, 'package.json');
      if (manifest === undefined || !existsSync(manifest)) throw new Error(`package ${spec}: not found (no node_modules/${spec}/package.json from ${cwd} upwards, or not a package directory)`);
      const { name, version } = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown; version?: unknown };
      if (typeof name !== 'string' || typeof version !== 'string') throw new Error(`package ${spec}: ${manifest} has no name and version`);
      byName.set(name, { name, version, root: root! });
    }
    return new ServicePackages(byName);
  }

  /** What the service announces: name → version. */
  declared(): Record<string, string> {
    return Object.fromEntries([...this.byName.values()].map((p) => [p.name, p.version]));
  }

  /** Gives a batch's package its code: the client's bundle as sent, else the service's own bundle (or an Error saying why not). */
  async supply(spec: PackageSpec): Promise<void> {
    if (spec.code !== undefined) return;
    const have = this.byName.get(spec.name);
    if (!have) throw new Error(`the service does not have package ${spec.name} (it has ${Object.keys(this.declared()).join(', ') || 'none'}): send its bundle`);
    if (have.version !== spec.version) throw new Error(`the service has package ${spec.name}@${have.version}, not ${spec.version}: send its bundle`);
    spec.code = await bundlePackage(have.root, have.name, spec.files);
  }
}

function findInstalled(name: string, cwd: string): string | undefined {
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (path.dirname(dir) === dir) return undefined;
  }
}
