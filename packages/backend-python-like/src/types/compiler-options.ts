/**
 * How a `model.ts` is type-checked: one set of compiler options, used by the server's check at
 * load and written by `tritium types` into a `tsconfig.json`, so an editor or `tsc -p` checks
 * exactly as the server does. The author API resolves to this package's shipped declarations and
 * Node's types to the `@types/node` the server has, wherever the model lives.
 */
import { existsSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { compiledModule } from '@tritium/core/worker';
import { MODEL_API_SPECIFIER } from '../transpile.ts';

/** Where the server's own type declarations are (absent pieces are left out of the options). */
export interface ServerTypePaths {
  /** This package's `dist/model-api/index.d.ts`. */
  readonly modelApi: string | undefined;
  /** The folder holding `@types/node` (a `node_modules/@types`), when installed. */
  readonly typeRoot: string | undefined;
  /**
   * `@tritium/core`'s compiled folder, whose declarations the author API's re-export (TritonError's
   * `code`, ModelConfig, ...). In a workspace it is reached through a symlink and read at its real
   * path, outside any node_modules, so the check's file reads must allow it by name.
   */
  readonly coreTypes: string | undefined;
}

let found: ServerTypePaths | undefined;

/** This server's declaration paths (looked up once). */
export function serverTypePaths(): ServerTypePaths {
  if (!found) {
    let modelApi: string | undefined;
    try {
      const js = fileURLToPath(compiledModule(new URL('../model-api/index.ts', import.meta.url)));
      const dts = js.replace(/\.js$/, '.d.ts');
      modelApi = existsSync(dts) ? dts : undefined;
    } catch {
      modelApi = undefined;
    }
    let typeRoot: string | undefined;
    try {
      typeRoot = path.dirname(path.dirname(createRequire(import.meta.url).resolve('@types/node/package.json')));
    } catch {
      typeRoot = undefined;
    }
    let coreTypes: string | undefined;
    try {
      coreTypes = path.dirname(realpathSync(createRequire(import.meta.url).resolve('@tritium/core')));
    } catch {
      coreTypes = undefined;
    }
    found = { modelApi, typeRoot, coreTypes };
  }
  return found;
}

/** The compiler options as tsconfig.json writes them (JSON names and values). */
export function modelCompilerOptions(paths: ServerTypePaths = serverTypePaths()): Record<string, unknown> {
  return {
    strict: true,
    noEmit: true,
    target: 'ES2022',
    lib: ['ES2023'],
    module: 'preserve',
    moduleResolution: 'bundler',
    allowImportingTsExtensions: true,
    allowJs: false,
    skipLibCheck: true,
    isolatedModules: true,
    ...(paths.typeRoot ? { types: ['node'], typeRoots: [paths.typeRoot] } : { types: [] }),
    ...(paths.modelApi ? { paths: { [MODEL_API_SPECIFIER]: [paths.modelApi] } } : {}),
  };
}

/** The `tsconfig.json` `tritium types` writes (JSON with a first-line comment, which tsconfig allows). */
export function tsconfigText(marker: string): string {
  const config = { compilerOptions: modelCompilerOptions(), include: ['**/*.ts', '**/*.mts'] };
  return `${marker}: the options the server type-checks model.ts with. Run \`tritium types\` again after moving or updating the server.\n${JSON.stringify(config, null, 2)}\n`;
}
