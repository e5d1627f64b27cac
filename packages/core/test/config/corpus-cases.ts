/**
 * Triton's qa/L0_model_config corpus (Triton's server repository, qa/L0_model_config, as its test
 * script runs it) as a list of cases: which folder, which platform is appended, which `expected*`
 * grep patterns, which suite runs it (RUNNER_RULES) and which runners are not written yet
 * (PENDING_RUNNERS). The corpus is not part of this repository: CI places a copy in the folder
 * beside it (SHARED_ROOT); without it the corpus suites skip with a printed reason.
 * Reusable: the repository, ONNX and server suites import it to run their share of the corpus.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root (this file is packages/core/test/config/corpus-cases.ts). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');

/** The folder beside the repository where CI places Triton's corpus. */
export const SHARED_ROOT = path.resolve(REPO_ROOT, '../shared');
export const L0_ROOT = path.join(SHARED_ROOT, 'corpus/triton-l0-model-config');
export const EXAMPLES_ROOT = path.join(SHARED_ROOT, 'corpus/triton-examples');
export const SEED_ROOT = path.join(SHARED_ROOT, 'seed');

/** Why the corpus cannot run here, or undefined when it can. */
export function corpusUnavailableReason(): string | undefined {
  return existsSync(L0_ROOT) ? undefined : `Triton corpus not found at ${L0_ROOT} (shared/ is cloned beside the repo in CI)`;
}

/** Platforms the README's noautofill procedure appends, one run each. */
export const NOAUTOFILL_PLATFORMS = ['tensorrt_plan', 'onnxruntime_onnx'] as const;

export interface ExpectedPattern {
  /** File name (`expected`, `expected_2`, ...). */
  readonly file: string;
  /** The grep basic regex, comment lines removed. */
  readonly pattern: string;
  /** The same as a JavaScript RegExp (unanchored, as grep searches a log line). */
  readonly regex: RegExp;
}

/** Which suite runs a case: config-only cases run in core's corpus test, the rest where their part lives. */
export type CaseRunner = 'config' | 'repository' | 'onnx-backend' | 'server';

export interface Pending {
  readonly owner: CaseRunner;
  readonly reason: string;
}

export interface CorpusCase {
  /** Stable id, e.g. `noautofill_platform/reshape_variable1 [onnxruntime_onnx]`. */
  readonly id: string;
  /** Corpus folder group, e.g. `noautofill_platform`, `autofill_noplatform/ensemble`. */
  readonly group: string;
  /** Case folder (absolute). */
  readonly folder: string;
  /** The model's name = its folder's name (for repository cases: the case folder's name). */
  readonly modelName: string;
  /** True when the folder holds one model's config.pbtxt; false when it is a whole repository. */
  readonly singleModel: boolean;
  /** `fail`: the server must refuse to start with a matching error; `success`: it must serve the expected config. */
  readonly outcome: 'fail' | 'success';
  /** Platform to append (noautofill cases); undefined = the config as it is. */
  readonly platform?: string;
  /** Start the server with auto-complete disabled (noautofill) or `--strict-model-config=false`. */
  readonly autoComplete: boolean;
  readonly expected: readonly ExpectedPattern[];
  /** Version folders the README's harness creates (relative to the case folder). */
  readonly versionDirs: readonly string[];
  /** The suite that runs this case. */
  readonly runner: CaseRunner;
  /** Set while the case's runner is not built yet (see PENDING_RUNNERS). */
  readonly pending?: Pending;
}

/** Which suite runs a case, by group and shape (first match wins; default: config-only). */
export const RUNNER_RULES: ReadonlyArray<{ match: (c: Omit<CorpusCase, 'runner' | 'pending'>) => boolean; runner: CaseRunner }> = [
  // A folder without config.pbtxt is a whole repository: cross-model ensemble checks.
  { match: (c) => c.group === 'autofill_noplatform/ensemble' && !c.singleModel, runner: 'repository' },
  { match: (c) => c.group === 'autofill_noplatform/onnx', runner: 'onnx-backend' },
  { match: (c) => c.group.startsWith('autofill_noplatform_success/'), runner: 'server' },
];

/**
 * Runners not built yet, with the reason their cases wait. The owner of a runner deletes its entry
 * when its suite runs those cases (with loadCorpusCases().filter(c => c.runner === '<runner>')).
 */
export const PENDING_RUNNERS: ReadonlyMap<CaseRunner, string> = new Map<CaseRunner, string>([
]);

/** Converts a grep basic regular expression to a JavaScript RegExp. */
export function grepBasicRegex(pattern: string): RegExp {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\' && i + 1 < pattern.length) {
      const e = pattern[++i]!;
      // GNU BRE: \( \) \| \{ \} \+ \? are operators; any other escaped char is literal.
      out += '(){}|+?'.includes(e) ? e : /[a-zA-Z0-9]/.test(e) ? e : `\\${e}`;
    } else if (c === '[') {
      // Bracket expression: copy through the closing bracket (a leading ']' is literal).
      let j = i + 1;
      if (pattern[j] === '^') j++;
      if (pattern[j] === ']') j++;
      while (j < pattern.length && pattern[j] !== ']') j++;
      out += pattern.slice(i, j + 1).replace(/\\/g, '\\\\');
      i = j;
    } else if ('(){}|+?'.includes(c)) {
      out += `\\${c}`;
    } else {
      out += c;
    }
  }
  return new RegExp(out);
}

function readExpected(folder: string): ExpectedPattern[] {
  return readdirSync(folder)
    .filter((f) => /^expected/.test(f))
    .sort()
    .map((file) => {
      const pattern = readFileSync(path.join(folder, file), 'utf8')
        .split('\n')
        .filter((line) => !line.startsWith('#') && line.trim() !== '')
        .join('\n');
      return { file, pattern, regex: grepBasicRegex(pattern) };
    });
}

function readVersionDirs(): Map<string, string[]> {
  const file = path.join(L0_ROOT, 'version-dirs.txt');
  const byCase = new Map<string, string[]>();
  if (!existsSync(file)) return byCase;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const rel = line.trim();
    if (!rel || rel.startsWith('#')) continue;
    const parts = rel.split('/');
    // Version folders sit under <group...>/<case>/[<model>/]<version>; key by every ancestor.
    for (let k = 1; k < parts.length; k++) {
      const key = parts.slice(0, k).join('/');
      byCase.set(key, [...(byCase.get(key) ?? []), parts.slice(k).join('/')]);
    }
  }
  return byCase;
}

function isDir(p: string): boolean {
  return statSync(p).isDirectory();
}

/** Every case of the corpus, one per (case, platform) for noautofill. Empty when the corpus is absent. */
export function loadCorpusCases(): CorpusCase[] {
  if (corpusUnavailableReason()) return [];
  const versionDirs = readVersionDirs();
  const cases: CorpusCase[] = [];
  const groups: Array<{ group: string; outcome: 'fail' | 'success'; autoComplete: boolean; platforms?: readonly string[] }> = [
    { group: 'noautofill_platform', outcome: 'fail', autoComplete: false, platforms: NOAUTOFILL_PLATFORMS },
    { group: 'special_cases', outcome: 'fail', autoComplete: true },
    { group: 'autofill_noplatform/common', outcome: 'fail', autoComplete: true },
    { group: 'autofill_noplatform/ensemble', outcome: 'fail', autoComplete: true },
    { group: 'autofill_noplatform/onnx', outcome: 'fail', autoComplete: true },
    { group: 'autofill_noplatform_success/custom', outcome: 'success', autoComplete: true },
    { group: 'autofill_noplatform_success/ensemble', outcome: 'success', autoComplete: true },
    { group: 'autofill_noplatform_success/onnx', outcome: 'success', autoComplete: true },
  ];
  for (const { group, outcome, autoComplete, platforms } of groups) {
    const groupDir = path.join(L0_ROOT, group);
    if (!existsSync(groupDir)) continue;
    for (const name of readdirSync(groupDir).sort()) {
      const folder = path.join(groupDir, name);
      if (!isDir(folder)) continue;
      const base = {
        group,
        folder,
        modelName: name,
        singleModel: existsSync(path.join(folder, 'config.pbtxt')) || !readdirSync(folder).some((f) => isDir(path.join(folder, f)) && !/^\d+$/.test(f)),
        outcome,
        autoComplete,
        expected: readExpected(folder),
        versionDirs: versionDirs.get(`${group}/${name}`) ?? [],
      };
      for (const platform of platforms ?? [undefined]) {
        const c = { ...base, id: `${group}/${name}${platform ? ` [${platform}]` : ''}`, platform };
        const runner = RUNNER_RULES.find((r) => r.match(c))?.runner ?? 'config';
        const reason = PENDING_RUNNERS.get(runner);
        cases.push(reason === undefined ? { ...c, runner } : { ...c, runner, pending: { owner: runner, reason } });
      }
    }
  }
  return cases;
}

/** The README's config edit for noautofill: drop any `platform:` line, append `platform: "<p>"`. */
export function withPlatform(configText: string, platform: string | undefined): string {
  if (platform === undefined) return configText;
  const kept = configText.split('\n').filter((line) => !/^\s*platform\s*:/.test(line));
  return `${kept.join('\n')}\nplatform: "${platform}"\n`;
}

/** True when an error message matches one of the case's `expected*` patterns. */
export function matchesExpected(c: CorpusCase, message: string): boolean {
  return c.expected.some((e) => e.regex.test(message));
}
