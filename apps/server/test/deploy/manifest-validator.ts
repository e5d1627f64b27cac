/**
 * Validates rendered manifests the way a cluster would, so a misspelt field fails a test rather
 * than a `kubectl apply`:
 *
 * - Kubernetes, KEDA and prometheus-operator objects: the JSON-schema validators kubernetes-models
 *   ships (ajv, compiled from Kubernetes' OpenAPI and the CRDs: types, enums, required fields,
 *   formats), plus a field-name check. Those schemas leave objects open (Kubernetes' OpenAPI has no
 *   `additionalProperties: false`: the API server rejects unknown fields itself, under strict
 *   field validation), so every key is also checked against the kubernetes-models TypeScript
 *   declaration of its object, generated from the same OpenAPI.
 * - KServe objects: ajv against the OpenAPI schemas of KServe's released CRDs
 *   (deploy/schemas/kserve-<version>.json), with the API server's strict-field rule made explicit:
 *   an object schema with `properties` and without `x-kubernetes-preserve-unknown-fields` admits
 *   no other key. Their metadata is checked as Kubernetes' ObjectMeta.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import ts from 'typescript';
import { nearestName } from '@tritium/core/config';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Service } from 'kubernetes-models/v1/Service';
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import { PodMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PodMonitor';

const here = path.dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = path.resolve(here, '../../../..');
export const KSERVE_VERSION = 'v0.20.0';
export const KSERVE_SCHEMA_FILE = path.join(REPO_ROOT, 'deploy/schemas', `kserve-${KSERVE_VERSION}.json`);

export interface ManifestProblem {
  /** JSON path inside the manifest, e.g. `spec.template.spec.containers[0].livenessProbe`. */
  readonly path: string;
  readonly message: string;
}

/** A kubernetes-models class; each takes its own manifest type, checked by `validate()` instead. */
interface ModelClass {
  new (data: never): { validate(): void };
}

/** apiVersion/kind → the kubernetes-models class (its ajv validator) and its TypeScript declaration. */
const MODELS: Record<string, { cls: ModelClass; module: string; type: string }> = {
  'apps/v1/Deployment': { cls: Deployment, module: 'kubernetes-models/apps/v1/Deployment', type: 'IDeployment' },
  'v1/Service': { cls: Service, module: 'kubernetes-models/v1/Service', type: 'IService' },
  'policy/v1/PodDisruptionBudget': { cls: PodDisruptionBudget, module: 'kubernetes-models/policy/v1/PodDisruptionBudget', type: 'IPodDisruptionBudget' },
  'autoscaling/v2/HorizontalPodAutoscaler': {
    cls: HorizontalPodAutoscaler,
    module: 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler',
    type: 'IHorizontalPodAutoscaler',
  },
  'keda.sh/v1alpha1/ScaledObject': { cls: ScaledObject, module: '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject', type: 'IScaledObject' },
  'monitoring.coreos.com/v1/PodMonitor': {
    cls: PodMonitor,
    module: '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PodMonitor',
    type: 'IPodMonitor',
  },
};

const dotted = (instancePath: string) =>
  instancePath
    .split('/')
    .slice(1)
    .map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p}`))
    .join('')
    .replace(/^\./, '');

export function ajvProblems(errors: readonly ErrorObject[] | null | undefined, prefix = ''): ManifestProblem[] {
  return (errors ?? []).map((e) => {
    const where = [prefix, dotted(e.instancePath)].filter(Boolean).join('.');
    const extra = e.keyword === 'additionalProperties' ? ` '${(e.params as { additionalProperty: string }).additionalProperty}'` : '';
    return { path: where || '(root)', message: `${e.message ?? e.keyword}${extra}` };
  });
}

/** The ajv errors a kubernetes-models class reports for `data`. */
function modelProblems(cls: ModelClass, data: object, prefix = ''): ManifestProblem[] {
  try {
    new cls(data as never).validate();
    return [];
  } catch (e) {
    const errors = (e as { errors?: ErrorObject[] }).errors;
    if (!errors) throw e;
    return ajvProblems(errors, prefix);
  }
}

// ---- field names against the TypeScript declarations ----

let checker: { program: ts.Program; types: Map<string, ts.Type> } | undefined;

/** One TypeScript program over the declarations of every kind in MODELS (built once, ~1 s). */
function declarations(): { program: ts.Program; types: Map<string, ts.Type> } {
  if (checker) return checker;
  const file = path.join(here, '__manifest_types__.ts');
  const entries = Object.entries(MODELS);
  const text = entries.map(([, m], i) => `import type { ${m.type} as T${i} } from '${m.module}';\nexport type K${i} = T${i};`).join('\n');
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  host.getSourceFile = (name, language, ...rest) =>
    path.resolve(name) === file ? ts.createSourceFile(name, text, language) : getSourceFile(name, language, ...rest);
  host.fileExists = (name) => path.resolve(name) === file || fileExists(name);
  const program = ts.createProgram([file], options, host);
  const unresolved = ts.getPreEmitDiagnostics(program);
  if (unresolved.length) throw new Error(`kubernetes-models declarations: ${ts.flattenDiagnosticMessageText(unresolved[0]!.messageText, '\n')}`);
  const tc = program.getTypeChecker();
  const source = program.getSourceFile(file)!;
  const types = new Map<string, ts.Type>();
  for (const stmt of source.statements) {
    if (!ts.isTypeAliasDeclaration(stmt)) continue;
    const index = Number(stmt.name.text.slice(1));
    types.set(entries[index]![0], tc.getTypeAtLocation(stmt.name));
  }
  checker = { program, types };
  return checker;
}

function unknownFields(value: unknown, type: ts.Type, at: string, tc: ts.TypeChecker, out: ManifestProblem[]): void {
  if (value === null || typeof value !== 'object') return; // scalars: the ajv validators check them
  const t = tc.getNonNullableType(type);
  const members = (t.isUnion() ? t.types : [t]).filter((m) => m.flags & ts.TypeFlags.Object);
  if (members.length === 0) return;
  if (Array.isArray(value)) {
    const element = members.map((m) => tc.getIndexTypeOfType(m, ts.IndexKind.Number)).find((e) => e !== undefined);
    if (element) value.forEach((v, i) => unknownFields(v, element, `${at}[${i}]`, tc, out));
    return;
  }
  for (const [key, v] of Object.entries(value)) {
    let field: ts.Type | undefined;
    for (const m of members) {
      const prop = m.getProperty(key);
      field = prop ? tc.getTypeOfSymbol(prop) : tc.getIndexTypeOfType(m, ts.IndexKind.String);
      if (field) break;
    }
    const where = at ? `${at}.${key}` : key;
    if (!field) {
      const known = members.flatMap((m) => m.getProperties().map((p) => p.name));
      const guess = nearestName(known, key);
      out.push({ path: where, message: `unknown field '${key}'${guess ? `; did you mean '${guess}'?` : ''}` });
      continue;
    }
    unknownFields(v, field, where, tc, out);
  }
}

// ---- KServe ----

interface KServeSchemas {
  source: { repository: string; tag: string; commit: string; files: string[] };
  schemas: Record<string, object>;
}

/** The strict-field rule of the API server, written into the schema for ajv. */
export function strictStructuralSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(strictStructuralSchema);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) out[k] = k === 'enum' || k === 'required' ? v : strictStructuralSchema(v);
  if (out['properties'] && out['additionalProperties'] === undefined && out['x-kubernetes-preserve-unknown-fields'] !== true) {
    out['additionalProperties'] = false;
  }
  return out;
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/**
 * `schema` cut down to the branches `values` reach: a property no value has, an array no value
 * holds, is never evaluated, so its subschema becomes `{}` (its name stays, so the strict-field
 * rule still holds). Validating `values` against it is validating them against `schema`, and
 * ajv compiles the InferenceService's 600 KB schema in milliseconds instead of ten seconds.
 */
export function pruneToData(schema: unknown, values: readonly unknown[]): unknown {
  if (!isObject(schema)) return schema;
  const out: Record<string, unknown> = { ...schema };
  if (isObject(schema['properties'])) {
    const props: Record<string, unknown> = {};
    for (const [key, sub] of Object.entries(schema['properties'])) {
      const present = values.filter((v) => isObject(v) && key in v).map((v) => (v as Record<string, unknown>)[key]);
      props[key] = present.length ? pruneToData(sub, present) : {};
    }
    out['properties'] = props;
  }
  if (isObject(schema['items'])) out['items'] = pruneToData(schema['items'], values.flatMap((v) => (Array.isArray(v) ? v : [])));
  if (isObject(schema['additionalProperties'])) {
    out['additionalProperties'] = pruneToData(schema['additionalProperties'], values.flatMap((v) => (isObject(v) ? Object.values(v) : [])));
  }
  for (const key of ['anyOf', 'oneOf', 'allOf']) {
    if (Array.isArray(schema[key])) out[key] = (schema[key] as unknown[]).map((s) => pruneToData(s, values));
  }
  return out;
}

let kserve: { source: KServeSchemas['source']; ajv: Ajv; schemas: Map<string, unknown> } | undefined;

function kserveSchemas() {
  if (kserve) return kserve;
  const file = JSON.parse(readFileSync(KSERVE_SCHEMA_FILE, 'utf8')) as KServeSchemas;
  const ajv = new Ajv({ allErrors: true, strictTypes: false });
  const addFormats = addFormatsModule as unknown as (a: Ajv) => Ajv;
  addFormats(ajv);
  ajv.addVocabulary([
    'x-kubernetes-int-or-string',
    'x-kubernetes-list-map-keys',
    'x-kubernetes-list-type',
    'x-kubernetes-map-type',
    'x-kubernetes-preserve-unknown-fields',
    'x-kubernetes-embedded-resource',
    'x-kubernetes-validations',
  ]);
  const schemas = new Map(Object.entries(file.schemas).map(([key, schema]) => [key, strictStructuralSchema(schema)]));
  kserve = { source: file.source, ajv, schemas };
  return kserve;
}

/** The whole (strict) schema compiled, unpruned: seconds for the InferenceService; for checking the pruning. */
export function fullSchemaValidator(key: string): ValidateFunction {
  const { ajv, schemas } = kserveSchemas();
  return ajv.compile(schemas.get(key) as object);
}

export function kserveSchemaSource(): KServeSchemas['source'] {
  return kserveSchemas().source;
}

/** Every problem a cluster would report for `manifest` ([] when it would be accepted). */
export function validateManifest(manifest: unknown): ManifestProblem[] {
  if (!manifest || typeof manifest !== 'object') return [{ path: '(root)', message: 'not an object' }];
  const { apiVersion, kind, metadata } = manifest as { apiVersion?: unknown; kind?: unknown; metadata?: unknown };
  const key = `${String(apiVersion)}/${String(kind)}`;
  const model = MODELS[key];
  if (model) {
    const { program, types } = declarations();
    const out = modelProblems(model.cls, manifest);
    unknownFields(manifest, types.get(key)!, '', program.getTypeChecker(), out);
    return out;
  }
  const { ajv, schemas } = kserveSchemas();
  const schema = schemas.get(key);
  if (!schema) return [{ path: '(root)', message: `no schema for ${key}` }];
  const validate = ajv.compile(pruneToData(schema, [manifest]) as object);
  const out = validate(manifest) ? [] : ajvProblems(validate.errors);
  // Metadata as Kubernetes' ObjectMeta, through an object whose schema embeds it.
  if (metadata && typeof metadata === 'object') {
    const wrapper = { apiVersion: 'v1', kind: 'ConfigMap', metadata };
    out.push(...modelProblems(ConfigMap, wrapper).filter((p) => p.path.startsWith('metadata')));
    const { program } = declarations();
    const tc = program.getTypeChecker();
    const metaType = tc.getTypeOfSymbol(declarations().types.get('apps/v1/Deployment')!.getProperty('metadata')!);
    unknownFields(metadata, metaType, 'metadata', tc, out);
  }
  return out;
}
