#!/usr/bin/env node
// Extracts the OpenAPI schemas of KServe's ClusterServingRuntime and InferenceService from the
// CRDs of a KServe release, for apps/server/test/deploy/manifest-schema.test.ts (KServe publishes
// no schema package). Descriptions are dropped (they do not validate anything); the rest is kept
// as released.
//
//   node deploy/schemas/extract-kserve-schemas.mjs <kserve git checkout> <release tag>
//   e.g. node deploy/schemas/extract-kserve-schemas.mjs ../kserve v0.20.0
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

const [checkout, tag] = process.argv.slice(2);
if (!checkout || !tag) {
  process.stderr.write('usage: extract-kserve-schemas.mjs <kserve git checkout> <release tag>\n');
  process.exit(2);
}
const git = (...args) => execFileSync('git', ['-C', checkout, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
const commit = git('rev-list', '-n', '1', tag).trim();

const CRDS = {
  ClusterServingRuntime: 'config/crd/full/serving.kserve.io_clusterservingruntimes.yaml',
  InferenceService: 'config/crd/full/serving.kserve.io_inferenceservices.yaml',
};

const stripDescriptions = (node) => {
  if (Array.isArray(node)) return node.map(stripDescriptions);
  if (node && typeof node === 'object') {
    return Object.fromEntries(Object.entries(node).filter(([k]) => k !== 'description').map(([k, v]) => [k, stripDescriptions(v)]));
  }
  return node;
};

const schemas = {};
for (const [kind, file] of Object.entries(CRDS)) {
  const crd = parse(git('show', `${tag}:${file}`));
  if (crd.spec.names.kind !== kind) throw new Error(`${file}: kind ${crd.spec.names.kind}, expected ${kind}`);
  for (const version of crd.spec.versions.filter((v) => v.served)) {
    schemas[`${crd.spec.group}/${version.name}/${kind}`] = stripDescriptions(version.schema.openAPIV3Schema);
  }
}
const out = path.join(path.dirname(new URL(import.meta.url).pathname), `kserve-${tag}.json`);
const source = { repository: 'kserve/kserve', tag, commit, files: Object.values(CRDS), note: 'openAPIV3Schema of each served version, descriptions removed' };
// The source readable at the top; each schema on one line (the file stays ~0.7 MB).
const lines = Object.entries(schemas).map(([key, schema]) => `  ${JSON.stringify(key)}: ${JSON.stringify(schema)}`);
writeFileSync(out, `{\n "source": ${JSON.stringify(source, null, 2).replace(/\n/g, '\n ')},\n "schemas": {\n${lines.join(',\n')}\n }\n}\n`);
process.stdout.write(`wrote ${out}: ${Object.keys(schemas).join(', ')}\n`);
